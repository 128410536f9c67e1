package meter

import (
	"math"
	"slices"
	"sync/atomic"
)

// Metering a firing takes time of its own: the decision, the clock reads,
// the push and the pop, the statistics. Part of it falls inside the
// firing's own measurement (about one clock read: the inner overhead), all
// of it inside its parent's (the outer overhead, which holds the inner).
// Left alone, a function that calls thousands of cheap metered functions
// would show their metering as its own time.
//
// So the engine keeps both overheads, for each of the three ways a firing
// is metered (a probe metered always; a sampled probe's selected firing or
// a spot check, which go through more of the chain; and a sampled probe's
// forced firing, see parent.go), and End takes them off: a firing's inclusive time is its clock difference less its inner
// overhead and less the outer overheads of every metered firing nested in
// it (Frame.over). Inclusive and inherent times are then the function's
// own work.
//
// The overheads are not constants: what a clock read costs differs several
// times over from one machine to another, and what a metered firing costs
// depends on the program's caches. The engine measures them where they
// happen: one in every calibrateEvery metered firings of a goroutine is
// followed by a measured empty firing of a private probe, of the same
// kind, nested in the same parent; the overheads in use are trimmed means of the last 64
// such measurements of each kind. When the chain is wired, 64 measurements
// on the wiring goroutine give the first figures. With a manual clock
// (tests) both are zero.

// Kinds of metered firing, by the path that meters them.
const (
	pathMeter    = iota // a metered probe: measure, or a trace's start
	pathSelected        // a sampled probe's selected firing, or a spot check
	pathForced          // a sampled probe's forced firing
	paths
)

// calibrateEvery is how many metered firings of a goroutine pass between
// two measurements of the overheads.
const calibrateEvery = 1024

const ringSize = 64

type overheadRing struct {
	inner, outer atomic.Int64 // ns, the trimmed means in use
	next         atomic.Uint64
	ins, outs    [ringSize]atomic.Int64
}

var overhead [paths]overheadRing

// residual holds, as its inner overhead, what a firing of each path whose
// parent's stretches leave out its metering, timed (Frame.entry), still
// costs them: the engine's path before its entry and after its End's last
// read, less the half reads of those two (clockGap). Measured with the
// outer overheads (measureOverhead), warm: begin's leaf, which every
// firing runs, and a few instructions of Go.
var residual [paths]overheadRing

// unmetered holds, as its inner overhead, what a sampled probe's firing
// that is not metered costs the stretch it runs in: begin's leaf, the
// exit's test (measureUnmetered, at start-up only: measured as the
// program runs, nested in its metered firings, they left goldmark's
// walkHelper, a recursive sampled function, a third short of its CPU
// profile, for a reason not found). Begin's leaf charges it to the stretch with the
// probe's mean own time (Probe.charge), so that a caller of millions of
// such calls does not keep their metering as its own time.
var unmetered overheadRing

// bracket holds, as its inner overhead, what a bracket of a wait that did
// not park (Probe.Wait and Woke, a clock read between them) costs the
// stretch it runs in, and stretchMark what a mark after a go statement
// (Probe.Mark) costs the stretch it begins: measured at start-up, as
// unmetered is, and taken off those stretches (Frame.woke, Probe.Mark), so
// that a loop of a hundred channel operations does not keep their brackets
// as its own time.
var bracket, stretchMark overheadRing

// calib are the private probes the measurements meter: one per path,
// registered nowhere, judged by nothing, never in a trace.
var calib = func() (c [paths]*Probe) {
	for k := range c {
		c[k] = makeProbe("meter.calibration", nil)
		c[k].internal = true
		c[k].ended.Store(true)
	}
	c[pathSelected].state.Store(uint32(Sampled))
	c[pathForced].state.Store(uint32(Sampled))
	return c
}()

// record adds one measurement of path k; every ringSize of them, the
// trimmed means are taken.
func (r *overheadRing) record(inner, outer int64) {
	i := r.next.Add(1) - 1
	r.ins[i%ringSize].Store(inner)
	r.outs[i%ringSize].Store(outer)
	if i%ringSize != ringSize-1 {
		return
	}
	var a, b [ringSize]int64
	for j := range a {
		a[j], b[j] = r.ins[j].Load(), r.outs[j].Load()
	}
	in, out := max(trimmedMean(a[:]), 0), max(trimmedMean(b[:]), 0)
	r.inner.Store(in)
	r.outer.Store(max(out, in))
}

