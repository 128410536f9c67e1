package meter

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/flowcheck"
)

// Firing is what Begin returns and End ends: 0 when End has nothing to
// do, firstEnd's address for an unmetered firing whose end must be noted,
// and otherwise the address of the metered firing's frame, so that End
// needs no look-up. A goroutine's frames never move: each is allocated
// once, the first time its depth is reached, and stays reachable from the
// goroutine table for the life of the process (goroutine.go), so an
// address held as a number never outlives its frame.
//
// A number, not a pointer: generated code keeps the firing in a variable
// of the instrumented function whose address it takes (probe.Begin), and
// an address-taken variable that holds a pointer is a stack object, which
// every copy of a growing stack and every scan of the stack by the
// collector must find and adjust. A firing variable holds no pointer, so
// an instrumented function's frame has the stack objects of the plain
// one.
type Firing uintptr

// frame returns the frame f stands for, nil for 0.
func (f Firing) frame() *Frame { return *(**Frame)(unsafe.Pointer(&f)) }

// firingOf returns the Firing of fr.
func firingOf(fr *Frame) Firing { return Firing(unsafe.Pointer(fr)) }

// firstEnd is the Firing of a probe's firing outside a trace, while no
// firing of the probe has ended yet: not metered, but its End is noted (a
// probe none of whose firings has ended cannot start a trace). Its state
// has no frames, so that end finds it dropped, on its rare path.
var firstEnd = &Frame{g: &Goroutine{}}

var (
	traceIDs        atomic.Uint64
	tracesEnded     stripedCount
	tracesTruncated atomic.Int64
	unwound         atomic.Int64
	dropped         atomic.Int64
)

// Begin starts a firing of p on the calling goroutine: it counts it, and
// asks the chain whether to meter it (see beginGo). End the firing with
// End, before the function returns, on the same goroutine.
//
// Cost: on amd64, one assembly leaf (begin_amd64.s) decides the common
// cases with no Go frame. A counted firing that is not metered is a load
// of the probe's class, a read of the running P's number and a plain add
// to the probe's slot on that P; a sampled probe's adds a decrement of
// its countdown on that P. A metered firing adds the goroutine's look-up,
// a clock read and a push on the goroutine's own stack. Begin never
// allocates once the goroutine's stack has reached its depth, and takes
// no lock after the goroutine's first firing.
func (p *Probe) Begin() Firing { return firingOf(begin(p, nil, 0, 0)) }

// beginGo is the chain's whole decision for one firing of p, in Go: the
// class of the probe says what begins, in this order. The assembly leaf
// switches on the same word in the same order, and jumps to the same
// functions for everything but its quiet returns. pos and pc say where the
// firing's function runs (its frame's depth on the stack, and the return
// address of its call to Begin): settle compares them with the frames
// already there, to drop firings a panic unwound.
//
//	class        counted  then
//	classOff     no       nothing
//	classSpot    no       spot: spotcheck's countdown; the due firing is metered
//	classCount   yes      nothing
//	classSample  yes      inside a forcing firing, metered (forced); else the P's
//	                      countdown; the firing that ends it is metered (selected)
//	classMeter   yes      no trace gate, or in a trace: measure; else the gates (outside)
func beginGo(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	switch p.class.Load() {
	case classOff:
		return nil
	case classSpot:
		return spot(p, nil, pos, pc)
	}
	return counted(p, pos, pc)
}

// counted counts a firing of a probe whose class counts, and goes on as
// its class says.
func counted(p *Probe, pos, pc uintptr) *Frame {
	switch c := p.class.Load(); c {
	case classCount:
		if p.countGo() != 0 {
			return checkpointed(p, pos, pc)
		}
		return nil
	case classSample:
		p.countGo()
		return forcedOrNot(p, pos, pc)
	case classMeter:
		p.countGo()
		return meterOrGate(p, pos, pc)
	default:
		return nil // its class changed under it
	}
}

// meterOrGate is a counted firing of a metered probe: metered where no
// trace gate is on or a trace is open on the goroutine, else offered to the
// gates.
func meterOrGate(p *Probe, pos, pc uintptr) *Frame {
	g := current()
	if g == nil {
		return nil
	}
	g.acquire()
	g.sameGoroutine()
	g.release()
	if g.joining() && quick.mode != modeUngated && g.trace == 0 {
		return joinFirst(p, g, pos, pc) // started inside a trace (join.go)
	}
	if quick.mode == modeUngated || g.trace != 0 {
		return measure(p, g, pos, pc)
	}
	return outside(p, g, pos, pc)
}

