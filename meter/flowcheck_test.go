package meter

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/extensions/flowcheck"
)

func wireFlow(t *testing.T, r flowcheck.Rule) {
	wire(t, Chain{Flowcheck: &r, Seed: 42})
}

// metered fires p once and reports whether that firing was metered.
func metered(p *Probe) bool {
	c := p.Metered()
	fire(p, 0, nil)
	return p.Metered() > c
}

// gaps fires a fresh probe until n traces have started on the calling
// goroutine and returns the gaps before them, the first one included.
func gaps(t *testing.T, n int) []int64 {
	p := newProbe(t, "leaf")
	fire(p, 0, nil) // probes must end once before they may start traces
	var out []int64
	var gap int64
	for len(out) < n {
		if metered(p) {
			out = append(out, gap)
			gap = 0
		} else {
			gap++
		}
	}
	return out
}

func TestFlowcheckFixedGap(t *testing.T) {
	for _, g := range []int64{0, 1, 5, 250} {
		t.Run(fmt.Sprint(g), func(t *testing.T) {
			wireFlow(t, flowcheck.Rule{Lower: g, Upper: g})
			for i, got := range gaps(t, 20) {
				if got != g && !(i == 0 && got == g-1) { // the first gap counts the firing that noted the probe's end
					t.Fatalf("LOWER=UPPER=%d: gap %d is %d", g, i, got)
				}
			}
		})
	}
}

// With the random source injected, the gaps are exactly the ones drawn,
// the extremes of [LOWER, UPPER) included.
func TestFlowcheckInjectedRandom(t *testing.T) {
	draws := []uint64{0, math.MaxUint64, 1 << 63, 0, math.MaxUint64}
	var i atomic.Int64
	wireFlow(t, flowcheck.Rule{Lower: 250, Upper: 500, Random: func() uint64 { return draws[(i.Add(1)-1)%int64(len(draws))] }})
	got := gaps(t, 5)
	if want := []int64{249, 499, 375, 250, 499}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v (the first drawn at the firing that noted the probe's end)", got, want)
	}
}

// Every gap lies in [LOWER, UPPER) and their mean is the middle.
func TestFlowcheckGapDistribution(t *testing.T) {
	const lower, upper, n = 250, 500, 2000
	wireFlow(t, flowcheck.Rule{Lower: lower, Upper: upper})
	var sum, lo, hi int64 = 0, math.MaxInt64, 0
	for i, g := range gaps(t, n) {
		if i == 0 {
			continue
		}
		if g < lower || g >= upper {
			t.Fatalf("gap %d outside [%d, %d)", g, lower, upper)
		}
		sum += g
		lo, hi = min(lo, g), max(hi, g)
	}
	// Uniform on 250..499: mean 374.5, standard deviation 72.2, so the
	// mean of 2,000 has a standard error of 1.6; the seed is fixed, so the
	// test is deterministic, and 5 is over 3 standard errors.
	mean := float64(sum) / (n - 1)
	if math.Abs(mean-374.5) > 5 {
		t.Fatalf("mean gap %.2f, want 374.5 ± 5", mean)
	}
	if lo > 255 || hi < 494 {
		t.Fatalf("gaps span only [%d, %d]", lo, hi)
	}
}

// Each goroutine counts its own flow: many goroutines at once each start
// exactly their share of traces.
func TestFlowcheckPerGoroutine(t *testing.T) {
	const goroutines, rounds = 32, 500
	sink := &startSink{n: map[*Goroutine]int{}}
	r := flowcheck.Rule{Lower: 9, Upper: 9}
	wire(t, Chain{Flowcheck: &r, Sink: sink})
	q := newProbe(t, "many")
	fire(q, 0, nil)
	var wg, done sync.WaitGroup
	done.Add(goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fire(q, 0, nil) // draws: 9 to the first trace
			for range rounds*10 - 1 {
				fire(q, 0, nil)
			}
			done.Done()
			done.Wait() // alive until all are done, so none shares a runtime g
		}()
	}
	wg.Wait()
	if len(sink.n) != goroutines {
		t.Fatalf("traces on %d goroutines, want %d", len(sink.n), goroutines)
	}
	for g, n := range sink.n {
		if n != rounds {
			t.Fatalf("goroutine %p started %d traces, want %d", g, n, rounds)
		}
	}
}

type startSink struct {
	sync.Mutex
	n map[*Goroutine]int
}

func (s *startSink) TraceStarted(g *Goroutine, root *Probe) {
	s.Lock()
	s.n[g]++
	s.Unlock()
}

func (s *startSink) TraceSpans(uint64, []Span, bool, bool) {}

// Firings inside a trace do not count down, and the countdown is drawn
// again when the trace ends, whichever firing started it.
func TestFlowcheckTraceEndsRedraw(t *testing.T) {
	wireFlow(t, flowcheck.Rule{Lower: 1, Upper: 1})
	root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
	fire(root, 0, nil) // draws 1
	fire(leaf, 0, nil) // due, but leaf has not ended: noted; then none drawn
	var got []string
	for range 4 {
		r, l := root.Metered(), leaf.Metered()
		fire(root, 0, func() {
			fire(leaf, 0, nil)
			fire(leaf, 0, nil)
		})
		got = append(got, fmt.Sprintf("%d/%d", root.Metered()-r, leaf.Metered()-l))
	}
	// Gap 1: root draws, the first leaf is traced (the countdown ran out),
	// the second draws again; next round root is traced with both leaves.
	if s := fmt.Sprint(got); s != "[0/1 1/2 0/1 1/2]" {
		t.Fatalf("root/leaf metered per round %s, want [0/1 1/2 0/1 1/2]", s)
	}
}

func TestFlowcheckAllocs(t *testing.T) {
	wireFlow(t, flowcheck.Rule{Lower: 100, Upper: 200})
	p := newProbe(t, "p")
	fire(p, 0, nil)
	if n := testing.AllocsPerRun(10000, func() { fire(p, 0, nil) }); n != 0 {
		t.Fatalf("%v allocations per firing", n)
	}
}
