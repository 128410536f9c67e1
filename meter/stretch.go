package meter

import (
	"sync/atomic"
	"unsafe"
)

// Stretches. A metered firing's own time is measured in stretches: from
// its start to its first metered child's, between its metered children,
// and from its last child's end to its own end. A goroutine that waits (on
// a channel, a lock, a timer, the network) is off the CPU, and a CPU
// profile charges nothing to the function it waits in: so a stretch in
// which the goroutine parked to wait (wait.go) is left out of the
// firing's own time. One in which the scheduler took the goroutine off its
// P without parking it (its time slice ran out) is charged what it ran
// where the firing's history tells (closeStretch); else it is left out too
// if short, and charged less its waits in the run queue if long
// (sched.go). Checkpoints (below) keep the stretches of a loop around
// untimed calls short.
// Inclusive time stays the wall time, waits included: a request's latency.
//
// What a stretch left out costs: the CPU time it did hold, its part before
// the wait and after. A firing's stretches left out for a wait are summed
// (Frame.waited) into its probe's waited time, which the model reports
// (Row.Waited): a function whose own time is mostly in such stretches (it
// computes, waits, and computes again without a timed call in between)
// shows less own time than a CPU profile gives it, and the row says how
// much wall time it left out.

// disturbed counts stretches left out: the goroutine parked to wait in
// them.
var disturbed atomic.Int64

// samplerInterval is the sampler's mean interval, in ns, once it runs
// (sampler_linux.go; a test may stand for it); 0: no sampler. While
// it is set, Goroutine.ran holds what the sampler saw.
var samplerInterval atomic.Int64

// openStretch begins a stretch of f at tick t, whose marks (stamp) read
// left, and not from a look of its own after the engine's work since t,
// in which the goroutine may have been taken off its P (stamp). The
// running goroutine must be f's.
func (f *Frame) openStretch(t int64, left uint8) {
	f.mark, f.child, f.base, f.charger = t, 0, -1, 0
	f.g.ran = 0
	f.left = left
	if f.cpu != 0 {
		f.cpu = engine.cpuNow()
		f.over += cpuReadCost // the read lies inside the firing's time (end.go)
	}
}

// closeStretch ends f's current stretch at tick t, whose marks (stamp)
// read left, reason and sys, and begins the next: the stretch's time, less
// what was charged to it, goes to f's own time unless the goroutine waited
// in it (parked, or in a system call). The running goroutine must be f's.
func (f *Frame) closeStretch(t int64, left, reason uint8, sys bool) {
	switch n := engine.descheduled(f.g, f.left, left); {
	case engine.waited(reason), n > 0 && sys:
		f.leaveOut(t)
	case n > 0 && !engine.working(n, reason):
		f.descheduled(t, n, reason, false)
	default:
		f.worked |= uint8(n) // above 0: it left its P to work (engine.working)
		d := nanos(f.mark, t) - f.child
		if f.cpu != 0 || sys {
			var ok bool
			if d, ok = f.ranWhole(t, sys); !ok {
				f.leaveOut(t)
				break
			}
		}
		if f.charger > 1 {
			f.overcharged(d)
		}
		f.own += d
	}
	f.mark, f.child, f.charger = t, 0, 0
	f.left = left
}

// leaveOut leaves f's stretch ending at tick t out of its own time: its
// goroutine waited in it (parked, or in a system call). What the sampler
// saw it run in the stretch (sampler_linux.go), less what was charged to the
// stretch, stays own time. That is an estimate, unbiased over many
// stretches and clamped neither to the stretch's time nor at zero: a
// stretch of 100 µs that a look every millisecond finds running holds a
// millisecond, as nine stretches in ten that no look found hold none, and
// those nine give back what was charged to them. A clamp on either side
// would bias the sum.
func (f *Frame) leaveOut(t int64) {
	disturbed.Add(1)
	l := nanos(f.mark, t)
	f.blind += l
	if samplerInterval.Load() == 0 {
		f.waited += l
		return
	}
	if c := f.child - max(f.base, 0); c > 0 && f.hist.childOf > 0 {
		// Unmetered sampled children ran in it, and the firing's
		// stretches that ran whole say how much of its own it runs per
		// ns of theirs: that is its part, as in a stretch taken off its
		// P (descheduled). The looks would give it whatever its
		// children's means miss, and the wall time its thread waited for
		// a core in its children's calls.
		own := f.hist.ownPer(c)
		f.own += own
		f.waited += l - own - f.child
		return
	}
	ran := int64(f.g.ran)
	f.own += ran - f.child
	f.waited += l - ran
}

