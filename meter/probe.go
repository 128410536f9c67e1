package meter

import (
	"sync"
	"sync/atomic"
)

// State is what the chain has made of a probe.
type State uint32

// Probe states. A probe begins Enabled: every firing is metered while
// hotspot learns what it costs. When its credit balance runs out, hotspot
// judges it on its totals (judge.go) and it becomes Timed, Sampled,
// Untimed or DisabledHotspot; budget may disable it (DisabledBudget).
const (
	Enabled         State = iota // every firing metered; not judged yet
	Timed                        // every firing metered, for good: hot, or cheap to meter beside its own time
	Sampled                      // counted; about one firing in hotspot's Sample metered (sample.go)
	Untimed                      // counted, never metered: its calls are too short to time
	DisabledHotspot              // switched off by hotspot: its share of the program is below the share threshold
	DisabledBudget               // switched off by budget: it cannot afford its own measurement
)

// Disabled reports whether s is one of the disabled states.
func (s State) Disabled() bool { return s >= DisabledHotspot }

// metered reports whether every firing of a probe in state s is metered.
func (s State) metered() bool { return s == Enabled || s == Timed }

// Classes: what begin does with a firing of a probe, one word that the Go
// decision (decide.go) and the assembly leaf (begin_amd64.s) both switch
// on. The engine sets it from the probe's state and the chain (classOf).
const (
	classOff    = iota // nothing: the engine is off, or the probe is disabled and spotcheck is off
	classSpot          // disabled, spotcheck on: its spot countdown, and no count
	classCount         // counted only (Untimed)
	classSample        // counted; the P's countdown selects the firings to meter (Sampled)
	classMeter         // counted; metered, or, with a trace gate on, passed through the gates
)

