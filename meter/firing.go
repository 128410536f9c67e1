package meter

import (
	"sync/atomic"

	"github.com/meterio/meter/clock"
)

// Firing is one call of a probe's function, from Begin to End. Its zero
// value is a firing that is not metered; End on it does nothing.
type Firing struct {
	g     *Goroutine // set on a metered firing
	p     *Probe     // set on a metered firing, and on an unmetered one whose end must still be noticed
	depth int32
	gated bool // metered, and not a spot check
}

var (
	traceIDs        atomic.Uint64
	tracesEnded     atomic.Int64
	tracesTruncated atomic.Int64
	dropped         atomic.Int64
)

// Begin starts a firing of p on the calling goroutine and asks the chain
// whether to meter it: hotspot (disabled?), the trace gates, then budget.
//
// Cost: a metered firing is one clock read, an assembly getg, a lock-free
// table look-up and a push on the goroutine's own stack; an unmetered one
// stops before the clock read. A firing outside a trace, while a trace
// gate is on, is the look-up and the gates' countdowns, decremented inline:
// no interface call until a countdown runs out. Begin never allocates once
// the goroutine's stack has reached its depth, and takes no lock after a
// goroutine's first firing.
func (p *Probe) Begin() Firing { return begin(p, 0, 0) }

// beginSlow is Begin in Go: all of it where the assembly leaf is not built,
// and every case but the common one where it is.
//
// The other two parameters are begin's scratch words, unused here.
//
//lint:ignore U1000 jumped to from cached_amd64.s
func beginSlow(p *Probe, _, _ int64) Firing {
	if p.disabled.Load() != 0 || !engine.on {
		return spot(p)
	}
	g := cached() // current, inlined by hand
	if g == nil {
		if g = lookup(getg()); g == nil {
			return Firing{}
		}
	}
	g.acquire()
	if g.trace != 0 || engine.gating == ungated {
		return measure(p, g, false)
	}
	if !p.ended.Load() {
		if p.reentered(g) { // the twin's call of a first firing
			return Firing{}
		}
		g.release()
		return Firing{p: p}
	}
	// Outside a trace: count down. The common chains get a case each.
	switch engine.gating {
	case goroutineCountdown:
		w := &g.Ext[engine.gword&(GoroutineWords-1)] // the mask drops the bounds check
		left := *w - 1
		*w = left
		if left > 0 {
			g.release()
			return Firing{}
		}
		return p.offer(g, left, 1)
	case probeCountdown:
		left := p.Ext[engine.pword&(ProbeWords-1)].Add(-1)
		if left > 0 {
			g.release()
			return Firing{}
		}
		return p.offer(g, 1, left)
	}
	gl, pl := int64(1), int64(1)
	if w := engine.gword; w >= 0 {
		w &= GoroutineWords - 1
		gl = g.Ext[w] - 1
		g.Ext[w] = gl
	}
	if w := engine.pword; w >= 0 {
		pl = p.Ext[w&(ProbeWords-1)].Add(-1)
	}
	if gl > 0 && pl > 0 && engine.gating == bothCountdowns {
		g.release()
		return Firing{}
	}
	return p.offer(g, gl, pl)
}

// offer is Begin's path for a firing outside a trace that a countdown ran
// out on, or that other gates must see: it asks the gates, and starts a
// trace if one says so. Every gate sees the firing, so each keeps its count.
func (p *Probe) offer(g *Goroutine, gl, pl int64) Firing {
	start := false
	if gl <= 0 && engine.gcount.Expired(g, p, gl) {
		start = true
	}
	if pl <= 0 && engine.pcount.Expired(g, p, pl) {
		start = true
	}
	for _, gate := range engine.gates {
		if gate.Start(g, p) {
			start = true
		}
	}
	if !start {
		g.release()
		return Firing{}
	}
	return measure(p, g, true)
}

