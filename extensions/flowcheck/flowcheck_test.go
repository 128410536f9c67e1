package flowcheck_test

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/meter"
)

func wire(t testing.TB, lower, upper int64, opts ...flowcheck.Option) *flowcheck.Flowcheck {
	t.Helper()
	f := flowcheck.New(lower, upper, opts...)
	meter.Configure(meter.Chain{Enabled: true, Gates: []meter.Gate{f}, Extensions: []meter.Extension{f}})
	t.Cleanup(func() { meter.Configure(meter.Chain{}) })
	return f
}

var probes atomic.Int64

func newProbe(name string) *meter.Probe {
	return meter.NewProbe(fmt.Sprintf("flowcheck_test.#%d.%s", probes.Add(1), name), nil)
}

// fire fires p once and reports whether the firing was metered.
func fire(p *meter.Probe) bool {
	c := p.Count()
	p.Begin().End()
	return p.Count() > c
}

// gaps fires a fresh leaf probe until n traces have started on the calling
// goroutine and returns the gaps before them, the first one included.
func gaps(n int) []int64 {
	p := newProbe("leaf")
	fire(p) // probes must end once before they may start traces
	var out []int64
	var gap int64
	for len(out) < n {
		if fire(p) {
			out = append(out, gap)
			gap = 0
		} else {
			gap++
		}
	}
	return out
}

func TestFixedGap(t *testing.T) {
	for _, g := range []int64{0, 1, 5, 250} {
		wire(t, g, g)
		for i, got := range gaps(20) {
			if got != g {
				t.Fatalf("LOWER=UPPER=%d: gap %d is %d", g, i, got)
			}
		}
	}
}

// With the random source injected, the gaps are exactly the ones drawn,
// the extremes of [LOWER, UPPER) included.
func TestInjectedRandom(t *testing.T) {
	draws := []uint64{0, math.MaxUint64, 1 << 63, 0, math.MaxUint64}
	var i atomic.Int64
	f := wire(t, 250, 500, flowcheck.WithRandom(func() uint64 { return draws[(i.Add(1)-1)%int64(len(draws))] }))
	got := gaps(5)
	if want := []int64{250, 499, 375, 250, 499}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	if s := f.Settings(); s != "lower=250 upper=500" {
		t.Fatalf("settings %q", s)
	}
}

// Every gap lies in [LOWER, UPPER) and their mean is the middle.
func TestGapDistribution(t *testing.T) {
	const lower, upper, n = 250, 500, 2000
	wire(t, lower, upper, flowcheck.WithSeed(42))
	var sum, lo, hi int64 = 0, math.MaxInt64, 0
	for _, g := range gaps(n) {
		if g < lower || g >= upper {
			t.Fatalf("gap %d outside [%d, %d)", g, lower, upper)
		}
		sum += g
		lo, hi = min(lo, g), max(hi, g)
	}
	// Uniform on 250..499: mean 374.5, standard deviation 72.2, so the
	// mean of 2,000 has a standard error of 1.6; allow 5 (over 3 standard
	// errors; the seed is fixed, so the test is deterministic anyway).
	mean := float64(sum) / n
	if math.Abs(mean-374.5) > 5 {
		t.Fatalf("mean gap %.2f, want 374.5 ± 5", mean)
	}
	if lo > 255 || hi < 494 {
		t.Fatalf("gaps span only [%d, %d]", lo, hi)
	}
	t.Logf("mean gap %.2f over %d draws, min %d, max %d", mean, n, lo, hi)
}

// Each goroutine counts its own flow: two goroutines taking turns on one
// probe each start a trace after their own gap, and many goroutines at once
// each start exactly their share.
func TestPerGoroutine(t *testing.T) {
	wire(t, 3, 3)
	p := newProbe("shared")
	fire(p)
	turn := [2]chan bool{make(chan bool), make(chan bool)}
	traced := [2][]int{}
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 12; i++ {
				<-turn[k]
				if fire(p) {
					traced[k] = append(traced[k], i)
				}
				if k == 0 {
					turn[1] <- true
				} else if i < 12 {
					turn[0] <- true
				}
			}
		}()
	}
	turn[0] <- true
	wg.Wait()
	for k := range 2 {
		if fmt.Sprint(traced[k]) != "[4 8 12]" {
			t.Fatalf("goroutine %d traced its firings %v, want [4 8 12]", k, traced[k])
		}
	}

	// Many goroutines at once: each counts the traces it starts through a
	// sink, and stays alive until all are done, so none shares a runtime g.
	const goroutines, rounds = 32, 500
	f := flowcheck.New(9, 9)
	sink := &startSink{n: map[*meter.Goroutine]int{}}
	meter.Configure(meter.Chain{Enabled: true, Gates: []meter.Gate{f}, Sink: sink})
	q := newProbe("many")
	fire(q)
	var done sync.WaitGroup
	done.Add(goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds * 10 {
				q.Begin().End()
			}
			done.Done()
			done.Wait()
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
	if q.Count() != goroutines*rounds {
		t.Fatalf("%d metered, want %d", q.Count(), goroutines*rounds)
	}
}

type startSink struct {
	sync.Mutex
	n map[*meter.Goroutine]int
}

func (s *startSink) TraceStarted(g *meter.Goroutine, root *meter.Probe) {
	s.Lock()
	s.n[g]++
	s.Unlock()
}

func (s *startSink) TraceSpans(uint64, []meter.Span, bool, bool) {}

// Firings inside a trace do not count down, and the countdown is drawn
// again when the trace ends, whichever firing started it.
func TestTraceEndsRedraw(t *testing.T) {
	wire(t, 1, 1)
	root, leaf := newProbe("root"), newProbe("leaf")
	root.Begin().End()
	leaf.Begin().End()
	var metered []string
	for range 4 {
		r, l := root.Count(), leaf.Count()
		f := root.Begin()
		leaf.Begin().End()
		leaf.Begin().End()
		f.End()
		metered = append(metered, fmt.Sprintf("%d/%d", root.Count()-r, leaf.Count()-l))
	}
	// Gap 1: root skipped, the first leaf traced (redraw), the second leaf
	// skipped; next round root is traced with both leaves inside.
	if s := fmt.Sprint(metered); s != "[0/1 1/2 0/1 1/2]" {
		t.Fatalf("root/leaf metered per round %s, want [0/1 1/2 0/1 1/2]", s)
	}
}
func TestAllocs(t *testing.T) {
	wire(t, 100, 200, flowcheck.WithSeed(1))
	p := newProbe("p")
	fire(p)
	if n := testing.AllocsPerRun(10000, func() { p.Begin().End() }); n != 0 {
		t.Fatalf("%v allocations per firing", n)
	}
}