// Probe is one instrumented function: its name, what the chain keeps for
// it, its count and the statistics of its metered firings.
type Probe struct {
	name     string
	id       int32
	internal bool // the engine's own (calibrate.go): judged by nothing, never in a trace

	class     atomic.Uint32  // what begin does with a firing (classOff …)
	state     atomic.Uint32  // a State
	gate      *atomic.Uint32 // the generated code's on-word; nil when none
	ended     atomic.Bool    // some firing of it has returned
	root      atomic.Bool    // the entry of a unit of work (probe.Roots)
	eligible  atomic.Bool    // tracepoint may start traces on it
	deciding  atomic.Bool    // hotspot is judging it
	forcings  atomic.Int32   // its firings metered at every call that forced their timed children (forcing)
	short     atomic.Uint32  // with hotspot off: whether its calls are too short to time (shortUnknown …; judgeShort)
	parent    atomic.Bool    // some selected or forced firing of it had a metered child, not a recheck nor the engine's own (overcharged)
	nested    atomic.Bool    // some metered firing of it ran directly inside another of its own: it recurses (checkpointed)
	suspects  atomic.Int32   // its suspect selected firings before cpuPauses (interrupted)
	hinged    atomic.Int32   // how many times its untimed verdict waited for more firings (hinges)
	work      atomic.Int64   // ns: of the excess over its mean of its suspect selected firings that read the CPU clock, what the thread ran (interrupted)
	excess    atomic.Int64   // ns: that excess
	pending   atomic.Int64   // weighted ns: the excess over its mean of its suspect selected firings that did not (pendingOff)
	carried   atomic.Int64   // calls the selected firings that read the CPU clock stood for, which its next selected firing stands for (interrupted)
	cpuTimed  atomic.Uint32  // why its metered firings' stretches are timed by the thread's CPU clock: cpuSyscalls, cpuPauses (stretch.go); 0: by the wall clock
	judged    atomic.Int32   // its suspect selected firings that read the CPU clock (interrupted)
	rate      atomic.Int32   // while sampled, one firing in rate is selected, on average, if below the engine's sample; 0: the engine's (tailRate)
	forceLong atomic.Int32   // how many timed children its firings metered at every call force once its first ones have (forcing)

	slots   *slot        // its count on P 0 (count.go); on P k, k<<procShift bytes on
	spill   atomic.Int64 // firings counted on Ps without slots
	ownMean atomic.Int64 // ns of own time per call, while sampled: what an unmetered firing adds to its parent (parent.go)
	rawMean atomic.Int64 // ownMean before what overcharged took off (pending suspects' excess off too: pendingOff)
	charge  atomic.Int64 // ownMean and what an unmetered firing's metering costs: what begin's leaf adds to its parent's stretch (parent.go)

	// What the chain keeps per probe: hotspot's deficit (initial − balance),
	// budget's allowance (A+1 once T is known, 0 before), the tick of its
	// first metered firing since it was last enabled (for hotspot's share),
	// and one striped count that tracepoint (enabled) or spotcheck
	// (disabled) runs down, whichever the probe's state calls for.
	deficit   atomic.Int64
	allowance atomic.Int64
	first     atomic.Int64
	count     Countdown

	stats        stats
	warm         parentTable  // what it charged its timed parents while Enabled (judge.go)
	callers      parentTable  // while sampled, the calls its selected firings stand for, per timed parent (reprice)
	selectedW    atomic.Int64 // the calls all its selected firings stand for, with a timed parent or none
	selectedOwn  atomic.Int64 // ns: their own times, each times the calls it stands for
	selectedBare atomic.Int64 // ns: of those, what lay in their bare stretches (bareFloor)
	pricing      pricing      // what its unmetered calls charged their parents, as last repriced
	rechecked    atomic.Int32 // while untimed, its calls metered again at checkpoints (recheck)
	recheckOwn   atomic.Int64 // ns: their own times
	recheckCalls atomic.Int64 // the calls those times hold: one a rechecked call, and a recursive probe's calls nested in it (recheck)
	reenabled    atomic.Int64
	waited       atomic.Int64 // ns of its metered firings' stretches left out for a wait, each times its weight (stretch.go)
	blind        atomic.Int64 // of those, ns of the stretches left out whole (not a bracketed wait), each times its weight: the sampler's to see into
	open         openFirings  // what its firings still open have shown (open.go)
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

// classOf returns the class of a probe in state s under the wired chain.
func classOf(s State) uint32 {
	switch {
	case !engine.on:
		return classOff
	case s.Disabled():
		if engine.spotcheck != nil {
			return classSpot
		}
		return classOff
	case s == Untimed:
		return classCount
	case s == Sampled:
		return classSample
	}
	return classMeter
}

// setState moves p from state from to state to, and sets its class and
// on-word to match. It reports false, changing nothing, if p was not in
// state from. What a state needs ready (a countdown) is made ready before
// the class that reads it.
func (p *Probe) setState(from, to State) bool {
	switch {
	case to == Sampled:
		p.refreshOwnMean()
		p.startSampling()
	case to == Untimed:
		p.startCheckpoints()
	case to.Disabled() && engine.spotcheck != nil:
		p.count.reset(engine.spotcheck.Interval, stripeCount)
	case to.metered() && engine.tracepoint != nil:
		p.count.reset(engine.tracepoint.Sample, procSpread())
	}
	if !p.state.CompareAndSwap(uint32(from), uint32(to)) {
		return false
	}
	p.class.Store(classOf(to))
	if from == Sampled {
		sampledProbes.Add(-1)
	}
	if to == Sampled {
		sampledProbes.Add(1)
	}
	if p.gate != nil {
		p.gate.Store(b2u32(classOf(to) != classOff))
	}
	return true
}

// Disable stops all metering of p for reason r (DisabledHotspot or
// DisabledBudget): its firings are no longer counted either, and its
// generated code's on-word is cleared, so that from then on a firing costs
// one load and one branch, unless spotcheck is on. Only the first reason
// sticks.
func (p *Probe) Disable(r State) {
	for {
		s := p.State()
		if s.Disabled() {
			return
		}
		if p.setState(s, r) {
			p.warm.settle(true)
			return
		}
	}
}

// Enable undoes Disable: a spot check found p hot again. It is metered at
// every firing and judged afresh, with hotspot's initial balance.
func (p *Probe) Enable() {
	for {
		s := p.State()
		if s == Enabled {
			return
		}
		p.deficit.Store(0)
		p.first.Store(0)
		if p.setState(s, Enabled) {
			if s.Disabled() {
				p.reenabled.Add(1)
			}
			return
		}
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
// the probe may be counted or metered and clears it when the probe is
// disabled.
func NewProbe(name string, gate *atomic.Uint32) *Probe {
	p := makeProbe(name, gate)
	registry.Lock()
	p.id = int32(len(registry.probes))
	registry.probes = append(registry.probes, p)
	registry.Unlock()
	configureMu.Lock()
	p.wire()
	configureMu.Unlock()
	return p
}

// SetGate gives p its gate (NewProbe), and sets the word as p's state
// says. A caller that registers a probe for generated code passes no gate
// to NewProbe, stores the probe where the code finds it, then calls
// SetGate: a goroutine that sees the word set then finds the probe. A
// package's variable initialisers run before its init functions, and may
// start goroutines that call its functions while it registers them.
func (p *Probe) SetGate(gate *atomic.Uint32) {
	configureMu.Lock()
	p.gate = gate
	p.wire()
	configureMu.Unlock()
}

// makeProbe makes a probe that is not registered yet (the engine's own
// stay so).
func makeProbe(name string, gate *atomic.Uint32) *Probe {
	p := &Probe{name: name, gate: gate}
	p.stats.init()
	p.giveSlots()
	return p
}

// Probes returns every registered probe, in registration order.
func Probes() []*Probe {
	registry.Lock()
	defer registry.Unlock()
	return registry.probes[:len(registry.probes):len(registry.probes)]
}

func b2u32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
