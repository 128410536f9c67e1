package tracepoint_test

import (
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/meter"
)

// wire configures the engine with tracepoint alone.
func wire(t testing.TB, sample int64, include string, traceMax int32) *tracepoint.Tracepoint {
	t.Helper()
	var re *regexp.Regexp
	if include != "" {
		re = regexp.MustCompile(include)
	}
	tp := tracepoint.New(sample, re)
	meter.Configure(meter.Chain{Enabled: true, Gates: []meter.Gate{tp}, TraceMax: traceMax, Extensions: []meter.Extension{tp}})
	t.Cleanup(func() { meter.Configure(meter.Chain{}) })
	return tp
}

var probes int

func newProbe(name string) *meter.Probe {
	probes++
	return meter.NewProbe(fmt.Sprintf("tracepoint_test.#%d.%s", probes, name), nil)
}

func fire(p *meter.Probe, body func()) {
	f := p.Begin()
	if body != nil {
		body()
	}
	f.End()
}

func traces() (ended, truncated int64) {
	s := meter.Take()
	return s.Traces, s.TruncatedTraces
}

// Exactly one in N offered firings of a probe starts a trace, whichever
// goroutines fire it. Small N makes the goroutines race on the firing that
// runs the count out: with N = 1 every firing must start one.
func TestOneInN(t *testing.T) {
	for _, n := range []int{1, 2, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { oneInN(t, n) })
	}
}

func oneInN(t *testing.T, n int) {
	const goroutines, each = 16, 1000
	wire(t, int64(n), "", 0)
	p := newProbe("leaf")
	fire(p, nil) // a probe must have ended once before it may start a trace
	if p.Count() != 0 {
		t.Fatalf("first firing metered")
	}
	t0, _ := traces()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				fire(p, nil)
			}
		}()
	}
	wg.Wait()
	want := int64(goroutines * each / n)
	if c := p.Count(); c != want {
		t.Fatalf("%d firings metered, want %d", c, want)
	}
	if t1, _ := traces(); t1-t0 != want {
		t.Fatalf("%d traces, want %d", t1-t0, want)
	}
	// The remainder is carried: N−(total mod N) more firings start one more.
	for range n - goroutines*each%n {
		fire(p, nil)
	}
	if c := p.Count(); c != want+1 {
		t.Fatalf("%d firings metered after the remainder, want %d", c, want+1)
	}
}

// Counters are per probe.
func TestPerProbe(t *testing.T) {
	wire(t, 3, "", 0)
	a, b := newProbe("a"), newProbe("b")
	fire(a, nil)
	fire(b, nil)
	var got []string
	for i := 1; i <= 9; i++ {
		ca, cb := a.Count(), b.Count()
		fire(a, nil)
		fire(b, nil)
		fire(b, nil)
		if a.Count() > ca {
			got = append(got, fmt.Sprintf("a%d", i))
		}
		if b.Count() > cb {
			got = append(got, fmt.Sprintf("b%d", i))
		}
	}
	// a: firings 3, 6, 9; b fires twice a round: firings 3 (round 2), 6
	// (round 3), 9 (round 5), 12, 15, 18.
	if s, want := fmt.Sprint(got), "[b2 a3 b3 b5 a6 b6 b8 a9 b9]"; s != want {
		t.Fatalf("traces started at %s, want %s", s, want)
	}
}

func TestInclude(t *testing.T) {
	tp := wire(t, 1, `\.keep$`, 0)
	keep, drop := newProbe("keep"), newProbe("drop")
	for _, p := range []*meter.Probe{keep, drop} {
		fire(p, nil)
		for range 10 {
			fire(p, nil)
		}
	}
	if keep.Count() != 10 || drop.Count() != 0 {
		t.Fatalf("keep metered %d, drop %d; want 10, 0", keep.Count(), drop.Count())
	}
	// Inside a trace an excluded probe is metered like any other.
	fire(keep, func() { fire(drop, nil) })
	if drop.Count() != 1 {
		t.Fatalf("excluded probe inside a trace metered %d times, want 1", drop.Count())
	}
	if s := tp.Settings(); s != `sample=1 include="\\.keep$"` {
		t.Fatalf("settings %s", s)
	}
}

// Inside a trace every firing is metered and none counts towards starting
// another trace; outside, nothing is metered.
func TestInsideTrace(t *testing.T) {
	wire(t, 2, "", 0)
	root, leaf := newProbe("root"), newProbe("leaf")
	fire(root, nil)
	body := func() {
		for range 5 {
			fire(leaf, nil)
		}
	}
	fire(root, nil) // counts 1: no trace
	if root.Count() != 0 {
		t.Fatalf("outside a trace: root metered")
	}
	fire(root, body) // counts 2: a trace, in which the leaves are metered
	if root.Count() != 1 || leaf.Count() != 5 {
		t.Fatalf("in a trace: root %d, leaf %d metered; want 1, 5", root.Count(), leaf.Count())
	}
	// The 5 leaves in the trace did not count: leaf starts traces at its
	// 2nd and 4th offered firings, not its 1st and 3rd.
	var at []int
	for i := 1; i <= 4; i++ {
		c := leaf.Count()
		fire(leaf, nil)
		if leaf.Count() > c {
			at = append(at, i)
		}
	}
	if fmt.Sprint(at) != "[2 4]" {
		t.Fatalf("leaf started traces at its offered firings %v, want [2 4]", at)
	}
}

// A probe none of whose firings has ended cannot start a trace.
func TestNeverEnded(t *testing.T) {
	wire(t, 1, "", 0)
	loop := newProbe("loop")
	fire(loop, func() {
		fire(loop, nil) // still not ended: the outer firing is open
	})
	if loop.Count() != 0 {
		t.Fatalf("a never-ended probe started a trace")
	}
	fire(loop, nil)
	if loop.Count() != 1 {
		t.Fatalf("after ending, the probe metered %d times, want 1", loop.Count())
	}
}

// A trace meters at most TraceMax firings; the rest of it runs unmetered and
// the trace is counted as truncated.
func TestTraceMax(t *testing.T) {
	wire(t, 1, "", 5)
	root, leaf := newProbe("root"), newProbe("leaf")
	fire(root, nil)
	e0, t0 := traces()
	fire(root, func() {
		for range 20 {
			fire(leaf, func() { fire(leaf, nil) })
		}
	})
	if root.Count() != 1 || leaf.Count() != 4 {
		t.Fatalf("root %d, leaf %d metered; want 1, 4", root.Count(), leaf.Count())
	}
	if e, tr := traces(); e-e0 != 1 || tr-t0 != 1 {
		t.Fatalf("%d traces, %d truncated; want 1, 1", e-e0, tr-t0)
	}
	// The next trace starts afresh.
	fire(root, func() { fire(leaf, nil) })
	if root.Count() != 2 || leaf.Count() != 5 {
		t.Fatalf("next trace: root %d, leaf %d metered; want 2, 5", root.Count(), leaf.Count())
	}
	if _, tr := traces(); tr-t0 != 1 {
		t.Fatalf("a short trace was counted as truncated")
	}
}

func TestAllocs(t *testing.T) {
	wire(t, 1000, "", 0)
	p := newProbe("p")
	fire(p, nil)
	fire(p, nil)
	if n := testing.AllocsPerRun(5000, func() { fire(p, nil) }); n != 0 {
		t.Fatalf("%v allocations per firing", n)
	}
}