// outside is a firing of a metered probe outside any trace, while a gate
// is on: flowcheck counts it down on the goroutine, then tracepoint on the
// probe's count; a count that runs out goes on in flowOut or leaseOut.
func outside(p *Probe, g *Goroutine, pos, pc uintptr) *Frame {
	if !p.ended.Load() {
		return outsideOut(p, g, pos, pc)
	}
	if quick.mode == modeFlow || quick.mode == modeBoth {
		g.flowLeft--
		if g.flowLeft <= 0 {
			return flowOut(p, g, pos, pc)
		}
	}
	if (quick.mode == modeTrace || quick.mode == modeBoth) && p.count.leases.Load().stripes[g.stripe&(stripeCount-1)].units.Add(-1) < 0 {
		return leaseOut(p, g, pos, pc)
	}
	return nil
}

// flowOut is outside's path for a goroutine whose flowcheck countdown is at
// or below zero. At zero it ran out: this firing is due. Below zero none
// was drawn (a new goroutine, or the end of a trace): this firing draws a
// gap and counts as its first. Tracepoint has not counted the firing yet.
func flowOut(p *Probe, g *Goroutine, pos, pc uintptr) *Frame {
	due := g.flowLeft == 0
	if !due {
		if g.flowState == 0 {
			g.flowState = flowSeed()
		}
		g.flowLeft = engine.flowcheck.Draw(&g.flowState)
		due = g.flowLeft == 0
	}
	if quick.mode == modeBoth && p.count.Take(uint(g.stripe)) && p.eligible.Load() {
		due = true
	}
	return startOrNot(p, g, pos, pc, due)
}

// leaseOut is outside's path for a firing whose decrement found its
// stripe's share of tracepoint's count empty; flowcheck, if on, counted it
// and is not due.
func leaseOut(p *Probe, g *Goroutine, pos, pc uintptr) *Frame {
	due := p.count.refill(uint(g.stripe)) && p.eligible.Load()
	g.stripe = procStripe() // the P it runs on now, for its next lease
	return startOrNot(p, g, pos, pc, due)
}

// procStripe returns the stripe of the P the goroutine runs on.
func procStripe() uint64 {
	id := procPin()
	procUnpin()
	return uint64(id*2) & (stripeCount - 1)
}

// procSpread is how many stripes an enabled probe's count uses as the
// program runs now: one per P, at most procStripes. Read at each reset: a
// program that raises GOMAXPROCS later spreads its firings over more
// stripes, which eats into the Countdown's factor of two (procStripes
// stripes of n/4 units still hold fewer than n).
func procSpread() int { return min(runtime.GOMAXPROCS(0), procStripes) }

// startOrNot ends the gates' decision: a due firing starts a trace, unless
// its probe has never ended a firing (then, due or not, its end is noted).
func startOrNot(p *Probe, g *Goroutine, pos, pc uintptr, due bool) *Frame {
	if !p.ended.Load() {
		return firstEnd
	}
	if !due {
		return nil
	}
	g.acquire()
	g.settle(pos, pc)
	return g.meter(p, pos, pc, meterStart, 1, noEntry)
}

// measure is a firing of a metered probe inside a trace, or in a chain
// with no gate: metered, if the trace maximum and the budget allow.
//
// Its callers, the leaf and beginGo, have made sure that g's frames are
// the running goroutine's.
func measure(p *Probe, g *Goroutine, pos, pc uintptr) *Frame {
	g.acquire()
	if g.depth > 0 {
		g.settleFrames(pos, pc)
	}
	if quick.mode != modeUngated && g.trace == 0 {
		g.release() // the trace it was in has gone with its goroutine
		return outside(p, g, pos, pc)
	}
	return g.meter(p, pos, pc, meterAlways, 1, noEntry)
}

