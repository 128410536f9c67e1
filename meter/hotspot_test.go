package meter

import (
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/meterio/meter/extensions/hotspot"
)

// hot is hotspot at small numbers: thresholds 10 and 2 µs, a balance of
// 50; no sampling, no share threshold, no cost limit and no untimed probe
// unless a test sets them.
func hot() *hotspot.Rule {
	return &hotspot.Rule{Threshold: 10 * us, ThresholdInherent: 2 * us, Initial: 50}
}

func balance(p *Probe) int64 { return engine.hotspot.Initial - p.deficit.Load() }

// fireAmong fires p with own ns of its own, after gap ns of other work on
// the clock: p's share of the time is own/(own+gap).
func fireAmong(p *Probe, own, gap int64, body func()) {
	clk.Advance(gap)
	fire(p, own, body)
}

func TestColdSmallProbeIsDisabledAfterExactlyInitialFirings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		own      int64 // inherent ns of the probe
		childOwn int64 // ns of a metered child
	}{
		{"under both thresholds", 1 * us, 0},
		{"under the inclusive threshold", 10*us - 1, 0},
		{"under the inherent threshold", 2*us - 1, 20 * us}, // inclusive ≥ 10 µs, inherent < 2 µs
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hot()
			h.SampleShare = 0.5
			wire(t, Chain{Hotspot: h})
			p, child := newProbe(t, "p"), newProbe(t, "child")
			for n := int64(1); n <= h.Initial; n++ {
				if p.State() != Enabled {
					t.Fatalf("judged after %d firings, want %d", n-1, h.Initial)
				}
				// Its own time is a third of the time since its first firing.
				fireAmong(p, tc.own, 2*(tc.own+tc.childOwn), func() {
					if tc.childOwn > 0 {
						fire(child, tc.childOwn, nil)
					}
				})
			}
			if p.State() != DisabledHotspot {
				t.Fatalf("state %d after %d cold firings, want disabled", p.State(), h.Initial)
			}
			fire(p, tc.own, nil) // a disabled probe's firing is neither metered nor counted
			if c, n := p.Calls(), p.Metered(); c != h.Initial || n != h.Initial {
				t.Fatalf("calls %d, metered %d; want %d", c, n, h.Initial)
			}
			if l := p.row().Label; l != LabelDisabled {
				t.Fatalf("label %q", l)
			}
		})
	}
}

// A cold probe whose own time is a large share of the time is kept, and
// its calls go on being counted: timed at every call where metering costs
// little beside its own time.
func TestColdLargeProbeIsKept(t *testing.T) {
	h := hot()
	h.SampleShare = 0.5
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	for range 3 * h.Initial {
		fireAmong(p, 1*us, 100, nil)
	}
	if s := p.State(); s != Timed {
		t.Fatalf("state %d, want timed", s)
	}
	checkRow(t, p, 3*h.Initial, 3*h.Initial*us, 3*h.Initial*us)
	if l := p.row().Label; l != "" {
		t.Fatalf("label %q, want none", l)
	}
}

// A root, the entry of a unit of work, is never disabled for its share.
func TestRootIsNeverDisabled(t *testing.T) {
	h := hot()
	h.SampleShare = 0.5
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "handler")
	p.SetRoot()
	for range 2 * h.Initial {
		fireAmong(p, 1*us, 100*us, nil)
	}
	if s := p.State(); s.Disabled() {
		t.Fatalf("a root was disabled")
	}
	if c := p.Calls(); c != 2*h.Initial {
		t.Fatalf("calls %d, want %d", c, 2*h.Initial)
	}
}

func TestHotProbeIsNeverDisabled(t *testing.T) {
	h := hot()
	h.SampleShare = 1
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "hot")
	for n := int64(0); n < 20*h.Initial; n++ {
		fireAmong(p, 10*us, 1*us, nil) // exactly at both thresholds is hot
	}
	if p.State() != Enabled || balance(p) != h.Initial {
		t.Fatalf("hot probe: state %d balance %d", p.State(), balance(p))
	}
}

func TestCreditMovesByOneAndNeverExceedsInitial(t *testing.T) {
	h := hot()
	h.SampleShare = 1
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	for i := 0; i < 10; i++ {
		fire(p, 100, nil)
	}
	if b := balance(p); b != h.Initial-10 {
		t.Fatalf("balance = %d, want %d", b, h.Initial-10)
	}
	for i := 0; i < 14; i++ { // 10 credits back, 4 capped
		fire(p, 50*us, nil)
	}
	if b := balance(p); b != h.Initial {
		t.Fatalf("balance after hot firings = %d, want the initial %d", b, h.Initial)
	}
	for i := int64(0); i < h.Initial-1; i++ {
		fireAmong(p, 100, 10*us, nil)
	}
	if p.State() != Enabled {
		t.Fatal("judged one firing early")
	}
	fireAmong(p, 100, 10*us, nil)
	if p.State() != DisabledHotspot {
		t.Fatalf("state %d at zero balance, want disabled", p.State())
	}
}

// Cold firings racing to the balance's end: one verdict, and the deficit
// stops at the initial balance.
func TestConcurrentColdFiringsDisableExactly(t *testing.T) {
	h := hot()
	h.SampleShare = 1
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < h.Initial; i++ {
				judge(p, false, 1, 1, 1, 0)
			}
		}()
	}
	wg.Wait()
	if p.State() != DisabledHotspot {
		t.Fatal("not disabled")
	}
	if d := p.deficit.Load(); d < h.Initial {
		t.Fatalf("deficit = %d, want at least %d", d, h.Initial)
	}
}

func TestReenabledProbeGetsItsBalanceBack(t *testing.T) {
	h := hot()
	h.SampleShare = 1
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	for i := int64(0); i < h.Initial; i++ {
		fireAmong(p, 1, 10, nil)
	}
	if p.State() != DisabledHotspot {
		t.Fatalf("state %d", p.State())
	}
	p.Enable()
	if p.State() != Enabled || balance(p) != h.Initial || p.reenabled.Load() != 1 {
		t.Fatalf("after Enable: state %d balance %d reenabled %d", p.State(), balance(p), p.reenabled.Load())
	}
	fire(p, 1, nil)
	if c := p.Calls(); c != h.Initial+1 {
		t.Fatalf("calls %d after re-enabling, want %d", c, h.Initial+1)
	}
}

func TestHotspotLabels(t *testing.T) {
	h := hot()
	h.SampleShare = 0.5
	wire(t, Chain{Hotspot: h})
	hotp, warm, cold := newProbe(t, "hot"), newProbe(t, "warm"), newProbe(t, "cold")
	fire(hotp, 10*us, nil)
	fire(warm, 1*us, func() { fire(hotp, 10*us, nil) }) // inclusive 11 µs, inherent 1 µs
	for i := int64(0); i < h.Initial; i++ {
		fireAmong(cold, 1, 10, nil)
	}
	for p, want := range map[*Probe]string{hotp: LabelHotspot, warm: "", cold: LabelDisabled} {
		if got := p.row().Label; got != want {
			t.Errorf("%s labelled %q, want %q", p.Name(), got, want)
		}
	}
}

// A probe hot on average whose metering would cost more than the rule's
// share of its own time per firing is sampled instead; within that share,
// or with no alternative (sampling off, or no limit), it is metered at
// every call.
func TestHotOnAverageButCostlyToMeterIsSampled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sample int64   // Rule.Sample
		cost   float64 // Rule.Cost
		outer  int64   // ns, what metering a firing costs
		want   State
	}{
		{"metering within 2%", 10, 0.02, 462, Timed}, // 2% of 23.11 µs is 462.2 ns
		{"metering over 2%", 10, 0.02, 463, Sampled},
		{"no limit", 10, 0, 100 * us, Timed},
		{"sampling off", 0, 0.02, 100 * us, Timed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hot()
			h.Sample, h.Cost = tc.sample, tc.cost
			wire(t, Chain{Hotspot: h})
			setOverhead(pathMeter, 0, tc.outer) // no parent: nothing is taken off
			p := newProbe(t, "mapping")
			// One firing in ten of 200 µs, the others of 1 µs: the balance
			// of 50 runs out at the 63rd, 7 hot and 56 cold, of mean 23.11
			// µs, inclusive and own.
			const n = 63
			for i := range n {
				cost := int64(1 * us)
				if i%10 == 0 {
					cost = 200 * us
				}
				if p.State() != Enabled {
					t.Fatalf("judged at firing %d, want %d", i, n)
				}
				fire(p, cost, nil)
			}
			if s := p.State(); s != tc.want {
				t.Fatalf("state %d, want %d", s, tc.want)
			}
			if c := p.Metered(); c != n {
				t.Fatalf("metered %d, want %d", c, n)
			}
		})
	}
}