// trimmedMean sorts v and returns the mean of its middle three quarters:
// an eighth is dropped at each end, so that a measurement an interrupt or
// a preemption stretched does not count. Not the median: the clock ticks
// in steps (10 ns on AMD's TSC, which counts a 100 MHz reference), so
// measurements of 24 ns on average read 20 or 30, and their median is one
// of the two, 4 to 6 ns off on every firing it is taken from. The mean of
// such readings is the mean of the durations.
func trimmedMean(v []int64) int64 {
	slices.Sort(v)
	cut := len(v) / 8
	var sum int64
	for _, x := range v[cut : len(v)-cut] {
		sum += x
	}
	n := int64(len(v) - 2*cut)
	return (sum + n/2) / n
}

// measureOverhead meters one empty firing of path k's private probe on the
// running goroutine, nested in whatever is metered there, and records what
// it cost. The goroutine's state must not be held (acquired).
//
// The outer overhead is the difference between two empty firings in a row
// and one, each between two clock reads, so that what the reads themselves
// add cancels out; the inner is the empty firing's own measurement. Two
// first firings, not measured, bring the private probe's statistics into
// the cache, where those of the probes that fire most are, and make the
// measurement five firings (see below).
//
// A forced firing is measured where forced firings run: inside the
// firing that forces them, the parent of the forced firing that just
// ended; or, where the innermost metered firing does not force (at
// start-up), inside a selected one of the private probe's, which forces
// it. (Wrapped in one there too, the empty firings would not be measured:
// a selected firing inside a forcing one is forced, and forces nothing.)
func measureOverhead(k int) {
	c := calib[k]
	if k == pathSelected {
		if g := current(); g != nil && g.depth == 0 {
			// At start-up: nested in an empty metered firing, so that
			// they have a parent, and residual is measured.
			f := calib[pathMeter].Begin()
			defer calib[pathMeter].End(&f)
		}
	}
	if k == pathForced {
		if g := current(); g == nil || g.forcing == 0 {
			f := calib[pathSelected].Begin()
			defer calib[pathSelected].End(&f)
		}
	}
	// Two firings warm what the private probe touches (a hot probe's rows
	// are in cache), so that a measurement is five firings: one selected
	// firing in ownMeanEvery (16) refreshes its probe's mean, and in
	// measurements of four firings that refresh would fall on the same one
	// of the four every time, the same for as long as the goroutine stays on
	// its P (the count is its P's row's). Where that is the last, every
	// fourth measurement is short by the refresh, and so is the trimmed mean
	// of a ring of them. Five firings move it from one to the next.
	for range 2 {
		if c.empty() < 0 {
			return
		}
	}
	t1 := now()
	raw1, tk1 := c.emptyParts()
	raw2, tk2 := c.emptyParts()
	t2 := now()
	raw3, tk3 := c.emptyParts()
	t3 := now()
	if raw1 < 0 || raw2 < 0 || raw3 < 0 {
		return // not metered (a trace is full, the chain changed)
	}
	outer := nanos(t1, t2) - nanos(t2, t3)
	overhead[k].record(raw3, outer)
	if tk1 >= 0 && tk2 >= 0 && tk3 >= 0 {
		r := outer - (tk1 + tk2 - tk3) - (raw1 + raw2 - raw3) - clockGap
		residual[k].record(r, r)
	}
}

// unmeteredRun is how many unmetered firings one measurement times.
const unmeteredRun = 16

// measureUnmetered times unmeteredRun firings of the private sampled probe
// that is never selected (calib[pathForced], forced only inside a forcing
// firing), as generated code makes them, inside an empty metered firing
// (inMetered), and records their cost per firing. calibrate calls it, on a
// goroutine with nothing metered.
func measureUnmetered() {
	inMetered(func(*Probe, *Firing) {
		c := calib[pathForced]
		t1 := now()
		for range unmeteredRun {
			x := c.Begin()
			if x != 0 {
				c.End(&x)
			}
		}
		t2 := now()
		t3 := now()
		per := max(nanos(t1, t2)-nanos(t2, t3), 0) / unmeteredRun
		unmetered.record(per, per)
	})
}

// measureMarks times unmeteredRun brackets of a wait that does not park,
// then as many marks, inside an empty metered firing (inMetered), and
// records their costs per bracket and per mark. calibrate calls it, on a
// goroutine with nothing metered.
func measureMarks() {
	inMetered(func(m *Probe, f *Firing) {
		t1 := now()
		for range unmeteredRun {
			m.Wait(f)
			m.Woke(f)
		}
		t2 := now()
		for range unmeteredRun {
			m.Mark(f)
		}
		t3 := now()
		t4 := now()
		empty := nanos(t3, t4)
		per := max(nanos(t1, t2)-empty, 0) / unmeteredRun
		bracket.record(per, per)
		per = max(nanos(t2, t3)-empty, 0) / unmeteredRun
		stretchMark.record(per, per)
	})
}

