package meter

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/hotspot"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
)

// Unlimited is the allowance of a probe whose typical time is not known yet.
const Unlimited = math.MaxInt64

// Chain is the closed set of extensions, as Configure wires it: a nil rule
// is an extension that is off. The engine asks them, for each firing, in
// the order the fields come: hotspot (is the probe disabled?), the trace
// gates (tracepoint, flowcheck; with neither, every firing passes), budget;
// spotcheck sees only disabled probes' firings.
type Chain struct {
	Enabled    bool
	Hotspot    *hotspot.Rule
	Tracepoint *tracepoint.Rule
	Flowcheck  *flowcheck.Rule
	Budget     *budget.Rule
	Spotcheck  *spotcheck.Rule

	// Untimed, with Hotspot off, is the rule whose Untimed and
	// ThresholdInherent set the untimed limit, as hotspot's would: every
	// firing is metered, but a probe whose calls turn out too short to
	// time (judged once, on its first few thousand metered firings) is
	// untimed from then on, counted only, its own time its timed
	// parents'. nil: every probe timed.
	Untimed *hotspot.Rule

	TraceMax int32 // firings metered in one trace at most; 0: no maximum
	// HandOver is how long a trace may run before the spans that have
	// ended are handed to the sink (its root still running); 0: 2 s.
	HandOver time.Duration
	Sink     Sink          // receives traces; nil: none
	Clock    *clock.Manual // the clock firings read; nil: the process clock
	Seed     uint64        // flowcheck's generators' seed; 0: from the time
	Rand     func() uint64 // draws sampled probes' gaps; nil: math/rand/v2
	// ClockCost is what a clock read costs, in ns, with a manual Clock:
	// the untimed limit is a multiple of it (see UntimedLimit). The
	// process clock's cost is measured.
	ClockCost int64
	// Parked, with a manual Clock, says whether the goroutine parked to
	// wait since its current stretch began (stretch.go), and forgets it;
	// nil: never.
	Parked func() bool
	// Descheduled, with a manual Clock, says how many times the goroutine
	// was taken off its P without parking since its current stretch
	// began (sched.go), and forgets it; nil: never. RunWait is the mean
	// run-queue wait then, in ns.
	Descheduled func() int
	RunWait     int64
	// Idle, with a manual Clock, says that no goroutine waits to run: a
	// long stretch taken off its P is charged its wall time less its waits,
	// not what its firing's other stretches hold (sched.go).
	Idle bool
	// Worked, with a manual Clock, says whether the goroutine, taken off
	// its P once (Descheduled returned 1), left the running state to work
	// on its system stack (an assist of the collector); nil: never.
	Worked func() bool
	// Syscalled, with a manual Clock, says whether the goroutine entered
	// a system call since its current stretch began, and forgets it; nil:
	// never. ThreadCPU is then the thread's CPU clock, in ns (nil: none,
	// and a stretch that held a call is left out).
	Syscalled func() bool
	ThreadCPU func() int64
	// Grown, with a manual Clock, runs where begin's leaf grew the
	// goroutine's stack before a firing, between the two clock reads that
	// time the copy (room.go): a test advances the clock there.
	Grown func()
}

// Sink receives traces. Its calls run on the traced goroutine and must
// neither block nor keep the spans after returning.
type Sink interface {
	// TraceStarted is called when a trace starts on g, at root.
	TraceStarted(g *Goroutine, root *Probe)
	// TraceSpans hands over spans of trace id (unique in the process). A
	// trace may come in several parts: spans that ended, handed over while
	// its root still runs (truncated: the trace outlived the hand-over
	// interval), then the rest, with final set. truncated on the final
	// part says the trace reached the trace maximum, was handed over in
	// parts, or lost its root to a panic.
	TraceSpans(trace uint64, spans []Span, final, truncated bool)
}

// Span is one metered firing inside a trace.
type Span struct {
	Probe    *Probe
	Index    int32 // its index in the trace, in the order firings began
	Parent   int32 // index of the nearest metered ancestor's span; -1 for the root
	Start    int64 // ticks
	End      int64 // ticks; 0 for a firing cut off before it ended
	Inherent int64 // ns
}

