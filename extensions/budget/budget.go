package budget

import (
	"fmt"
	"sync"

	"github.com/meterio/meter/meter"
)

// Budget is the extension. Build it with New.
type Budget struct {
	percent int64 // 1..100
	unit    int64 // ns charged per measurement, at least 1
	word    int
}

var (
	_ meter.Allowance = (*Budget)(nil)
	_ meter.Judge     = (*Budget)(nil)
	_ meter.Extension = (*Budget)(nil)
)

// The probe word is claimed once per process, however many Budgets are
// built (tests build several; the engine offers only a few words).
var (
	wordOnce sync.Once
	word     int
)

// New returns the extension for a percentage (clamped to 1..100) and a
// unit cost in ns (at least 1).
func New(percent, unit int64) *Budget {
	wordOnce.Do(func() { word = meter.NewProbeWord() })
	return &Budget{percent: min(max(percent, 1), 100), unit: max(unit, 1), word: word}
}

// The word holds A+1 once T is known, and 0 before: a new probe needs no
// set-up and reads as unlimited.

// Allowance returns the probe's allowance in units, meter.Unlimited while
// its typical time is unknown. One atomic load.
func (b *Budget) Allowance(p *meter.Probe) int64 {
	a := p.Ext[b.word].Load()
	if a == 0 {
		return meter.Unlimited
	}
	return a - 1
}

// Of computes the allowance for a typical time of t ns.
func (b *Budget) Of(t int64) int64 {
	return t * b.percent / (100 * b.unit)
}

// Ended recomputes the probe's allowance from its mean inclusive time, which
// already counts the firing that ended, and disables a probe that cannot
// afford itself.
func (b *Budget) Ended(p *meter.Probe, inclusive, inherent int64) {
	t, ok := p.Mean()
	if !ok {
		return
	}
	a := b.Of(t)
	p.Ext[b.word].Store(a + 1)
	if a < 1 {
		p.Disable(meter.DisabledBudget)
	}
}

// Name implements meter.Extension.
func (b *Budget) Name() string { return "budget" }

// Settings implements meter.Extension.
func (b *Budget) Settings() string {
	return fmt.Sprintf("percent=%d unit=%dns", b.percent, b.unit)
}