// selected is a firing of a sampled probe that its P's countdown selected,
// of weight w: metered, standing for the w firings of its gap.
//
// The program's own code has run since the engine's last work on this
// thread, a gap of calls, and the engine's code and data have gone cold:
// metered so, the firing would hold more of the engine's work than the
// overheads taken off, which are measured warm (calibrate.go),
// and the more the rarer its selected calls. So an empty firing of the
// engine's own sampled probe comes first, nested where this one will be
// and taken off its parent as any metered child is: it warms what this
// one runs. What follows, up to the firing's start, and its End are left
// out of its parent's stretch, timed (Frame.entry); a weight w of 0 or
// less is drawn here, on the P the goroutine runs on then (reloadHere).
func selected(p *Probe, w int32, pos, pc uintptr) *Frame {
	g := current()
	if g == nil {
		return nil
	}
	if !p.internal && engine.manual == nil {
		calib[pathSelected].empty()
	}
	entry := now()
	if w <= 0 {
		w = p.reloadHere()
	}
	g.acquire()
	g.settle(pos, pc)
	f := g.meter(p, pos, pc, meterSelected, w, entry)
	if g.copied != 0 && !p.internal { // not the empty firing above
		g.takeCopy(f)
	}
	return f
}

// takeCopy gives f, the firing begun, the copy of the stack that begin's
// leaf made for it (roomGive) as its own time; with no firing metered (f
// nil), the copy stays out of every firing's time.
func (g *Goroutine) takeCopy(f *Frame) {
	if f != nil {
		f.own += g.copied
	}
	g.copied = 0
}

// forcedOrNot is a counted firing of a sampled probe: metered, as a
// forced firing, where the innermost metered firing on its goroutine
// forces its timed children, so that that firing's own time is measured
// whole (see Frame.forces); else the P's countdown runs down, and the
// firing that ends it is selected; else it is not metered, its probe's
// mean own time added to that innermost metered firing's children
// (parent.go). Forced firings stay out of the countdown, so that the
// selected ones are a uniform sample of the calls that were not metered,
// each standing for itself and the unmetered calls since the last
// (reprice).
func forcedOrNot(p *Probe, pos, pc uintptr) *Frame {
	g := current()
	if g == nil {
		return nil
	}
	g.acquire()
	if g.forcing == 0 {
		if w := p.countDown(); w != 0 {
			g.release()
			return selected(p, w, pos, pc)
		}
		if g.depth > 0 {
			f := g.frames[g.depth-1]
			f.child += p.charge.Load()
			f.charge(p)
		}
		g.copied = 0
		g.release()
		return nil
	}
	entry := now()
	g.sameGoroutine()
	g.settle(pos, pc)
	if g.forcing == 0 { // it forced firings that a panic unwound
		g.copied = 0
		g.release()
		return nil
	}
	f := g.meter(p, pos, pc, meterForced, 1, entry)
	if g.copied != 0 {
		g.takeCopy(f)
	}
	return f
}

// forcedOut is the leaf's path for a firing of a sampled probe whose
// goroutine's innermost metered firing forces, or whose goroutine's state
// the leaf did not find.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func forcedOut(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	return forcedOrNot(p, pos, pc)
}

// selectedOut is the leaf's path for a firing of a sampled probe whose
// countdown on its P ran out (the leaf counted it and decremented): the
// next gap is drawn on the P the goroutine runs on now.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func selectedOut(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	return selected(p, 0, pos, pc)
}

// reloadHere draws the next gap of p's countdown on the running P and
// returns the weight of the firing that ran it out.
func (p *Probe) reloadHere() int32 {
	pid := uintptr(procPin())
	var w int32
	if pid < countProcs {
		w = p.reload(p.slotOn(pid))
	} else {
		w = int32(max(engine.sample, 1))
	}
	procUnpin()
	return w
}

// spot is a firing of a disabled probe: with spotcheck on, counted on its
// stripe; the due one is a spot check.
func spot(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	if engine.spotcheck == nil || !p.count.Take(stripe(getg())) {
		return nil
	}
	return spotCheck(p, pos, pc)
}

// spotOut is spot's path for a firing whose decrement found its stripe's
// share empty.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func spotOut(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	if !p.count.refill(stripe(getg())) {
		return nil
	}
	return spotCheck(p, pos, pc)
}

// spotCheck meters a firing of a disabled probe that spotcheck's count
// made due.
func spotCheck(p *Probe, pos, pc uintptr) *Frame { return meterHere(p, pos, pc, meterSpot) }

