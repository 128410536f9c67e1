package meter

import "sync/atomic"

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
// caller than under another, that caller's share is estimated from the
// probe's mean.
//
// Some firings force their timed children (Frame.forces): a sampled
// probe's selected firing, and the first firings of a probe metered at
// every call (forcesFirst). Inside one, every firing of a sampled probe is
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
// measure is what a firing costs.
func keepCharge(p *Probe, pf *Frame, own int64) {
	judged := engine.hotspot != nil && p.State() == Enabled || engine.untimed != nil && p.short.Load() == shortUnknown
	switch {
	case !judged || pf.weight <= 0:
	case pf.probe == p:
		pf.kept += max(own, 0)
	default:
		p.warm.add(pf.probe, max(own, 0)*int64(pf.weight)) // with no room in p's table, the charge stands
	}
}

// ownMeanEvery is how many selected firings of a sampled probe pass
// between two refreshes of its mean own time.
const ownMeanEvery = 16

// refreshOwnMean sets p's mean own time per call from its statistics: its
// selected firings and, before them, those metered before its verdict.
func (p *Probe) refreshOwnMean() {
	t := p.stats.sum()
	if t.wsum > 0 {
		_, own := t.trimmed(p.Calls())
		mean := int64(max(own+float64(t.back)-p.pendingOff(), 0) / float64(t.wsum))
		p.ownMean.Store(mean)
		p.rawMean.Store(max(t.wown+t.back, 0) / t.wsum)
		p.charge.Store(mean + unmetered.inner.Load())
	}
}
