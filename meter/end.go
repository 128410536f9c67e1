package meter

// End ends a firing that Begin returned, on the same goroutine. Generated
// code calls it before each return of the function (or defers it, in a
// function with defers of its own). On a metered firing it reads the
// clock, pops the goroutine's stack, charges the parent, records the
// probe's statistics (one pinned write of the P's own row: no atomic
// instruction on amd64, once the probe is metered often) and lets the
// chain judge the firing. Frames above f's are firings that a panic or
// runtime.Goexit unwound: they are dropped first.
func (p *Probe) End(f Firing) {
	if f != nil {
		p.end(f)
	}
}

func (p *Probe) end(fr Firing) {
	if fr == firstEnd {
		p.noteEnded()
		return
	}
	t := now()
	g := fr.g
	g.acquire()
	d := fr.index
	if d >= g.depth || fr.probe != p { // dropped already: not ours any more
		g.release()
		return
	}
	for g.depth > d+1 {
		g.unwind()
	}
	incl := nanos(fr.start, t)
	inh := max(incl-fr.child, 0)
	if d > 0 {
		parent := g.frames[d-1]
		parent.child += incl
		if parent.pool != Unlimited {
			parent.pool -= fr.budget - fr.pool
		}
	}
	g.depth = d
	if sampler.active.Load() {
		keepWindows(t)
	}
	judged := inh // what the chain judges: the corrected inherent time where there is one
	if fr.winStart >= 0 {
		// A window overlapped this firing: its sampled children are known
		// for the overlap only; scale them to the whole firing.
		if o := windowNanos(t) - fr.winStart; o > 0 {
			if fr.childWin > 0 && incl > o {
				judged = max(inh-int64(float64(fr.childWin)*float64(incl-o)/float64(o)), 0)
			}
			p.window.count.Add(1)
			p.window.total.Add(incl)
			p.window.inherent.Add(judged)
		}
		if d > 0 && p.State() == Sampled {
			g.frames[d-1].childWin += incl
		}
	}
	if p.first.Load() == 0 {
		p.first.CompareAndSwap(0, fr.start)
	}
	n := p.stats.record(incl, inh)
	p.noteEnded()
	if fr.spot || engine.hotspot != nil || engine.budget != nil {
		judge(p, fr.spot, incl, judged, n, t)
	}
	if g.trace != 0 {
		if fr.span >= 0 {
			s := &g.spans[fr.span]
			s.End, s.Inherent = t, inh
		}
		if d < g.trace {
			g.endTrace()
		} else if t-g.handed >= engine.handEvery {
			g.handOver(t)
		}
	}
	g.release()
}

// noteEnded records that a firing of p has returned: from then on it may
// start traces.
func (p *Probe) noteEnded() {
	if !p.ended.Load() {
		p.ended.Store(true)
	}
}

// judge lets the chain see a metered firing of p that ended, with its
// inclusive and inherent ns; n is the count of the statistics row it went
// to. A spot check is judged by spotcheck alone, on the state it found.
// Everything else goes to hotspot, then budget, while p is not disabled.
func judge(p *Probe, spot bool, incl, inh, n, t int64) {
	if spot {
		if s := engine.spotcheck; s != nil && s.Reenables(incl, inh) {
			p.Enable()
		}
		return
	}
	s := p.State()
	if s != Enabled {
		return // disabled, or sampled: the windows follow what it costs
	}
	if h := engine.hotspot; h != nil {
		switch {
		case h.Hot(incl, inh):
			for d := p.deficit.Load(); d > 0; d = p.deficit.Load() {
				if p.deficit.CompareAndSwap(d, d-1) {
					break
				}
			}
		default:
			if p.deficit.Add(1) == h.Initial {
				sum := p.stats.sum()
				switch n := max(sum.count, 1); {
				case h.Label(sum.total/n, sum.inherent/n):
					p.deficit.Store(0) // hot on average: its cold firings are the many short ones of a hot function
				case !engine.gated && h.Keep(sum.inherent-p.inhBase.Load(), nanos(p.first.Load(), t)):
					p.startSampling(sum, t)
				default:
					p.Disable(DisabledHotspot)
				}
				return
			}
		}
	}
	if b := engine.budget; b != nil && (n <= 64 || n%64 == 0) {
		// T, the mean of every metered firing, exact for a probe's first
		// firings on each row, then refreshed every 64.
		sum := p.stats.sum()
		a := b.Allowance(sum.total / max(sum.count, 1))
		if p.allowance.Load() != a+1 {
			p.allowance.Store(a + 1)
		}
		if a < 1 {
			p.Disable(DisabledBudget)
		}
	}
}

// unwind drops the innermost frame: its firing will never reach its End
// (a panic or runtime.Goexit unwound it, or its goroutine is gone). What it
// spent of its budget still passes to its parent; if it was its trace's
// root, the trace ends, truncated.
func (g *Goroutine) unwind() {
	d := g.depth - 1
	fr := g.frames[d]
	if d > 0 {
		parent := g.frames[d-1]
		if parent.pool != Unlimited {
			parent.pool -= fr.budget - fr.pool
		}
	}
	g.depth = d
	unwound.Add(1)
	if g.trace != 0 && d < g.trace {
		g.cut = true
		g.endTrace()
	}
}

// Depth reports how many metered firings are open on the running
// goroutine.
func Depth() int {
	g := current()
	if g == nil {
		return 0
	}
	g.acquire()
	defer g.release()
	return int(g.depth)
}