// A probe whose firings are mostly cold but whose mean is hot (a handler
// that is usually quick and sometimes slow) keeps being metered when its
// balance runs out: the label and the state agree.
func TestHotOnAverageIsKept(t *testing.T) {
	h := hot()
	h.SampleShare = 1
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "handler")
	for i := int64(0); i < 3*h.Initial; i++ {
		cost := int64(1 * us)
		if i%10 == 0 {
			cost = 200 * us // one firing in ten: mean 20.9 µs
		}
		fire(p, cost, nil)
	}
	if s, l := p.State(), p.row().Label; s != Timed || l != LabelHotspot {
		t.Fatalf("state %d label %q, want timed and hotspot", s, l)
	}
	if c, n := p.Calls(), p.Metered(); c != 3*h.Initial || n != c {
		t.Fatalf("calls %d metered %d, want every firing (%d)", c, n, 3*h.Initial)
	}
}

// A hot firing stretched by a preemption, or a cold one, cannot decide a
// probe's verdict: it is judged on its totals when its balance runs out.
func TestVerdictComesFromTotals(t *testing.T) {
	h := hot()
	h.SampleShare = 0.5
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	// 49 cold firings of 9 µs and, last, one of 1 µs: mean 8.8 µs, cold;
	// its own time is 90% of the time: kept, metered at every call.
	for range h.Initial - 1 {
		fireAmong(p, 9*us, 1*us, nil)
	}
	fireAmong(p, 1*us, 1*us, nil)
	if s := p.State(); s != Timed {
		t.Fatalf("state %d, want timed", s)
	}
}

// untimed wires hotspot with an untimed limit of 4 clock reads of 50 ns:
// 200 ns.
func untimed(t *testing.T, h *hotspot.Rule) {
	h.Untimed = 4
	wire(t, Chain{Hotspot: h, ClockCost: 50, Rand: func() uint64 { return 9 }}) // sampled gaps of 10
	if l := UntimedLimit(); l != 200 {
		t.Fatalf("untimed limit %d ns, want 200", l)
	}
}

// A cold probe whose own time per call is under the untimed limit, and
// whose share is large, is untimed: every call counted, none metered, its
// row without times, its time its parent's own.
func TestShortProbeIsUntimed(t *testing.T) {
	h := hot()
	h.SampleShare = 0.01
	untimed(t, h)
	parent, leaf := newProbe(t, "parent"), newProbe(t, "leaf")
	// The parent: 20 µs of its own, then the leaf 100 times, 150 ns each.
	round := func() {
		fire(parent, 20*us, func() {
			for range 100 {
				fire(leaf, 150, nil)
			}
		})
	}
	for range 10 {
		round()
	}
	if s := leaf.State(); s != Untimed {
		t.Fatalf("leaf state %d after 1000 firings, want untimed", s)
	}
	metered := leaf.Metered()
	if metered != h.Initial {
		t.Fatalf("%d firings metered, want the %d before the verdict", metered, h.Initial)
	}
	for range 10 {
		round()
	}
	if n := leaf.Metered(); n != metered {
		t.Fatalf("an untimed probe was metered: %d firings, %d before", n, metered)
	}
	r := leaf.row()
	if r.Count != 2000 || r.Label != LabelUntimed || r.Total != 0 || r.InherentTotal != 0 {
		t.Fatalf("leaf row %+v, want 2000 calls, untimed, no times", r)
	}
	// The parent's own time holds the leaf's, every call of it, its
	// metered ones included.
	checkRow(t, parent, 20, 20*(20*us+100*150), 20*(20*us+100*150))
}

// A recursive probe judged untimed while its first calls still run: the
// time those calls hold, their own and that of the calls they made before
// the verdict, is its parent's own, as the rest of an untimed probe's time
// is. None of it goes to the untimed row, which has no times.
func TestRecursionJudgedUntimedWhileItRunsIsItsParents(t *testing.T) {
	h := hot()
	h.SampleShare = 0.01
	untimed(t, h)
	parent, rec := newProbe(t, "parent"), newProbe(t, "rec")
	// A binary recursion of depth 7, 127 calls of 150 ns of their own
	// each: the verdict comes after 50 have ended, inside the first call.
	var walk func(depth int)
	walk = func(depth int) {
		fire(rec, 150, func() {
			if depth > 1 {
				walk(depth - 1)
				walk(depth - 1)
			}
		})
	}
	fire(parent, 20*us, func() { walk(7) })
	if s := rec.State(); s != Untimed {
		t.Fatalf("rec state %d, want untimed", s)
	}
	if r := rec.row(); r.Count != 127 || r.Label != LabelUntimed || r.InherentTotal != 0 {
		t.Fatalf("rec row %+v, want 127 calls, untimed, no times", r)
	}
	checkRow(t, parent, 1, 20*us+127*150, 20*us+127*150)
}

// A cold probe whose own time per call is under the untimed limit is
// untimed too when its calls take less than untimedReach times the limit
// in all: a short recursive function's own time is mostly estimates of its
// children's metering. One whose calls take longer, a thin wrapper of real
// work, stays timed.
func TestShortOwnTimeUntimedWithinReach(t *testing.T) {
	h := hot()
	h.SampleShare = 0.01
	untimed(t, h)
	root, near, far, work := newProbe(t, "root"), newProbe(t, "near"), newProbe(t, "far"), newProbe(t, "work")
	// near: 100 ns of its own around 1 µs of work (1.1 µs in all, under
	// 10 × 200 ns); far: 100 ns around 5 µs (over it).
	for range h.Initial {
		fire(root, 1*us, func() {
			fire(near, 100, func() { fire(work, 1*us, nil) })
			fire(far, 100, func() { fire(work, 5*us, nil) })
		})
	}
	if s := near.State(); s != Untimed {
		t.Errorf("near: state %d, want untimed (own 100 ns, 1.1 µs in all)", s)
	}
	if s := far.State(); s != Timed {
		t.Errorf("far: state %d, want timed (own 100 ns, 5.1 µs in all)", s)
	}
}

// One stalled firing among a probe's first (its code's first page faulted
// in, the host took the core) does not make its verdict: a leaf of 150 ns
// a call, one of whose first calls took 1 ms, is untimed, not hot. The
// verdict, which would be timed with the stall in, waits for more calls
// (hinges), up to maxHinges times Initial (50) more.
func TestOneStalledFiringDoesNotMakeAVerdict(t *testing.T) {
	h := hot()
	h.SampleShare = 0.01
	untimed(t, h)
	parent, leaf := newProbe(t, "parent"), newProbe(t, "leaf")
	calls := func(n int, long int64, every int) {
		fire(parent, 20*us, func() {
			for i := range n {
				cost := int64(150)
				if i%every == 10 {
					cost = long
				}
				fire(leaf, cost, nil)
			}
		})
	}
	calls(100, 1_000_000, 1000)
	if s := leaf.State(); s != Enabled {
		t.Fatalf("leaf state %d after 100 calls, want enabled: its verdict waits for more calls", s)
	}
	calls(maxHinges*50, 150, 1000)
	if s := leaf.State(); s != Untimed {
		t.Fatalf("leaf state %d, want untimed: its mean with the stall is 2 µs a call, without it 150 ns", s)
	}
	if n := leaf.Metered(); n < (maxHinges+1)*50 {
		t.Errorf("judged on %d metered firings, want %d or more", n, (maxHinges+1)*50)
	}

	// A leaf whose cost is amortized, one call in 40 taking 100 µs (a
	// buffered writer's flush), comes again: its verdict, on the second
	// set of calls, holds more than one long call and is not untimed.
	amortized := newProbe(t, "amortized")
	fire(parent, 20*us, func() {
		for i := range 150 {
			cost := int64(150)
			if i%40 == 39 {
				cost = 100 * us
			}
			fire(amortized, cost, nil)
		}
	})
	if s := amortized.State(); s == Untimed || s == Enabled {
		t.Fatalf("amortized leaf state %d, want timed or sampled: 2.6 µs a call", s)
	}
}

