package report

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadMeta(t *testing.T) {
	in := "taken: 2026-11-23T10:00:02Z\n\n# a comment\nclock: tsc\nextensions: \nnext_year_key: some value: with a colon\n"
	f, err := readMeta(strings.NewReader(in), "m.csv.meta")
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{"taken", "2026-11-23T10:00:02Z", 1},
		{"clock", "tsc", 4},
		{"extensions", "", 5},
		{"next_year_key", "some value: with a colon", 6},
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v\nwant %+v", f, want)
	}
	for _, bad := range []string{"clock tsc\n", ": value\n", "two words: x\n"} {
		if _, err := readMeta(strings.NewReader("taken: x\n"+bad), "m.csv.meta"); err == nil ||
			!strings.HasPrefix(err.Error(), "m.csv.meta:2: ") || !strings.Contains(err.Error(), "want key: value") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func TestApplyMeta(t *testing.T) {
	m := &Model{Meta: []Field{
		{Key: "taken", Value: "2026-11-23T10:00:02.5Z", Line: 1},
		{Key: "started", Value: "2026-11-23T10:00:00Z", Line: 2},
		{Key: "cpu_ns", Value: "1500000000", Line: 3},
		{Key: "core_wait_ns", Value: "250000000", Line: 4},
		{Key: "roots", Value: "a.main  a.(*S).ServeHTTP", Line: 5},
	}}
	if err := m.applyMeta("m.csv.meta"); err != nil {
		t.Fatal(err)
	}
	if m.Wall != 2500*time.Millisecond || m.CPU != 1500*time.Millisecond || m.CoreWait != 250*time.Millisecond ||
		!reflect.DeepEqual(m.Roots, []string{"a.main", "a.(*S).ServeHTTP"}) {
		t.Fatalf("wall %v cpu %v core wait %v roots %q", m.Wall, m.CPU, m.CoreWait, m.Roots)
	}
	for _, f := range []Field{{Key: "started", Value: "yesterday", Line: 7}, {Key: "cpu_ns", Value: "1.5s", Line: 7},
		{Key: "core_wait_ns", Value: "-3", Line: 7}} {
		m := &Model{Meta: []Field{f}}
		if err := m.applyMeta("m.csv.meta"); err == nil || !strings.HasPrefix(err.Error(), "m.csv.meta:7: "+f.Key) {
			t.Errorf("%v: error %v", f, err)
		}
	}
}

func TestParseExtensions(t *testing.T) {
	v := `hotspot(threshold=10000ns inherent=2000ns initial=1000) tracepoint(sample=100 include="^a\\.(b|c) \")x") budget(percent=10 unit=1000ns) odd`
	got := ParseExtensions(v)
	want := []Extension{
		{"hotspot", "threshold=10000ns inherent=2000ns initial=1000"},
		{"tracepoint", `sample=100 include="^a\\.(b|c) \")x"`},
		{"budget", "percent=10 unit=1000ns"},
		{"odd", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if v, ok := got[0].Setting("inherent"); !ok || v != "2000ns" {
		t.Fatalf("hotspot inherent = %q, %v", v, ok)
	}
	if _, ok := got[2].Setting("threshold"); ok {
		t.Fatal("budget has no threshold")
	}
	if ParseExtensions("") != nil {
		t.Fatal("no extensions from an empty value")
	}
}