// ranWhole returns the time of f's stretch that ran whole (its goroutine
// on its thread throughout), ending at tick t, less what was charged to
// it, where f is timed by the thread's CPU clock or the stretch held a
// system call (sys); elsewhere the wall time is the stretch's time, and
// its callers do without ranWhole. On the CPU clock, the time is that
// clock's advance. On the wall clock, a stretch that held a call holds
// what the call waited, and is left out (false); then f's next stretch,
// and its probe's next metered firing, are timed by the CPU clock, where
// there is one (Linux; not for the engine's own probes, calibrate.go). A
// stretch on the CPU clock that held no call returns f, and its probe's
// next firing, to the wall clock. A reading costs a system call, a tenth
// of a microsecond or more: a loop that calls and computes by turns stays
// on the CPU clock, and a function that made one call, once, leaves it at
// once.
func (f *Frame) ranWhole(t int64, sys bool) (int64, bool) {
	wall := nanos(f.mark, t)
	if f.cpu != 0 {
		if c := engine.cpuNow(); c != 0 {
			d := min(c-f.cpu-cpuReadCost, wall)
			f.cpu = 0
			if sys {
				f.cpu = c
			} else if f.probe.cpuTimedFor(cpuSyscalls) {
				f.probe.setCPUTimed(cpuSyscalls, false)
			}
			return d - f.child, true
		}
		f.cpu = 0
	}
	if sys {
		syscallStretches.Add(1)
		if engine.cpuClock() && !f.probe.internal { // the engine's own measure the wall clock's paths
			f.cpu = engine.cpuNow()
			if !f.probe.cpuTimedFor(cpuSyscalls) {
				f.probe.setCPUTimed(cpuSyscalls, true)
			}
		}
		return 0, false
	}
	return wall - f.child, true
}

// Why a probe's metered firings are timed by the thread's CPU clock
// (Probe.cpuTimed).
const (
	// A stretch of one of them held a system call; a stretch that held
	// none returns the probe to the wall clock (ranWhole).
	cpuSyscalls = 1 << iota
	// Its selected firings held pauses, or long work that the wall
	// clock cannot tell from one (interrupted): some of its selected
	// firings read the thread's CPU clock as they begin (cpuReadEvery,
	// Frame.cpuStart), for good.
	cpuPauses
)

// setCPUTimed sets or clears the reason bit in p.cpuTimed (atomic.Uint32's
// Or and And need go1.23).
func (p *Probe) setCPUTimed(bit uint32, on bool) {
	for {
		m := p.cpuTimed.Load()
		n := m &^ bit
		if on {
			n = m | bit
		}
		if n == m || p.cpuTimed.CompareAndSwap(m, n) {
			return
		}
	}
}

// restartCPU begins f's next stretch on the thread's CPU clock, where f
// is timed by it, after a stretch that did not read it.
func (f *Frame) restartCPU() {
	if f.cpu != 0 {
		f.cpu = engine.cpuNow()
		f.over += cpuReadCost
	}
}

// cpuReadCost is what a read of the thread's CPU clock adds to the CPU
// time between two reads, in ns, measured at start-up (calibrate.go).
var cpuReadCost int64

// syscallStretches counts stretches left out, timed by the wall clock,
// because they held a system call.
var syscallStretches atomic.Int64

