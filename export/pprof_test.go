package export

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/meterio/meter/meter"
)

// TestPprof writes the call paths of traced requests and the model, then
// reads the file back with the pprof library: each probe's leaf samples add
// up to its row, and the traced paths are there with their counts.
func TestPprof(t *testing.T) {
	a := newApp(t)
	paths := NewCallPaths()
	p := NewPipeline(WithCallPaths(paths), WithScheduleDelay(time.Hour), WithLabels(false))
	defer p.Shutdown(context.Background())
	a.configure(t, p)
	const requests = 5
	for range requests {
		a.request()
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Firings outside traces: the model has them, no path does.
	meter.Configure(meter.Chain{Enabled: true})
	for range 3 {
		f := a.lex.Begin()
		a.clk.Advance(7)
		f.End()
	}
	file := filepath.Join(t.TempDir(), "meter.pprof")
	frozen := paths.Frozen()
	s := meter.Take()
	if err := WritePprofFile(file, s, frozen); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.ParseData(b)
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
	if prof.DefaultSampleType != SampleInherent {
		t.Errorf("default sample type %q", prof.DefaultSampleType)
	}
	leaf := map[string][3]int64{}
	stacks := map[string][3]int64{}
	for _, smp := range prof.Sample {
		var names []string
		for i := len(smp.Location) - 1; i >= 0; i-- {
			names = append(names, smp.Location[i].Line[0].Function.Name)
		}
		v := leaf[names[len(names)-1]]
		for i := range v {
			v[i] += smp.Value[i]
		}
		leaf[names[len(names)-1]] = v
		key := smp.Label["source"][0] + ":" + strings.Join(names, ";")
		stacks[key] = [3]int64{smp.Value[0], smp.Value[1], smp.Value[2]}
	}
	for _, pr := range []*meter.Probe{a.handle, a.parse, a.lex} {
		r := row(t, s, pr.Name())
		if got, want := leaf[pr.Name()], [3]int64{r.Count, r.Total, r.InherentTotal}; got != want {
			t.Errorf("%s: samples add up to %v, the model says %v", pr.Name(), got, want)
		}
	}
	h, ps, l := a.handle.Name(), a.parse.Name(), a.lex.Name()
	for key, want := range map[string][3]int64{
		"trace:" + h:                      {requests, requests * handleIncl, requests * handleInh},
		"trace:" + h + ";" + ps:           {2 * requests, requests * (parse1Incl + parse2Incl), requests * (parse1Inh + parse2Incl)},
		"trace:" + h + ";" + ps + ";" + l: {requests, requests * lexIncl, requests * lexIncl},
		"model:" + l:                      {3, 21, 21},
	} {
		if got := stacks[key]; got != want {
			t.Errorf("sample %s: %v, want %v", key, got, want)
		}
	}

	// go tool pprof opens it.
	if goTool, err := exec.LookPath("go"); err == nil {
		out, err := exec.Command(goTool, "tool", "pprof", "-top", "-nodefraction=0", file).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(a.parse.Name())) {
			t.Errorf("go tool pprof -top: %v\n%s", err, out)
		}
	}
}

// TestLabels: inside a trace the goroutine carries the trace's labels, and
// afterwards the labels it had before.
func TestLabels(t *testing.T) {
	a := newApp(t)
	p := NewPipeline(WithScheduleDelay(time.Hour))
	defer p.Shutdown(context.Background())
	ids := &idSink{Sink: p}
	a.configure(t, ids)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("user", "mine")))
	defer pprof.SetGoroutineLabels(context.Background())
	before := myLabels(t)
	if !strings.Contains(before, `"user":"mine"`) {
		t.Fatalf("labels before the trace: %s", before)
	}
	h := a.handle.Begin()
	in := myLabels(t)
	f := a.parse.Begin()
	nested := myLabels(t)
	f.End()
	h.End()
	after := myLabels(t)
	if !strings.Contains(in, `"meter.root":"`+a.handle.Name()+`"`) || !strings.Contains(in, `"meter.trace_id":"`) {
		t.Errorf("labels inside the trace: %s", in)
	}
	if nested != in {
		t.Errorf("a nested firing changed the labels: %s, then %s", in, nested)
	}
	if after != before {
		t.Errorf("labels after the trace: %s, want %s", after, before)
	}
}

// myLabels returns the labels of the calling goroutine, as the goroutine
// profile prints them.
func myLabels(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	// Each goroutine group starts with a count line, then "# labels: {...}"
	// when it has labels, then its stack; find the group with this test.
	for _, group := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(group, "export.myLabels") {
			for _, line := range strings.Split(group, "\n") {
				if strings.HasPrefix(line, "# labels: ") {
					return strings.TrimPrefix(line, "# labels: ")
				}
			}
			return "{}"
		}
	}
	t.Fatal("this goroutine is not in the goroutine profile")
	return ""
}
