package spotcheck

import (
	"fmt"
	"sync"

	"github.com/meterio/meter/meter"
)

// MaxInterval is the largest interval: the count shares its word with the
// number of spot checks in flight.
const MaxInterval = 1<<40 - 1

const (
	count   = 1<<40 - 1 // disabled firings since the last spot check
	running = 1 << 40   // one spot check begun and not yet judged
)

// Spotcheck is the extension. Build it with New.
type Spotcheck struct {
	interval            int64
	threshold, inherent int64 // ns: a spot check at or above both is hot
	word                int
}

var (
	_ meter.Spotter   = (*Spotcheck)(nil)
	_ meter.Judge     = (*Spotcheck)(nil)
	_ meter.Extension = (*Spotcheck)(nil)
)

var (
	wordOnce sync.Once
	word     int
)

// New returns the extension: every interval-th firing (clamped to
// 1..MaxInterval) of a disabled probe is metered, and one whose inclusive
// and inherent ns reach threshold and inherent re-enables the probe. Pass
// hotspot's thresholds.
func New(interval, threshold, inherent int64) *Spotcheck {
	wordOnce.Do(func() { word = meter.NewProbeWord() })
	return &Spotcheck{interval: min(max(interval, 1), MaxInterval), threshold: threshold, inherent: inherent, word: word}
}

// Spot counts one firing of the disabled probe p and reports whether it is
// to be metered.
func (s *Spotcheck) Spot(p *meter.Probe) bool {
	w := &p.Ext[s.word]
	for {
		v := w.Load()
		n := v&count + 1
		spot := n >= s.interval
		next := v&^count | n
		if spot {
			next = v &^ count
			if next < meter.Unlimited-running {
				next += running
			}
		}
		if w.CompareAndSwap(v, next) {
			return spot
		}
	}
}

// Ended judges a spot check of p: a hot one enables the probe again. Run it
// before the other judges, so that it sees the probe as the spot check
// found it. On any other metered firing it is one load.
func (s *Spotcheck) Ended(p *meter.Probe, inclusive, inherent int64) {
	w := &p.Ext[s.word]
	for v := w.Load(); v >= running; v = w.Load() {
		if w.CompareAndSwap(v, v-running) {
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