// A probe whose calls are long enough to time but whose metering would
// cost too much of its own time is sampled: every call counted, one in
// Sample metered, its totals estimated from those.
func TestSampledProbeEstimates(t *testing.T) {
	h := hot()
	h.Sample, h.Cost, h.SampleShare = 10, 0.02, 0.01
	untimed(t, h)
	setOverhead(pathMeter, 0, 100) // metering costs 100 ns: over 2% of 1 µs
	parent, p := newProbe(t, "parent"), newProbe(t, "p")
	round := func() {
		fire(parent, 10*us, func() {
			for range 100 {
				fire(p, 1*us, nil)
			}
		})
	}
	for range 10 {
		round()
	}
	if s := p.State(); s != Sampled {
		t.Fatalf("state %d, want sampled", s)
	}
	// The parent's first 50 firings force their children, 64 each at most.
	for range 40 {
		round()
	}
	before, parent0 := p.Metered(), parent.row()
	for range 60 {
		round()
	}
	// One in ten: each P counts down on its own, so a goroutine that moves
	// to another P finds that P's countdown where it was left, and its next
	// selection comes sooner or later by up to a gap, once per P.
	if metered := p.Metered() - before; metered < 600-int64(countProcs) || metered > 600+int64(countProcs) {
		t.Fatalf("%d of 6000 calls metered, want one in ten", metered)
	}
	r := p.row()
	if r.Count != 11000 || r.Label != LabelSampled {
		t.Fatalf("row %+v, want 11000 calls, sampled", r)
	}
	// Every call takes 1 µs: the estimate is exact.
	if r.Total != 11000*us || r.InherentTotal != 11000*us {
		t.Fatalf("total %d ns inherent %d, want %d", r.Total, r.InherentTotal, 11000*us)
	}
	// The parent's own time is its own: the sampled calls it made, no
	// longer forced, are charged away, metered or not, ten times 1 µs for
	// each one metered; exactly, but for a gap split between Ps where the
	// goroutine moved (10 µs each at most).
	if own := parent.row().InherentTotal - parent0.InherentTotal; own < 60*10*us-10*us*int64(countProcs) || own > 60*10*us+10*us*int64(countProcs) {
		t.Fatalf("parent's own time over the last 60 calls %d ns, want %d", own, 60*10*us)
	}
}

// A selected firing whose own time is many times its probe's mean, and
// over hotspot's threshold, held a pause in which its goroutine did not
// run (the host took the core, the collector stopped the world), and it
// stands for a whole gap of calls: it keeps the mean. One whose goroutine
// left its P only to work for the collector (an assist) ran throughout,
// and a CPU profile charges that work to the function: it keeps its time.
func TestInterruptedFiringKeepsTheMeanUnlessItWorked(t *testing.T) {
	var left int
	var worked bool
	h := hot()
	h.Sample, h.Cost, h.SampleShare, h.Untimed = 10, 0.02, 0.01, 4
	wire(t, Chain{
		Hotspot: h, ClockCost: 50, Rand: func() uint64 { return 9 }, // sampled gaps of 10
		Descheduled: func() int { n := left; left = 0; return n },
		Worked:      func() bool { w := worked; worked = false; return w },
	})
	setOverhead(pathMeter, 0, 100) // metering costs 100 ns: over 2% of 1 µs
	parent, p := newProbe(t, "parent"), newProbe(t, "p")
	round := func(long int64, assist bool) {
		fire(parent, 10*us, func() {
			for range 100 {
				fire(p, 1*us+long, func() {
					if assist {
						left, worked = 1, true
					}
				})
			}
		})
	}
	for range 50 { // past the parent's forced firings
		round(0, false)
	}
	if s := p.State(); s != Sampled {
		t.Fatalf("state %d, want sampled", s)
	}
	// Exact on one P; a goroutine that moves to another P finds that P's
	// countdown where it was left: a selected firing more or fewer, of
	// weight 10, per P.
	within := func(what string, got, want, call int64) {
		t.Helper()
		if slack := 10 * call * int64(countProcs); got < want-slack || got > want+slack {
			t.Fatalf("%s: %d ns, want %d", what, got, want)
		}
	}
	r0 := p.row()
	round(2*ms, false)
	r1 := p.row()
	within("interrupted: own time", r1.InherentTotal-r0.InherentTotal, 100*us, us)
	within("interrupted: inclusive time", r1.Total-r0.Total, 100*us, us)
	round(2*ms, true)
	r2 := p.row()
	within("assisted: own time", r2.InherentTotal-r1.InherentTotal, 100*(1*us+2*ms), 1*us+2*ms)
	within("assisted: inclusive time", r2.Total-r1.Total, 100*(1*us+2*ms), 1*us+2*ms)
	if r2.Count != 5200 || r2.Label != LabelSampled {
		t.Fatalf("row %+v, want 5200 calls, sampled", r2)
	}
}

// A wall clock cannot tell a pause (the host, the OS) from long work of
// the function's own (a buffered writer's flush). After two suspect
// firings, a probe's selected firings read the thread's CPU clock as they
// begin (here those of weight 8, every other one), and a suspect one that did is judged
// by it: the time its thread did not run is taken off, its work stands.
// A firing that read it stands for no calls (it ran colder): the others
// stand for its gap. The suspects that did not read it are pending: taken
// off in the share the read ones were pauses, all of it while none was
// read.
func TestSuspectFiringJudgedByTheCPUClock(t *testing.T) {
	cpu := int64(1_000_000) // the thread's CPU clock, ns
	var r uint64
	h := hot()
	h.Sample, h.Cost, h.SampleShare, h.Untimed = 8, 0.02, 0.01, 4
	wire(t, Chain{
		Hotspot: h, ClockCost: 50, Rand: func() uint64 { r++; return 7 + r%2 }, // sampled gaps of 8 and 9 by turns
		ThreadCPU: func() int64 { return cpu },
	})
	setOverhead(pathMeter, 0, 100) // metering costs 100 ns: over 2% of 1 µs
	parent := newProbe(t, "parent")
	for range h.Initial {
		fire(parent, 10*us, nil) // past the firings that force their children (forcing)
	}
	run := func(p *Probe, rounds int, long int64, work bool) {
		for range rounds {
			fire(parent, 10*us, func() {
				for range 100 {
					fire(p, 1*us, func() {
						cpu += 1 * us
						clk.Advance(long)
						if work {
							cpu += long
						}
					})
				}
			})
		}
	}
	within := func(what string, got, want, call int64) {
		t.Helper()
		if slack := 8 * call * int64(countProcs); got < want-slack || got > want+slack {
			t.Fatalf("%s: %d ns, want %d", what, got, want)
		}
	}
	var p *Probe
	for _, c := range []struct {
		name string
		work bool
		want int64 // own ns of the last round's 100 calls
	}{
		{"paused", false, 100 * us},
		{"working", true, 100 * (1*us + 2*ms)},
	} {
		p = newProbe(t, c.name)
		run(p, 10, 0, false)
		if s := p.State(); s != Sampled {
			t.Fatalf("%s: state %d, want sampled", c.name, s)
		}
		r0 := p.row()
		run(p, 1, 2*ms, c.work)
		if !p.cpuTimedFor(cpuPauses) {
			t.Fatalf("%s: selected firings do not read the CPU clock after %d suspects", c.name, p.suspects.Load())
		}
		r1 := p.row()
		within(c.name+": own time", r1.InherentTotal-r0.InherentTotal, c.want, 1*us+2*ms)
		// A probe whose long calls are work holds its time in a few of
		// them: it is sampled as often as its cost allows (here, with
		// metering free, one call in 4), the other at the engine's rate.
		if c.work {
			if w, x := p.work.Load(), p.excess.Load(); w != x || x == 0 {
				t.Errorf("%s: work %d ns of an excess of %d, want all of it", c.name, w, x)
			}
			if r := p.rate.Load(); r != 4 {
				t.Errorf("%s: sampled one call in %d, want 4", c.name, r)
			}
		} else if w, r := p.work.Load(), p.rate.Load(); w != 0 || r != 0 {
			t.Errorf("%s: work %d ns, rate %d; want none, the engine's", c.name, w, r)
		}
	}
	if n := testing.AllocsPerRun(10, func() { run(p, 1, 20*us, true) }); n != 0 {
		t.Errorf("%v allocations a round of suspect firings read by the CPU clock", n)
	}
}

