package meter

import (
	"sync/atomic"

	"github.com/meterio/meter/clock"
)

// End ends the firing *f, one that Begin returned, if it is not nil, on
// the same goroutine. Generated code calls it before each return of the
// function (or defers it, in a function with defers of its own), through
// probe.Probe.End. On a metered firing it reads the clock, pops the
// goroutine's stack, charges the firing's timed parent (parent.go),
// records the probe's statistics (one pinned write of the P's own row: no
// atomic instruction on amd64, once the probe is metered often) and lets
// the chain judge the firing. Frames above *f's are firings that a panic
// or runtime.Goexit unwound: they end first (endUnwound).
//
// End is not inlined, so that its test of *f is its own. Generated code
// tests the firing in memory itself before most exits; a load of *f
// inlined into it would share that test's, and the compiler would then
// load the firing into a register at every exit, where the test alone
// compares memory. At the exits where generated code calls End without a
// test (meterinject's exits.go), a test inlined there would be a branch,
// which costs the user's condition its short circuit. f does not escape:
// a function's firing variable stays on its stack.
//
// Cost: for a firing that is not metered, the call, End's frame, a
// compare and the return, with no stack check (nosplit: End's frame is a
// few words, and end checks its own). That is as much as a call of an
// assembly leaf, whose Go caller must set the goroutine's register and
// the zero register again after it; and a metered firing's End calls end
// directly, where a leaf would reach it through an ABI wrapper's frame.
//
//go:noinline
//go:nosplit
func (p *Probe) End(f *Firing) {
	if fr := *f; fr != 0 {
		p.end(fr.frame())
	}
}

// endUnwound ends the firings above the first keep of g's frames, innermost
// first: a panic or runtime.Goexit unwound them, and the engine finds
// them gone now, at a push or at the End of a firing below them. Each ends
// as of its current stretch's beginning (end): what it ran in the
// stretches it closed is its own, as a CPU profile charges it. Where the
// panic reached a function that recovers, or a deferred End, while it was
// the innermost metered firing (Frame.caught), that stretch began there;
// elsewhere, where in the stretch the panic came, and what ran after it,
// the engine cannot tell. The caller holds g.
func (g *Goroutine) endUnwound(keep int32) {
	for g.depth > keep {
		fr := g.frames[g.depth-1]
		fr.cut, fr.entry = true, noEntry // its parent is charged the calibrated overheads
		fr.probe.end(fr)
		fr.cut = false
	}
}

