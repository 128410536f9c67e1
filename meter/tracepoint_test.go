package meter

import (
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/meterio/meter/extensions/tracepoint"
)

func wireTracepoint(t *testing.T, sample int64, include string, traceMax int32) {
	var re *regexp.Regexp
	if include != "" {
		re = regexp.MustCompile(include)
	}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: sample, Include: re}, TraceMax: traceMax})
}

func traces() (ended, truncated int64) {
	s := Take()
	return s.Traces, s.TruncatedTraces
}

// Four goroutines fire one probe 2,500 times each: with a sample of 100,
// exactly 100 traces start. Every firing outside a trace counts, its
// probe's first firings included (the first is passed over: no firing of
// the probe has ended yet).
func TestTracepointHundredTraces(t *testing.T) {
	wireTracepoint(t, 100, "", 0)
	p := newProbe(t, "entry")
	t0, _ := traces()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 2500 {
				fire(p, 0, nil)
			}
		}()
	}
	fire(p, 0, nil) // counts: its probe's first firing
	close(start)
	wg.Wait()
	// 10,001 firings: the 100th to the 10,000th multiples of 100 started a
	// trace each, the 10,001st is the first of the next round.
	if t1, _ := traces(); t1-t0 != 100 || p.Metered() != 100 {
		t.Fatalf("%d traces, %d metered; want 100, 100", t1-t0, p.Metered())
	}
}

// Exactly one in N firings of a probe starts a trace over whole rounds,
// whichever goroutines fire it. Small N makes the goroutines race on the
// firing that runs the count out: with N = 1 every firing must start one.
func TestTracepointOneInN(t *testing.T) {
	for _, n := range []int{1, 2, 7, 100, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			const goroutines = 16
			wireTracepoint(t, int64(n), "", 0)
			p := newProbe(t, "leaf")
			fire(p, 0, nil) // the first firing, passed over if due
			each := 2 * n
			if n < 16 {
				each = 1000 * n
			}
			var wg sync.WaitGroup
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						fire(p, 0, nil)
					}
				}()
			}
			wg.Wait()
			// 1 + goroutines×each firings, then n−1 more: a whole number
			// of rounds.
			for range n - 1 {
				fire(p, 0, nil)
			}
			want := int64(goroutines*each/n + 1)
			if n == 1 {
				want-- // the first firing was due and passed over
			}
			if c := p.Metered(); c != want {
				t.Fatalf("%d firings metered, want %d", c, want)
			}
		})
	}
}

// Counts are per probe.
func TestTracepointPerProbe(t *testing.T) {
	wireTracepoint(t, 3, "", 0)
	a, b := newProbe(t, "a"), newProbe(t, "b")
	fire(a, 0, nil)
	fire(b, 0, nil)
	var got []string
	for i := 1; i <= 9; i++ {
		ca, cb := a.Metered(), b.Metered()
		fire(a, 0, nil)
		fire(b, 0, nil)
		fire(b, 0, nil)
		if a.Metered() > ca {
			got = append(got, fmt.Sprintf("a%d", i))
		}
		if b.Metered() > cb {
			got = append(got, fmt.Sprintf("b%d", i))
		}
	}
	// a (one first firing, then one a round): firings 3, 6, 9 in rounds 2,
	// 5, 8; b (one first firing, then two a round): 3, 6, 9, … in rounds 1,
	// 3, 4, 6, 7, 9.
	if s, want := fmt.Sprint(got), "[b1 a2 b3 b4 a5 b6 b7 a8 b9]"; s != want {
		t.Fatalf("traces started at %s, want %s", s, want)
	}
}

func TestTracepointInclude(t *testing.T) {
	wireTracepoint(t, 1, `\.keep$`, 0)
	keep, drop := newProbe(t, "keep"), newProbe(t, "drop")
	for _, p := range []*Probe{keep, drop} {
		fire(p, 0, nil)
		for range 10 {
			fire(p, 0, nil)
		}
	}
	if keep.Metered() != 10 || drop.Metered() != 0 {
		t.Fatalf("keep metered %d, drop %d; want 10, 0", keep.Metered(), drop.Metered())
	}
	// Inside a trace an excluded probe is metered like any other.
	fire(keep, 0, func() { fire(drop, 0, nil) })
	if drop.Metered() != 1 {
		t.Fatalf("excluded probe inside a trace metered %d times, want 1", drop.Metered())
	}
}

