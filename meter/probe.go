package meter

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Extension state words: how many each probe and each goroutine offers.
const (
	ProbeWords     = 8
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
	root     atomic.Bool    // the entry of a unit of work (SetRoot)

	// Statistics of metered firings, in ns: two banks that writers fill by
	// the global epoch's parity, and the base that snapshots fold the idle
	// bank into (see record and Take).
	bank      [2]bank
	base      stats
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

// stats are a probe's totals in one bank, or folded into its base.
type stats struct {
	count, total, inherent atomic.Int64
	min, max               atomic.Int64
}

// bank is one half of a probe's statistics. started and finished bracket
// each write and are never reset, so started − finished is the number of
// writers inside; merged is finished as of the last fold.
type bank struct {
	started, finished atomic.Int64
	merged            atomic.Int64
	stats
}

// epoch picks the bank writers fill; Take moves it on.
var epoch atomic.Uint32

// Count returns the number of metered firings that have ended. It may lag a
// snapshot being taken by the firings in flight.
func (p *Probe) Count() int64 {
	c := p.base.count.Load()
	for i := range p.bank {
		c += p.bank[i].finished.Load() - p.bank[i].merged.Load()
	}
	return c
}

// Mean returns the mean inclusive time of the probe's metered firings in
// ns, and false when none has ended yet.
func (p *Probe) Mean() (int64, bool) {
	c, t := p.base.count.Load(), p.base.total.Load()
	for i := range p.bank {
		b := &p.bank[i]
		c += b.finished.Load() - b.merged.Load()
		t += b.total.Load()
	}
	if c <= 0 {
		return 0, false
	}
	return t / c, true
}

// record adds one metered firing to the bank of the current epoch: four
// uncontended atomic adds; min and max are compare-and-swapped only when
// they move. A writer that finds the epoch moved under it backs out and
// writes to the other bank, so Take never reads a bank being written.
func (p *Probe) record(incl, inh int64) {
	for {
		e := epoch.Load()
		b := &p.bank[e&1]
		b.started.Add(1)
		if epoch.Load() != e {
			b.started.Add(-1)
			continue
		}
		b.total.Add(incl)
		b.inherent.Add(inh)
		minimize(&b.min, incl)
		maximize(&b.max, incl)
		b.finished.Add(1)
		return
	}
}

func minimize(a *atomic.Int64, v int64) {
	for o := a.Load(); v < o; o = a.Load() {
		if a.CompareAndSwap(o, v) {
			return
		}
	}
}

func maximize(a *atomic.Int64, v int64) {
	for o := a.Load(); v > o; o = a.Load() {
		if a.CompareAndSwap(o, v) {
			return
		}
	}
}

// fold waits for the writers still inside bank i, then moves its totals
// into the base. Only Take calls it, under foldMu.
func (p *Probe) fold(i uint32) {
	b := &p.bank[i]
	for spins := 0; b.started.Load() != b.finished.Load(); spins++ {
		if spins > 8 {
			runtime.Gosched() // a writer was preempted inside record
		}
	}
	f := b.finished.Load()
	p.base.count.Add(f - b.merged.Load())
	b.merged.Store(f)
	p.base.total.Add(b.total.Swap(0))
	p.base.inherent.Add(b.inherent.Swap(0))
	minimize(&p.base.min, b.min.Swap(math.MaxInt64))
	maximize(&p.base.max, b.max.Swap(0))
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
	p.base.min.Store(math.MaxInt64)
	p.bank[0].min.Store(math.MaxInt64)
	p.bank[1].min.Store(math.MaxInt64)
	registry.Lock()
	p.id = len(registry.probes)
	registry.probes = append(registry.probes, p)
	registry.Unlock()
	registered(p)
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

// SetRoot marks p as the entry of a unit of work (see probe.Roots).
func (p *Probe) SetRoot() { p.root.Store(true) }

// Root reports whether p is marked as the entry of a unit of work.
func (p *Probe) Root() bool { return p.root.Load() }