// inMetered runs measure inside an empty firing of the private probe
// metered at every call (which, the engine's own, forces nothing: see
// push), given the probe and the firing, where that firing is metered.
func inMetered(measure func(m *Probe, f *Firing)) {
	m := calib[pathMeter]
	f := m.Begin()
	if fr := f.frame(); fr != nil && fr != firstEnd && fr.probe == m {
		measure(m, &f)
	}
	m.End(&f)
}

// calibrate resets the overheads and measures every path's on the calling
// goroutine, then sets the untimed limit from what timing a call costs.
func calibrate() {
	for _, r := range []*overheadRing{&overhead[0], &overhead[1], &overhead[2], &residual[0], &residual[1], &residual[2], &unmetered, &bracket, &stretchMark} {
		r.inner.Store(0)
		r.outer.Store(0)
		r.next.Store(0)
	}
	for k := range calib {
		calib[k].class.Store(classOf(calib[k].State()))
	}
	for pid := uintptr(0); pid < countProcs; pid++ {
		atomic.StoreInt32(&calib[pathForced].slotOn(pid).left, math.MaxInt32) // never selected: forced
	}
	cpuReadCost, clockGap = 0, 0
	defer setUntimedLimit()
	if engine.manual != nil || !engine.on {
		return
	}
	if g := current(); g == nil || g.depth != 0 {
		return
	}
	measureClockGap()
	for k := range overhead {
		for range 2 * ringSize {
			measureOverhead(k)
		}
	}
	for range 2 * ringSize {
		measureUnmetered()
		measureMarks()
	}
	measureCPURead()
}

// clockGap is what a clock read adds to the time between two others, in
// ns: the trimmed mean of ringSize reads back to back, measured at
// start-up (entryRead).
var clockGap int64

func measureClockGap() {
	var v [ringSize]int64
	for i := range v {
		a := now()
		v[i] = nanos(a, now())
	}
	clockGap = trimmedMean(v[:])
}

// measureCPURead sets cpuReadCost: the least advance of the thread's CPU
// clock between two reads back to back, of 16.
func measureCPURead() {
	if !threadCPUOK {
		return
	}
	least := int64(math.MaxInt64)
	for range 16 {
		a := threadCPU()
		b := threadCPU()
		if a != 0 && b >= a {
			least = min(least, b-a)
		}
	}
	if least != math.MaxInt64 {
		cpuReadCost = least
	}
}

// setUntimedLimit sets the untimed limit: hotspot's Untimed times what
// timing a call costs (the outer overhead of a selected firing: two clock
// reads and the engine's work), at most maxUntimed. Under that, a call's
// own time would be mostly the estimate of metering it that is taken off.
func setUntimedLimit() {
	h := engine.hotspot
	if h == nil {
		h = engine.untimed
	}
	if h == nil || h.Untimed <= 0 || engine.gated {
		untimedLimit.Store(0)
		return
	}
	cost := engine.clockCost
	if engine.manual == nil {
		cost = overhead[pathSelected].outer.Load()
	}
	untimedLimit.Store(min(h.Untimed*cost, maxUntimed(h)))
}

// empty is one empty firing of p: its clock difference in ns, or -1 when
// it was not metered. It begins and ends the firing with Begin and End,
// the calls generated code makes, so that what the calibration measures
// is the path a firing takes. End leaves the ended frame's current
// stretch begun at its clock read (closeStretch): the frame's mark less
// its start is the firing's clock difference.
func (p *Probe) empty() int64 {
	d, _ := p.emptyParts()
	return d
}

// emptyParts is empty, and also returns what the firing's parent's
// stretches left out around it, timed (Frame.taken), or -1.
func (p *Probe) emptyParts() (int64, int64) {
	f := p.Begin()
	fr := f.frame()
	if fr == nil || fr == firstEnd || fr.probe != p {
		return -1, -1
	}
	p.End(&f)
	// Read as the engine reads a goroutine's frames: a goroutine that a
	// later one's g is given to writes this frame.
	fr.g.acquire()
	d, taken := nanos(fr.start, fr.mark), fr.taken
	if fr.entry == noEntry || fr.index == 0 {
		taken = -1 // its parent was charged the calibrated overheads, or it had none
	}
	fr.g.release()
	return d, taken
}