// end ends the firing fr of p and returns its clock difference in ns, or
// -1 for a firing that was not metered or was dropped already.
//
// Its inclusive time is the clock difference less the metering inside it:
// its own inner overhead and the outer overheads of the metered firings
// under it (calibrate.go); its own time, that less what its timed children
// took (parent.go). A spot check charges its parent nothing, its disabled
// probe's time being its callers'. The metered firing below it on the
// stack, whatever its timed parent, carries what metering this firing cost
// (its outer overhead), and spends what the firing spent of its budget.
//
// fr.cut says that a panic or runtime.Goexit unwound fr (endUnwound): its
// statistics keep it, but the chain's verdicts and a sampled probe's
// pricing by caller rest on whole calls, and leave it out, unless the
// panic was caught in it (Frame.caught): it then ends where the panic
// reached a function that recovers, its work up to the panic whole.
func (p *Probe) end(fr *Frame) int64 {
	fr.g.acquire()
	if g := fr.g; fr.index >= g.depth || fr.probe != p { // dropped already: not ours any more
		g.release()
		if fr == firstEnd {
			p.noteEnded()
		}
		return -1
	} else if g.depth > fr.index+1 {
		if panicking() {
			// A deferred End that a panic or runtime.Goexit runs: the
			// panic has reached this function, as it reaches a function
			// that recovers (Panicking).
			g.caught()
		}
		// They end first, before this firing's clock read; their ends are
		// the engine's work (verdicts, a metered child's whole path), timed
		// and taken off this firing's last stretch and inclusive time.
		t0 := now()
		g.endUnwound(fr.index + 1)
		fr.leaveOutNested(nanos(t0, now()))
	}
	var t int64
	var left, reason uint8
	var sys bool
	switch { // stamp, its other ways written out
	case fr.cut:
		// It ends where its current stretch began, at its last metered
		// child's end or its start: what it ran in the stretches it
		// closed is its own; the stretch the panic cut is its parent's,
		// which holds the runtime's recovery too (a CPU profile charges
		// that to no function of the program: runtime.mcall). No marks
		// are read: they clear what its parent's stretch is to see.
		t, left = fr.mark, fr.left
		unwound.Add(1)
		if g := fr.g; g.trace != 0 && fr.index < g.trace {
			g.cut = true // its trace ends here, truncated
		}
	case stampTSC:
		t, left, reason, sys = stamp()
	case engine.manual == nil:
		t = clock.Now()
		left, reason, sys = marks()
	default:
		t, left, reason, sys = stampOther()
	}
	g, d := fr.g, fr.index // read again: kept across the clock read, they would cost End's path a spill each
	k := pathMeter
	switch fr.how {
	case meterSelected, meterSpot, meterRecheck:
		k = pathSelected
	case meterForced:
		k = pathForced
	}
	raw := nanos(fr.start, t)
	inner, outer := overhead[k].inner.Load(), overhead[k].outer.Load()
	incl := max(raw-inner-fr.over, 0)
	fr.closeStretch(t, left, reason, sys)
	if fr.shown != 0 {
		fr.own += fr.unshow() // it showed own time while open (open.go)
	}
	own := fr.own - inner // may be below 0 where children were estimated: an estimate, not clamped
	if fr.how == meterRecheck {
		p.recheck(own, fr.recheckCalls(p)) // its time is its parent's, below, as every untimed call's is
	}
	var pf *Frame
	if d > 0 {
		pf = g.frames[d-1]
		if fr.entry != noEntry {
			// The parent's stretch left out what metering this firing
			// cost it around its clock reads, timed (entryRead).
			outer = inner
		}
		pf.over += fr.over + outer
		if (pf.how == meterSelected || pf.how == meterForced) && fr.how != meterRecheck && !p.internal && !pf.probe.parent.Load() {
			pf.probe.parent.Store(true) // (overcharged)
		}
		// The parent's own time goes on, less what metering this firing
		// cost it around the firing's clock reads; after this firing's
		// read of the thread's CPU clock, where it had one.
		if fr.cpu != 0 {
			pf.openStretch(now(), left)
		} else {
			pf.openStretch(t, left)
		}
		pf.child, pf.base = outer-inner, outer-inner
		if pf.pool != Unlimited {
			pf.pool -= fr.budget - fr.pool
		}
		switch s := p.State(); {
		case fr.how == meterSpot:
		case p.short.Load() == shortYes || s == Untimed || s.Disabled():
			// Too short to time (judgeShort), or judged untimed or
			// disabled while this firing ran (the first call of a
			// recursion, a loop's caller): its time, with that of its
			// probe's firings it holds, is its parent's own.
			pf.own += max(own+fr.kept, 0)
			own = 0
		default:
			keepCharge(p, pf, own+fr.kept)
		}
		g.forcing = b2u32(pf.forces > 0)
	} else {
		g.forcing = 0
	}
	g.depth = d
	if fr.label != nil {
		g.markPop(fr, d) // the parent's mark again (join.go)
	}
	if p.first.Load() == 0 {
		p.first.CompareAndSwap(0, fr.start)
	}
	if fr.weight > 1 {
		incl, own = interrupted(p, fr, raw, incl, own)
	}
	if fr.waited != 0 && fr.weight > 0 { // a stretch was left out: blind too, maybe
		p.waited.Add(fr.waited * int64(fr.weight))
		if fr.blind != 0 {
			p.blind.Add(fr.blind * int64(fr.weight))
		}
	}
	n := p.stats.record(incl, own, fr.weight)
	if fr.bare != 0 {
		p.stats.addBare(fr.bare * int64(fr.weight)) // floored on the probe's sum (bareFloor)
	}
	if engine.untimed != nil && n&(shortJudgeAt-1) == 0 && !p.internal && p.short.Load() == shortUnknown {
		p.judgeShort()
	}
	if fr.how == meterSelected && (!fr.cut || fr.caught) {
		p.noteSelected(pf, own, fr.weight, fr.bare)
		if n%ownMeanEvery == 0 {
			p.refreshOwnMean()
		}
	}
	p.noteEnded()
	if (fr.how == meterSpot || engine.hotspot != nil || engine.budget != nil) && (!fr.cut || fr.caught) { // a verdict rests on whole calls, or on those a panic cut where Panicking caught it
		// A verdict takes microseconds (decide reads every probe): that
		// time is the engine's, not the parent's.
		// Own time is at most the firing's time here, where the sampler's
		// estimate of a stretch left out (leaveOut) holds more.
		if slow := judge(p, fr.how == meterSpot, incl, min(max(own, 0), incl), n, t); slow > 0 && pf != nil && fr.entry == noEntry {
			pf.over += slow
		}
	}
	if g.trace != 0 {
		if fr.span >= 0 {
			s := &g.spans[fr.span]
			s.End, s.Inherent = t, min(max(own, 0), incl)
		}
		if d < g.trace {
			g.endTrace()
		} else if t-g.handed >= engine.handEvery {
			g.handOver(t)
		}
	}
	if pf != nil && fr.entry != noEntry {
		pf.entryRead(fr, t, k)
	}
	g.calibLeft--
	measure := g.calibLeft <= 0 && !p.internal && engine.manual == nil && !fr.cut
	if measure {
		g.calibLeft = calibrateEvery
	}
	g.release()
	if measure {
		measureOverhead(k)
	}
	return raw
}

