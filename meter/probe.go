package meter

import (
	"sync"
	"sync/atomic"
)

// State is what the chain has made of a probe.
type State uint32

// Probe states. The model labels a disabled probe "disabled" (hotspot) or
// "budget", and a sampled one "sampled".
const (
	Enabled         State = iota // every firing goes through the chain
	Sampled                      // metered during sampling windows only (sampler.go)
	DisabledHotspot              // switched off by hotspot
	DisabledBudget               // switched off by budget: it cannot afford its own measurement
)

// Disabled reports whether s is one of the disabled states.
func (s State) Disabled() bool { return s >= DisabledHotspot }

// Probe is one instrumented function: its name, what the chain keeps for
// it, and the statistics of its metered firings.
type Probe struct {
	name     string
	id       int32
	internal bool // the engine's own (calibrate.go): judged by nothing, never in a trace

	state    atomic.Uint32  // a State
	gate     *atomic.Uint32 // the generated code's on-word; nil when none
	ended    atomic.Bool    // some firing of it has returned
	root     atomic.Bool    // the entry of a unit of work (probe.Roots)
	eligible atomic.Bool    // tracepoint may start traces on it

	// What the chain keeps per probe: hotspot's deficit (initial − balance),
	// budget's allowance (A+1 once T is known, 0 before), the spot checks
	// the tick of its first metered firing (for
	// hotspot's share), and one striped count that tracepoint (enabled) or
	// spotcheck (disabled) runs down, whichever the probe's state calls for.
	deficit   atomic.Int64
	allowance atomic.Int64
	first     atomic.Int64 // tick of its first metered firing since it was last enabled
	inhBase   atomic.Int64 // its inherent total when it was last enabled
	count     Countdown

	stats     stats
	window    windowStats                // its metered firings that a sampling window overlapped
	counts    atomic.Pointer[[]countRow] // its firings counted in counting windows, per stripe (counting.go)
	sampling  sampling
	reenabled atomic.Int64

	_ [40]byte // to whole cache lines (lines_test.go)
}

// Name returns the probe's name, as the Go toolchain names the function.
func (p *Probe) Name() string { return p.name }

// ID returns the probe's index in registration order.
func (p *Probe) ID() int { return int(p.id) }

// State returns what the chain has made of p.
func (p *Probe) State() State { return State(p.state.Load()) }

// Root reports whether p is marked as the entry of a unit of work.
func (p *Probe) Root() bool { return p.root.Load() }

// SetRoot marks p as the entry of a unit of work: a request handler or a
// goroutine's function, where traces start by default (see tracepoint).
func (p *Probe) SetRoot() {
	if p.root.Swap(true) {
		return
	}
	registry.Lock()
	first := !registry.anyRoot
	registry.anyRoot = true
	registry.Unlock()
	if first {
		// Until now every probe was eligible; from now on only roots are.
		for _, q := range Probes() {
			q.decideEligible()
		}
	} else {
		p.decideEligible()
	}
}

// Disable stops all metering of p for reason r (DisabledHotspot or
// DisabledBudget). The generated code's on-word is cleared, so from then
// on a firing costs one load and one branch, unless spotcheck is on. Only
// the first reason sticks.
func (p *Probe) Disable(r State) {
	for {
		s := p.State()
		if s.Disabled() {
			return
		}
		if engine.spotcheck != nil {
			p.count.reset(engine.spotcheck.Interval, Stripes) // before the state that uses it
		}
		if p.state.CompareAndSwap(uint32(s), uint32(r)) {
			break
		}
	}
	if engine.spotcheck == nil && p.gate != nil {
		p.gate.Store(0)
	}
}

// Enable undoes Disable and ends sampling: a spot check or a sampled
// firing found p hot again. It gets hotspot's initial balance back.
func (p *Probe) Enable() {
	s := p.State()
	if s == Enabled {
		return
	}
	if s == Sampled {
		// The stretch ends: what it counted and did not meter becomes
		// part of the estimates for good.
		if engine.tracepoint != nil {
			p.count.reset(engine.tracepoint.Sample, procSpread())
		}
		p.sampling.mu.Lock()
		e := p.adjustment(p.stats.sum(), now())
		ok := p.state.CompareAndSwap(uint32(Sampled), uint32(Enabled))
		if ok {
			p.sampling.extra = e
		}
		p.sampling.mu.Unlock()
		if !ok {
			return
		}
		removeSampled(p)
	} else {
		if engine.tracepoint != nil {
			p.count.reset(engine.tracepoint.Sample, procSpread()) // before the state that uses it
		}
		if !p.state.CompareAndSwap(uint32(s), uint32(Enabled)) {
			return
		}
	}
	p.deficit.Store(0)
	p.inhBase.Store(p.stats.sum().inherent) // hotspot's share is judged afresh
	p.first.Store(0)
	if s.Disabled() {
		p.reenabled.Add(1)
	}
	if p.gate != nil && engine.on {
		p.gate.Store(1)
	}
}

// decideEligible sets whether tracepoint may start traces on p.
func (p *Probe) decideEligible() {
	if t := engine.tracepoint; t != nil {
		registry.Lock()
		any := registry.anyRoot
		registry.Unlock()
		p.eligible.Store(t.Eligible(p.name, p.root.Load(), any))
	}
}

var registry struct {
	sync.Mutex
	probes  []*Probe
	anyRoot bool
}

// NewProbe registers a probe. gate, if not nil, is the word the generated
// code tests before calling Begin: the engine sets it while a firing of
// the probe may be metered and clears it when the probe is disabled.
func NewProbe(name string, gate *atomic.Uint32) *Probe {
	p := &Probe{name: name, gate: gate}
	p.stats.init()
	registry.Lock()
	p.id = int32(len(registry.probes))
	registry.probes = append(registry.probes, p)
	registry.Unlock()
	configureMu.Lock()
	p.wire()
	configureMu.Unlock()
	return p
}

// Probes returns every registered probe, in registration order.
func Probes() []*Probe {
	registry.Lock()
	defer registry.Unlock()
	return registry.probes[:len(registry.probes):len(registry.probes)]
}
