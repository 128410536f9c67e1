package meter

import "sync/atomic"

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

// EndAt ends the firing *f, as End(*f) does. Generated code tests *f
// itself, in memory, and calls EndAt through probe.Probe.Stop only for a
// firing that is not nil. It loads *f in endAt, which is not inlined: a
// load of *f inlined into the generated code would share the test's, and
// the compiler would then load the firing into a register at every exit,
// where the test alone compares memory.
func (p *Probe) EndAt(f *Firing) { p.endAt(f) }

// Exit ends the firing *f, as EndAt does, with the test of *f in the
// call: generated code calls it (through probe.Probe.EndAt) at the exits
// where a branch of its own would cost the user's code more than a call
// (meterinject's exits.go). A firing that is not metered costs the call
// and, on amd64, an assembly leaf's compare and return.
func (p *Probe) Exit(f *Firing) { exit(p, f) }

// exitGo ends the firing *f, which is not nil, for exit.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func exitGo(p *Probe, f *Firing) { p.end(*f) }

// endAt ends the firing *f and returns its clock difference in ns, or -1
// (end). The calibration's empty firings end through it too, so that what
// they measure is the path generated code takes.
//
//go:noinline
func (p *Probe) endAt(f *Firing) int64 {
	if fr := *f; fr != nil {
		return p.end(fr)
	}
	return -1
}

