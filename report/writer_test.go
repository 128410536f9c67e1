package report

// The runtime's own writers, read back. This is the one test file that
// touches the engine's snapshot and the export package.

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
)

func testSnapshot() meter.Snapshot {
	return meter.Snapshot{
		Taken: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Clock: "tsc",
		Rows: []meter.Row{
			{Probe: "example.com/app.handle", Count: 4, Total: 4000, Avg: 1000, InherentTotal: 2000, InherentAvg: 500, Min: 800, Max: 1200, Label: "hotspot"},
			{Probe: `example.com/app.odd,"name"`, Count: 2, Total: 300, Avg: 150, InherentTotal: 300, InherentAvg: 150, Min: 100, Max: 200},
			{Probe: "example.com/app.small", Count: 1000, Total: 900, Avg: 0, InherentTotal: 900, InherentAvg: 0, Label: "disabled"},
		},
	}
}

func TestReadsTheRuntimesCSV(t *testing.T) {
	s := testSnapshot()
	var b bytes.Buffer
	if err := export.WriteCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadModel(&b, "model.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(s.Rows) {
		t.Fatalf("%d rows, want %d", len(rows), len(s.Rows))
	}
	for i, r := range s.Rows {
		want := Row{r.Probe, r.Count, r.Total, r.Avg, r.InherentTotal, r.InherentAvg, r.Min, r.Max, r.Label}
		if rows[i] != want {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want)
		}
	}
}

// Without call paths, the runtime's profile holds one model sample per
// row, the probe alone on its stack, its values the row's totals.
func TestReadsTheRuntimesProfile(t *testing.T) {
	s := testSnapshot()
	var b bytes.Buffer
	if err := export.WriteProfile(&b, s, nil); err != nil {
		t.Fatal(err)
	}
	p, err := ReadProfile(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{p.SampleTypes[0].Type, p.SampleTypes[1].Type, p.SampleTypes[2].Type}; !reflect.DeepEqual(got, []string{"count", "inclusive", "inherent"}) ||
		p.DefaultSampleType != "inherent" {
		t.Fatalf("sample types %v, default %q", p.SampleTypes, p.DefaultSampleType)
	}
	if len(p.Samples) != len(s.Rows) {
		t.Fatalf("%d samples for %d rows", len(p.Samples), len(s.Rows))
	}
	for i, r := range s.Rows {
		got := p.Samples[i]
		if !reflect.DeepEqual(got.Stack, []string{r.Probe}) || !reflect.DeepEqual(got.Values, []int64{r.Count, r.Total, r.InherentTotal}) ||
			!reflect.DeepEqual(got.Labels["source"], []string{"model"}) {
			t.Errorf("sample %d: %+v, want row %+v", i, got, r)
		}
	}
	if root, _ := p.flame(); len(root.Children) != 0 {
		t.Fatal("a profile without call paths drew a flame graph")
	}
}
