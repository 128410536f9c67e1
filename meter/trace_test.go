package meter

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meterio/meter/extensions/tracepoint"
)

// recorder is a sink that keeps every part of every trace it is handed.
type recorder struct {
	mu      sync.Mutex
	started int
	parts   []part
}

type part struct {
	trace            uint64
	spans            []Span
	final, truncated bool
}

func (r *recorder) TraceStarted(*Goroutine, *Probe) {
	r.mu.Lock()
	r.started++
	r.mu.Unlock()
}

func (r *recorder) TraceSpans(trace uint64, spans []Span, final, truncated bool) {
	r.mu.Lock()
	r.parts = append(r.parts, part{trace, append([]Span(nil), spans...), final, truncated})
	r.mu.Unlock()
}

// String shows each part as its spans, name:index<parent, ended or open.
func (r *recorder) String() string {
	var b strings.Builder
	for _, p := range r.parts {
		fmt.Fprintf(&b, "[")
		for i, s := range p.spans {
			if i > 0 {
				b.WriteString(" ")
			}
			name := s.Probe.Name()
			name = name[strings.LastIndexByte(name, '.')+1:]
			fmt.Fprintf(&b, "%s:%d<%d", name, s.Index, s.Parent)
			if s.End == 0 {
				b.WriteString("!")
			}
		}
		fmt.Fprintf(&b, " final=%v truncated=%v]", p.final, p.truncated)
	}
	return b.String()
}

func TestTraceSpans(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	root, a, b := newProbe(t, "root"), newProbe(t, "a"), newProbe(t, "b")
	fire(root, 0, nil) // noted
	fire(root, 1*us, func() {
		fire(a, 2*us, func() { fire(b, 3*us, nil) })
		fire(b, 4*us, nil)
	})
	if got, want := rec.String(), "[root:0<-1 a:1<0 b:2<1 b:3<0 final=true truncated=false]"; got != want {
		t.Fatalf("spans %s, want %s", got, want)
	}
	s := rec.parts[0].spans
	if s[0].End-s[0].Start != 10*us || s[0].Inherent != 1*us || s[1].Inherent != 2*us || s[3].End-s[3].Start != 4*us {
		t.Fatalf("times: %+v", s)
	}
}

// A trace whose root runs long hands over its ended spans as it goes, each
// part marked truncated; the spans still open come with the final part.
func TestTraceHandOver(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec, HandOver: time.Second})
	loop, req, step := newProbe(t, "loop"), newProbe(t, "req"), newProbe(t, "step")
	fire(loop, 0, nil)
	fire(loop, 0, func() {
		for i := 0; i < 3; i++ {
			fire(req, 0, func() {
				fire(step, 400*time.Millisecond.Nanoseconds(), nil)
			})
		}
	})
	// req 0 and its step end at 0.4 s; the second step ends at 0.8 s, the
	// second req then; the third step at 1.2 s: over the second, so what
	// ended goes, the third req and the loop stay open; the rest at the end.
	want := "[req:1<0 step:2<1 req:3<0 step:4<3 step:6<5 final=false truncated=true]" +
		"[loop:0<-1 req:5<0 final=true truncated=true]"
	if got := rec.String(); got != want {
		t.Fatalf("parts %s\nwant %s", got, want)
	}
	if _, tr := traces(); tr == 0 {
		t.Fatalf("a trace handed over in parts is not counted as truncated")
	}
}

// A trace whose root a panic unwinds ends at the goroutine's next firing,
// truncated, its unwound spans ended there.
func TestTraceLosesItsRoot(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
	clk.Advance(1) // tick 0 reads as "never ended"
	fire(root, 1, nil)
	fire(leaf, 1, nil)
	func() {
		defer func() { recover() }()
		fire(root, 1, func() {
			fire(leaf, 1, nil)
			fire(leaf, 1, func() { panic("x") })
		})
	}()
	if len(rec.parts) != 0 {
		t.Fatalf("handed over before the goroutine's next firing: %s", rec)
	}
	fire(root, 1, nil) // at the root's depth: ends the unwound firings
	want := "[root:0<-1 leaf:1<0 leaf:2<0 final=true truncated=true][root:0<-1 final=true truncated=false]"
	if got := rec.String(); got != want {
		t.Fatalf("parts %s\nwant %s", got, want)
	}
}

func TestTraceStartAllocatesNothing(t *testing.T) {
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: nopSink{}})
	root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
	body := func() { fire(leaf, 1, nil) }
	fire(root, 0, nil)
	for i := 0; i < 1001; i++ {
		fire(root, 1, body)
	}
	if n := allocsPerRun(1000, func() { fire(root, 1, body) }); n != 0 {
		t.Fatalf("%v allocations per trace", n)
	}
}

// allocsPerRun is testing.AllocsPerRun without its rounding down.
func allocsPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	for i := 0; i < runs; i++ {
		f()
	}
	runtime.ReadMemStats(&b)
	return float64(b.Mallocs-a.Mallocs) / float64(runs)
}

type nopSink struct{}

func (nopSink) TraceStarted(*Goroutine, *Probe)       {}
func (nopSink) TraceSpans(uint64, []Span, bool, bool) {}