// closeBetween is closeStretch where a metered child begins at t, or a
// checkpoint is made: a stretch that began at a metered child's end or a
// checkpoint is a stretch between children, whose history (hist) tells
// what one taken off its P ran. (Two functions, not one with a flag, so
// that End's path, which closes no stretch between children, stays short.)
func (f *Frame) closeBetween(t int64, left, reason uint8, sys bool) {
	between := f.base >= 0
	switch n := engine.descheduled(f.g, f.left, left); {
	case engine.waited(reason), n > 0 && sys:
		f.leaveOut(t)
		f.restartCPU()
	case n > 0 && !engine.working(n, reason):
		f.descheduled(t, n, reason, between)
		f.restartCPU()
	default:
		f.worked |= uint8(n)
		d := nanos(f.mark, t) - f.child
		if f.cpu != 0 || sys {
			var ok bool
			if d, ok = f.ranWhole(t, sys); !ok {
				f.leaveOut(t)
				break
			}
		}
		if f.charger > 1 {
			f.overcharged(d)
		} else if between && f.child == f.base {
			f.bare += d
		}
		f.own += d
		if between {
			f.hist.note(d, f.child-f.base)
		}
	}
	f.mark, f.child, f.charger = t, 0, 0
	f.left = left
	if f.own >= shownUnit {
		f.show() // a long firing, still open (open.go)
	}
}

// Overcharged estimates. A sampled probe's selected firings are timed by
// a clock read on each side, and a read waits for the work before it to
// finish; its unmetered calls, back to back, overlap their work with what
// runs before and after them. So a short function that moves memory (one
// that allocates) measures longer than it runs among its callers: tens of
// ns a call where a clock read costs as much (a VM), and its estimate, the
// mean of its selected firings, is too high by as much.
//
// A stretch that ran whole (its goroutine on its P throughout) bounds it:
// the calls of a sampled probe that lie whole inside the stretch took no
// more than the stretch's wall time. Where the unmetered calls of one
// probe alone were charged to a stretch, the stretch's wall time less its
// metering (the calls' own time, at most) and how many calls it held,
// priced for the stretch's caller (Probe.callerRatio), are added up over
// the probe's stretches (stats.addRoom). Where the probe's estimate
// before any such correction (Probe.rawMean), as it stands now, times the
// calls exceeds their own time, the excess is taken off the probe's
// inclusive and own times (totals.over), and off the price that
// repricing charges its callers at (reprice): they are charged what its
// row shows, and get back what they were charged beyond it. (The caller
// is not floored apart: a floor at the price of each stretch's moment and
// repricing would both give it back the same excess. A caller left below
// 0 in all has its deficit taken off its children: snapshot.go.) The
// bound binds on the sums, not on each stretch: a stretch may hold the
// probe's shorter calls and another its longer ones (a sieve that strikes
// the multiples of 2, then of 3, … calls a function whose first calls are
// the long ones), and a bound on each would take the first off the probe
// and leave the second to its caller. The probe's estimate (ownMean) then
// follows. A probe some of whose selected or forced firings had a metered
// child is left out: its unmetered calls' own time may lie in more than
// one stretch of their caller's, cut where such a child was selected. A
// child's recheck (judge.go) does not count: its time is its parent's
// own, as every untimed call's is, and it is metered one call in
// thousands. Nor does the engine's own empty firing that measures the
// forced path's overhead inside a forcing firing (calibrate.go), nor the
// children metered before the probe was sampled: while the probe was
// judged, its children were judged too, and those judged untimed are
// never metered again but for their rechecks. The bound holds whatever
// the caller does; it binds where the caller does little besides the
// calls (a loop around them), which is where the estimate's error shows.

// charge notes that p's unmetered firing charged f's current stretch
// (begin's leaf does the same).
func (f *Frame) charge(p *Probe) {
	if a := uintptr(unsafe.Pointer(p)); f.charger != a {
		if f.charger == 0 {
			f.charger = a
		} else {
			f.charger = 1
		}
	}
}

