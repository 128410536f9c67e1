package probe

import (
	"context"
	"sync"
	"testing"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/meter"
)

// root has the shape meterinject generates for a root with a context
// parameter.
//
//go:noinline
func root(ctx context.Context, x uint64) uint64 {
	f := benchProbes[3].Unmetered()
	_ = benchProbes[3].On() && benchProbes[3].Begin(&f) && benchProbes[3].Within(f, ctx)
	r := mix(x)
	lastCtx = ctx // the function's own use of its context, after the probe
	_ = f != 0 && benchProbes[3].End(&f)
	return r
}

// rootStart is root with the shape of a function that hands nothing on.
//
//go:noinline
func rootStart(ctx context.Context, x uint64) uint64 {
	f := benchProbes[0].Unmetered()
	_ = benchProbes[0].On() && benchProbes[0].Begin(&f)
	r := mix(x)
	lastCtx = ctx
	_ = f != 0 && benchProbes[0].End(&f)
	return r
}

var lastCtx context.Context

// BenchmarkRoot compares a root that hands its context to the trace it
// starts with one that does not (instrumented): disabled, outside any
// trace while tracepoint is on, and metered with no trace gate. Only a
// firing that starts a trace reads the context.
func BenchmarkRoot(b *testing.B) {
	ctx := context.Background()
	withCtx := func(x uint64) uint64 { return root(ctx, x) }
	without := func(x uint64) uint64 { return rootStart(ctx, x) }
	for _, c := range []struct {
		name  string
		chain meter.Chain
		off   bool
	}{
		{"disabled", meter.Chain{}, true},
		{"outside-tracepoint", meter.Chain{Tracepoint: &tracepoint.Rule{Sample: never}}, false},
		{"metered", meter.Chain{}, false},
	} {
		for _, shape := range []struct {
			name string
			call func(uint64) uint64
			p    *Probe
		}{{"start", without, &benchProbes[0]}, {"within", withCtx, &benchProbes[3]}} {
			b.Run(shape.name+"/"+c.name, func(b *testing.B) {
				wire(b, c.chain)
				shape.call(0) // its first firing ends: it may be counted down from now on
				if c.off {
					shape.p.m.Disable(meter.DisabledHotspot)
				}
				loop(b, shape.call)
			})
		}
	}
}

// hookCalls records what a RootHook is given.
type hookCalls struct {
	mu      sync.Mutex
	started []context.Context
	ended   []uint64
}

func (h *hookCalls) Started(trace uint64, ctx context.Context, w, r any) {
	h.mu.Lock()
	h.started = append(h.started, ctx)
	h.mu.Unlock()
}

func (h *hookCalls) Ended(trace uint64) {
	h.mu.Lock()
	h.ended = append(h.ended, trace)
	h.mu.Unlock()
}

type ctxKey struct{}

// TestWithinOnlyWhenATraceStarts: the root hook sees the context of the
// firings that start a trace, one in SAMPLE, and each such trace's end;
// the other firings hand nothing on.
func TestWithinOnlyWhenATraceStarts(t *testing.T) {
	h := &hookCalls{}
	meter.SetRootHook(h)
	defer meter.SetRootHook(nil)
	if !registered {
		setupOnce.Do(func() {})
		Register(benchProbes[:], "bench.instrumented", "bench.deferred", "bench.other", "bench.spare")
		registered = true
	}
	meter.Configure(meter.Chain{Enabled: true, Clock: clock.NewManual(), Tracepoint: &tracepoint.Rule{Sample: 10}})
	defer meter.Configure(wired) // the chain the properties wired, which the package's other tests run on
	benchProbes[3].m.Enable()
	benchProbes[3].m.SetRoot()
	ctx := context.WithValue(context.Background(), ctxKey{}, "request")
	root(ctx, 0) // its first firing ends: traces may start from now on
	for i := 0; i < 100; i++ {
		root(ctx, uint64(i))
	}
	if n := len(h.started); n < 2 || n > 10 {
		t.Fatalf("the hook saw %d trace starts of 100 firings at 1 in 10", n)
	}
	for _, c := range h.started {
		if c.Value(ctxKey{}) != "request" {
			t.Fatalf("the hook got another context")
		}
	}
	if len(h.ended) != len(h.started) {
		t.Fatalf("%d traces started, %d ended", len(h.started), len(h.ended))
	}
}