// measure meters a firing of p on g, which the caller has acquired: inside a
// trace, subject to the trace maximum; start says it starts one. Budget
// decides last. begin's assembly jumps here with its own three words as
// the parameters: keep them (p, g, start), in that order.
func measure(p *Probe, g *Goroutine, start bool) Firing {
	if p.reentered(g) {
		return Firing{}
	}
	if g.trace != 0 {
		if g.truncated {
			g.release()
			return Firing{}
		}
		if g.traced >= engine.traceMax {
			g.truncated = true
			g.release()
			return Firing{}
		}
	}
	pool := int64(Unlimited)
	if engine.allowance != nil {
		pool = engine.allowance.Allowance(p)
		if g.depth > 0 {
			pool = min(pool, g.frames[g.depth-1].pool)
		}
		if pool < 1 { // a trace the gate would start needs its root metered
			g.release()
			return Firing{}
		}
	}
	if start {
		g.trace = g.depth + 1
		g.TraceID = traceIDs.Add(1)
		if engine.sink != nil {
			engine.sink.TraceStarted(g, p)
		}
	}
	return g.push(p, pool)
}

// spot counts down a firing of a disabled probe on the spotter's word.
func spot(p *Probe) Firing {
	if engine.spotter == nil || !engine.on {
		return Firing{}
	}
	if left := p.Ext[engine.sword].Add(-1); left <= 0 {
		return spotted(p, left, 0)
	}
	return Firing{}
}

// spotted meters a firing of a disabled probe whose count ran out, at
// left, when the spotter asks for it: outside the gates and the probe's
// own allowance (which may be why it is disabled). It is still a nested
// firing: it draws on its nearest metered ancestor's pool, as DESIGN.md's
// budget rules have every nested firing do, and counts towards the trace
// maximum.
//
// The spotter sees every such firing, so that its count stays exact, and
// is told whether a firing due a spot check will be metered: not when it
// is the twin's call back, when its trace is full, or when its ancestor's
// pool is empty.
func spotted(p *Probe, left, _ int64) Firing {
	g := current()
	if g == nil {
		engine.spotter.Spot(p, left, false)
		return Firing{}
	}
	g.acquire()
	if p.reentered(g) {
		engine.spotter.Spot(p, left, false)
		return Firing{}
	}
	full := g.trace != 0 && g.traced >= engine.traceMax
	pool := int64(Unlimited)
	if g.depth > 0 {
		pool = g.frames[g.depth-1].pool
	}
	meter := !full && pool >= 1
	if !engine.spotter.Spot(p, left, meter) || !meter {
		if full {
			g.truncated = true
		}
		g.release()
		return Firing{}
	}
	f := g.push(p, pool)
	f.gated = false
	return f
}

// Reenter readies the call that a metered twin makes back into its own
// function (see internal/inject): the next Begin of f's probe on this
// goroutine is not a firing of its own and returns an inactive Firing, so
// the call is measured once, by f. After a metered firing, the next Begin
// of its probe on this goroutine reaches measure (a gated firing is inside a
// trace, or the chain has no gate); after a spot check, it reaches spotted
// only if it is due a spot check itself, and otherwise returns inactive
// anyway; after an unmetered first firing (its probe has not ended yet),
// the !ended test: those are the only places that look. End of f forgets a
// Reenter that no Begin used (the probe was switched off in between). On
// an inactive f it does nothing.
func (f Firing) Reenter() {
	if f.gated && !raceEnabled { // under -race, g's hand-over is in reenterRare
		f.g.reenter = f.p.id + 1 // f.p.key(), spelled out for the inliner
		return
	}
	f.reenterRare()
}

// reenterRare is Reenter of a probe's unmetered first firing (g nil), of
// an inactive one (p nil too), of a spot check, and under -race of every
// firing. The twin's call back of
// a spot check will count the spotter's word down once more, as a firing
// of the disabled probe, so this gives that count back: spot checks stay
// every N-th call of the function.
//
//go:noinline
func (f Firing) reenterRare() {
	p, g := f.p, f.g
	if p == nil {
		return
	}
	if g == nil {
		if g = current(); g == nil {
			return
		}
	} else if !f.gated && engine.spotter != nil && engine.on {
		p.Ext[engine.sword].Add(1)
	}
	g.acquire()
	g.reenter = p.key()
	g.release()
}