// entryRead charges f, the parent of the firing fr that ends at tick t,
// what metering fr cost it, timed: fr's parent's stretch ended at fr's
// entry, before the engine's work began, and the next begins now, after
// it is done. Selected and forced firings are rare, so the engine's code
// and the probe's data have gone cold since its last metered firing, and
// cost the stretch several times what the calibration measures warm, the
// more the rarer (a sampled parent's forced child, a hundred calls apart:
// 70 to 250 ns more on the project's VMs): a parent charged the calibrated
// overheads keeps that as its own time. The two extra clock reads
// themselves leave half a read each in the parent's stretches, one read
// (clockGap) in all, and the engine's path outside the two, the leaf
// before the first and the return after the second, what residual
// measures for path k: both are charged to the next stretch.
func (f *Frame) entryRead(fr *Frame, t int64, k int) {
	end := now()
	fr.taken = nanos(fr.entry, fr.start) + nanos(t, end)
	c := clockGap + residual[k].inner.Load()
	f.over += fr.taken + c // the firing's inner overhead is in already
	f.mark, f.child, f.base = end, c, c
	f.restartCPU() // a stretch on the thread's CPU clock (its last held a system call) begins after the engine's work too
}

// noteEnded records that a firing of p has returned: from then on it may
// start traces.
func (p *Probe) noteEnded() {
	if !p.ended.Load() {
		p.ended.Store(true)
	}
}

// unwind drops the innermost frame: its firing will never reach its End
// (a panic or runtime.Goexit unwound it, or its goroutine is gone). What
// it spent of its budget still passes to its parent, and its time is its
// parent's own: the parent's stretch goes on as if it had never begun.
// If it was its trace's root, the trace ends, truncated.
func (g *Goroutine) unwind() {
	d := g.depth - 1
	fr := g.frames[d]
	fr.cpuStart = 0
	if fr.shown != 0 {
		fr.unshow() // dropped, as the rest of its time
	}
	if d > 0 {
		parent := g.frames[d-1]
		if parent.pool != Unlimited {
			parent.pool -= fr.budget - fr.pool
		}
		parent.mark, parent.child, parent.base, parent.charger = fr.start, 0, -1, 0
	}
	g.depth = d
	if fr.label != nil {
		g.markPop(fr, d)
	}
	g.forcing = 0
	if d > 0 {
		g.forcing = b2u32(g.frames[d-1].forces > 0)
	}
	unwound.Add(1)
	if g.trace != 0 && d < g.trace {
		g.cut = true
		g.endTrace()
	}
}

// depthNow reports how many metered firings are open on the running
// goroutine.
func depthNow() int {
	g := current()
	if g == nil {
		return 0
	}
	g.acquire()
	defer g.release()
	return int(g.depth)
}

// interruptFactor is how many times its probe's mean own time a selected
// firing's own time must exceed, beside hotspot's threshold, to be suspect
// (interrupted).
const interruptFactor = 64

// interruptions counts the selected firings found suspect (interrupted).
var interruptions atomic.Int64

// suspectsForCPU is how many of a probe's selected firings must have
// been suspect before some of them read the thread's CPU clock
// (cpuPauses): a pause of the host's or the OS's is rare in a short call,
// and a probe whose long calls are its own work has them again and again.
const suspectsForCPU = 2

// cpuReadEvery returns which selected firings of p, in cpuPauses, read
// the CPU clock as they begin: those whose weight is a multiple of it,
// about one in eight, or one in two until minJudged suspect ones did. The read
// is a system call, a tenth of a µs or more, and the firing stands for no
// calls (interrupted). Until the probe's suspects that read it tell pause
// from work, those that did not are taken off whole (pendingOff), and so
// is their part of what its calls charge their callers: the more of them
// read, the sooner that ends.
func (p *Probe) cpuReadEvery() int32 {
	if p.judged.Load() < minJudged {
		return 2
	}
	return 8
}

// minJudged is how many suspect firings of a probe must have read the
// CPU clock before the share of their excess that was work stands for
// the probe's other suspects (pendingOff) and sets its rate (tailRate): a
// pause of the OS's in a short call may come with a signal's or a fault's
// work, and one or two such firings would read as long calls of the
// function's own.
const minJudged = 4