// Once a program marks roots, only they start traces; before, every probe.
func TestTracepointRoots(t *testing.T) {
	wireTracepoint(t, 1, "", 0)
	handler, inner := newProbe(t, "handler"), newProbe(t, "inner")
	fire(handler, 0, nil)
	fire(inner, 0, nil)
	fire(inner, 0, nil)
	if inner.Metered() != 1 && !registry.anyRoot {
		t.Fatalf("with no roots in the program, a probe did not start a trace")
	}
	handler.SetRoot()
	c := inner.Metered()
	fire(inner, 0, nil)
	fire(handler, 0, func() { fire(inner, 0, nil) })
	if inner.Metered() != c+1 || handler.Metered() != 1 {
		t.Fatalf("inner %d (+%d), handler %d: want inner metered only inside the handler's trace", inner.Metered(), inner.Metered()-c, handler.Metered())
	}
}

// Inside a trace every firing is metered and none counts towards starting
// another trace; outside, nothing is metered.
func TestInsideTrace(t *testing.T) {
	wireTracepoint(t, 2, "", 0)
	root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
	fire(root, 0, nil) // counts 1: no trace (and not ended anyway)
	body := func() {
		for range 5 {
			fire(leaf, 0, nil)
		}
	}
	fire(root, 0, body) // counts 2: a trace, in which the leaves are metered
	if root.Metered() != 1 || leaf.Metered() != 5 {
		t.Fatalf("in a trace: root %d, leaf %d metered; want 1, 5", root.Metered(), leaf.Metered())
	}
	// The 5 leaves in the trace did not count: leaf starts traces at its
	// 2nd and 4th firings outside one.
	var at []int
	for i := 1; i <= 4; i++ {
		c := leaf.Metered()
		fire(leaf, 0, nil)
		if leaf.Metered() > c {
			at = append(at, i)
		}
	}
	if fmt.Sprint(at) != "[2 4]" {
		t.Fatalf("leaf started traces at its firings %v, want [2 4]", at)
	}
}

// A probe none of whose firings has ended cannot start a trace.
func TestNeverEnded(t *testing.T) {
	wireTracepoint(t, 1, "", 0)
	loop := newProbe(t, "loop")
	fire(loop, 0, func() {
		fire(loop, 0, nil) // still not ended: the outer firing is open
	})
	if loop.Metered() != 0 {
		t.Fatalf("a never-ended probe started a trace")
	}
	fire(loop, 0, nil)
	if loop.Metered() != 1 {
		t.Fatalf("after ending, the probe metered %d times, want 1", loop.Metered())
	}
}

// A trace meters at most TraceMax firings; the rest of it runs unmetered
// and the trace is counted as truncated.
func TestTraceMax(t *testing.T) {
	wireTracepoint(t, 1, "", 5)
	root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
	fire(root, 0, nil)
	e0, t0 := traces()
	fire(root, 0, func() {
		for range 20 {
			fire(leaf, 0, func() { fire(leaf, 0, nil) })
		}
	})
	if root.Metered() != 1 || leaf.Metered() != 4 {
		t.Fatalf("root %d, leaf %d metered; want 1, 4", root.Metered(), leaf.Metered())
	}
	if e, tr := traces(); e-e0 != 1 || tr-t0 != 1 {
		t.Fatalf("%d traces, %d truncated; want 1, 1", e-e0, tr-t0)
	}
	fire(root, 0, func() { fire(leaf, 0, nil) }) // the next trace starts afresh
	if root.Metered() != 2 || leaf.Metered() != 5 {
		t.Fatalf("next trace: root %d, leaf %d metered; want 2, 5", root.Metered(), leaf.Metered())
	}
	if _, tr := traces(); tr-t0 != 1 {
		t.Fatalf("a short trace was counted as truncated")
	}
}

func TestTracepointAllocs(t *testing.T) {
	wireTracepoint(t, 1000, "", 0)
	p := newProbe(t, "p")
	fire(p, 0, nil)
	fire(p, 0, nil)
	if n := testing.AllocsPerRun(5000, func() { fire(p, 0, nil) }); n != 0 {
		t.Fatalf("%v allocations per firing", n)
	}
}
