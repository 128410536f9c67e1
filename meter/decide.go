package meter

import (
	"runtime"
	"sync/atomic"

	"github.com/meterio/meter/extensions/flowcheck"
)

// Firing is what Begin returns and End takes: nil when End has nothing to
// do, firstEnd for an unmetered firing whose end must be noted, and
// otherwise the metered firing's frame, so that End needs no look-up. A
// goroutine's frames never move: each is allocated once, the first time
// its depth is reached.
type Firing = *Frame

// firstEnd is the Firing of a probe's firing outside a trace, while no
// firing of the probe has ended yet: not metered, but its End is noted (a
// probe none of whose firings has ended cannot start a trace).
var firstEnd = &Frame{}

// Active reports whether End has anything to do with the firing f.
func (f *Frame) Active() bool { return f != nil }

var (
	traceIDs        atomic.Uint64
	tracesEnded     stripedCount
	tracesTruncated atomic.Int64
	unwound         atomic.Int64
	dropped         atomic.Int64
)

// Begin starts a firing of p on the calling goroutine and asks the chain
// whether to meter it (see beginGo). End the firing with End, before the
// function returns, on the same goroutine.
//
// Cost: on amd64, one assembly leaf (begin_amd64.s) decides the common
// cases with no Go frame: a firing outside a trace is the goroutine's
// look-up and the gates' countdowns (a decrement each, one of them a
// striped atomic); a disabled probe's firing with spotcheck on is one
// striped atomic decrement (a sampled probe's outside a sampling window, as
// a disabled one's without spotcheck, never reaches Begin). A metered
// firing adds
// a clock read and a push on the goroutine's own stack. Begin never
// allocates once the goroutine's stack has reached its depth, and takes
// no lock after the goroutine's first firing.
func (p *Probe) Begin() Firing { return begin(p, nil, 0, 0) }

// beginGo is the chain's whole decision for one firing of p, in Go, on
// one screen; the assembly leaf mirrors it case by case, jumping to the
// same functions for everything but its quiet returns. pos and pc say where
// the firing's function runs (its frame's depth on the stack, and the
// return address of its call to Begin): settle compares them with the
// frames already there, to drop firings a panic unwound.
func beginGo(p *Probe, _ *Goroutine, pos, pc uintptr) Firing {
	if !engine.on {
		return nil
	}
	switch State(p.state.Load()) {
	case Enabled:
	case Sampled: // metered in sampling windows
		return sampled(p, nil, pos, pc)
	default: // disabled: only spotcheck's count
		return spot(p, nil, pos, pc)
	}
	g := current()
	if g == nil {
		return nil
	}
	g.acquire()
	g.sameGoroutine()
	g.release()
	if !engine.gated || g.trace != 0 {
		return measure(p, g, pos, pc)
	}
	return outside(p, g, pos, pc)
}

// outside is a firing of an enabled probe outside any trace, while a gate
// is on: flowcheck counts it down on the goroutine, then tracepoint on the
// probe's count; a count that runs out goes on in flowOut or leaseOut.
func outside(p *Probe, g *Goroutine, pos, pc uintptr) Firing {
	if engine.flowcheck != nil {
		g.flowLeft--
		if g.flowLeft <= 0 {
			return flowOut(p, g, pos, pc)
		}
	}
	if engine.tracepoint != nil && p.count.leases.Load().stripes[g.stripe&(Stripes-1)].units.Add(-1) < 0 {
		return leaseOut(p, g, pos, pc)
	}
	return startOrNot(p, g, pos, pc, false)
}

// flowOut is outside's path for a goroutine whose flowcheck countdown is at
// or below zero. At zero it ran out: this firing is due. Below zero none
// was drawn (a new goroutine, or the end of a trace): this firing draws a
// gap and counts as its first. Tracepoint has not counted the firing yet.
func flowOut(p *Probe, g *Goroutine, pos, pc uintptr) Firing {
	due := g.flowLeft == 0
	if !due {
		if g.flowState == 0 {
			g.flowState = flowSeed()
		}
		g.flowLeft = engine.flowcheck.Draw(&g.flowState)
		due = g.flowLeft == 0
	}
	if engine.tracepoint != nil && p.count.Take(uint(g.stripe)) && p.eligible.Load() {
		due = true
	}
	return startOrNot(p, g, pos, pc, due)
}