// A sampled probe's unmetered calls charge their timed parent with the
// probe's mean own time as it stands. When the mean moves (its calls grow
// longer, or its rare long calls are found to be work), the calls charged
// before are repriced at the new mean: the parent's own time is its
// firings' time less the probe's own total as the probe's row counts it,
// not less what the probe's mean was as each call ran.
func TestParentRepricedWhenTheMeanMoves(t *testing.T) {
	var r uint64
	h := hot()
	h.Sample, h.Cost, h.SampleShare = 8, 0.02, 0.01
	wire(t, Chain{Hotspot: h, ClockCost: 50, Rand: func() uint64 { r++; return 7 + r%2 }})
	setOverhead(pathMeter, 0, 100) // metering costs 100 ns: over 2% of the leaf's calls, under 2% of the parent's
	parent, leaf := newProbe(t, "parent"), newProbe(t, "leaf")
	var wall int64
	run := func(rounds int, call int64) {
		for range rounds {
			fire(parent, 10*us, func() {
				for range 100 {
					fire(leaf, call, nil)
				}
			})
			wall += 10*us + 100*call
		}
	}
	run(20, 1*us)
	if s := leaf.State(); s != Sampled {
		t.Fatalf("leaf: state %d, want sampled", s)
	}
	run(200, 3*us) // the leaf's mean climbs from 1 µs towards 3 µs as its calls are sampled
	pr, lr := parent.row(), leaf.row()
	if pr.Count != 220 || lr.Count != 22000 {
		t.Fatalf("counts %d and %d, want 220 and 22000", pr.Count, lr.Count)
	}
	// The leaf's estimate is a sample: within 1% of its true 62 ms.
	if lo, hi := int64(61400*us), int64(62600*us); lr.InherentTotal < lo || lr.InherentTotal > hi {
		t.Fatalf("leaf: own %d ns, want %d to %d", lr.InherentTotal, lo, hi)
	}
	// The parent holds the rest: its own 2.2 ms and the leaf's estimate's
	// error. Charged at the mean as each call ran, it kept about 5 ms more.
	if sum := pr.InherentTotal + lr.InherentTotal; sum < wall-100*us || sum > wall+100*us {
		t.Errorf("own times add up to %d ns, want the %d of the parent's firings", sum, wall)
	}
	if own := pr.InherentTotal; own < 1900*us || own > 2500*us {
		t.Errorf("parent: own %d ns, want about 2.2 ms", own)
	}
}

// A sampled probe whose calls cost more under one caller than under
// another: its unmetered calls charge both callers at its one mean, and
// repricing brings each caller's charge to what its selected calls under
// that caller say its calls there took. Here a hundred calls of 1 µs
// under a and one of 100 µs under b: at the mean (about 2 µs), b would
// keep 98 µs of each call as its own, and a be charged twice its calls.
func TestParentRepricedPerCaller(t *testing.T) {
	var r uint64
	h := hot()
	h.Sample, h.Cost, h.SampleShare = 8, 0.02, 0.01
	wire(t, Chain{Hotspot: h, ClockCost: 50, Rand: func() uint64 { r++; return 7 + r%2 }})
	setOverhead(pathMeter, 0, 100) // over 2% of the leaf's short calls: sampled
	a, b, leaf := newProbe(t, "a"), newProbe(t, "b"), newProbe(t, "leaf")
	run := func(rounds int) {
		for range rounds {
			fire(a, 10*us, func() {
				for range 100 {
					fire(leaf, 1*us, nil)
				}
			})
			fire(b, 10*us, func() { fire(leaf, 100*us, nil) })
		}
	}
	run(20)
	if s := leaf.State(); s != Sampled {
		t.Fatalf("leaf: state %d, want sampled", s)
	}
	run(3000)
	ar, br, lr := a.row(), b.row(), leaf.row()
	if ar.Count != 3020 || br.Count != 3020 || lr.Count != 3020*101 {
		t.Fatalf("counts %d, %d and %d, want 3020, 3020 and %d", ar.Count, br.Count, lr.Count, 3020*101)
	}
	own, leafOwn := int64(3020*10*us), int64(3020*200*us)
	if lr.InherentTotal < leafOwn-leafOwn/20 || lr.InherentTotal > leafOwn+leafOwn/20 {
		t.Errorf("leaf: own %d ns, want %d within 5%%", lr.InherentTotal, leafOwn)
	}
	// Each caller's own time is its own, within 2.5% of the leaf's time
	// under it (300 ms, a quarter of the caller's own): repricing splits
	// the leaf's estimate by its selected calls under each caller, about
	// 400 under b, whose calls the goroutine's moves between Ps select
	// now more, now less. Priced at the leaf's mean, b kept 290 ms.
	for _, c := range []struct {
		name string
		own  int64
	}{{"a", ar.InherentTotal}, {"b", br.InherentTotal}} {
		if tol := leafOwn / 2 / 40; c.own < own-tol || c.own > own+tol {
			t.Errorf("%s: own %d ns, want %d within %d", c.name, c.own, own, tol)
		}
	}
	if sum, wall := ar.InherentTotal+br.InherentTotal+lr.InherentTotal, 2*own+leafOwn; sum < wall-wall/100 || sum > wall+wall/100 {
		t.Errorf("own times add up to %d ns, want the %d of the callers' firings", sum, wall)
	}
}

// A function whose own time is under the untimed limit and that recurses,
// here through two others (a parser's expression, term and factor), is
// untimed however long its calls are inclusive: that time is its own
// calls', nested. One that does as little but wraps a long callee (a
// middleware closure around a handler) stays timed.
func TestRecursionThroughOthersIsUntimed(t *testing.T) {
	parent := wireRechecks(t)    // untimed limit 200 ns, untimedReach × 200 = 2 µs
	setOverhead(pathMeter, 0, 0) // the manual clock does not advance in the engine
	x, y, z := newProbe(t, "x"), newProbe(t, "y"), newProbe(t, "z")
	var descend func(depth int)
	descend = func(depth int) {
		fire(x, 40, func() {
			fire(y, 40, func() {
				fire(z, 40, func() {
					if depth > 0 {
						descend(depth - 1)
					}
				})
			})
		})
	}
	wrap, handler := newProbe(t, "wrap"), newProbe(t, "handler")
	for range 3 {
		fire(parent, 10*us, func() { descend(100) }) // calls of 6 µs inclusive at the top, 3 µs on average
		for range 100 {
			fire(wrap, 40, func() { fire(handler, 5*us, nil) })
		}
	}
	for _, p := range []*Probe{x, y, z} {
		if s := p.State(); s != Untimed {
			t.Errorf("%s: state %d, want untimed", p.Name(), s)
		}
		if n := p.Calls(); n != 303 {
			t.Errorf("%s: %d calls, want 303", p.Name(), n)
		}
	}
	if s := wrap.State(); s == Untimed || s == Enabled {
		t.Errorf("wrap: state %d, want judged and timed", s)
	}
}

// A recursive probe sampled on its first calls, whose selected calls then
// take less than the untimed limit of their own, is untimed, and what its
// unmetered calls charged its timed parent is given back: here x, y and z
// recurse through one another at 400 ns a call before their verdict (300
// of their own, less a metered child's overhead) and 40 ns after. One that
// does not recurse stays sampled.
func TestRecursiveProbeUntimedOnItsSelectedCalls(t *testing.T) {
	parent := wireRechecks(t) // untimed limit 200 ns; a metered firing's outer overhead 100 ns
	x, y, z, flat := newProbe(t, "x"), newProbe(t, "y"), newProbe(t, "z"), newProbe(t, "flat")
	var descend func(depth int, cost int64)
	descend = func(depth int, cost int64) {
		fire(x, cost, func() {
			fire(y, cost, func() {
				fire(z, cost, func() {
					if depth > 0 {
						descend(depth-1, cost)
					}
				})
			})
		})
	}
	var wall int64
	run := func(rounds int, cost int64) {
		for range rounds {
			fire(parent, 10*us, func() {
				descend(9, cost)
				for range 30 {
					fire(flat, cost, nil)
				}
			})
			wall += 10*us + 60*cost
		}
	}
	run(20, 400)
	for _, p := range []*Probe{x, y, z, flat} {
		if s := p.State(); s != Sampled {
			t.Fatalf("%s: state %d after its first calls, want sampled", p.Name(), s)
		}
	}
	before := parent.row().InherentTotal
	run(400, 40)
	for _, p := range []*Probe{x, y, z} {
		if s := p.State(); s != Untimed {
			t.Errorf("%s: state %d, want untimed", p.Name(), s)
		}
	}
	if s := flat.State(); s != Sampled {
		t.Errorf("flat: state %d, want sampled", s)
	}
	// The parent holds its own and the recursion's calls since the
	// verdict, within 1%: but for those metered (a selected call stands for
	// 7 or 8 calls, and forces the recursion under it). What the
	// recursion's unmetered calls charged it while sampled comes back: 2%
	// short without.
	got, want := parent.row().InherentTotal-before, int64(400*(10*us+30*40))
	if got < want-want/100 || got > want+want/100 {
		t.Errorf("parent: own %d ns since the verdict, want %d within 1%%", got, want)
	}
}