// overcharged adds, for f's stretch that ran whole, whose own time d is
// its wall time less its charge, where one sampled probe's unmetered
// calls were charged to it (f.charger), the calls' own time in it, at
// most, and their number to the probe's sums.
//
//go:noinline
func (f *Frame) overcharged(d int64) {
	p := *(**Probe)(unsafe.Pointer(&f.charger))
	charge, mean, raw := p.charge.Load(), p.ownMean.Load(), p.rawMean.Load()
	c := f.child - max(f.base, 0) // the calls' charge
	if p.parent.Load() || charge <= 0 || c < charge {
		return
	}
	n := float64(c) / float64(charge)
	room := d + c - int64(n*float64(charge-mean)) // the stretch's wall time less its metering, the calls' own
	r := p.callerRatio(f.probe)                   // what its calls cost under this caller, against its mean (reprice)
	if int64(n*float64(raw)*r) > room {
		overcharges.Add(1)
	}
	p.stats.addRoom(room, n*r)
}

// overcharges counts the stretches that the estimate of the sampled probe's
// calls in them exceeded (the bound binds on the sums: overcharged).
var overcharges atomic.Int64

// descheduled charges f a stretch ending at tick t in which its goroutine
// left the running state n times without parking; between says the
// stretch lies between two of its metered children or checkpoints.
//
//go:noinline
func (f *Frame) descheduled(t int64, n int, reason uint8, between bool) {
	l := nanos(f.mark, t)
	if between && l >= longStretch && idle(t) {
		between = false // a long stretch, its waits short: what it ran, not what the others hold
	}
	switch {
	case l >= longStretch && engine.assisted(reason) && l > int64(n)*maskedGap:
		// A wait the collector's assist wrote over: mostly waiting,
		// by its length.
		f.leaveOut(t)
	case between && f.child > f.base && f.hist.childOf > 0:
		// What it ran is known: its unmetered sampled children's
		// part, and the firing's own time per ns of theirs where it
		// ran whole.
		descheduled.Add(1)
		f.own += min(f.hist.ownPer(f.child-f.base), max(l-f.child, 0))
	case between && f.child <= f.base && f.hist.bare > 0:
		// Its stretches that ran whole say what one holds.
		descheduled.Add(1)
		f.own += min(f.hist.bareHeld(), max(l-f.child, 0))
	case l >= longStretch && samplerInterval.Load() == 0:
		w := runWait(t)
		descheduled.Add(1)
		f.own += max(l-int64(leftTimes(l, n, w))*w-f.child, 0)
	default:
		// Short, and nothing tells what it ran: the sampler's estimate
		// where it runs, else nothing (mostly the wait).
		descheduled.Add(1)
		if samplerInterval.Load() != 0 {
			f.own += int64(f.g.ran) - f.child
		}
	}
}

// history is what a firing's stretches between children (metered ones,
// or checkpoints) held where they ran whole: those that held unmetered
// sampled children, and those that held none.
type history struct {
	withChild int64   // ns of own time in those that held some
	childOf   int64   // ns of those children's mean own times there
	bare      int64   // ns of own time in those that held none
	bareSq    float64 // the sum of the squares of those own times, in ns²
}

// ownPer returns the firing's own time for children ns of its unmetered
// sampled children's mean own times, as its stretches that ran whole
// hold it; childOf must be above 0.
func (h *history) ownPer(children int64) int64 {
	return int64(float64(children) * max(float64(h.withChild), 0) / float64(h.childOf))
}

// note adds a stretch between children that ran whole: own ns of the
// firing's own time, beside children ns of its unmetered sampled
// children's mean own times.
func (h *history) note(own, children int64) {
	if children > 0 {
		h.withChild += own
		h.childOf += children
		return
	}
	own = max(own, 0)
	h.bare += own
	h.bareSq += float64(own) * float64(own)
}

// bareHeld returns what a stretch that held no unmetered sampled child,
// and in which the goroutine was taken off its P, ran, as the firing's
// stretches of the kind that ran whole say; bare must be above 0. The
// scheduler takes a goroutine off after so long running (its time slice,
// or a P another goroutine needs), so a stretch is hit in proportion to
// what it runs: where they differ in length (a loop of untimed calls,
// cut by checkpoints and rechecks at counts of calls that do not line
// up), the one taken off is a long one more often than not. So what it
// held is the mean weighted by length, Σown²/Σown, not the plain mean.
func (h *history) bareHeld() int64 {
	return int64(h.bareSq / float64(h.bare))
}

