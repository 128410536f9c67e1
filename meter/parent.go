package meter

import (
	"sync"
	"sync/atomic"
)

// Timed parents. A probe's own time is its inclusive time less that of
// its timed children: the firings of timed probes (metered at every call,
// or sampled) whose nearest timed ancestor on the goroutine is one of its
// firings. Untimed and disabled probes are not timed: their time stays in
// their nearest timed ancestor's, as an uninstrumented callee's does.
//
// A metered firing's own time is what its stretches hold (stretch.go): the
// time between its metered children, which leaves out each metered child
// whole. Inside a stretch run the firings that are not metered. Untimed and
// disabled ones are the firing's own time. A sampled probe's firing that
// is not metered adds its probe's mean own time per call (Probe.ownMean,
// from its selected firings, a uniform sample of its calls), and what such
// a firing's metering costs (calibrate.go, unmetered), to what the stretch
// it runs in is charged (Probe.charge), in begin's leaf, so that its own
// time and its metering are taken off; what the sampled firing's own timed children took is in
// stretches of its own, charged the same way. The estimate is exact in
// total over a sampled probe's calls; where its calls cost more under one
// caller than under another, repricing (reprice) moves the charges from
// one caller to the other as its selected calls under each say.
//
// Some firings force their timed children (Frame.forces): a sampled
// probe's selected firing, and the firings of a probe metered at every
// call, its first ones and the long ones (forcing). Inside one, every firing of a sampled probe is
// metered, so its own time is measured whole, and the model's own times
// rest on measurements where a program is short and the probe's mean own
// time on whole measurements too.

// sampledProbes counts the probes in state Sampled.
var sampledProbes atomic.Int32

// keepCharge records, while p is not judged yet (Enabled) and a verdict
// may come, the own time of a firing of p that its parent pf's own time
// left out (times pf's weight, as pf's own time is recorded), per parent
// probe: should p turn out untimed or disabled, its time belongs to its
// parents' own, and is given back. A parent of p's own (recursion) keeps
// it in its frame instead (Frame.kept), as its own should the verdict
// come before it ends, and passes it on with its own when it ends. The
// engine's own probes (calibrate.go) do the same work, so that what they
// measure is what a firing costs. A firing of p with another of p's
// metered further up its goroutine (a recursion through other functions:
// a parser's expression, term and factor) marks p as recursive too
// (Probe.nested), as one directly inside its own does.
func keepCharge(p *Probe, pf *Frame, own int64) {
	judged := engine.hotspot != nil && p.State() == Enabled || engine.untimed != nil && p.short.Load() == shortUnknown
	switch {
	case !judged || pf.weight <= 0:
	case pf.probe == p:
		pf.kept += max(own, 0)
		if !p.nested.Load() {
			p.nested.Store(true)
		}
	default:
		if !p.nested.Load() && !p.internal && pf.recursesTo(p) {
			p.nested.Store(true)
		}
		p.warm.add(pf.probe, max(own, 0)*int64(pf.weight)) // with no room in p's table, the charge stands
	}
}

// recursesTo reports whether a firing of p is metered among f's nearest
// recurseScan ancestors on its goroutine.
func (f *Frame) recursesTo(p *Probe) bool {
	for i := f.index - 1; i >= max(f.index-recurseScan, 0); i-- {
		if f.g.frames[i].probe == p {
			return true
		}
	}
	return false
}

// recurseScan bounds how far up its goroutine's metered firings
// recursesTo looks: only firings of probes not judged yet pay for the
// look, their first thousand or so.
const recurseScan = 64

// ownMeanEvery is how many selected firings of a sampled probe pass
// between two refreshes of its mean own time.
const ownMeanEvery = 16

// refreshOwnMean sets p's mean own time per call from its statistics: its
// selected firings and, before them, those metered before its verdict;
// and reprices what its unmetered calls charged their parents. Where
// another goroutine refreshes it at the same moment, that one's refresh
// stands: the mean changes only with the repricing of the calls charged
// at the mean before it, and the caller, inside a firing's End, does not
// wait.
func (p *Probe) refreshOwnMean() {
	t := p.stats.sum()
	if t.wsum <= 0 || !p.pricing.TryLock() {
		return
	}
	calls := p.Calls()
	_, own := t.trimmed(calls)
	off := p.pendingOff()
	mean := int64(max(own+float64(t.back)-off, 0) / float64(t.wsum))
	p.reprice(t.count, off, t.over()/float64(max(calls, 1)))
	p.ownMean.Store(mean)
	p.rawMean.Store(int64(max(float64(t.wown+t.back)-off, 0) / float64(t.wsum)))
	p.charge.Store(mean + unmetered.inner.Load())
	if p.nested.Load() && p.State() == Sampled {
		p.untimeRecursion(off)
	}
	p.pricing.Unlock()
}

// untimeRecursion makes p, a recursive sampled probe, untimed once its
// selected firings, untimeAfter times its hotspot Initial calls or more,
// say its calls take less than the untimed limit of their own (off: what
// pendingOff takes off its own time); p.pricing is held. A recursive
// function's verdict rests on its first calls, metered with their
// children, and the own time of a call of tens of ns read so is mostly the
// error of its children's overhead estimates, over the limit where its
// true own time is a fraction of it; its selected firings, each alone in
// its stretch of unmetered calls, tell it better (untimedBy). What its
// unmetered calls charged its timed parents is given back to them, as an
// untimed probe's time is theirs; its metered firings' own time, a few
// thousand calls', is left out of the model. A probe that its rechecks
// made sampled (judge.go) stays so: they timed its calls with the calls of
// its own nested in them counted, and a verdict that went back and forth
// would give its parents back, at each turn, what its calls never took.
func (p *Probe) untimeRecursion(off float64) {
	w := p.selectedW.Load()
	h := engine.hotspot
	if h == nil || w < untimeAfter*h.Initial || p.recheckCalls.Load() > 0 {
		return
	}
	if p.selectedMean(w, off) >= float64(UntimedLimit()) || !p.setState(Sampled, Untimed) {
		return
	}
	pr := &p.pricing
	for i := range p.callers.to {
		e := &p.callers.to[i]
		if q, n := e.parent.Load(), e.n.Load(); q != nil && n > 0 {
			q.stats.addBack(int64(pr.booked(i, float64(n)/float64(w))))
		}
	}
}