// wireRechecks wires hotspot with sampling (one call in 7 or 8 selected),
// an untimed limit of 200 ns, and returns a parent probe past the firings
// that force their children (forcing), metered at every call.
func wireRechecks(t *testing.T) *Probe {
	var r uint64
	h := hot()
	h.Sample, h.Cost, h.SampleShare, h.Untimed = 8, 0.02, 0.01, 4
	wire(t, Chain{Hotspot: h, ClockCost: 50, Rand: func() uint64 { r++; return 7 + r%2 }})
	setOverhead(pathMeter, 0, 100)
	if l := UntimedLimit(); l != 200 {
		t.Fatalf("untimed limit %d ns, want 200", l)
	}
	parent := newProbe(t, "parent")
	for range h.Initial {
		fire(parent, 10*us, nil)
	}
	return parent
}

// An untimed verdict rests on a probe's first calls. Calls that grow long
// later are found at its checkpoints, where one call is timed again: once
// those take the untimed limit on average, the probe is sampled, and the
// calls it made untimed are charged off its parent at its sampled mean.
// A probe whose calls stay short stays untimed.
func TestUntimedProbeRecheckedWhenItsCallsGrowLong(t *testing.T) {
	parent := wireRechecks(t)
	grows, stays := newProbe(t, "grows"), newProbe(t, "stays")
	var wall int64
	run := func(rounds int, call int64) {
		for range rounds {
			fire(parent, 10*us, func() {
				for range 50 {
					fire(grows, call, nil)
					fire(stays, 50, nil)
				}
			})
			wall += 10*us + 50*(call+50)
		}
	}
	run(40, 50)
	for _, p := range []*Probe{grows, stays} {
		if s := p.State(); s != Untimed {
			t.Fatalf("%s: state %d after its first calls, want untimed", p.Name(), s)
		}
	}
	// recheckEvery checkpoints of grows, denseGap calls apart on each P (more calls where the goroutine moves between
	// Ps): its calls are 1 µs from the start of this run.
	for i := 0; grows.rechecked.Load() < recheckEvery && i < 10*recheckEvery; i++ {
		run(denseGap/50+1, 1*us)
	}
	if s := grows.State(); s != Sampled {
		t.Fatalf("grows: state %d after %d rechecks of 1 µs calls, want sampled", s, grows.rechecked.Load())
	}
	if s, n := stays.State(), stays.rechecked.Load(); s != Untimed || n < recheckEvery {
		t.Fatalf("stays: state %d after %d rechecks of 50 ns calls, want untimed after at least %d", s, n, recheckEvery)
	}
	run(1000, 1*us)
	pr, gr := parent.row(), grows.row()
	if gr.Count != grows.Calls() || gr.Label != LabelSampled {
		t.Fatalf("grows: count %d label %q, want %d sampled", gr.Count, gr.Label, grows.Calls())
	}
	// The row counts every call at the sampled mean, the 2,000 short
	// calls of the first run too (2,000 × 950 ns over); the parent is
	// charged the same.
	if sum := pr.InherentTotal + gr.InherentTotal; sum < wall-wall/100 || sum > wall+wall/100 {
		t.Errorf("own times add up to %d ns, want the %d of the parent's firings", sum, wall)
	}
	// The parent keeps its own and the short calls', less the 2,000 first
	// calls of grows charged at its sampled mean.
	if own, want := pr.InherentTotal, int64(parent.Calls())*(10*us+50*50)-2000*950; own < want-want/10 || own > want+want/10 {
		t.Errorf("parent: own %d ns, want about %d (its own and the short calls')", own, want)
	}
}

// An untimed probe's first denseRechecks rechecks come denseGap calls
// apart on a P, the later ones
// checkpointEvery apart: a function of a hundred thousand calls is
// rechecked tens of times, not a dozen, and one of billions no more often
// than before.
func TestUntimedProbeRecheckedDenselyAtFirst(t *testing.T) {
	parent := wireRechecks(t)
	leaf := newProbe(t, "leaf")
	calls := 0
	run := func(n int) {
		for ; n > 0; n -= 50 {
			fire(parent, 10*us, func() {
				for range 50 {
					fire(leaf, 50, nil)
				}
			})
			calls += 50
		}
	}
	run(2000)
	if s := leaf.State(); s != Untimed {
		t.Fatalf("state %d after its first calls, want untimed", s)
	}
	ps := runtime.GOMAXPROCS(0)
	calls = 0
	run(100_000)
	// 64 rechecks in its first 65,536 calls, then one every 8,192 (4);
	// a countdown on each P the goroutine ran on, a gap at most lost on each.
	if n := int(leaf.rechecked.Load()); n < 68-2*ps || n > 68+2*ps {
		t.Fatalf("%d rechecks in %d calls, want 68 or within %d of it", n, calls, 2*ps)
	}
	run(40 * checkpointEvery)
	if n, most := int(leaf.rechecked.Load()), denseRechecks+calls/checkpointEvery+2*ps; n < denseRechecks || n > most {
		t.Fatalf("%d rechecks in %d calls, want %d to %d", n, calls, denseRechecks, most)
	}
	if s := leaf.State(); s != Untimed {
		t.Fatalf("state %d after %d rechecks of 50 ns calls, want untimed", s, leaf.rechecked.Load())
	}
}

// One long rechecked call (its goroutine taken off its P in it, which the
// sampler's look at that moment charges a whole interval) does not make an
// untimed probe sampled: a rechecked call counts at recheckCap untimed
// limits at most. Two calls in eight at a few times the limit do.
func TestUntimedProbeNotSampledForOneLongRecheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		long    int64 // ns of the long rechecked calls
		every   int32 // which rechecks are long: one in every
		sampled bool
	}{
		{"one call of 5 ms", 5_000_000, 1 << 30, false},
		{"a quarter of the calls at 5 limits", 1000, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := wireRechecks(t)
			leaf := newProbe(t, "leaf")
			for range 40 {
				fire(parent, 10*us, func() {
					for range 50 {
						fire(leaf, 50, nil)
					}
				})
			}
			if s := leaf.State(); s != Untimed {
				t.Fatalf("state %d after its first calls, want untimed", s)
			}
			n := int32(0) // rechecks made here
			for leaf.rechecked.Load() < 4*recheckEvery && leaf.State() == Untimed {
				fire(parent, 10*us, func() {
					for range 50 {
						f := leaf.Begin()
						cost := int64(50)
						if fr := f.frame(); fr != nil && fr != firstEnd && fr.how == meterRecheck {
							if n%c.every == 0 {
								cost = c.long
							}
							n++
						}
						clk.Advance(cost)
						leaf.End(&f)
					}
				})
			}
			if s := leaf.State(); (s == Sampled) != c.sampled {
				t.Fatalf("state %d after %d rechecks, want sampled %v", s, leaf.rechecked.Load(), c.sampled)
			}
		})
	}
}

// A recursive untimed probe is rechecked with the calls of its own nested
// in a rechecked call counted: that call's own time holds theirs, untimed,
// and stands for all of them. Here each call is 20 ns of its own at first,
// in a recursion 12 deep (4,095 calls a round), where a call high in the
// recursion holds 82 µs. Calls that stay so keep the probe untimed, its
// rechecked mean 20 ns a call exactly; calls that grow to 300 ns each, over
// the 200 ns limit, make it sampled.
func TestRecursiveUntimedProbeRecheckedByItsCalls(t *testing.T) {
	for _, c := range []struct {
		name    string
		later   int64 // ns of its own a call after its verdict
		sampled bool
	}{
		{"stays short", 20, false},
		{"grows long", 300, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := wireRechecks(t)
			rec := newProbe(t, "rec")
			own := int64(20)
			var call func(depth int)
			call = func(depth int) {
				fire(rec, own, func() {
					if depth > 1 {
						call(depth - 1)
						call(depth - 1)
					}
				})
			}
			round := func() { fire(parent, 10*us, func() { call(12) }) }
			round()
			if s := rec.State(); s != Untimed || !rec.nested.Load() {
				t.Fatalf("state %d, recursive %v after its first calls, want untimed and recursive", s, rec.nested.Load())
			}
			own = c.later
			calls0, sum0 := rec.recheckCalls.Load(), rec.recheckOwn.Load() // rechecks of the first round's last calls
			rounds := 1
			for rec.rechecked.Load() < 4*recheckEvery && rec.State() == Untimed {
				round()
				if rounds++; rounds > 1000 {
					t.Fatalf("%d rechecks in %d rounds", rec.rechecked.Load(), rounds)
				}
			}
			if s := rec.State(); (s == Sampled) != c.sampled {
				t.Fatalf("state %d after %d rechecks, want sampled %v", s, rec.rechecked.Load(), c.sampled)
			}
			if all, n := rec.recheckCalls.Load(), int64(rec.rechecked.Load()); all <= n {
				t.Fatalf("%d rechecks hold %d calls: nested calls not counted", n, all)
			}
			calls, sum := rec.recheckCalls.Load()-calls0, rec.recheckOwn.Load()-sum0
			if sum != c.later*calls {
				t.Fatalf("rechecked calls: %d ns of their own over %d calls, want %d a call", sum, calls, c.later)
			}
			if got, want := rec.row().Count, rec.Calls(); got != want || got != int64(rounds)*4095 {
				t.Fatalf("count %d, want its %d calls", got, want)
			}
			if !c.sampled {
				return
			}
			// Sampled by its rechecks, it stays so, though its selected
			// firings come to say its calls are short again: a verdict
			// that went back and forth would give its parent back, at
			// each turn, what its calls never took.
			own = 20
			for i, w := 0, 4*rec.selectedW.Load()+untimeAfter*engine.hotspot.Initial; rec.selectedW.Load() < w && rec.State() == Sampled; i++ {
				if i > 1000 {
					t.Fatalf("selected firings stand for %d calls after %d rounds", rec.selectedW.Load(), i)
				}
				round()
			}
			if s := rec.State(); s != Sampled {
				t.Fatalf("state %d once its selected firings say 20 ns a call, want sampled", s)
			}
		})
	}
}