// manualMarks stands for marks (wait.go) with a manual clock: no
// count of leaving the running state, no wait reason (the test's chain
// says what happened: waited, descheduled), and whether the goroutine
// entered a system call, as the test's chain says (Chain.Syscalled).
//
//go:noinline
func (e *engineState) manualMarks() (left, reason uint8, sys bool) {
	return 0, 0, e.syscalled != nil && e.syscalled()
}

// cpuNow reads the thread's CPU clock, in ns (threadcpu_linux.go); 0:
// none.
func (e *engineState) cpuNow() int64 {
	if e.manual == nil {
		return threadCPU()
	}
	if e.threadCPU != nil {
		return e.threadCPU()
	}
	return 0
}

// cpuClock reports whether the thread's CPU clock can be read.
func (e *engineState) cpuClock() bool {
	if e.manual == nil {
		return threadCPUOK
	}
	return e.threadCPU != nil
}

// descheduled returns how many times the running goroutine, g's, left the
// running state between two marks, without counting a park, nor a copy of
// its stack to a larger one (room.go).
func (e *engineState) descheduled(g *Goroutine, before, now uint8) int {
	if now == before && e.desched == nil { // with a manual clock, marks read 0
		return 0 // inlined: End's path
	}
	return e.leftBesidesGrowth(g, before, now)
}

// leftBesidesGrowth is descheduled where the goroutine may have left.
//
//go:noinline
func (e *engineState) leftBesidesGrowth(g *Goroutine, before, now uint8) int {
	n := int(now - before)
	if e.manual != nil {
		n = e.desched()
	}
	if n <= 0 {
		return 0
	}
	return max(n-g.grew(), 0)
}

// assisted reports whether reason, read by marks, is the collector's
// assist, which the runtime writes while the goroutine works, over
// whatever reason came before it in the stretch.
func (e *engineState) assisted(reason uint8) bool {
	return e.manual == nil && reason != 0 && reason == assistReason
}

// working reports whether a goroutine that left the running state n times
// in a stretch, the last with reason, read by marks, ran throughout: it
// left once, to work on its system stack (an assist of the collector, a
// scan of its own stack), which a CPU profile charges to the function it
// works in.
func (e *engineState) working(n int, reason uint8) bool {
	if e.manual == nil {
		return n == 1 && isWorkReason(reason)
	}
	return n == 1 && e.worked != nil && e.worked()
}

// waited reports whether reason, read by marks, says the goroutine parked
// to wait.
func (e *engineState) waited(reason uint8) bool {
	if e.manual == nil {
		return isWaitReason(reason)
	}
	return e.parked != nil && e.parked()
}

// Checkpoints. A metered firing whose calls inside are all untimed (a loop
// around short calls) would hold one stretch from its start to its end,
// however long, and a stretch in which its goroutine was taken off its P
// can only be charged from estimates (closeStretch): with more busy
// goroutines than Ps, a CPU-bound loop of seconds holds a hundred waits
// in the run queue. So every checkpointEvery firings of an untimed probe
// on a P (denseGap for its first rechecks, nextCheckpoint; a countdown in
// its slot there, begin's leaf decrements it), the
// innermost metered firing on the goroutine ends its stretch and begins
// the next: its stretches stay short, those taken off their P are a few
// among many, and its own time is measured, not estimated. A checkpoint
// reads the clock once: one in thousands of untimed calls.
const checkpointEvery = 8192

// checkpoint ends the current stretch of the innermost metered firing on
// the running goroutine, if any, and begins the next. pos and pc are
// where the untimed firing runs, for settle.
func checkpoint(pos, pc uintptr) {
	g := current()
	if g == nil {
		return
	}
	g.acquire()
	g.settle(pos, pc)
	if g.depth > 0 {
		f := g.frames[g.depth-1]
		f.closeBetween(stamp())
		f.base = 0
		g.ran = 0
	}
	g.release()
}