// leaseOut is outside's path for a firing whose decrement found its
// stripe's share of tracepoint's count empty; flowcheck, if on, counted it
// and is not due.
func leaseOut(p *Probe, g *Goroutine, pos, pc uintptr) Firing {
	due := p.count.refill(uint(g.stripe)) && p.eligible.Load()
	g.stripe = procStripe() // the P it runs on now, for its next lease
	return startOrNot(p, g, pos, pc, due)
}

// procStripe returns the stripe of the P the goroutine runs on.
func procStripe() uint64 {
	id := procPin()
	procUnpin()
	return uint64(id*2) & (Stripes - 1)
}

// procSpread is how many stripes an enabled probe's count uses as the
// program runs now: one per P, at most procStripes. Read at each reset: a
// program that raises GOMAXPROCS later spreads its firings over more
// stripes, which eats into the Countdown's factor of two (procStripes
// stripes of n/4 units still hold fewer than n).
func procSpread() int { return min(runtime.GOMAXPROCS(0), procStripes) }

// startOrNot ends the gates' decision: a due firing starts a trace, unless
// its probe has never ended a firing (then, due or not, its end is noted).
func startOrNot(p *Probe, g *Goroutine, pos, pc uintptr, due bool) Firing {
	if !p.ended.Load() {
		return firstEnd
	}
	if !due {
		return nil
	}
	g.acquire()
	g.settle(pos, pc)
	return g.meter(p, pos, pc, true, false, false)
}

// measure is a firing of an enabled probe inside a trace, or in a chain
// with no gate: metered, if the trace maximum and the budget allow.
//
// Its callers, the leaf and beginGo, have made sure that g's frames are
// the running goroutine's.
func measure(p *Probe, g *Goroutine, pos, pc uintptr) Firing {
	g.acquire()
	if g.depth > 0 {
		g.settleFrames(pos, pc)
	}
	if engine.gated && g.trace == 0 {
		g.release() // the trace it was in has gone with its goroutine
		return outside(p, g, pos, pc)
	}
	return g.meter(p, pos, pc, false, false, false)
}

// sampled is a firing of a sampled probe: metered if it begins while a
// sampling window is open (its on-word is set only then).
func sampled(p *Probe, _ *Goroutine, pos, pc uintptr) Firing {
	if sampler.seq.Load()&1 == 0 {
		if sampler.counting.Load() {
			p.countFiring()
		}
		return nil
	}
	return meterDue(p, pos, pc, false)
}

// spot is a firing of a disabled probe: with spotcheck on, counted on its
// stripe; the due one is a spot check.
func spot(p *Probe, _ *Goroutine, pos, pc uintptr) Firing {
	if engine.spotcheck == nil || !p.count.Take(stripe(getg())) {
		return nil
	}
	return meterDue(p, pos, pc, true)
}

// spotOut is spot's path for a firing whose decrement found its stripe's
// share empty.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func spotOut(p *Probe, _ *Goroutine, pos, pc uintptr) Firing {
	if !p.count.refill(stripe(getg())) {
		return nil
	}
	return meterDue(p, pos, pc, true)
}

// meterDue meters a firing of a sampled probe in a window, or a spot
// check that a count made due.
func meterDue(p *Probe, pos, pc uintptr, spot bool) Firing {
	g := current()
	if g == nil {
		return nil
	}
	g.acquire()
	g.settle(pos, pc)
	return g.meter(p, pos, pc, false, spot, true)
}