// With hotspot off every firing is metered, but a probe whose calls are
// too short to time is still untimed: judged once, on its first few
// thousand firings, by hotspot's rule, then counted only; its own
// time, what it charged its parent before the verdict too, is the
// parent's.
// A probe long enough to time, and a parent of few firings, stay timed.
func TestEveryFiringMeteredShortProbeIsUntimed(t *testing.T) {
	wire(t, Chain{Untimed: &hotspot.Rule{ThresholdInherent: 2 * us, Untimed: 4}, ClockCost: 50})
	if l := UntimedLimit(); l != 200 {
		t.Fatalf("untimed limit %d ns, want 200", l)
	}
	parent, leaf, long := newProbe(t, "parent"), newProbe(t, "leaf"), newProbe(t, "long")
	round := func() {
		fire(parent, 1*us, func() {
			fire(leaf, 150, nil)
			fire(long, 500, nil)
		})
	}
	// Judged when one P's row holds shortJudgeAt firings: on one P, after
	// sharedFirings+shortJudgeAt; later if the goroutine moved.
	rounds := int64(0)
	for ; leaf.State() != Untimed && rounds < 100*shortJudgeAt; rounds++ {
		round()
	}
	judged := leaf.Metered()
	if judged < sharedFirings+shortJudgeAt || judged != rounds {
		t.Fatalf("leaf untimed after %d firings, %d metered, want every one and at least %d", rounds, judged, sharedFirings+shortJudgeAt)
	}
	for range 100 {
		round()
	}
	rounds += 100
	if m := leaf.Metered(); m != judged {
		t.Fatalf("leaf: %d firings metered, want none after its verdict (%d)", m, judged)
	}
	if m := long.Metered(); m != rounds {
		t.Fatalf("long: %d firings metered, want every one, %d", m, rounds)
	}
	if r := leaf.row(); r.Label != LabelUntimed || r.Count != rounds {
		t.Errorf("leaf: label %q count %d, want untimed, %d", r.Label, r.Count, rounds)
	}
	for _, p := range []*Probe{parent, long} {
		if r := p.row(); r.Label != "" {
			t.Errorf("%s: label %q, want none (timed)", p.Name(), r.Label)
		}
	}
	checkRow(t, long, rounds, rounds*500, rounds*500)
	checkRow(t, parent, rounds, rounds*1650, rounds*1150)
}

// With every firing metered, an untimed verdict rests on a probe's first
// shortJudgeAt calls, which may run shorter than the rest (a heap still
// small, no collection yet). Its rechecks find calls that grow long, and
// it is metered at every call again, its row timed and counting every
// call; a probe whose calls stay short stays untimed.
func TestEveryFiringMeteredUntimedProbeRecheckedWhenItsCallsGrowLong(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // checkpoints count down on each P
	wire(t, Chain{Untimed: &hotspot.Rule{ThresholdInherent: 2 * us, Untimed: 4}, ClockCost: 50})
	if l := UntimedLimit(); l != 200 {
		t.Fatalf("untimed limit %d ns, want 200", l)
	}
	parent, grows, stays := newProbe(t, "parent"), newProbe(t, "grows"), newProbe(t, "stays")
	round := func(call int64) {
		fire(parent, 1*us, func() {
			fire(grows, call, nil)
			fire(stays, 50, nil)
		})
	}
	for i := 0; (grows.State() != Untimed || stays.State() != Untimed) && i < 100*shortJudgeAt; i++ {
		round(150)
	}
	for _, p := range []*Probe{grows, stays} {
		if s := p.State(); s != Untimed {
			t.Fatalf("%s: state %d after its first calls, want untimed", p.Name(), s)
		}
	}
	// recheckEvery checkpoints of grows, denseGap calls apart: its calls
	// are 1 µs from here on.
	for i := 0; grows.State() == Untimed && i < 2*recheckEvery*denseGap; i++ {
		round(1 * us)
	}
	if s, n := grows.State(), grows.rechecked.Load(); s != Enabled || n != recheckEvery {
		t.Fatalf("grows: state %d after %d rechecks of 1 µs calls, want metered at every call after %d", s, n, recheckEvery)
	}
	if s, n := stays.State(), stays.rechecked.Load(); s != Untimed || n < recheckEvery {
		t.Fatalf("stays: state %d after %d rechecks of 50 ns calls, want untimed after at least %d", s, n, recheckEvery)
	}
	before := grows.Metered()
	for range 1000 {
		round(1 * us)
	}
	if m := grows.Metered() - before; m != 1000 {
		t.Errorf("grows: %d of its last 1000 firings metered, want every one", m)
	}
	r := grows.row()
	if r.Label != "" || r.Count != grows.Calls() {
		t.Fatalf("grows: label %q count %d, want timed (no label), %d", r.Label, r.Count, grows.Calls())
	}
	// Its metered calls, 150 ns before the verdict and 1 µs after the
	// rechecks, scaled to its count: the calls it made untimed in
	// between are priced at their mean.
	if a := r.InherentAvg; a <= 150 || a >= 1*us {
		t.Errorf("grows: own %d ns a call, want between its calls before and after, 150 and 1000", a)
	}
	if r := stays.row(); r.Label != LabelUntimed {
		t.Errorf("stays: label %q, want untimed", r.Label)
	}
}