// meterHere meters a firing of p that stands for no calls (a spot check,
// a recheck) on the running goroutine, after dropping the frames a panic
// unwound (pos and pc: where the firing runs).
func meterHere(p *Probe, pos, pc uintptr, how uint8) *Frame {
	g := current()
	if g == nil {
		return nil
	}
	g.acquire()
	g.settle(pos, pc)
	return g.meter(p, pos, pc, how, 0, noEntry)
}

// noEntry is Frame.entry where the firing's parent is charged the
// calibrated overheads of metering it: a firing metered at every call
// (warm: its probe's calls keep the engine's path in cache), or one whose
// parent's stretches are timed by the thread's CPU clock.
const noEntry = math.MinInt64

// How a firing came to be metered (Frame.how).
const (
	meterAlways   = iota // a metered probe: no gate, or in a trace
	meterStart           // a metered probe whose firing starts a trace
	meterSelected        // a sampled probe's selected firing
	meterForced          // a sampled probe's firing inside a forcing firing
	meterSpot            // a spot check of a disabled probe
	meterRecheck         // an untimed probe's firing at a checkpoint, timed again (recheck)
)

// forceFirst is how many timed children a firing that forces because it
// is one of its probe's first (forcing) meters at most: past that many
// (a main whose loop calls a sampled function a billion times), its
// children are metered as they would be anywhere, and those that are not
// are estimated (parent.go). A selected firing forces all of them: it is
// one call of its probe in hotspot's Sample.
const forceFirst = 1024

// forcing returns how many timed children a firing of p, metered at every
// call, forces (meters whole, Frame.forces). The first hotspot Initial of
// them (1000 by default) force forceFirst, so that the own times of the
// firings a short program has are measured whole. Later ones force as
// many as cost their calls no more than 1/forceShare of their time, from
// the mean inclusive time of the first (forceLong): none for a function of
// tens of µs, a few for one of hundreds. The others are estimated, and
// where a sampled child's calls under this parent differ from its calls
// elsewhere (bench/adversarial/callers: 100 µs under one caller, 500 ns
// under another), the estimate under a parent that calls it rarely rests
// on few selected calls; forced, they are measured.
func (p *Probe) forcing() int32 {
	n := int32(1000)
	if h := engine.hotspot; h != nil {
		n = int32(min(h.Initial, 1<<30))
	}
	if p.forcings.Load() < n {
		if c := p.forcings.Add(1); c <= n {
			if c == n {
				p.setForceLong()
			}
			return forceFirst
		}
	}
	return p.forceLong.Load()
}

// forceShare bounds what forcing costs a firing metered at every call:
// its forced children's metering, at most 1/forceShare of its time.
const forceShare = 32

// setForceLong sets how many timed children p's firings metered at every
// call force after its first ones (forcing).
func (p *Probe) setForceLong() {
	t := p.stats.sum()
	if t.count == 0 {
		return
	}
	cost := overhead[pathForced].outer.Load()
	if cost <= 0 {
		return // not measured (a manual clock that costs nothing): no more
	}
	p.forceLong.Store(int32(min(t.total/t.count/(forceShare*cost), forceFirst)))
}

// meter pushes a metered firing of p on g, which the caller has acquired
// and settled; how says why it is metered, w what it stands for (sample.go).
// Inside a trace it counts towards the trace maximum; meterStart starts a
// trace. Budget decides last: a firing gets the least of its own allowance
// and what its nearest metered ancestor has left, and is not metered with
// less than one unit; a spot check is outside its own allowance (which may
// be why its probe is disabled), not its ancestor's.
func (g *Goroutine) meter(p *Probe, pos, pc uintptr, how uint8, w int32, entry int64) *Frame {
	if g.trace != 0 {
		if g.full || g.traceCount() >= engine.traceMax { // on all the trace's goroutines (join.go)
			g.full = true
			g.release()
			return nil
		}
	}
	pool := int64(Unlimited)
	if engine.budget != nil && how != meterSpot && how != meterRecheck {
		if a := p.allowance.Load(); a != 0 {
			pool = a - 1
		}
	}
	if g.depth > 0 {
		pool = min(pool, g.frames[g.depth-1].pool)
	}
	if pool < 1 {
		g.release()
		return nil
	}
	if how == meterStart {
		g.startTrace(p)
	}
	return g.push(p, pool, pos, pc, how, w, entry)
}

