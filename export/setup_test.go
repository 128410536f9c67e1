package export

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeRemote is an OTLP stand-in: its spans go to a recording exporter.
type fakeRemote struct {
	spans    *recordingExporter
	shutdown int
}

func (r *fakeRemote) SpanExporter() SpanExporter { return r.spans }
func (r *fakeRemote) Shutdown(context.Context) error {
	r.shutdown++
	return nil
}

// TestOTLPRegisteredLate: the otlp module's init may run after the first
// probe registration. Traces that end in between wait in the queue, and
// reach the exporter once it registers; Check then says nothing.
func TestOTLPRegisteredLate(t *testing.T) {
	defer func() { registry.otlp = nil }()
	a := newApp(t)
	var stderr syncBuffer
	e := Start(Settings{OTLP: true, Traces: true, TraceMax: 100, Stderr: &stderr})
	a.configure(t, e.Sink())
	e.Run()
	for range 3 {
		a.request()
	}
	fake := &fakeRemote{spans: &recordingExporter{}}
	var got RemoteSettings
	RegisterOTLP(func(s RemoteSettings) (Remote, error) { got = s; return fake, nil })
	e.Check()
	e.StopTraces(context.Background())
	e.Close(context.Background())
	if len(fake.spans.spans) != 12 || fake.shutdown != 1 || !got.Traces {
		t.Errorf("%d spans, %d shutdowns, settings %+v; want 12 spans, 1 shutdown, traces on", len(fake.spans.spans), fake.shutdown, got)
	}
	if stderr.String() != "" {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestOTLPNeverRegistered: METER_EXPORT_OTLP=true in a program without the
// otlp module is one line, however often Check runs; the spans that waited
// are let go, not reported as drops.
func TestOTLPNeverRegistered(t *testing.T) {
	a := newApp(t)
	var stderr syncBuffer
	e := Start(Settings{OTLP: true, Traces: true, Stderr: &stderr})
	a.configure(t, e.Sink())
	e.Run()
	a.request()
	e.Check()
	e.Check()
	a.request()
	e.StopTraces(context.Background())
	e.Close(context.Background())
	out := stderr.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `import _ "github.com/meterio/meter/otlp"`) {
		t.Errorf("stderr %q", out)
	}
	if st := e.Pipeline().Stats(); st.Dropped != 0 {
		t.Errorf("%+v", st)
	}
}

// TestQueueForTraceMax: the queue holds one whole trace of
// METER_TRACE_MAX spans, up to the largest accepted.
func TestQueueForTraceMax(t *testing.T) {
	for _, c := range []struct{ traceMax, want int }{{1, 4096 - 2048}, {10000, 16384 - 2048}, {100000, 131072 - 2048}} {
		if got := queueFor(c.traceMax); got != c.want || got < c.traceMax {
			t.Errorf("queueFor(%d) = %d, want %d", c.traceMax, got, c.want)
		}
	}
	// A whole trace of the largest size fits at once.
	probe := newApp(t).handle
	p := newPipeline(config{queueSize: queueFor(100000), delay: time.Hour, stderr: io.Discard})
	defer p.Shutdown(context.Background())
	p.TraceSpans(1, spansOf(probe, 100000), true, false)
	if st := p.Stats(); st.Dropped != 0 || st.Queued != 100000 {
		t.Errorf("%+v", st)
	}
}

// TestFilesAfterCheck: a path that cannot take the model is reported once,
// when the exports start, and Files leaves it out, so that nothing claims
// the model goes there.
func TestFilesAfterCheck(t *testing.T) {
	dir := t.TempDir()
	var stderr syncBuffer
	prof := dir + "/m.pprof"
	e := Start(Settings{CSV: dir, Pprof: prof, Stderr: &stderr})
	if csv, pprof := e.Files(); csv != "" || pprof != prof {
		t.Errorf("Files() = %q, %q; want none for the directory and %q", csv, pprof, prof)
	}
	if want := "meter: METER_EXPORT_CSV: cannot write " + dir + ": it is a directory, not a regular file; the model is not written\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if csv, _ := Start(Settings{CSV: dir + "/m.csv", Stderr: &stderr}).Files(); csv != dir+"/m.csv" {
		t.Errorf("a writable path left out: %q", csv)
	}
}