// A sampled probe's selected firings can measure longer than its calls run
// among its callers (a clock read waits for the work before it). A stretch
// that ran whole bounds its unmetered calls: they took no more than its
// wall time. Where one probe's calls alone were charged to stretches,
// what their estimate exceeds those by in all is taken off the probe; a
// caller's row shows no own time below 0.
func TestOverchargedEstimateBound(t *testing.T) {
	// Thresholds of 0: every firing hot, so that nothing is judged; gaps
	// of 1000 between selected firings; the parent's first firing forces.
	h := &hotspot.Rule{Initial: 1, Sample: 1000}
	wire(t, Chain{Hotspot: h, Rand: func() uint64 { return 999 }})
	parent, p := newProbe(t, "parent"), newProbe(t, "p")
	call := func() { // 1.5 µs metered, 1 µs not
		f := p.Begin()
		if f != 0 {
			clk.Advance(500)
		}
		clk.Advance(1 * us)
		p.End(&f)
	}
	calls := func(n int) func() {
		return func() {
			for range n {
				call()
			}
		}
	}
	fire(parent, 0, calls(4)) // metered: 1.5 µs each
	if !p.setState(p.State(), Sampled) {
		t.Fatal("p not sampled")
	}
	if m := p.ownMean.Load(); m != 1500 {
		t.Fatalf("mean own %d ns, want 1500", m)
	}
	fire(parent, 0, calls(200)) // none selected: 200 µs, charged 300
	checkRow(t, p, 204, 206*us, 206*us)
	checkRow(t, parent, 2, 206*us, 0)
	p.refreshOwnMean() // at its next selected firings
	if m, raw := p.ownMean.Load(), p.rawMean.Load(); raw != 1500 || m != 206*us/204 {
		t.Fatalf("mean own %d ns, uncorrected %d; want %d, 1500", m, raw, 206*us/204)
	}

	// The bound binds on the sums: a stretch of calls longer than the
	// estimate (100 of 2.5 µs, 150 µs at the uncorrected 1.5 µs) gives
	// back the 100 µs taken off before, and its caller keeps its own time
	// in the two stretches, the first's −100 µs (the probe has no selected
	// firing to reprice its calls by) and this one's 250 µs less the charge
	// at the corrected mean; a stretch of 10 calls of 1 µs
	// takes off what the estimate exceeds them by.
	over0 := int64(p.stats.sum().over())
	parentOwn := parent.row().InherentTotal
	mean := p.ownMean.Load()
	fire(parent, 0, func() {
		for range 100 {
			f := p.Begin()
			clk.Advance(2500)
			p.End(&f)
		}
	})
	if over, want := int64(p.stats.sum().over()), over0-100*us; over != want || want != 0 {
		t.Fatalf("over %d ns after a stretch of long calls, want %d", over, want)
	}
	if own, want := parent.row().InherentTotal-parentOwn, 150*us-100*mean; own != want || parentOwn != 0 {
		t.Fatalf("parent: %d ns of own time in the stretch of long calls, want %d", own, want)
	}
	fire(parent, 0, calls(10))
	if over, want := int64(p.stats.sum().over()), over0-100*us+10*500; over != want {
		t.Fatalf("over %d ns after a stretch of 10 calls, want %d", over, want)
	}

	// Another probe charged the stretch too: no bound.
	q := newProbe(t, "q")
	fire(q, 1*us, nil)
	if !q.setState(q.State(), Sampled) {
		t.Fatal("q not sampled")
	}
	before := int64(p.stats.sum().over())
	fire(parent, 0, func() {
		calls(100)()
		fire(q, 1*us, nil)
	})
	if over := int64(p.stats.sum().over()); over != before {
		t.Fatalf("over %d ns, want %d: no bound", over, before)
	}

	// A probe with a metered child is not bounded: its calls' own time
	// lies in more than one stretch.
	p.parent.Store(true)
	before = int64(p.stats.sum().over())
	fire(parent, 0, calls(100))
	if over := int64(p.stats.sum().over()); over != before {
		t.Fatalf("over %d ns with a metered child, want %d", over, before)
	}
}

// The bound takes off what the probe's estimate, as it stands, exceeds the
// bounded calls' own time by: where its first selected firings read long
// and the later ones do not, the excess goes with them, and the parent is
// charged what the probe's row shows.
func TestOverchargedBoundFollowsTheEstimate(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: one countdown, the selected firings counted
	h := &hotspot.Rule{Initial: 1, Sample: 1000}
	wire(t, Chain{Hotspot: h, Rand: func() uint64 { return 999 }})
	parent, p := newProbe(t, "parent"), newProbe(t, "p")
	long := true // metered calls take 1.5 µs, the others 1 µs
	calls := func(n int) func() {
		return func() {
			for range n {
				f := p.Begin()
				if f != 0 && long {
					clk.Advance(500)
				}
				clk.Advance(1 * us)
				p.End(&f)
			}
		}
	}
	fire(parent, 0, calls(4))
	if !p.setState(p.State(), Sampled) {
		t.Fatal("p not sampled")
	}
	fire(parent, 0, calls(200)) // none selected: 200 µs, charged 300
	p.refreshOwnMean()
	if over := p.stats.sum().over(); over != 100*us {
		t.Fatalf("over %.0f ns, want %d", over, 100*us)
	}
	// 4,000 calls of 1 µs, four of them selected: the estimate comes to
	// (4×1.5 + 4,000×1) / 4,004 µs, what the bounded calls took.
	long = false
	fire(parent, 0, calls(4000))
	p.refreshOwnMean()
	const calls0 = 4204
	raw := float64(4*1500+4000*us) / 4004
	bounded := float64(calls0 - 4 - 4) // unmetered, each in a stretch that bounds it
	if over, want := p.stats.sum().over(), raw*bounded-bounded*us; math.Abs(over-want) > 1 {
		t.Fatalf("over %.0f ns, want %.0f: the excess at the estimate as it stands", over, want)
	}
	// The row: its calls at the estimate less the excess, 1 µs each but
	// for the first four metered ones. The parent, charged each call at
	// the estimate of its moment (1.5 µs for the first 200), is repriced
	// to the row's: it had no time of its own, and keeps none, not the
	// excess given back twice.
	r := p.row()
	if want := int64(4*1500 + 4200*us); math.Abs(float64(r.InherentTotal-want)) > 4*us {
		t.Errorf("p: inherent %d ns, want %d within 4 µs", r.InherentTotal, want)
	}
	if _, own := parent.rowOwn(); own < -4*us || own > 4*us {
		t.Errorf("parent: own %d ns, want 0 within 4 µs", own)
	}
}

// A caller whose stretches held less than its sampled children were
// charged, where each stretch holds calls of two of them (no bound), has
// its deficit taken off the children's rows, in proportion to their time
// under it and at most half of it, and shows no own time.
func TestDeficitTakenOffSampledChildren(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: one countdown, the selected firings counted
	h := &hotspot.Rule{Initial: 1, Sample: 1000}
	wire(t, Chain{Hotspot: h, Rand: func() uint64 { return 999 }})
	parent, a, b := newProbe(t, "parent"), newProbe(t, "a"), newProbe(t, "b")
	// Calls of 1 µs, but 1.5 µs where metered, a's as b's; b's calls are
	// twice as many.
	call := func(p *Probe) {
		f := p.Begin()
		if f != 0 {
			clk.Advance(500)
		}
		clk.Advance(1 * us)
		p.End(&f)
	}
	fire(parent, 0, func() {
		for range 4 {
			call(a)
			call(b)
		}
	})
	if !a.setState(a.State(), Sampled) || !b.setState(b.State(), Sampled) {
		t.Fatal("a or b not sampled")
	}
	run := func(n int) {
		fire(parent, 0, func() {
			for range n {
				call(a)
				call(b)
				call(b)
			}
		})
	}
	run(3000)
	rowsOf := func() map[string]Row {
		m := map[string]Row{}
		for _, r := range Take().Rows {
			m[r.Probe] = r
		}
		return m
	}
	_, own := parent.rowOwn()
	ra, _ := a.rowOwn()
	rb, _ := b.rowOwn()
	if own >= 0 {
		t.Fatalf("parent: own %d ns, want below 0: its children were charged 1.5 µs a call", own)
	}
	ta, tb := float64(ra.InherentTotal), float64(rb.InherentTotal)
	rows := rowsOf()
	if got := rows[parent.Name()].InherentTotal; got != 0 {
		t.Errorf("parent: inherent %d ns, want 0", got)
	}
	d := float64(-own)
	for _, c := range []struct {
		p    *Probe
		was  float64
		want float64
	}{{a, ta, ta - d*ta/(ta+tb)}, {b, tb, tb - d*tb/(ta+tb)}} {
		r := rows[c.p.Name()]
		if math.Abs(float64(r.InherentTotal)-c.want) > 1 || r.InherentAvg != r.InherentTotal/r.Count {
			t.Errorf("%s: inherent %d ns (avg %d), want %.0f: %.0f less its part of the deficit", c.p.Name(), r.InherentTotal, r.InherentAvg, c.want, c.was)
		}
	}
	// The children, all their calls of 1 µs, then come to about that.
	if r := rows[b.Name()]; math.Abs(float64(r.InherentAvg)-1000) > 20 {
		t.Errorf("b: %d ns a call after the deficit, want 1 µs within 20 ns", r.InherentAvg)
	}
	// A deficit larger than half the children's time takes half of it:
	// calls that take no time unless metered.
	fire(parent, 0, func() {
		for range 10000 {
			for _, p := range []*Probe{a, b} {
				f := p.Begin()
				if f != 0 {
					clk.Advance(1500)
				}
				p.End(&f)
			}
		}
	})
	rows = rowsOf()
	for _, p := range []*Probe{a, b} {
		r, _ := p.rowOwn()
		if got, want := rows[p.Name()].InherentTotal, r.InherentTotal-(r.InherentTotal+1)/2; math.Abs(float64(got-want)) > 1 {
			t.Errorf("%s: inherent %d ns under a deficit beyond half its time, want half of %d", p.Name(), got, r.InherentTotal)
		}
	}
}

