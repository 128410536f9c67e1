package meter

import (
	"math"
	"sync"
	"sync/atomic"
)

// Extension state words: how many each probe and each goroutine offers.
const (
	ProbeWords     = 4
	GoroutineWords = 2
)

// Reason says why a probe is disabled.
type Reason uint32

// Reasons a probe is disabled. The CSV labels them "disabled" and "budget".
const (
	Enabled Reason = iota
	DisabledHotspot
	DisabledBudget
)

// Probe is one instrumented function: its name, statistics of its metered
// firings, and the words its extensions keep for it.
type Probe struct {
	name string
	id   int

	gate     *atomic.Uint32 // the generated code's on/off word; nil when none
	disabled atomic.Uint32  // a Reason
	ended    atomic.Bool    // some firing of it has returned

	// Statistics of metered firings, in ns. pending moves first and count
	// last, so a reader that sees them equal read a consistent row.
	pending   atomic.Int64
	count     atomic.Int64
	total     atomic.Int64
	inherent  atomic.Int64
	min, max  atomic.Int64
	reenabled atomic.Int64

	// Ext holds per-probe state for extensions (hotspot's credit, budget's
	// allowance, tracepoint's firing counter). Each extension claims its
	// words with NewProbeWord.
	Ext [ProbeWords]atomic.Int64
}

// Name returns the probe's name, as the Go toolchain names the function.
func (p *Probe) Name() string { return p.name }

// ID returns the probe's index in registration order.
func (p *Probe) ID() int { return p.id }

// Disabled reports why the probe is disabled, or Enabled.
func (p *Probe) Disabled() Reason { return Reason(p.disabled.Load()) }

// Disable stops all metering of p. The generated code's on word is cleared,
// so from then on a firing costs one load and one branch. Only the first
// reason sticks.
func (p *Probe) Disable(r Reason) {
	if p.disabled.CompareAndSwap(uint32(Enabled), uint32(r)) && p.gate != nil && !engine.keepGates {
		p.gate.Store(0)
	}
}

// Enable undoes Disable (a spot check found the probe hot again).
func (p *Probe) Enable() {
	if p.disabled.Swap(uint32(Enabled)) != uint32(Enabled) {
		p.reenabled.Add(1)
		for _, j := range engine.judges {
			if r, ok := j.(Reenabler); ok {
				r.Reenabled(p)
			}
		}
		if p.gate != nil && engine.on {
			p.gate.Store(1)
		}
	}
}

// Count returns the number of metered firings that have ended.
func (p *Probe) Count() int64 { return p.count.Load() }

// Mean returns the mean inclusive time of the probe's metered firings in
// ns, and false when none has ended yet.
func (p *Probe) Mean() (int64, bool) {
	c := p.count.Load()
	if c == 0 {
		return 0, false
	}
	return p.total.Load() / c, true
}

// record adds one metered firing. Five uncontended atomic adds; min and max
// are compare-and-swapped only when they move.
func (p *Probe) record(incl, inh int64) {
	p.pending.Add(1)
	p.total.Add(incl)
	p.inherent.Add(inh)
	for v := p.min.Load(); incl < v; v = p.min.Load() {
		if p.min.CompareAndSwap(v, incl) {
			break
		}
	}
	for v := p.max.Load(); incl > v; v = p.max.Load() {
		if p.max.CompareAndSwap(v, incl) {
			break
		}
	}
	p.count.Add(1)
}

var (
	registry struct {
		sync.Mutex
		probes []*Probe
	}
	extWords, gWords atomic.Int32
)

// NewProbe registers a probe. gate, if not nil, is the word the generated
// code tests before calling Begin; the engine sets it while the probe may be
// metered and clears it when the probe is disabled.
func NewProbe(name string, gate *atomic.Uint32) *Probe {
	p := &Probe{name: name, gate: gate}
	p.min.Store(math.MaxInt64)
	registry.Lock()
	p.id = len(registry.probes)
	registry.probes = append(registry.probes, p)
	registry.Unlock()
	if gate != nil && engine.on {
		gate.Store(1)
	}
	return p
}

// Probes returns every registered probe, in registration order.
func Probes() []*Probe {
	registry.Lock()
	defer registry.Unlock()
	return registry.probes[:len(registry.probes):len(registry.probes)]
}

// NewProbeWord claims one of Probe.Ext for an extension.
func NewProbeWord() int {
	n := int(extWords.Add(1)) - 1
	if n >= ProbeWords {
		panic("meter: out of per-probe extension words")
	}
	return n
}

// NewGoroutineWord claims one of Goroutine.Ext for an extension.
func NewGoroutineWord() int {
	n := int(gWords.Add(1)) - 1
	if n >= GoroutineWords {
		panic("meter: out of per-goroutine extension words")
	}
	return n
}
