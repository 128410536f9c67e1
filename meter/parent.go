package meter

import "sync/atomic"

// Timed parents. A probe's own time is its inclusive time less that of
// its timed children: the firings of timed probes (metered at every call,
// or sampled) whose nearest timed ancestor on the goroutine is one of its
// firings. Untimed and disabled probes are not timed: their time stays in
// their nearest timed ancestor's, as an uninstrumented callee's does.
//
// A metered firing's time is the sum of its own time, the inclusive times
// of the metered firings nearest below it, and the own times of the
// sampled firings inside it that were not metered (and not inside one of
// those metered firings): every nanosecond in it belongs to exactly one of
// them. So each metered firing, when it ends, is charged to the metered
// firing below it on the stack (Frame.child), exactly; and each firing of
// a sampled probe that is not metered adds its probe's mean own time per
// call (Probe.ownMean, from its selected firings, which are a uniform
// sample of its calls) to the innermost metered firing on its goroutine,
// in begin's leaf. A firing's own time is its inclusive time less those.
// The estimate is exact in total over a sampled probe's calls; where its
// calls cost more under one caller than under another, that caller's share
// is estimated from the probe's mean.
//
// Some firings force their timed children (Frame.forces): a sampled
// probe's selected firing, and the first firings of a probe metered at
// every call (forcesFirst). Inside one, every firing of a sampled probe is
// metered, so its own time is measured whole, and the model's own times
// rest on measurements where a program is short and the probe's mean own
// time on whole measurements too.

// sampledProbes counts the probes in state Sampled.
var sampledProbes atomic.Int32

// chargeParent charges the metered firing fr of p, of incl ns, to pf, the
// metered firing below it. While p is not judged yet (Enabled) and a
// verdict may come, p keeps what it charged each parent probe, so that it
// can be given back should p turn out untimed or disabled: its time then
// belongs to its parents' own. The engine's own probes (calibrate.go) do
// the same work, so that what they measure is what a firing costs, and
// charge nothing.
func chargeParent(p *Probe, fr, pf *Frame, incl int64) {
	if !p.internal {
		pf.child += incl
	}
	if engine.hotspot != nil && p.State() == Enabled && pf.weight > 0 {
		p.warm.add(pf.probe, incl*int64(pf.weight)) // with no room in p's table, the charge stands
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
		p.ownMean.Store(max(t.wown+t.back, 0) / t.wsum)
	}
}