// The bound leaves out a probe whose selected or forced firings meter a
// child: its unmetered calls' own time may lie in two stretches of their
// caller's, cut where the child was selected. A child metered while the
// probe was still judged, or a recheck of an untimed child, does not
// count: the one is metered no more, the other's time is the probe's own;
// nor does the engine's own firing.
func TestBoundLeavesOutProbesWhoseSelectedCallsMeterChildren(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: one countdown, the selected firings counted
	h := &hotspot.Rule{Initial: 1, Sample: 1000}
	wire(t, Chain{Hotspot: h, Rand: func() uint64 { return 999 }})
	parent, p, c := newProbe(t, "parent"), newProbe(t, "p"), newProbe(t, "c")
	fire(parent, 0, func() {
		for range 4 {
			fire(p, 1*us, func() { fire(c, 100, nil) })
		}
	})
	if !p.setState(p.State(), Sampled) || !c.setState(c.State(), Untimed) {
		t.Fatal("p not sampled, or c not untimed")
	}
	if p.parent.Load() {
		t.Fatal("p left out of the bound for a child metered before its verdict")
	}
	selected := func(child func()) {
		for range 1000 {
			f := p.Begin()
			if f != 0 {
				child()
			}
			clk.Advance(1 * us)
			p.End(&f)
			if f != 0 {
				return
			}
		}
		t.Fatal("no firing of p selected in 1000")
	}
	fire(parent, 0, func() {
		selected(func() {
			g := current()
			top := g.frames[g.depth-1] // p's selected firing: the recheck runs in its function
			fr := meterHere(c, top.pos+64, top.pc, meterRecheck)
			if fr == nil || fr.index != top.index+1 || fr.how != meterRecheck {
				t.Fatal("the recheck is not metered as a child of p's selected firing")
			}
			clk.Advance(100)
			c.end(fr)
		})
	})
	if p.parent.Load() {
		t.Fatal("p left out of the bound for a recheck of its child")
	}
	// The engine's own empty forced firing, which measures the forced
	// path inside a forcing firing, does not count either.
	fire(parent, 0, func() {
		selected(func() {
			x := calib[pathForced].Begin()
			if x == 0 {
				t.Fatal("the engine's forced firing not metered inside a selected one")
			}
			calib[pathForced].End(&x)
		})
	})
	if p.parent.Load() {
		t.Fatal("p left out of the bound for the engine's own firing")
	}
	if !c.setState(c.State(), Enabled) {
		t.Fatal("c not enabled")
	}
	fire(parent, 0, func() { selected(func() { fire(c, 100, nil) }) })
	if !p.parent.Load() {
		t.Fatal("p bounded, though a selected firing of it metered its child")
	}
}

// A sampled probe's firing that is not metered still costs its stretch
// something: begin's leaf and the exit's test. Begin's leaf charges that,
// as measured (here set by hand), with the probe's mean own time, so that
// its caller keeps only its own work.
func TestUnmeteredFiringsChargeTheirMetering(t *testing.T) {
	h := &hotspot.Rule{Initial: 1, Sample: 1000}
	wire(t, Chain{Hotspot: h, Rand: func() uint64 { return 999 }})
	unmetered.inner.Store(5)
	t.Cleanup(func() { unmetered.inner.Store(0) })
	parent, p := newProbe(t, "parent"), newProbe(t, "p")
	fire(parent, 0, func() { fire(p, 1*us, nil) })
	if !p.setState(p.State(), Sampled) {
		t.Fatal("p not sampled")
	}
	if c := p.charge.Load(); c != 1*us+5 {
		t.Fatalf("charge %d ns, want %d", c, 1*us+5)
	}
	fire(parent, 200, func() {
		for range 100 {
			f := p.Begin()
			if f != 0 {
				t.Fatal("a firing selected")
			}
			clk.Advance(1*us + 5) // its work, and what counting it costs
		}
	})
	checkRow(t, parent, 2, 1*us+200+100*(1*us+5), 200)
	checkRow(t, p, 101, 101*us, 101*us)
}

// A probe whose calls wait inside a call (a stretch left out whole)
// affords its metering out of the time they hold their goroutine, own
// time and those stretches: 100 ns is more than 2% of its 1 µs of own
// time (what the sampler saw), but not of the 101 µs a call holds, and it
// is metered at every call, where the sampler (sampler_linux.go) can see its
// CPU time. A bracketed wait of its own body does not count: the work
// around it is timed; it is sampled.
func TestWaitingProbeAffordsMetering(t *testing.T) {
	for _, c := range []struct {
		bracketed bool
		want      State
	}{{false, Timed}, {true, Sampled}} {
		if s := judgeClient(t, c.bracketed, 1*us, 0); s != c.want {
			t.Errorf("bracketed=%v: state %d, want %d", c.bracketed, s, c.want)
		}
	}
}

// judgeClient returns hotspot's verdict on a probe whose calls each run
// work ns (what the sampler saw; where the wait is bracketed, timed),
// wait 100 µs, parked, inside a call without probes or in a bracket of
// their own, then leave between ns to the rest of the program.
func judgeClient(t *testing.T, bracketed bool, work, between int64) State {
	h := hot()
	h.Sample, h.Cost, h.SampleShare = 10, 0.02, 0.001
	var parked bool
	wire(t, Chain{Hotspot: h, Parked: func() bool { p := parked; parked = false; return p }})
	samplerInterval.Store(1)
	defer samplerInterval.Store(0)
	setOverhead(pathMeter, 0, 100)
	p := newProbe(t, "client")
	g := current()
	for range h.Initial {
		f := p.Begin()
		clk.Advance(work)
		if bracketed {
			p.Wait(&f)
		} else {
			g.ran += uint64(work) // the sampler saw the work
		}
		clk.Advance(100 * us)
		parked = true
		if bracketed {
			p.Woke(&f)
		}
		p.End(&f)
		clk.Advance(between)
	}
	return p.State()
}

// A probe whose calls wait inside a call without probes is not disabled
// for the sampler not having seen its CPU time: a thousand calls hold a
// look or none. Its stretches left out whole weigh in the share test; a
// wait it brackets itself does not, and the same calls are then disabled.
func TestWaitingProbeUnseenIsNotDisabled(t *testing.T) {
	for _, c := range []struct {
		bracketed bool
		want      State
	}{{false, Timed}, {true, DisabledHotspot}} {
		// No look lands in a call; the program runs on 10 ms between
		// calls: 100 µs is 1% of it.
		if s := judgeClient(t, c.bracketed, 0, 10*ms); s != c.want {
			t.Errorf("bracketed=%v: state %d, want %d", c.bracketed, s, c.want)
		}
	}
}

// A probe metered at every call forces its timed children in its first
// hotspot-Initial firings, and in its later ones as many as cost it at
// most 1/forceShare of its mean inclusive time, at the forced path's
// measured overhead: a long parent's sampled child is measured under it,
// a short parent's estimated.
func TestLongMeteredFiringsForceAFewChildren(t *testing.T) {
	h := &hotspot.Rule{Initial: 4, Sample: 1000}
	wire(t, Chain{Hotspot: h, Rand: func() uint64 { return 999 }})
	saved := overhead[pathForced].outer.Load()
	overhead[pathForced].outer.Store(100) // ns: a forced child costs its parent this
	t.Cleanup(func() { overhead[pathForced].outer.Store(saved) })
	long, short, child := newProbe(t, "long"), newProbe(t, "short"), newProbe(t, "child")
	fire(child, 1*us, nil)
	if !child.setState(child.State(), Sampled) {
		t.Fatal("child not sampled")
	}
	// Each call of child reports whether it was metered, and how.
	var how []uint8
	call := func() {
		f := child.Begin()
		if f != 0 {
			how = append(how, f.frame().how)
		} else {
			how = append(how, 255)
		}
		clk.Advance(1 * us)
		child.End(&f)
	}
	for range 4 { // the first: forced, whatever their length
		fire(long, 62*us, call) // 64 µs: 1/32 of it pays for 19 forced children
		fire(short, 1*us, call) // 3 µs: none
	}
	for i, m := range how {
		if m != meterForced {
			t.Fatalf("first firings: child's call %d metered as %d; want forced", i, m)
		}
	}
	// Its inclusive time less its forced child's metering: 63.9 µs.
	if want := int32((64*us - 100) / (forceShare * 100)); long.forceLong.Load() != want {
		t.Fatalf("long forces %d children after its first; want %d", long.forceLong.Load(), want)
	}
	if n := short.forceLong.Load(); n != 0 {
		t.Fatalf("short forces %d children after its first; want none", n)
	}
	how = how[:0]
	fire(long, 60*us, func() { call(); call() })
	fire(short, 1*us, call)
	if how[0] != meterForced || how[1] != meterForced || how[2] != 255 {
		t.Fatalf("later firings: child metered as %v; want forced twice under long, not metered under short (255)", how)
	}
}
