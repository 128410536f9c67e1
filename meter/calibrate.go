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
// So the engine keeps both overheads, for each of the two ways a firing is
// metered (a probe metered always, and a sampled probe's selected firing
// or a spot check, which go through more of the chain), and End takes them
// off: a firing's inclusive time is its clock difference less its inner
// overhead and less the outer overheads of every metered firing nested in
// it (Frame.over). Inclusive and inherent times are then the function's
// own work.
//
// The overheads are not constants: clock reads cost from 20 to 250 ns
// depending on the machine, and what a metered firing costs depends on the
// program's caches. The engine measures them where they happen: one in
// every calibrateEvery metered firings of a goroutine is followed by a
// measured empty firing of a private probe, of the same kind, nested in
// the same parent; the overheads in use are trimmed means of the last 64
// such measurements of each kind. When the chain is wired, 64 measurements
// on the wiring goroutine give the first figures. With a manual clock
// (tests) both are zero.

// Kinds of metered firing, by the path that meters them.
const (
	pathMeter    = iota // a metered probe: measure, or a trace's start
	pathSelected        // a sampled probe's selected firing, or a spot check
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

// calib are the private probes the measurements meter: one per path,
// registered nowhere, judged by nothing, never in a trace.
var calib = func() (c [paths]*Probe) {
	for k := range c {
		c[k] = makeProbe("meter.calibration", nil)
		c[k].internal = true
		c[k].ended.Store(true)
	}
	c[pathSelected].state.Store(uint32(Sampled))
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
// add cancels out; the inner is the empty firing's own measurement. A
// first firing, not measured, brings the private probe's statistics into
// the cache, where those of the probes that fire most are.
func measureOverhead(k int) {
	c := calib[k]
	if c.empty() < 0 { // warms what the private probe touches: a hot probe's rows are in cache
		return
	}
	t1 := now()
	raw1 := c.empty()
	raw2 := c.empty()
	t2 := now()
	raw3 := c.empty()
	t3 := now()
	if raw1 < 0 || raw2 < 0 || raw3 < 0 {
		return // not metered (a trace is full, the chain changed)
	}
	overhead[k].record(raw3, nanos(t1, t2)-nanos(t2, t3))
}

// calibrate resets the overheads and measures both paths' on the calling
// goroutine, and sets the untimed limit from what a clock read costs.
func calibrate() {
	for k := range overhead {
		overhead[k].inner.Store(0)
		overhead[k].outer.Store(0)
		overhead[k].next.Store(0)
	}
	for k := range calib {
		calib[k].class.Store(classOf(calib[k].State()))
	}
	setUntimedLimit()
	if engine.manual != nil || !engine.on {
		return
	}
	if g := current(); g == nil || g.depth != 0 {
		return
	}
	for k := range overhead {
		for range 2 * ringSize {
			measureOverhead(k)
		}
	}
}

// clockReads is how many clock reads one measurement of their cost takes.
const clockReads = 256

// setUntimedLimit sets the untimed limit: hotspot's Untimed clock reads,
// at most maxUntimed ns. A read's cost is the least of a few measurements
// of clockReads reads in a row, so that a preemption does not count.
func setUntimedLimit() {
	h := engine.hotspot
	if h == nil || h.Untimed <= 0 || engine.gated {
		untimedLimit.Store(0)
		return
	}
	read := engine.clockCost
	if engine.manual == nil {
		read = math.MaxInt64
		for range 8 {
			t0 := now()
			for range clockReads {
				now()
			}
			read = min(read, nanos(t0, now())/clockReads)
		}
	}
	untimedLimit.Store(min(h.Untimed*read, maxUntimed))
}

// empty is one empty firing of p: its clock difference in ns, or -1 when
// it was not metered.
func (p *Probe) empty() int64 {
	f := p.Begin()
	if f == nil || f == firstEnd || f.probe != p {
		return -1
	}
	return p.endAt(&f)
}