// firstEnded is End of an unmetered firing that Begin returned active,
// because its probe had not ended yet: it notes the end, and forgets a
// Reenter the twin's call did not use (another goroutine's firing of the
// probe ended in between, so that call was an ordinary firing).
func (p *Probe) firstEnded() {
	if !p.ended.Load() {
		p.ended.Store(true)
	}
	if g := current(); g != nil {
		g.acquire()
		if g.reenter == p.key() {
			g.reenter = 0
		}
		g.release()
	}
}

// key names p in Goroutine.reenter: not a pointer, so that storing it
// needs no write barrier and the assembly may clear it.
func (p *Probe) key() int { return p.id + 1 }

// reentered reports whether this Begin of p is the call a twin readied
// with Reenter, and forgets it; on true it has released g.
func (p *Probe) reentered(g *Goroutine) bool {
	if g.reenter != p.key() {
		return false
	}
	g.reenter = 0
	g.release()
	return true
}

func (g *Goroutine) push(p *Probe, pool int64) Firing {
	d := g.depth
	if int(d) == len(g.frames) {
		g.frames = append(g.frames, Frame{})
	}
	f := &g.frames[d]
	f.probe, f.child, f.budget, f.pool, f.span = p, 0, pool, pool, -1
	if pool != Unlimited {
		f.pool-- // a firing spends one unit on itself
	}
	if g.trace != 0 {
		g.traced++
		if engine.sink != nil {
			parent := int32(-1)
			if d > g.trace-1 {
				parent = g.frames[d-1].span
			}
			f.span = int32(len(g.spans))
			g.spans = append(g.spans, Span{Probe: p, Index: f.span, Parent: parent})
		}
	}
	g.depth = d + 1
	g.release()
	f.start = clock.Now() // last: the probe's own work stays outside
	if f.span >= 0 {
		g.spans[f.span].Start = f.start
	}
	return Firing{g: g, p: p, depth: d, gated: true}
}

// End ends the firing. On a metered firing it reads the clock, pops the
// goroutine's stack, charges the parent, records the probe's statistics and
// lets the judges see the result: five atomic adds and one call per judge.
func (f Firing) End() {
	g := f.g
	if g == nil {
		if f.p != nil {
			f.p.firstEnded()
		}
		return
	}
	end := clock.Now()
	g.acquire()
	d := f.depth
	if d >= g.depth { // ended twice
		g.release()
		return
	}
	fr := &g.frames[d]
	incl := clock.Nanos(clock.Elapsed(fr.start, end))
	inh := max(incl-fr.child, 0)
	if d > 0 {
		parent := &g.frames[d-1]
		parent.child += incl
		if parent.pool != Unlimited {
			parent.pool -= fr.budget - fr.pool
		}
	}
	g.depth = d // frames above d lost their End (a manual Begin without defer): dropped
	g.reenter = 0
	p := fr.probe
	p.record(incl, inh)
	if !p.ended.Load() {
		p.ended.Store(true)
	}
	for _, j := range engine.judges {
		j.Ended(p, incl, inh)
	}
	if g.trace != 0 {
		if fr.span >= 0 {
			s := &g.spans[fr.span]
			s.End, s.Inherent = end, inh
		}
		if d < g.trace {
			g.endTrace()
		}
	}
	g.release()
}

func (g *Goroutine) endTrace() {
	if engine.sink != nil {
		engine.sink.TraceSpans(g.TraceID, g.spans, true, g.truncated)
		clear(g.spans)
		g.spans = g.spans[:0]
	}
	tracesEnded.Add(1)
	if g.truncated {
		tracesTruncated.Add(1)
	}
	g.trace, g.traced, g.truncated = 0, 0, false
	for _, gate := range engine.all {
		gate.Ended(g)
	}
}

// Active reports whether End has anything to do: the firing is metered, or
// it is the first of its probe whose end must be noticed. Generated code
// that tests it can skip the defer for every other firing.
func (f Firing) Active() bool { return f.p != nil } // a metered firing has its probe too

// InTrace reports whether g is inside a trace.
func (g *Goroutine) InTrace() bool { return g.trace != 0 }

// Depth reports how many metered firings are open on g.
func (g *Goroutine) Depth() int { return int(g.depth) }

// AddDropped counts spans that the export path had to drop; the model
// reports the total.
func AddDropped(n int64) { dropped.Add(n) }