// meter pushes a metered firing of p on g, which the caller has acquired
// and settled. Inside a trace it counts towards the trace maximum; start
// starts a trace. Budget decides last: a firing gets the least of its own
// allowance and what its nearest metered ancestor has left, and is not
// metered with less than one unit; a spot check is outside its own
// allowance (which may be why its probe is disabled), not its ancestor's.
func (g *Goroutine) meter(p *Probe, pos, pc uintptr, start, spot, due bool) Firing {
	if g.trace != 0 {
		if g.full || g.traced >= engine.traceMax {
			g.full = true
			g.release()
			return nil
		}
	}
	pool := int64(Unlimited)
	if engine.budget != nil && !spot {
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
	if start {
		g.startTrace(p)
	}
	return g.push(p, pool, pos, pc, spot, due)
}

// push opens a frame for a metered firing of p and reads the clock, last,
// so that the engine's own work stays outside the firing's time.
func (g *Goroutine) push(p *Probe, pool int64, pos, pc uintptr, spot, due bool) Firing {
	d := g.depth
	if int(d) == len(g.frames) {
		g.frames = append(g.frames, &Frame{g: g, index: d})
	}
	f := g.frames[d]
	f.probe, f.child, f.budget, f.pool, f.pos, f.pc, f.span, f.spot = p, 0, pool, pool, pos, pc, -1, spot
	f.over, f.winStart, f.due, f.early = 0, -1, due, false
	f.childWin, f.childSeen, f.childOther, f.selfWin, f.edges = 0, 0, 0, 0, [2]int32{}
	f.below, f.kidsNet = 0, 0
	if pool != Unlimited {
		f.pool-- // a firing spends one unit on itself
	}
	if g.trace != 0 && !p.internal {
		g.traced++
		if engine.sink != nil {
			g.addSpan(f, d, p)
		}
	}
	g.depth = d + 1
	f.start = now() // last but the release (empty without -race), so the engine's work stays outside
	if f.span >= 0 {
		g.spans[f.span].Start = f.start
	}
	if engine.sampling {
		// From the start, not from the first window: a firing that began
		// before any probe was sampled (main, a worker's loop) learns its
		// own share from the windows that open during it.
		f.winStart = windowNanos(f.start)
		s := sampler.seq.Load()
		f.lastT, f.lastSeq, f.lastChild, f.seq0 = f.start, s, false, s
		f.early = s&1 == 1 && f.start-sampler.openAt.Load() < sampler.length.Load()
		if d > 0 {
			g.frames[d-1].stretch(f.start, s, true)
		}
	}
	g.release()
	return f
}

// stretch ends a stretch of f's own time at tick t (window sequence s): a
// child begins (child) or f ends. What a window held of a stretch that
// began in it is counted in selfWin, in the window f began in or in one
// that opened later. In a later one, f's own time cannot be told from
// that of a sampled firing between f and its children that began before
// the window, unmetered: those firings' own time in the window counts as
// f's. Left out, a firing that spans the run (main) had no window's split
// at all, and kept every sampled call under it that began outside windows
// as its own time (97% of yaml.v3's decoding); with them, only the own
// time of the few sampled calls in progress when a window opens.
func (f *Frame) stretch(t int64, s uint32, child bool) {
	switch {
	case f.lastSeq&1 == 1 && s == f.lastSeq: // in the window throughout
		f.selfWin += nanos(f.lastT, t)
	case f.lastSeq&1 == 1 && s == f.lastSeq+1: // the window closed during it
		f.selfWin += nanos(f.lastT, min(sampler.closeAt.Load(), t))
	case s&1 == 1 && s == f.lastSeq+1: // the window opened during it
		f.selfWin += nanos(max(sampler.openAt.Load(), f.lastT), t)
		f.edges[b2i(child)]++ // its start was no metering's
		return
	default:
		return
	}
	f.edges[b2i(f.lastChild)]++
	f.edges[b2i(child)]++
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func flowSeed() uint64 { return flowcheck.Seed(engine.seed, seeded.Add(1)) }