// engine is the wired chain. Configure writes it while no firing reads it
// (at the first probe registration, and in tests between runs).
var engine engineState

// engineState is the wired chain's type.
type engineState struct {
	on    bool
	gated bool // a trace gate (tracepoint, flowcheck) is on: quick.mode says which

	hotspot    *hotspot.Rule
	untimed    *hotspot.Rule // with hotspot off: the untimed limit's rule (Chain.Untimed)
	tracepoint *tracepoint.Rule
	flowcheck  *flowcheck.Rule
	budget     *budget.Rule
	spotcheck  *spotcheck.Rule

	sample    int64         // one firing in sample of a sampled probe is metered (hotspot's Sample)
	rand      func() uint64 // draws the gaps of sampled probes
	traceMax  int32
	handEvery int64 // ticks
	sink      Sink
	manual    *clock.Manual
	clockCost int64 // ns a clock read costs, with a manual clock (tests)
	parked    func() bool
	desched   func() int
	worked    func() bool
	runWait   int64
	idle      bool
	syscalled func() bool
	threadCPU func() int64
	grown     func()
	seed      uint64
}

var (
	configureMu sync.Mutex
	seeded      atomic.Uint64 // goroutines whose flowcheck generator is seeded
)

// Configure wires c. Probes registered before are kept, with their
// statistics and their states, and their generated on-words set to match.
// Call it before firings start (the probe package does, at the first
// registration), or while none run (tests).
func Configure(c Chain) {
	configureMu.Lock()
	defer configureMu.Unlock()
	findGoid()
	if c.Enabled {
		findWaits() // its goroutines park in each kind of wait: not for a program that meters nothing
	}
	engine.on = c.Enabled && Supported
	if engine.on && started.Load().(time.Time).IsZero() {
		started.Store(time.Now())
	}
	engine.hotspot, engine.tracepoint, engine.flowcheck = c.Hotspot, c.Tracepoint, c.Flowcheck
	engine.budget, engine.spotcheck = c.Budget, c.Spotcheck
	engine.untimed = nil
	if c.Hotspot == nil {
		engine.untimed = c.Untimed
	}
	engine.gated = c.Tracepoint != nil || c.Flowcheck != nil
	engine.sample = 0
	if h := c.Hotspot; h != nil && !engine.gated {
		engine.sample = h.Sample
	}
	engine.rand = c.Rand
	if engine.rand == nil {
		engine.rand = rand.Uint64
	}
	engine.traceMax = c.TraceMax
	if engine.traceMax <= 0 {
		engine.traceMax = math.MaxInt32
	}
	newClock := c.Clock != engine.manual || !openBased
	engine.sink, engine.manual, engine.clockCost, engine.parked = c.Sink, c.Clock, c.ClockCost, c.Parked
	if newClock {
		openBase.Store(now()) // before any firing on this clock (open.go)
		openBased = true
	}
	stampTSC = c.Clock == nil && clock.TSC()
	engine.desched, engine.runWait, engine.worked, engine.idle = c.Descheduled, c.RunWait, c.Worked, c.Idle
	engine.syscalled, engine.threadCPU, engine.grown = c.Syscalled, c.ThreadCPU, c.Grown
	hand := c.HandOver
	if hand <= 0 {
		hand = 2 * time.Second
	}
	engine.handEvery = int64(hand)
	if c.Clock == nil {
		engine.handEvery = clock.Ticks(int64(hand))
	}
	engine.seed = c.Seed
	if engine.seed == 0 {
		engine.seed = uint64(time.Now().UnixNano())
	}
	seeded.Store(0)
	quick = quickPath{}
	if engine.on {
		switch {
		case c.Tracepoint != nil && c.Flowcheck != nil:
			quick.mode = modeBoth
		case c.Tracepoint != nil:
			quick.mode = modeTrace
		case c.Flowcheck != nil:
			quick.mode = modeFlow
		default:
			quick.mode = modeUngated
		}
	}
	if engine.on && engine.gated {
		fillPool() // the pool of marks for traces across goroutines (join.go)
	}
	resetGoroutines()
	for _, p := range Probes() {
		p.wire()
	}
	if engine.tracepoint != nil {
		calib[pathMeter].count.reset(engine.tracepoint.Sample, procSpread())
	}
	calibrate()
}