// untimeAfter is how many times hotspot's Initial calls a recursive
// sampled probe's selected firings stand for before they may make it
// untimed (untimeRecursion): its firings metered before its verdict then
// weigh little in its mean.
const untimeAfter = 16

// What a sampled probe's unmetered calls charged their parents, under
// Probe.pricing.
type pricing struct {
	sync.Mutex
	charged float64                        // ns: what its unmetered calls charged as they ran, each at the mean that stood
	calls   int64                          // those calls
	fixed   [len(parentTable{}.to)]float64 // ns: what repricing took off each parent of Probe.callers so far, index for index
}

// reprice brings what p's unmetered calls charged each of their timed
// parents to what its selected firings under that parent say those calls
// took; metered is its metered firings, off what pendingOff takes off its
// own time, and trim what the stretches that bound its calls found its
// estimate to exceed them by, in ns a call (overcharged): its parents are
// charged what its row shows.
//
// Each unmetered call charged the stretch it ran in with the probe's mean
// own time as it stood (Probe.ownMean). A function whose long calls are
// rare (a buffered writer's flush) shows a low mean until its selected
// firings meet a few of them and they are found to be its work, and one
// whose calls grow longer shows the mean of its past: its callers kept the
// difference as their own time. And one mean is the wrong price for a
// function whose calls cost more under one caller than under another (a
// digest of short blocks from one, of long ones from another): the caller
// of the long calls kept most of their time, and the other was charged
// more than its calls took.
//
// The selected firings are a uniform sample of the calls that were not
// metered, and each notes its nearest timed parent (Probe.callers): the
// calls under a parent are its selected firings' weights there, and what
// those calls took is their own times, each times its weight. So each
// parent's part of what all the unmetered calls took (their number times
// the selected firings' mean own time, as the probe's row counts it) is
// its selected firings' share of the selected firings' own time, and what
// it was charged is its share of the calls times what they were charged.
// The difference from what earlier repricings took off it is taken off
// (or given back to) its own time. Calls with no timed parent, or under one
// the table had no room for, charged their stretches at the mean and are
// not repriced.
func (p *Probe) reprice(metered int64, off, trim float64) {
	w := p.selectedW.Load()
	calls := p.Calls() - metered
	if calls <= 0 {
		return
	}
	pr := &p.pricing
	pr.charged += float64(calls-pr.calls) * float64(p.ownMean.Load())
	pr.calls = calls
	if w <= 0 { // no selected firing yet: what was charged stands
		return
	}
	sel := float64(p.selectedOwn.Load())
	owed := max(p.selectedMean(w, off)-trim, 0) * float64(calls)
	for i := range p.callers.to {
		e := &p.callers.to[i]
		q, n := e.parent.Load(), e.n.Load()
		if q == nil || n <= 0 {
			continue
		}
		share := float64(n) / float64(w)
		part := share
		if sel > 0 {
			part = float64(max(e.own.Load(), 0)) / sel
		}
		d := int64(owed*part - pr.booked(i, share))
		if d != 0 {
			pr.fixed[i] += float64(d)
			q.stats.addBack(-d)
		}
	}
}

// selectedMean returns the mean own time of p's selected firings, which
// stand for w calls, less off (what pendingOff takes off its own time) and
// with their bare stretches floored (bareFloor): what repricing prices
// its unmetered calls at.
func (p *Probe) selectedMean(w int64, off float64) float64 {
	return max(float64(p.selectedOwn.Load()+bareFloor(p.selectedBare.Load()))-off, 0) / float64(w)
}

// booked returns what the unmetered calls have cost the parent of entry i
// of Probe.callers so far, whose selected firings stand for share of the
// calls: its share of what the calls charged as they ran, and what
// repricing took off it since.
func (pr *pricing) booked(i int, share float64) float64 {
	return pr.charged*share + pr.fixed[i]
}

// callerRatio returns how p's calls under parent q compare with all its
// calls: the mean own time of its selected firings under q over that of
// all of them; 1 where q has none, or p none yet.
func (p *Probe) callerRatio(q *Probe) float64 {
	w, sel := p.selectedW.Load(), p.selectedOwn.Load()
	if w <= 0 || sel <= 0 {
		return 1
	}
	for i := range p.callers.to {
		e := &p.callers.to[i]
		if e.parent.Load() == q {
			if n := e.n.Load(); n > 0 {
				return float64(max(e.own.Load(), 0)) / float64(n) * float64(w) / float64(sel)
			}
			break
		}
	}
	return 1
}

// noteSelected records p's selected firing of own ns, bare of them in
// its bare stretches, standing for w calls, under pf, its nearest metered
// ancestor, or none (reprice).
func (p *Probe) noteSelected(pf *Frame, own int64, w int32, bare int64) {
	if w <= 0 {
		return
	}
	p.selectedW.Add(int64(w))
	p.selectedOwn.Add(own * int64(w))
	if bare != 0 {
		p.selectedBare.Add(bare * int64(w))
	}
	if pf != nil && pf.probe != p {
		p.callers.addOwn(pf.probe, int64(w), own*int64(w))
	}
}
