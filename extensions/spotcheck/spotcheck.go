package spotcheck

import (
	"fmt"
	"sync"

	"github.com/meterio/meter/meter"
)

// MaxInterval is the largest interval.
const MaxInterval = 1 << 40

// Spotcheck is the extension. Build it with New.
type Spotcheck struct {
	interval            int64
	threshold, inherent int64 // ns: a spot check at or above both is hot
}

var (
	_ meter.Spotter   = (*Spotcheck)(nil)
	_ meter.Registrar = (*Spotcheck)(nil)
	_ meter.Judge     = (*Spotcheck)(nil)
	_ meter.Extension = (*Spotcheck)(nil)
)

// Each probe's words: the count of disabled firings to the next spot
// check, which the engine decrements, and the spot checks begun and not
// yet judged.
var (
	wordsOnce      sync.Once
	count, running int
)

// New returns the extension: every interval-th firing (clamped to
// 1..MaxInterval) of a disabled probe is metered, and one whose inclusive
// and inherent ns reach threshold and inherent re-enables the probe. Pass
// hotspot's thresholds.
func New(interval, threshold, inherent int64) *Spotcheck {
	wordsOnce.Do(func() { count, running = meter.NewProbeWord(), meter.NewProbeWord() })
	return &Spotcheck{interval: min(max(interval, 1), MaxInterval), threshold: threshold, inherent: inherent}
}

// SpotWord implements meter.Spotter: the engine counts a disabled probe's
// firings down on this word.
func (s *Spotcheck) SpotWord() int { return count }

// Registered implements meter.Registrar: a probe's count starts at the
// interval.
func (s *Spotcheck) Registered(p *meter.Probe) {
	p.Ext[count].Store(s.interval)
	p.Ext[running].Store(0)
}

// Spot implements meter.Spotter: the firing that is due by meter.Due
// (exactly one in the interval, across goroutines) is a spot check. A due
// firing that the engine will not meter (metered false) is not waited for:
// Ended judges spot checks that happened.
func (s *Spotcheck) Spot(p *meter.Probe, left int64, metered bool) bool {
	if !meter.Due(&p.Ext[count], left, s.interval) {
		return false
	}
	if metered {
		p.Ext[running].Add(1)
	}
	return true
}

// Ended judges a spot check of p: a hot one enables the probe again. Run it
// before the other judges, so that it sees the probe as the spot check
// found it. On any other metered firing it is one load.
func (s *Spotcheck) Ended(p *meter.Probe, inclusive, inherent int64) {
	w := &p.Ext[running]
	for v := w.Load(); v > 0; v = w.Load() {
		if w.CompareAndSwap(v, v-1) {
			if p.Disabled() != meter.Enabled && inclusive >= s.threshold && inherent >= s.inherent {
				p.Enable()
			}
			return
		}
	}
}

// Name implements meter.Extension.
func (s *Spotcheck) Name() string { return "spotcheck" }

// Settings implements meter.Extension.
func (s *Spotcheck) Settings() string {
	return fmt.Sprintf("interval=%d threshold=%dns inherent=%dns", s.interval, s.threshold, s.inherent)
}