// push opens a frame for a metered firing of p and reads the clock, last,
// so that the engine's own work stays outside the firing's time.
func (g *Goroutine) push(p *Probe, pool int64, pos, pc uintptr, how uint8, w int32, entry int64) *Frame {
	d := g.depth
	if int(d) == len(g.frames) {
		g.frames = append(g.frames, &Frame{g: g, index: d})
	}
	f := g.frames[d]
	f.probe, f.budget, f.pool, f.pos, f.pc, f.span, f.entry = p, pool, pool, pos, pc, -1, entry
	f.over, f.own, f.how, f.worked, f.caught, f.weight, f.forces, f.waited, f.blind, f.bare, f.kept = 0, 0, how, 0, false, w, 0, 0, 0, 0, 0
	f.hist = history{}
	if pool != Unlimited {
		f.pool-- // a firing spends one unit on itself
	}
	if how == meterForced {
		g.frames[d-1].forces-- // forcedOrNot found it forcing
	}
	switch {
	case how == meterSelected:
		f.forces = math.MaxInt32
	case how == meterAlways && engine.sample > 0 && !p.internal:
		f.forces = p.forcing()
	}
	g.forcing = b2u32(f.forces > 0)
	if g.trace != 0 && !p.internal {
		g.traced++
		g.countTraced()
		if engine.sink != nil {
			g.addSpan(f, d, p)
		}
		g.markPush(f) // what goroutines it starts inherit (join.go)
	}
	g.depth = d + 1
	f.cpu = 0
	if m := p.cpuTimed.Load(); m != 0 {
		if m&cpuSyscalls != 0 {
			f.cpu = 1 // openStretch reads the thread's CPU clock (stretch.go)
		}
		if m&cpuPauses != 0 && how == meterSelected && w%p.cpuReadEvery() == 0 {
			f.cpuStart = engine.cpuNow() // before the clock's start: outside the firing's time (interrupted)
			if d > 0 {
				g.frames[d-1].child += cpuReadCost // inside the parent's stretch, which ends at the start
			}
		}
	}
	if d > 0 && g.frames[d-1].cpu != 0 {
		// The parent's stretch ends on the thread's CPU clock before this
		// firing begins, so that reading it stays outside this firing.
		t, left, reason, sys := stamp()
		g.frames[d-1].closeBetween(t, left, reason, sys)
		f.entry = noEntry // charged the calibrated overheads: its parent's stretch ends here
		f.start = now()
		f.openStretch(f.start, left)
	} else {
		// Last but the stretches and the release, so the engine's work
		// stays outside.
		var t int64
		var left, reason uint8
		var sys bool
		switch { // stamp, its other ways written out
		case stampTSC:
			t, left, reason, sys = stamp()
		case engine.manual == nil:
			t = clock.Now()
			left, reason, sys = marks()
		default:
			t, left, reason, sys = stampOther()
		}
		if d > 0 {
			end := t
			if entry != noEntry {
				end = entry
			}
			g.frames[d-1].closeBetween(end, left, reason, sys)
		}
		f.start = t
		f.openStretch(t, left)
	}
	if f.span >= 0 {
		g.spans[f.span].Start = f.start
	}
	g.release()
	return f
}

func flowSeed() uint64 { return flowcheck.Seed(engine.seed, seeded.Add(1)) }

// outsideOut is outside's path, and the leaf's, for a counted firing
// outside any trace whose probe has not ended a firing yet: the gates
// count it as any other, and its End is noted, due or not (a probe none of
// whose firings has ended cannot start a trace).
func outsideOut(p *Probe, g *Goroutine, pos, pc uintptr) *Frame {
	if quick.mode == modeFlow || quick.mode == modeBoth {
		g.flowLeft--
		if g.flowLeft <= 0 {
			flowOut(p, g, pos, pc)
			return firstEnd
		}
	}
	if (quick.mode == modeTrace || quick.mode == modeBoth) && p.count.leases.Load().stripes[g.stripe&(stripeCount-1)].units.Add(-1) < 0 {
		leaseOut(p, g, pos, pc)
	}
	return firstEnd
}

// meterOrGateOut is the leaf's path for a counted firing of a metered
// probe whose goroutine state is not in its home slot, or belongs to a
// goroutine that ended.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func meterOrGateOut(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	return meterOrGate(p, pos, pc)
}
