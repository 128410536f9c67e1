package meter

import "sync/atomic"

// Sampled probes. A probe whose calls are long enough to time but too
// many to meter each (see judge) is sampled: every firing is counted, and
// on each P a countdown selects about one firing in engine.sample to be
// metered. The gaps between selected firings are drawn uniformly from
// [1, 2×sample−1], so no periodic pattern of the program lines up with
// them, and each firing is selected with probability 1/sample whatever
// calls it. A firing that its caller forces to be metered (parent.go) is
// not counted down. A selected firing stands for the firings of its gap,
// itself included: its weight. The probe's totals are estimated as its
// exact count times the weighted mean of its metered firings; each
// firing that is not metered charges its timed parent with that mean
// (parent.go), so the parent's inherent time loses the probe's calls that
// were not metered as well as those that were.

// reload draws the next gap of p's slot s, whose countdown ran out, and
// returns the weight of the firing that ran it out: the gap it had been
// drawn as. The caller holds s's P. The engine's own sampled probe
// (calibrate.go) has every firing selected.
func (p *Probe) reload(s *slot) int32 {
	if p.internal {
		atomic.StoreInt32(&s.left, 0)
		return 1
	}
	w := atomic.LoadInt32(&s.gap)
	g := p.drawGap()
	atomic.StoreInt32(&s.gap, g)
	atomic.StoreInt32(&s.left, g)
	return max(w, 1)
}

// drawGap draws a gap between two selected firings of p: uniform in
// [1, 2×n−1], n's mean, where n is the engine's sample, or p's own rate
// where its calls' time is heavy-tailed (tailRate).
func (p *Probe) drawGap() int32 {
	n := engine.sample
	if r := int64(p.rate.Load()); r > 0 && r < n {
		n = r
	}
	if n <= 1 {
		return 1
	}
	return int32(1 + engine.rand()%uint64(2*n-1))
}

// drawSpill decides a firing of a sampled probe counted in the spill word
// (a P without slots): selected with probability 1/sample, of weight
// sample.
func (p *Probe) drawSpill() int32 {
	n := engine.sample
	if n <= 1 || engine.rand()%uint64(n) == 0 {
		return int32(max(n, 1))
	}
	return 0
}

// startSampling readies p's countdowns on every P before its class says
// sampled: each P's first gap is drawn, so that the first selected firing
// on a P has a weight like any other.
func (p *Probe) startSampling() {
	for pid := uintptr(0); pid < countProcs; pid++ {
		s := p.slotOn(pid)
		g := p.drawGap()
		atomic.StoreInt32(&s.gap, g)
		atomic.StoreInt32(&s.left, g)
	}
}