// startCheckpoints sets p's countdown to its next checkpoint on every P
// to checkpointEvery, as p turns untimed: a count left at zero would make
// its first calls checkpoints, inside the firings of its callers that
// hotspot is still judging.
func (p *Probe) startCheckpoints() {
	if p.slots == nil {
		return
	}
	for pid := uintptr(0); pid < countProcs; pid++ {
		atomic.StoreInt32(&p.slotOn(pid).left, p.nextCheckpoint())
	}
}

// checkpointOut is the leaf's path for an untimed probe's firing whose
// countdown on its P ran out: the countdown starts again there, and the
// checkpoint is made.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func checkpointOut(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	pid := uintptr(procPin())
	if pid < countProcs {
		atomic.StoreInt32(&p.slotOn(pid).left, p.nextCheckpoint())
	}
	procUnpin()
	return checkpointed(p, pos, pc)
}

// Waits in the function's own body. A stretch in which the goroutine
// parked is left out whole, with the CPU time it held before the park and
// after; where the wait is a statement of the function's own (a channel
// operation, a select, a lock, a sleep), generated code brackets it: Wait
// before notes the tick, and Woke after, where the goroutine left the
// running state in the wait and not before it, ends the stretch at the
// wait's start, its time own time as that of a stretch that ran whole,
// then the wait, left out whether the goroutine parked in it or was only
// made to wait its turn to run (an Unlock that hands the lock to a waiter
// yields), and begins the next. A wait that did not park costs a clock read, and
// the stretch goes on. A stretch on the thread's CPU clock, or one in
// which a metered child began between the two, is left to the rules of
// its close.

// Wait notes, for the firing *f of p where it is metered and innermost on
// its goroutine, that its function is about to block in its own body.
func (p *Probe) Wait(f *Firing) {
	fr := f.frame()
	if fr == nil || fr == firstEnd {
		return
	}
	g := fr.g
	g.acquire()
	if d := fr.index; d == g.depth-1 && fr.probe == p && fr.cpu == 0 {
		fr.waitAt = now()
		fr.waitRan = g.ran
		if engine.manual == nil {
			fr.waitLeft, _, _ = peekMarks()
		}
	}
	g.release()
}

// Woke ends the wait that Wait noted for the firing *f of p, where its
// goroutine left the running state in it (above).
func (p *Probe) Woke(f *Firing) {
	fr := f.frame()
	if fr == nil || fr == firstEnd {
		return
	}
	g := fr.g
	g.acquire()
	at := fr.waitAt
	fr.waitAt = 0
	if d := fr.index; at != 0 && at >= fr.mark && d == g.depth-1 && fr.probe == p {
		fr.woke(at)
	}
	g.release()
}

// woke is Woke for f, whose wait began at tick at, in its current stretch.
//
//go:noinline
func (f *Frame) woke(at int64) {
	var n int
	var left uint8
	var parked, working bool
	if engine.manual == nil {
		var r uint8
		var sys bool
		left, r, sys = peekMarks()
		if left == f.left && r == 0 && !sys {
			f.child += bracket.inner.Load() // nothing happened: the stretch goes on, less the bracket
			return
		}
		if f.waitLeft != f.left || sys {
			// It left before the wait, or made a system call: the
			// stretch is one, closed by the rules.
			f.closeBetween(stamp())
			f.base = 0
			f.g.ran = 0
			return
		}
		n = int(left - f.waitLeft)
		parked, working = engine.waited(r), engine.working(n, r)
		marks() // clears what the next stretch must not see
	} else {
		n, parked = engine.descheduled(f.g, 0, 0), engine.waited(0)
		if n == 0 && !parked {
			return
		}
		working = engine.working(n, 0)
	}
	t := now()
	// Before the wait: a stretch that ran whole.
	d := nanos(f.mark, at) - f.child
	if f.base >= 0 && f.child == f.base {
		f.bare += d
	}
	f.own += d
	// The wait: what the sampler saw run in it is what it saw since Wait.
	f.mark, f.child, f.base, f.charger = at, 0, -1, 0
	if parked || n > 0 && !working {
		f.g.ran -= min(f.waitRan, f.g.ran)
		f.leaveOut(t)           // off the CPU in a wait: waiting, parked or ready to run
		f.blind -= nanos(at, t) // a wait alone: nothing for the sampler to find
	} else {
		f.own += nanos(at, t)
	}
	f.mark, f.base, f.left = t, 0, left
	f.g.ran = 0
	if f.own >= shownUnit {
		f.show()
	}
}

