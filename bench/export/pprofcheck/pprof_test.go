package pprofcheck

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/meter/metertest"
)

// TestProfileParses: a profile of traced requests and of firings outside
// traces parses with google/pprof/profile, passes its CheckValid, has the
// sample types, mapping and labels the docs promise, and its samples add
// up, per probe, to the model's rows.
func TestProfileParses(t *testing.T) {
	clk := clock.NewManual()
	handle := meter.NewProbe("example.com/pp.handle", nil)
	parse := meter.NewProbe("example.com/pp.(*parser).parse", nil)
	lex := meter.NewProbe("example.com/pp.lex", nil)
	// The exports as the runtime starts them, collecting call paths for a
	// profile: Paths does without a file.
	e := export.Start(export.Settings{Traces: true, Paths: true, Stderr: io.Discard})
	paths := e.CallPaths()
	meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(handle), Sink: e.Sink(), Clock: clk})
	defer meter.Configure(meter.Chain{})
	metertest.Fire(handle, nil)
	for range 7 {
		h := handle.Begin()
		clk.Advance(10)
		for range 3 {
			f := parse.Begin()
			clk.Advance(100)
			l := lex.Begin()
			clk.Advance(30)
			lex.End(&l)
			parse.End(&f)
		}
		handle.End(&h)
	}
	e.StopTraces(context.Background())
	meter.Configure(meter.Chain{Enabled: true, Clock: clk})
	for range 4 { // outside traces: the model's own samples
		l := lex.Begin()
		clk.Advance(5)
		lex.End(&l)
	}
	frozen := paths.Frozen()
	s := meter.Take()
	var buf bytes.Buffer
	if err := export.WriteProfile(&buf, s, frozen); err != nil {
		t.Fatal(err)
	}
	prof, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "count/count inclusive/nanoseconds inherent/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	if prof.DefaultSampleType != "inherent" || prof.Period != 1 || prof.PeriodType.Type != "count" {
		t.Errorf("default %q, period %d %v", prof.DefaultSampleType, prof.Period, prof.PeriodType)
	}
	if len(prof.Mapping) != 1 || !prof.Mapping[0].HasFunctions || prof.TimeNanos != s.Taken.UnixNano() || len(prof.Comments) != 1 {
		t.Errorf("mapping %+v, time %d, comments %q", prof.Mapping, prof.TimeNanos, prof.Comments)
	}
	leaf := map[string][3]int64{}
	stacks := map[string][3]int64{}
	for _, smp := range prof.Sample {
		var names []string
		for i := len(smp.Location) - 1; i >= 0; i-- {
			names = append(names, smp.Location[i].Line[0].Function.Name)
		}
		name := names[len(names)-1]
		v := leaf[name]
		for i := range v {
			v[i] += smp.Value[i]
		}
		leaf[name] = v
		stacks[smp.Label["source"][0]+":"+strings.Join(names, ";")] = [3]int64{smp.Value[0], smp.Value[1], smp.Value[2]}
	}
	for _, r := range s.Rows {
		if got, want := leaf[r.Probe], [3]int64{r.Count, r.Total, r.InherentTotal}; got != want && r.Count > 0 {
			t.Errorf("%s: samples add up to %v, the model says %v", r.Probe, got, want)
		}
	}
	h, ps, l := handle.Name(), parse.Name(), lex.Name()
	for key, want := range map[string][3]int64{
		"trace:" + h:                      {7, 7 * 400, 7 * 10},
		"trace:" + h + ";" + ps:           {21, 21 * 130, 21 * 100},
		"trace:" + h + ";" + ps + ";" + l: {21, 21 * 30, 21 * 30},
		"model:" + l:                      {4, 20, 20},
	} {
		if got := stacks[key]; got != want {
			t.Errorf("sample %s: %v, want %v", key, got, want)
		}
	}
	// Written again by the library, it still parses: nothing in ours
	// depends on the library's leniency.
	var again bytes.Buffer
	if err := prof.Write(&again); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Parse(&again); err != nil {
		t.Fatal(err)
	}
	// go tool pprof reads the file too.
	f := t.TempDir() + "/meter.pprof"
	if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", f).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(ps)) {
		t.Errorf("go tool pprof -top: %v\n%s", err, out)
	}
}
