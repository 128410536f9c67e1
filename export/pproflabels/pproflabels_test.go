package pproflabels

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/meter/metertest"
)

var probes int

// wire configures the engine with the sink export.Start builds for
// METER_PPROF_LABELS=true, and returns a root and a child probe.
func wire(t testing.TB) (root, child *meter.Probe) {
	probes++
	root = meter.NewProbe(fmt.Sprintf("example.com/labels%d.handle", probes), nil)
	child = meter.NewProbe(fmt.Sprintf("example.com/labels%d.parse", probes), nil)
	e := export.Start(export.Settings{Labels: true, Traces: true, Stderr: io.Discard})
	meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(root), Sink: e.Sink()})
	e.Run()
	t.Cleanup(func() {
		meter.Configure(meter.Chain{})
		e.Close(context.Background())
	})
	metertest.Fire(root, nil) // a probe starts traces once a firing of it has ended
	return root, child
}

// TestLabels: inside a trace the goroutine carries the trace's labels, and
// afterwards the labels it had before.
func TestLabels(t *testing.T) {
	root, child := wire(t)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("user", "mine")))
	defer pprof.SetGoroutineLabels(context.Background())
	before := myLabels(t)
	if !strings.Contains(before, `"user":"mine"`) {
		t.Fatalf("labels before the trace: %s", before)
	}
	h := root.Begin()
	in := myLabels(t)
	f := child.Begin()
	nested := myLabels(t)
	child.End(&f)
	root.End(&h)
	after := myLabels(t)
	if !strings.Contains(in, `"meter.root":"`+root.Name()+`"`) || !strings.Contains(in, `"meter.trace_id":"`) {
		t.Errorf("labels inside the trace: %s", in)
	}
	if nested != in {
		t.Errorf("a nested firing changed the labels: %s, then %s", in, nested)
	}
	if after != before {
		t.Errorf("labels after the trace: %s, want %s", after, before)
	}
}

// TestEndedElsewhere: a trace whose end is handed over on another
// goroutine leaves the traced goroutine's labels alone there; the
// goroutine's next trace then gives back what it had before the first.
func TestEndedElsewhere(t *testing.T) {
	l := New()
	g := &meter.Goroutine{TraceID: 7}
	root := meter.NewProbe("example.com/elsewhere.root", nil)
	// The other goroutine starts before any labels are set: a goroutine
	// started inside a trace would inherit its labels.
	end, done := make(chan uint64), make(chan struct{})
	go func() {
		defer close(done)
		for tr := range end {
			l.Ended(tr)
		}
	}()
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("user", "mine")))
	defer pprof.SetGoroutineLabels(context.Background())
	before := myLabels(t)
	l.Started(g, root)
	end <- 7
	close(end)
	<-done
	if got := myLabels(t); !strings.Contains(got, `"meter.trace_id":"7"`) {
		t.Fatalf("labels after an end on another goroutine: %s", got)
	}
	g.TraceID = 8
	l.Started(g, root)
	l.Ended(8)
	if got := myLabels(t); got != before {
		t.Errorf("labels after the next trace: %s, want %s", got, before)
	}
	if len(l.saved) != 0 {
		t.Errorf("%d labels still remembered", len(l.saved))
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
		if strings.Contains(group, "pproflabels.myLabels") {
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

// BenchmarkLabels is what labels cost per trace: a traced call of a root
// with one nested firing, through the engine, with METER_PPROF_LABELS on
// and this package linked, against the same call with labels off.
func BenchmarkLabels(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("labels=%v", on), func(b *testing.B) {
			probes++
			root := meter.NewProbe(fmt.Sprintf("example.com/labels%d.handle", probes), nil)
			child := meter.NewProbe(fmt.Sprintf("example.com/labels%d.parse", probes), nil)
			e := export.Start(export.Settings{Labels: on, Traces: true, Stderr: io.Discard})
			meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(root), Sink: e.Sink()})
			e.Run()
			defer meter.Configure(meter.Chain{})
			defer e.Close(context.Background())
			metertest.Fire(root, nil)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f := root.Begin()
				func() { metertest.Fire(child, nil) }()
				root.End(&f)
			}
		})
	}
}