// wire sets p up for the chain: its state where the chain has no room for
// it (a sampled or untimed probe under a trace gate, or with sampling off,
// is metered again), its count for the mode its state calls for, its
// eligibility for traces, its class and its generated on-word. Under
// configureMu.
func (p *Probe) wire() {
	s := p.State()
	if s == Sampled && (engine.gated || engine.hotspot == nil) ||
		s == Untimed && (engine.gated || engine.hotspot == nil && engine.untimed == nil) ||
		s == Sampled && engine.sample <= 0 {
		if s == Sampled {
			sampledProbes.Add(-1)
		}
		p.state.Store(uint32(Enabled))
		s = Enabled
	}
	switch {
	case s.metered() && engine.tracepoint != nil:
		p.count.reset(engine.tracepoint.Sample, procSpread())
	case s.Disabled() && engine.spotcheck != nil:
		p.count.reset(engine.spotcheck.Interval, stripeCount)
	case s == Sampled:
		p.startSampling()
	}
	p.decideEligible()
	p.class.Store(classOf(s))
	p.short.Store(shortUnknown)
	if p.gate != nil {
		p.gate.Store(b2u32(classOf(s) != classOff))
	}
}

// resetGoroutines clears every goroutine's flowcheck countdown and count
// stripe, so that a new chain never reads what an earlier one left there:
// each goroutine takes its P's stripe again at its first refill.
func resetGoroutines() {
	gmu.Lock()
	defer gmu.Unlock()
	t := gtab.Load()
	for i := range t.entries {
		if g := t.entries[i].val.Load(); g != nil {
			g.acquire()
			g.flowLeft, g.flowState, g.stripe = 0, 0, 0
			g.release()
		}
	}
}

// Settings describes the wired chain, extension by extension, in chain
// order: "name(settings)".
func Settings() []string {
	var s []string
	if r := engine.hotspot; r != nil {
		s = append(s, "hotspot("+r.Settings()+")")
	}
	if r := engine.tracepoint; r != nil {
		s = append(s, "tracepoint("+r.Settings()+")")
	}
	if r := engine.flowcheck; r != nil {
		s = append(s, "flowcheck("+r.Settings()+")")
	}
	if r := engine.budget; r != nil {
		s = append(s, "budget("+r.Settings()+")")
	}
	if r := engine.spotcheck; r != nil {
		s = append(s, "spotcheck("+r.Settings()+")")
	}
	return s
}

// now reads the engine's clock: ticks.
func now() int64 {
	if m := engine.manual; m != nil {
		return m.Now()
	}
	return clock.Now()
}

// stampTSC says that stamp reads the TSC itself, as clock.Now does: the
// clock is the TSC (clock.Setup comes before Configure), not a manual one.
var stampTSC bool

// nanos converts a tick difference to ns, clamping a negative one to 0.
func nanos(start, end int64) int64 {
	if engine.manual != nil {
		return max(end-start, 0)
	}
	return clock.Nanos(clock.Elapsed(start, end))
}

// quick is what begin's assembly leaf reads of the chain: which gates a
// firing of a metered probe outside a trace runs.
var quick quickPath

type quickPath struct {
	mode uintptr
}

// Modes of quickPath.
const (
	modeNone    = iota // the engine is off: every class is classOff, and the mode is never read
	modeUngated        // no trace gate: every firing of a metered probe is metered
	modeFlow           // flowcheck: the goroutine's countdown
	modeTrace          // tracepoint: the probe's striped count
	modeBoth           // both, flowcheck's first
)
