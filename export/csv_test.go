package export

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/schema"
)

func TestWriteCSV(t *testing.T) {
	s := meter.Snapshot{Rows: []meter.Row{
		{Probe: "m.(*DB).Update", Count: 2, Total: 3000, Avg: 1500, InherentTotal: 1000, InherentAvg: 500, Min: 1000, Max: 2000, Label: "hotspot"},
		{Probe: `odd,"name"`, Count: 1, Total: 7, Avg: 7, InherentTotal: 7, InherentAvg: 7, Min: 7, Max: 7},
		{Probe: "m.cold", Label: "disabled"},
	}}
	var b bytes.Buffer
	if err := WriteCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n" +
		"m.(*DB).Update,2,3000,1500,1000,500,1000,2000,hotspot\n" +
		`"odd,""name""",1,7,7,7,7,7,7,` + "\n" +
		"m.cold,0,0,0,0,0,0,0,disabled\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil || len(recs) != 4 || recs[2][0] != `odd,"name"` {
		t.Fatalf("not valid CSV: %v %q", err, recs)
	}
}

func TestWriteCSVFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := meter.Snapshot{Rows: []meter.Row{{Probe: "p", Count: 1}}}
	if err := writeCSVFile(path, s); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(got), schema.ModelHeader+"\np,1,") {
		t.Fatalf("file holds %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary files left behind: %v", ents)
	}
}

func TestWriteCSVFileUnwritable(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{
		filepath.Join(dir, "missing", "model.csv"), // no such directory
		dir, // a directory, not a file
	} {
		err := writeCSVFile(path, meter.Snapshot{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("writeCSVFile(%s) = %v, want an error naming the path", path, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
