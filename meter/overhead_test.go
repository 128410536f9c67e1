package meter

import (
	"slices"
	"testing"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/hotspot"
)

// setOverhead puts figures of path k in place of the measured ones.
func setOverhead(k int, inner, outer int64) {
	overhead[k].inner.Store(inner)
	overhead[k].outer.Store(outer)
}

// A metered firing's time holds its own metering (the inner overhead) and
// all the metering of what it nests (an outer overhead per metered
// firing). Inclusive and inherent times leave both out: they are the
// function's own work.
func TestOverheadTakenOff(t *testing.T) {
	wire(t, Chain{})
	const inner, outer = 10, 40
	setOverhead(pathMeter, inner, outer)
	parent, child, leaf := newProbe(t, "parent"), newProbe(t, "child"), newProbe(t, "leaf")
	// call runs a firing of p whose function works for work ns around
	// body, as the clock sees it with metering: the inner overhead inside
	// the firing's clock reads, the rest of the outer outside them.
	call := func(p *Probe, work int64, body func()) {
		f := p.Begin()
		clk.Advance(work + inner)
		if body != nil {
			body()
		}
		p.End(&f)
		clk.Advance(outer - inner)
	}
	call(parent, 100, func() {
		call(child, 50, func() { call(leaf, 7, nil) })
		call(leaf, 3, nil)
	})
	checkRow(t, leaf, 2, 10, 10)
	checkRow(t, child, 1, 57, 50)
	checkRow(t, parent, 1, 160, 100)
}