// Mark ends the current stretch of the firing *f of p, and begins the
// next, where its function has just started a goroutine: generated code
// calls it after each go statement of the function's own body, for a
// firing that is metered. Starting a goroutine takes CPU time (the
// runtime makes it, and may wake a thread to run it); a function that
// starts goroutines and then waits for them would otherwise hold that CPU
// time in the stretch it parks in, which is left out whole. A Mark where
// the firing is not the innermost metered one on its goroutine (a metered
// child a panic unwound, not settled yet) does nothing.
func (p *Probe) Mark(f *Firing) {
	fr := f.frame()
	if fr == nil || fr == firstEnd {
		return
	}
	g := fr.g
	g.acquire()
	if d := fr.index; d == g.depth-1 && fr.probe == p {
		fr.restart()
	}
	g.release()
}

// restart ends f's current stretch and begins the next (Mark, Panicking).
func (f *Frame) restart() {
	f.closeBetween(stamp())
	c := stretchMark.inner.Load() // what the mark costs the stretch it begins
	f.child, f.base = c, c
	f.g.ran = 0
}

// gPanic is the offset of _panic in the runtime's g: after stack (two
// words), stackguard0 and stackguard1, unchanged since the register ABI.
// The word is not nil while the goroutine runs the deferred calls of a
// panic or of runtime.Goexit (TestPanickingSeesThePanic).
const gPanic = 4 * 8

// Panicking marks the moment a panic is done with a function that calls
// recover itself (a deferred closure that recovers): generated code defers
// it first in such a function, so that it runs as the function returns,
// at every call. Where the goroutine is panicking, the innermost metered
// firing on it ends its current stretch there, and notes that it was
// caught (Frame.caught): if the panic began in it or below it and unwinds
// it, it ends as of this moment (end). Its work up to the panic, the
// runtime's search for the deferred calls, and those calls, which run on
// top of the panicking frames, are its own, as a CPU profile charges them
// to the function that panicked (a deferred call that is itself timed
// keeps its own time, as a metered child); what follows (the runtime's
// recovery, which a CPU profile charges to no function of the program,
// and the recovering function's remaining deferred calls) stays its
// parent's. A call outside a panic costs a read of the goroutine's word.
// The panic's deferred calls run deep in the stack: where the engine's
// path would grow it, it is grown first, and the copy left out of the
// stretch that ends (room.go).
//
//go:nosplit
func Panicking() {
	if !panicking() {
		return
	}
	var d int64
	if stackRoom() < roomBytes && young(gtab.Load().find(getg())) {
		d = makeRoom()
	}
	g := current()
	if g == nil {
		return
	}
	g.acquire()
	g.sameGoroutine()
	if g.depth > 0 {
		g.frames[g.depth-1].leaveOutNested(d)
	}
	g.caught()
	g.release()
}

// panicking reports whether the running goroutine runs the deferred calls
// of a panic or of runtime.Goexit.
func panicking() bool {
	gp := getgp()
	return gp != nil && *(*unsafe.Pointer)(unsafe.Add(gp, gPanic)) != nil
}

// caught ends the current stretch of g's innermost metered firing, where a
// panic or runtime.Goexit has reached a deferred call, and notes it
// (Frame.caught). The caller holds g.
func (g *Goroutine) caught() {
	if g.depth > 0 {
		fr := g.frames[g.depth-1]
		fr.restart()
		fr.caught = true
	}
}