// interrupted returns the inclusive and own times the selected firing fr
// of p stands for, whose clock difference is raw ns. Its own time holds
// whatever stopped its thread without its goroutine parking or leaving
// its P: the host taking the core, the OS giving the core to another
// thread. A CPU profile counts none of it, and a selected firing stands
// for a whole gap of its probe's calls, so one pause of a few ms would add
// a hundred times as much to the probe's estimate. So a selected firing
// whose own time exceeds both hotspot's threshold and interruptFactor
// times its probe's mean is suspect.
//
// A wall clock cannot tell such a pause from long work of the function's
// own: a buffered writer's flush, one call in hundreds, or the growth of a
// table holds most of the function's time, and a CPU profile charges it.
// So some selected firings read the thread's CPU clock as they begin
// (Frame.cpuStart), and a suspect one reads it again: the time its thread
// did not run is the pause, and the probe notes how much of its excess
// over the mean was work (Probe.work, Probe.excess). Such a firing runs
// colder than the probe's other calls, after the read's system call (the
// kernel's work evicts lines and predictions), so it stands for none of
// them (its weight drops to 0): the probe's next selected firing that did
// not read it stands for its gap too (Probe.carried). A suspect firing
// that did not read the clock keeps its times, and its excess, times its
// weight, is noted as pending (Probe.pending): the model takes off the
// share of it that was not work in the suspect firings that read the
// clock, all of it until minJudged have (pendingOff).
// The first suspectsForCPU suspects of a probe turn on the reads
// (cpuPauses, cpuReadEvery).
//
// A firing that worked for the collector (Frame.worked) is not suspect:
// an assist is the function's CPU time, which a function that allocates
// beside a large heap pays in a few long calls; nor is one timed by the
// CPU clock throughout (Frame.cpu).
func interrupted(p *Probe, fr *Frame, raw, incl, own int64) (int64, int64) {
	c0 := fr.cpuStart
	fr.cpuStart = 0
	h := engine.hotspot
	mean := p.ownMean.Load()
	suspect := h != nil && own >= h.Threshold && mean > 0 && own > interruptFactor*mean && fr.worked == 0 && fr.cpu == 0
	if c0 != 0 {
		// It ran colder than its probe's other calls, after the read's
		// system call: it stands for none of them, and tells only what
		// its excess was. The probe's next selected firing stands for
		// its gap.
		p.carried.Add(int64(fr.weight))
		fr.weight = 0
		if c := engine.cpuNow(); c != 0 && suspect {
			excess := own - mean
			// The CPU clock's span holds the firing's work and some of
			// the engine's around it: the pause is, if anything, short.
			pause := min(max(raw-(c-c0), 0), excess)
			p.work.Add(excess - pause)
			p.excess.Add(excess)
			p.judged.Add(1)
			p.tailRate()
			interruptions.Add(1)
			return max(incl-pause, 0), own - pause
		}
		return incl, own
	}
	if p.carried.Load() != 0 {
		fr.weight += int32(p.carried.Swap(0))
	}
	if !suspect {
		return incl, own
	}
	interruptions.Add(1)
	if !p.cpuTimedFor(cpuPauses) && engine.cpuClock() && !p.internal && p.suspects.Add(1) >= suspectsForCPU {
		p.setCPUTimed(cpuPauses, true)
	}
	p.pending.Add((own - mean) * int64(fr.weight))
	return incl, own
}

// tailRate sets p's sampling rate (Probe.rate), where the suspect firings
// that read the CPU clock found most of their excess to be work: its time
// then lies mostly in a few long calls, and its estimate rests on how
// many of them its selected firings meet, its error one over the square
// root of that number. It selects as often as hotspot's Cost
// allows, what a selected firing costs (and its share of CPU clock reads)
// against the probe's mean own time, one call in 4 at most, and never less
// often than the engine's sample.
func (p *Probe) tailRate() {
	h := engine.hotspot
	x := p.excess.Load()
	if h == nil || h.Cost <= 0 || p.judged.Load() < minJudged || x <= 0 || 2*p.work.Load() < x {
		return
	}
	mean := max(p.ownMean.Load(), 1)
	cost := float64(overhead[pathSelected].outer.Load() + cpuReadCost/int64(p.cpuReadEvery()))
	n := int32(min(max(cost/(h.Cost*float64(mean)), 4), float64(engine.sample)))
	if p.rate.Load() != n {
		p.rate.Store(n)
	}
}

// pendingOff returns what to take off p's inclusive and own times, in its
// statistics' weighted units, for its suspect selected firings that did
// not read the CPU clock (interrupted): their excess over the mean, less
// the share that was work where minJudged suspect firings or more read it;
// all of it before.
func (p *Probe) pendingOff() float64 {
	n := p.pending.Load()
	if n == 0 {
		return 0
	}
	x := p.excess.Load()
	if x <= 0 || p.judged.Load() < minJudged {
		return float64(n)
	}
	return float64(n) * (1 - min(max(float64(p.work.Load())/float64(x), 0), 1))
}

// cpuTimedFor reports whether p's bit why is set in p.cpuTimed.
func (p *Probe) cpuTimedFor(why uint32) bool { return p.cpuTimed.Load()&why != 0 }