// The overheads in use are trimmed means of the last measurements: an
// eighth at each end is dropped, so that a stretched measurement does not
// count, and readings of a clock that ticks in steps of 10 ns average to
// the mean, where a median would be one of the steps.
func TestOverheadTrimmedMeans(t *testing.T) {
	var r overheadRing
	vals := make([]int64, ringSize)
	for i := range vals {
		vals[i] = int64((i * 37) % ringSize)
	}
	vals[5], vals[9] = 100000, 250000 // two preempted measurements
	for i, v := range vals {
		r.record(v, 2*v+100)
		if i < ringSize-1 && r.inner.Load() != 0 {
			t.Fatalf("overheads taken after %d measurements, want after %d", i+1, ringSize)
		}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	var sum int64
	for _, v := range s[ringSize/8 : ringSize-ringSize/8] {
		sum += v
	}
	n := int64(ringSize - ringSize/4)
	want, wantOut := (sum+n/2)/n, (2*sum+100*n+n/2)/n
	if in, out := r.inner.Load(), r.outer.Load(); in != want || out != wantOut {
		t.Fatalf("inner %d outer %d, want %d and %d", in, out, want, wantOut)
	}
	// 60% of readings at 20 ns and 40% at 30 ns: 24 ns, where the median
	// says 20.
	for i := range ringSize {
		v := int64(20)
		if i%5 >= 3 {
			v = 30
		}
		r.record(v, 3*v)
	}
	if in, out := r.inner.Load(), r.outer.Load(); in < 23 || in > 25 || out < 69 || out > 75 {
		t.Fatalf("quantised readings: inner %d outer %d, want 23..25 and 69..75", in, out)
	}
	// An outer overhead below the inner (noise) is raised to it: the
	// outer holds the inner.
	for i := 0; i < ringSize; i++ {
		r.record(50, 20)
	}
	if in, out := r.inner.Load(), r.outer.Load(); in != 50 || out != 50 {
		t.Fatalf("inner %d outer %d, want 50 and 50", in, out)
	}
}

// wireRealClock wires the chain at default properties on the process's
// clock, and back on a manual clock when t ends.
func wireRealClock(t *testing.T) {
	t.Helper()
	if !Supported {
		t.Skip("no engine on this platform")
	}
	h := hotspot.Default()
	Configure(Chain{Enabled: true, Hotspot: &h})
	t.Cleanup(func() { Configure(Chain{Enabled: true, Clock: clock.NewManual()}) })
}

// On the real clock, wiring the chain measures the overheads, and the
// measurements in the run go on: on private probes that no model shows
// and no rule judges.
func TestOverheadMeasuredOnRealClock(t *testing.T) {
	wireRealClock(t)
	in, out := overhead[pathMeter].inner.Load(), overhead[pathMeter].outer.Load()
	if in <= 0 || out < in {
		t.Fatalf("after wiring: inner %d outer %d ns, want 0 < inner ≤ outer", in, out)
	}
	// Forced firings' overheads are measured where they run, nested in
	// the firing that forces them.
	sel := calib[pathSelected].Begin()
	if fr := sel.frame(); fr == nil || fr.forces == 0 {
		t.Fatal("the private probe's selected firing does not force its children")
	}
	forced := overhead[pathForced].next.Load()
	measureOverhead(pathForced)
	calib[pathSelected].End(&sel)
	if n := overhead[pathForced].next.Load() - forced; n != 1 {
		t.Errorf("%d measurements of the forced path inside a forcing firing, want 1", n)
	}
	if l := UntimedLimit(); l <= 0 || l > 300 {
		t.Fatalf("untimed limit %d ns with the default rule, want 1 to 300", l)
	}
	Configure(Chain{Enabled: true}) // no hotspot: every firing metered
	p := newProbe(t, "p")
	before := overhead[pathMeter].next.Load()
	for i := 0; i < 4*calibrateEvery; i++ {
		f := p.Begin()
		p.End(&f)
	}
	if n := overhead[pathMeter].next.Load() - before; n < 3 {
		t.Errorf("%d measurements in %d metered firings, want at least 3", n, 4*calibrateEvery)
	}
	for _, q := range Probes() {
		if q.internal {
			t.Fatalf("a private probe is registered: %s", q.Name())
		}
	}
	if s := calib[pathMeter].State(); s != Enabled {
		t.Errorf("private probe's state %d, want enabled (never judged)", s)
	}
	in, out = overhead[pathSelected].inner.Load(), overhead[pathSelected].outer.Load()
	if in <= 0 || out < in {
		t.Fatalf("selected path: inner %d outer %d ns, want 0 < inner ≤ outer", in, out)
	}
}

// A measurement of a path's overhead makes a number of firings of the
// path's private probe that shares no factor with ownMeanEvery: one
// selected firing in ownMeanEvery refreshes its probe's mean, and in
// measurements of four firings the refresh would fall on the same firing
// of each, the last one for as long as the goroutine stays on its P, and
// every fourth measurement would be short by it.
func TestOverheadMeasurementsMeetRefreshesEverywhere(t *testing.T) {
	wireRealClock(t)
	c := calib[pathSelected]
	before, measured := c.Calls(), overhead[pathSelected].next.Load()
	measureOverhead(pathSelected)
	if n := overhead[pathSelected].next.Load() - measured; n != 1 {
		t.Fatalf("%d measurements recorded, want 1", n)
	}
	n := c.Calls() - before
	a, b := n, int64(ownMeanEvery)
	for b != 0 {
		a, b = b, a%b
	}
	if a != 1 {
		t.Errorf("a measurement makes %d firings, which share the factor %d with ownMeanEvery (%d)", n, a, ownMeanEvery)
	}
}

// The calibration's empty firing ends through End, the path generated
// code takes, and reads its clock difference from the ended frame: the
// frame's last stretch begins at End's clock read.
func TestEmptyFiringMeasuresThroughEnd(t *testing.T) {
	wire(t, Chain{})
	p := newProbe(t, "p")
	for _, d := range []int64{0, 7, 1234} {
		f := p.Begin()
		fr := f.frame()
		if fr == nil {
			t.Fatal("firing not metered")
		}
		clk.Advance(d)
		p.End(&f)
		if got := nanos(fr.start, fr.mark); got != d {
			t.Fatalf("ended frame's mark less its start = %d ns, want the firing's %d", got, d)
		}
	}
	if d := p.empty(); d != 0 {
		t.Fatalf("empty firing on a clock that does not move: %d ns", d)
	}
	if d := depthNow(); d != 0 {
		t.Fatalf("depth %d after the empty firing", d)
	}
	p.Disable(DisabledHotspot)
	if d := p.empty(); d != -1 {
		t.Fatalf("empty firing of a disabled probe: %d, want -1", d)
	}
}

// A firing's bare stretches (between two metered children, nothing charged
// in them) hold its own code between the calls and the metering around
// them. Where the overhead taken off them is more than they held (the
// measured overheads are means, and a firing's children may cost less to
// meter), the probe's sum of them is no less than nothing; a positive sum
// stands. The floor is on the probe's sum, not each firing's: one firing's
// bare stretches below zero and another's above cancel, as noise around a
// right overhead does.
func TestBareStretchesHoldNoLessThanNothing(t *testing.T) {
	wire(t, Chain{})
	const inner, outer = 10, 40
	setOverhead(pathMeter, inner, outer)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	// Each child's metering costs the parent only 20 ns of the 40 ns taken
	// off: 10 inside its clock reads, 10 outside.
	call := func(p *Probe, work, around int64) {
		f := p.Begin()
		clk.Advance(work + inner)
		p.End(&f)
		clk.Advance(around)
	}
	f := parent.Begin()
	clk.Advance(100) // its own work before the children
	for range 4 {
		call(child, 50, 10) // the bare stretches between: 10 ns, 30 taken off each
	}
	clk.Advance(100) // and after them
	parent.End(&f)
	// Inclusive: 480 on the clock, less its inner overhead and four outer
	// ones. Own: 100 before the children, the 3 bare stretches' -60 left
	// out, 10 + 100 - 30 after the last (not a bare stretch: it ends at
	// the parent's end), less its inner overhead; 110 without the rule.
	checkRow(t, parent, 1, 480-inner-4*outer, 100+80-inner)
	checkRow(t, child, 4, 200, 200)

	// A firing whose bare stretches hold 20 ns each (50, 30 taken off):
	// the probe's sum, -60 + 60, is nothing, and both firings' own times
	// are what they measured: 110, and 3 × 20 + 50 - 30 after the last,
	// less the inner. A floor on each firing would leave out the first's
	// -60 and keep the second's 60.
	f = parent.Begin()
	for range 4 {
		call(child, 50, 50)
	}
	parent.End(&f)
	checkRow(t, parent, 2, 480-inner-4*outer+440-inner-4*outer, (100+80-inner-60)+(3*20+20-inner))

	// Where the bare stretches hold more than was taken off, it stands:
	// 3 of 100 - 30, then 100 - 30 after the last, less the inner.
	f = parent.Begin()
	for range 4 {
		call(child, 50, 100)
	}
	parent.End(&f)
	checkRow(t, parent, 3, 480-inner-4*outer+440-inner-4*outer+640-inner-4*outer, (100+80-inner-60)+(3*20+20-inner)+(3*70+70-inner))
}

// A selected firing's parent leaves out, timed, what the engine did
// between taking the firing up and its start (here the draw of its next
// gap, which the test's Rand makes take 700 ns, as code gone cold since
// the probe's last selected firing does), rather than charging it the
// calibrated overhead: its own and inclusive times are its own work. The
// residual and the clock reads' part are charged as they are set.
func TestSelectedFiringsEngineWorkLeftOutOfParent(t *testing.T) {
	var r uint64
	var engineWork int64
	h := hot()
	h.Sample, h.Cost, h.SampleShare = 8, 0.02, 0.01
	wire(t, Chain{Hotspot: h, ClockCost: 50, Rand: func() uint64 {
		clk.Advance(engineWork)
		r++
		return 7 + r%2
	}})
	setOverhead(pathMeter, 0, 100) // over 2% of the leaf's calls: sampled
	parent, leaf := newProbe(t, "parent"), newProbe(t, "leaf")
	run := func(rounds int) {
		for range rounds {
			fire(parent, 10*us, func() {
				for range 100 {
					fire(leaf, 1*us, nil)
				}
			})
		}
	}
	run(60)
	if s := leaf.State(); s != Sampled {
		t.Fatalf("leaf: state %d, want sampled", s)
	}
	if s := parent.State(); !s.metered() {
		t.Fatalf("parent: state %d, want metered at every call", s)
	}
	pr, lr := parent.row(), leaf.row()
	engineWork = 700
	run(200)
	pr2, lr2 := parent.row(), leaf.row()
	own, total, leafOwn := pr2.InherentTotal-pr.InherentTotal, pr2.Total-pr.Total, lr2.InherentTotal-lr.InherentTotal
	if own != 200*10*us || total != 200*110*us {
		t.Errorf("parent: own %d ns and inclusive %d, want %d and %d", own, total, 200*10*us, 200*110*us)
	}
	if leafOwn != 200*100*us {
		t.Errorf("leaf: own %d ns, want %d", leafOwn, 200*100*us)
	}
	// The residual and a clock read's parts are charged to the stretch
	// after each selected firing: 100 ns for 2500 selected firings or so.
	residual[pathSelected].inner.Store(70)
	clockGap = 30
	defer func() { clockGap = 0 }()
	pr = parent.row()
	n0 := leaf.stats.sum().count
	run(200)
	n := leaf.stats.sum().count - n0
	if n < 2000 || n > 3000 {
		t.Fatalf("%d selected firings in 20,000 calls, want about 2,500", n)
	}
	// Within one firing's charge: under -race, where begin runs in Go, the
	// leaf's statistics have held one metered firing more than the charges.
	if own, want := parent.row().InherentTotal-pr.InherentTotal, 200*10*us-100*n; own < want-100 || own > want+100 {
		t.Errorf("parent: own %d ns after %d selected firings, want %d", own, n, want)
	}
}