// end ends the firing fr of p and returns its clock difference in ns, or
// -1 for a firing that was not metered or was dropped already.
func (p *Probe) end(fr Firing) int64 {
	if fr == firstEnd {
		p.noteEnded()
		return -1
	}
	t := now()
	g := fr.g
	g.acquire()
	d := fr.index
	if d >= g.depth || fr.probe != p { // dropped already: not ours any more
		g.release()
		return -1
	}
	for g.depth > d+1 {
		g.unwind()
	}
	// The function's own work: the clock difference less the metering
	// nested in it (see calibrate.go).
	k := pathEnabled
	if fr.due {
		k = pathDue
	}
	raw := nanos(fr.start, t)
	incl := max(raw-overhead[k].inner.Load()-fr.over, 0)
	inh := max(incl-fr.child, 0)
	cost := overhead[k].outer.Load() // what metering this firing cost its parent, beside what it nests
	windowed := fr.due && !fr.spot   // metered because a window was open
	var lost int64                   // an interruption: no firing's work (see interrupted)
	if windowed {
		lost = interrupted(p, inh)
		incl, inh = incl-lost, inh-lost
	}
	var o int64    // ns of windows during the firing
	var seq uint32 // the window sequence at its end, while windows run
	if fr.winStart >= 0 {
		o, seq = windowNanos(t)-fr.winStart, sampler.seq.Load()
		if fr.seq0&1 == 1 && seq == fr.seq0 {
			// It began and ended in one open window: the window held all
			// of it. The two readings, each rounded to ns on its own, may
			// put o a nanosecond short of raw.
			o = raw
		}
	}
	if d > 0 {
		parent := g.frames[d-1]
		parent.child += incl
		parent.over += fr.over + cost + lost
		if windowed {
			// What of it the window held: the parent scales what its
			// windows held to its whole time.
			in := incl
			if o < raw && raw > 0 {
				in = int64(float64(incl) * float64(o) / float64(raw))
			}
			parent.childWin += in
			// Outside windows it is not metered, and the firings metered
			// anyway under it are its parent's children: what it takes
			// beside those is what the parent's own time is short of.
			below := fr.childOther + fr.below
			parent.below += below
			parent.kidsNet += max(incl-below, 0)
			if fr.seq0&1 == 1 {
				parent.childSeen += in
			}
		} else {
			parent.childOther += incl
		}
		if fr.winStart >= 0 {
			parent.lastT, parent.lastSeq, parent.lastChild = t, seq, true
		}
		if parent.pool != Unlimited {
			parent.pool -= fr.budget - fr.pool
		}
	}
	g.depth = d
	if windowed {
		noteWindowed(g, cost)
	}
	if sampler.active.Load() {
		keepWindows(t)
	}
	judged := inh // what the chain judges: the corrected inherent time where there is one
	if fr.winStart >= 0 {
		// A window overlapped this firing: its sampled children are known
		// for the overlap only. Its own part (outside the children
		// metered anyway) splits, as the windows saw it, into its own
		// time, measured between its children's boundaries less their
		// metering, and the sampled children's. The probe pools that
		// split over all its firings windows saw, and a firing that was
		// not whole in a window has the pooled share of its own part as
		// its inherent time. A window that fell inside a child metered
		// anyway says nothing of it (stretch has what a window that
		// opened during the firing says).
		fr.stretch(t, seq, false)
		self := fr.selfWin - int64(fr.edges[1])*(overhead[pathDue].outer.Load()-overhead[pathDue].inner.Load())/2 -
			int64(fr.edges[0])*overhead[k].inner.Load()/2
		self = max(self, 0)
		if seen := self + fr.childSeen; seen > 0 || o >= raw {
			s, n := p.window.self.Add(self), p.window.seen.Add(seen)
			if o < raw && n > 0 { // a part outside windows: its sampled children there were not metered
				judged = int64(float64(incl-fr.childOther) * float64(s) / float64(n))
			}
			p.window.count.Add(1)
			p.window.total.Add(incl)
			p.window.inherent.Add(judged)
		}
		if fr.kidsNet > 0 {
			p.window.kids.Add(fr.kidsNet)
		}
		if fr.early {
			// It began in a window before its timer was due: whether the
			// window held it whole, and what its sampled children took if
			// so (ownEstimate).
			p.window.began.Add(1)
			if seq == fr.seq0 {
				p.window.whole.Add(1)
				p.window.kidsWhole.Add(fr.kidsNet)
			}
		}
	}
	if p.first.Load() == 0 {
		p.first.CompareAndSwap(0, fr.start)
	}
	n := p.stats.record(incl, inh)
	p.noteEnded()
	if !p.internal && (fr.spot || engine.hotspot != nil || engine.budget != nil) {
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
	g.calibLeft--
	measure := g.calibLeft <= 0 && !p.internal && engine.manual == nil
	if measure {
		g.calibLeft = calibrateEvery
	}
	g.release()
	if measure {
		measureOverhead(k)
	}
	return raw
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
			d := p.deficit.Add(1)
			if d > h.Initial {
				// It found p enabled, but a firing that ran the balance out
				// before it has decided p's state: the balance stays at zero.
				p.deficit.Add(-1)
				return
			}
			if d == h.Initial {
				sum := p.stats.sum()
				n := max(sum.count, 1)
				own := ownTotal(p, sum) / n
				onAverage := h.Label(sum.total/n, own) // its cold firings are the many short ones of a hot function
				switch {
				case onAverage && (engine.gated || h.Affords(own, overhead[pathEnabled].outer.Load())):
					p.deficit.Store(0)
				case !engine.gated && (onAverage || h.Keep(sum.inherent-p.inhBase.Load(), nanos(p.first.Load(), t), p.root.Load())):
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

// ownTotal returns the inherent time of p's metered firings, of totals
// sum, as hotspot may judge it: as recorded, or, while probes are
// sampled, as the model gives it (ownEstimate). Outside windows its sampled children are not metered,
// and their time is in its recorded inherent time: judged on that, a
// caller of cheap sampled functions (yaml.v3's (*parser).sequence) came
// out hot on average and was metered at every call for good. Before any
// of its firings was in a window its own time is not known, and 0: it is
// not kept as hot on average.
func ownTotal(p *Probe, sum totals) int64 {
	if !sampler.active.Load() {
		return sum.inherent
	}
	own, _ := ownEstimate(p, sum)
	return own
}

// minWhole is how many of a probe's firings, metered always, must have
// been held whole by windows before its sampled children's time per
// firing is taken from them.
const minWhole = 64

// ownEstimate returns the inherent total of p's metered firings, of
// statistics sum, with the time of the sampled firings nested in them that
// began outside windows (not metered, so counted in their recorded
// inherent time) taken off, and whether windows have said anything of it.
//
// Where windows held whole at least minWhole of p's firings that began in
// them before their timers were due, and at least half of all those, the
// sampled children's time is taken as a mean per firing: what those
// firings' sampled children took. Every firing since the first probe was
// sampled is charged that mean, its own time being its inclusive time
// less the children metered always (with those under its sampled
// children, which outside windows are its own children) and less the
// mean. Its inclusive time
// is measured at every firing, mostly outside windows, where nothing under
// it is metered, so the estimate does not rest on what metering a child
// costs its parent: that cost, taken off a parent's time in windows, is a
// difference of clock reads that the calibration knows to within tens of
// ns, as much as a cheap child takes. On example/service, a search of
// 2,400 sampled calls of 55 ns each, the windows' split gave search 41.9%
// to 46.1% of the model in three minute-long runs, and 48.6% and 65.3% in
// two with that cost, beyond the child's own clock reads, taken at four
// fifths of its calibrated figure,
// against 49.5% to 51.3% of the CPU profile in all five.
//
// Only firings that began before the window's timer was due count: a
// window stays open until its timer runs, on a busy P at the end of the
// request running then, and a firing it waited for is one of the longer
// ones. Which firings began before the timer is not a matter of their
// length; which of them a window held whole is, a little: a window may
// close before such a firing ends, at overdueWindows times its length or
// when its timer runs at a scheduling point inside the firing. On
// example/service 7% to 26% of the searches that began early were cut so,
// more where the VM ran slower, and a search's sampled calls are as many
// in a long one as in a short one. Where children's time grows with a
// firing's length, the mean of the whole ones is under the truth by up to
// what the cut ones would add.
//
// Otherwise (a probe whose firings are long beside a window, such as one
// that spans the run or a parser's whole document) the share of its
// inclusive time that its firings in windows show as their own, as the
// windows split it (end), is taken. A mean from the firings held whole
// would be one of its shorter firings, and one from the parts of firings
// windows held, of the phase of its work that windows opened in: on
// goldmark, parser.Parse's blocks come before its inlines, and its own
// time came out at 74% of its inclusive time: the model's largest row,
// and not among the CPU profile's ten largest.
func ownEstimate(p *Probe, sum totals) (int64, bool) {
	w := &p.window
	if whole := w.whole.Load(); whole >= minWhole && 2*whole >= w.began.Load() {
		perFiring := float64(w.kidsWhole.Load()) / float64(whole)
		n := sum.count - w.base.Load()
		own := sum.inherent + w.kids.Load() - int64(perFiring*float64(max(n, 0)))
		return min(max(own, 0), sum.total), true
	}
	t := w.load()
	if t.total <= 0 {
		return 0, false
	}
	return int64(float64(sum.total) * float64(t.inherent) / float64(t.total)), true
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

// interruptFactor is how many times its probe's mean own time a sampled
// firing's own time must exceed, beside hotspot's threshold, to be taken
// as interrupted.
const interruptFactor = 64

// interrupted returns what of a sampled firing of p in a window, of inh ns
// of own time, was an interruption: nothing, or its own time less its
// probe's mean. Windows meter every firing of the sampled probes, cheap
// functions of tens of ns each, in wall time; when the goroutine is
// preempted, the world stopped for the garbage collector or the core
// taken by the host, the innermost metered firing gets the pause as its
// own time. A CPU profile counts none of it; in a function of 15 ns, a
// few pauses of 50 µs in a run double its estimate (seen on goldmark:
// 37 of 71,000 windowed firings of linkify's Parse held half its own
// time). So a sampled firing whose own time exceeds both hotspot's
// threshold and interruptFactor times its probe's mean in windows (after
// 64 such firings) keeps the mean as its own time; the rest is taken off
// its time and its ancestors', as metering is, and counted in the
// snapshot's Interrupted. A sampled probe is cold on average (it would
// be metered always otherwise), so such a firing is rare for it.
func interrupted(p *Probe, inh int64) int64 {
	h := engine.hotspot
	if h == nil || inh < h.Threshold {
		return 0
	}
	c := p.window.count.Load()
	if c < 64 {
		return 0
	}
	mean := p.window.inherent.Load() / c
	if inh <= interruptFactor*mean {
		return 0
	}
	interruptions.Add(1)
	return inh - mean
}

var interruptions atomic.Int64
