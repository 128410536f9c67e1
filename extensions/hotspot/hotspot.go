// Package hotspot decides which probes are worth metering at all.
//
// Each probe has a credit balance shared by every goroutine, starting at the
// initial balance. A metered firing is hot when its inclusive time reaches
// the threshold and its inherent time reaches the inherent threshold; a hot
// firing adds one credit, never above the initial balance, and any other
// firing takes one away. At zero the probe is disabled: from then on its
// firings cost one load and one branch in the generated code.
//
// The balance is kept as a deficit (initial − balance) in one of the probe's
// extension words, so a new probe needs no set-up. A cold firing is one
// atomic add; a hot firing of a probe at full balance is one load. Ended
// never blocks, allocates or takes a lock.
package hotspot

import (
	"fmt"

	"github.com/meterio/meter/meter"
)

// Hotspot is the extension. Build it with New.
type Hotspot struct {
	threshold, inherent, initial int64
}

// word is the per-probe extension word that holds the deficit; claimed once
// per process, whatever the number of Hotspot values.
var word = meter.NewProbeWord()

var (
	_ meter.Judge     = (*Hotspot)(nil)
	_ meter.Labeler   = (*Hotspot)(nil)
	_ meter.Extension = (*Hotspot)(nil)
)

// New returns the extension: thresholds in ns, initial balance at least 1.
func New(threshold, inherent, initial int64) *Hotspot {
	return &Hotspot{threshold: threshold, inherent: inherent, initial: max(initial, 1)}
}

// Hot reports whether one firing with these times is hot.
func (h *Hotspot) Hot(inclusive, inherent int64) bool {
	return inclusive >= h.threshold && inherent >= h.inherent
}

// Ended charges or credits the probe for one metered firing.
func (h *Hotspot) Ended(p *meter.Probe, inclusive, inherent int64) {
	deficit := &p.Ext[word]
	if h.Hot(inclusive, inherent) {
		for d := deficit.Load(); d > 0; d = deficit.Load() {
			if deficit.CompareAndSwap(d, d-1) {
				return
			}
		}
		return
	}
	if deficit.Add(1) == h.initial {
		p.Disable(meter.DisabledHotspot)
	}
}

// Reenabled gives a re-enabled probe its initial balance back.
func (h *Hotspot) Reenabled(p *meter.Probe) { p.Ext[word].Store(0) }

// Balance returns the probe's credit balance.
func (h *Hotspot) Balance(p *meter.Probe) int64 { return h.initial - p.Ext[word].Load() }

// Label labels a probe whose mean inclusive and inherent times both reach
// the thresholds.
func (h *Hotspot) Label(r *meter.Row) string {
	if r.Count > 0 && h.Hot(r.Avg, r.InherentAvg) {
		return meter.LabelHotspot
	}
	return ""
}

// Name implements meter.Extension.
func (h *Hotspot) Name() string { return "hotspot" }

// Settings implements meter.Extension.
func (h *Hotspot) Settings() string {
	return fmt.Sprintf("threshold=%dns inherent=%dns initial=%d", h.threshold, h.inherent, h.initial)
}
