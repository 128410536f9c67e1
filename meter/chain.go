package meter

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// Unlimited is the allowance of a probe whose typical time is not known yet.
const Unlimited = math.MaxInt64

// Gate decides which firings outside any trace start one (tracepoint,
// flowcheck). A firing is offered to the gates only if its probe is eligible:
// not disabled, and some firing of it has already ended.
type Gate interface {
	// Start is called for every eligible firing outside a trace and
	// reports whether it starts a trace on g.
	Start(g *Goroutine, p *Probe) bool
	// Ended is called on g when a trace ends there.
	Ended(g *Goroutine)
}

// Countdown is a Gate whose common answer, "not yet", is a countdown the
// engine runs itself, so that a firing outside a trace costs a decrement
// and no call. For every offered firing the engine decrements the gate's
// word, and calls Expired only when the word falls to zero or below. Start
// must do the same by itself (decrement, then Expired at zero or below):
// the engine runs one countdown of each kind inline and asks any further
// one through Start. Per probe, the word is decremented atomically (it is
// shared by every goroutine firing the probe) and Expired sees the value
// its own decrement produced; per goroutine, the word is the goroutine's
// own. Configure zeroes every goroutine's words, and calls Registered, if
// the gate has it, for every probe, before any firing sees the new chain.
type Countdown interface {
	Gate
	// Countdown names the word: an index into Probe.Ext when perProbe,
	// otherwise into Goroutine.Ext.
	Countdown() (word int, perProbe bool)
	// Expired is called when an offered firing's decrement left the word
	// at left ≤ 0, and reports whether that firing starts a trace.
	Expired(g *Goroutine, p *Probe, left int64) bool
}

// Due is the common answer of a per-probe count that the engine runs down
// (a per-probe Countdown, the Spotter) and that comes due every n firings:
// given the value left that a firing's own decrement of w produced, zero or
// below, it reports whether that firing is the due one, and if so adds n
// back. The firing that takes the count to zero is due. Firings on other
// goroutines that decrement before it adds n back read below zero: they
// are counted, and one is due only if it lands on a further multiple of n,
// so exactly one firing in n is due however the decrements interleave.
func Due(w *atomic.Int64, left, n int64) bool {
	if -left%n != 0 {
		return false
	}
	w.Add(n)
	return true
}

// Registrar is a Gate that sets up each probe's words: Configure calls
// Registered for every probe registered so far, NewProbe for each new one.
type Registrar interface {
	Registered(p *Probe)
}

// Allowance gives a probe's budget: how many measurements one firing of it
// may make, itself included (budget). Unlimited means no cap.
type Allowance interface {
	Allowance(p *Probe) int64
}

// Judge sees every metered firing as it ends, with its inclusive and
// inherent ns, and may disable or re-enable the probe (hotspot, budget,
// spotcheck).
type Judge interface {
	Ended(p *Probe, inclusive, inherent int64)
}

// Reenabler is told when a disabled probe is enabled again, so it can
// reset what it keeps for the probe (hotspot gives back the initial balance).
type Reenabler interface {
	Reenabled(p *Probe)
}

// Spotter decides which firings of a disabled probe are metered anyway
// (spotcheck). Like a per-probe Countdown, its common answer is a count the
// engine runs itself: for every firing of a disabled probe the engine
// decrements the probe's word SpotWord atomically, and calls Spot, with the
// value its own decrement produced, only when that is zero or below. Spot
// reports whether that firing is due a spot check; meter says whether the
// engine will meter it if it is (it will not when the firing's trace is
// full or its ancestor's pool is empty), so that the spotter waits only
// for spot checks that happen. A Spotter that is a Registrar sets up each
// probe's word. It sees a disabled probe's firings only when the chain
// keeps gate words set (Chain.KeepGates).
type Spotter interface {
	SpotWord() int
	Spot(p *Probe, left int64, meter bool) bool
}

// Labeler labels a row of the model (hotspot labels hot probes).
type Labeler interface {
	Label(r *Row) string
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

// Sink receives the spans of traces.
type Sink interface {
	TraceStarted(g *Goroutine, root *Probe)
	// TraceSpans hands over spans of trace id (unique in the process).
	// A trace may come in several parts: spans that ended, handed over
	// while the root still runs (truncated: the trace outlived the export
	// interval or METER_TRACE_MAX), then the rest with final set. Runs on
	// the traced goroutine, or on the export goroutine for a goroutine
	// that has blocked; must not block, allocate or keep spans.
	TraceSpans(trace uint64, spans []Span, final, truncated bool)
}

// Extension is anything wired into the chain. Name and Settings describe it
// in the model's header.
type Extension interface {
	Name() string
	Settings() string
}

// Chain is what Configure wires: the extensions in the order DESIGN.md fixes.
type Chain struct {
	Enabled   bool // false: no probe is ever switched on
	Gates     []Gate
	Allowance Allowance
	Judges    []Judge
	Labelers  []Labeler
	Sink      Sink
	Spotter   Spotter
	TraceMax  int32
	// KeepGates leaves a disabled probe's gate word set, so that its
	// firings still reach Begin (spot checks count them there).
	KeepGates  bool
	Extensions []Extension
}

// engine is the configured chain, flattened for the hot path. It is written
// once by Configure, before probes are switched on, and only read after.
var engine struct {
	on     bool
	gating gating // what Begin does outside a trace
	// The gates, sorted for the hot path: at most one countdown per
	// goroutine (gword ≥ 0) and one per probe (pword ≥ 0) run inline;
	// every other gate is asked through gates.
	gword, pword   int
	gcount, pcount Countdown
	gates          []Gate
	all            []Gate // every gate, for Ended
	allowance      Allowance
	judges         []Judge
	labelers       []Labeler
	sink           Sink
	spotter        Spotter
	traceMax       int32
	sword          int // the spotter's word
	keepGates      bool
	exts           []Extension
}

// Configure installs the chain. Call it once, before the first firing; the
// probe package does so at the first registration. Probes already
// registered are switched on or off to match.
func Configure(c Chain) {
	engine.on = c.Enabled && Supported
	engine.all = c.Gates
	engine.gates = nil
	engine.gword, engine.pword = -1, -1
	engine.gcount, engine.pcount = nil, nil
	for _, gt := range c.Gates {
		cd, ok := gt.(Countdown)
		if !ok {
			engine.gates = append(engine.gates, gt)
			continue
		}
		switch w, perProbe := cd.Countdown(); {
		case perProbe && engine.pcount == nil:
			engine.pword, engine.pcount = w, cd
		case !perProbe && engine.gcount == nil:
			engine.gword, engine.gcount = w, cd
		default:
			engine.gates = append(engine.gates, gt) // a second of its kind: asked through Start
		}
	}
	switch {
	case len(c.Gates) == 0:
		engine.gating = ungated
	case engine.gates != nil:
		engine.gating = gatesToAsk
	case engine.pcount == nil:
		engine.gating = goroutineCountdown
	case engine.gcount == nil:
		engine.gating = probeCountdown
	default:
		engine.gating = bothCountdowns
	}
	engine.spotter = c.Spotter
	quick = quickPath{}
	if engine.on {
		switch engine.gating {
		case goroutineCountdown:
			quick.mode = 1
		case probeCountdown:
			quick.mode = 2
		case bothCountdowns:
			quick.mode = 3
		case ungated:
			quick.mode = 4
		}
		quick.goff = unsafe.Offsetof(Goroutine{}.Ext) + uintptr(max(engine.gword, 0)&(GoroutineWords-1))*8
		quick.poff = probeWord(engine.pword)
		if engine.spotter != nil {
			engine.sword = engine.spotter.SpotWord() & (ProbeWords - 1)
			quick.soff = probeWord(engine.sword)
		}
	}
	resetGoroutines()
	engine.allowance = c.Allowance
	engine.judges = c.Judges
	engine.labelers = c.Labelers
	engine.sink = c.Sink
	engine.traceMax = c.TraceMax
	if engine.traceMax <= 0 {
		engine.traceMax = math.MaxInt32
	}
	engine.keepGates = c.KeepGates
	engine.exts = c.Extensions
	for _, p := range Probes() {
		registered(p)
		if p.gate != nil {
			on := engine.on && (p.Disabled() == Enabled || engine.keepGates)
			p.gate.Store(b2u(on))
		}
	}
}

// quick is what begin's assembly leaf reads: which countdowns a firing
// outside a trace runs (mode 1 the goroutine's, 2 the probe's, 3 both;
// 4 none, the chain has no gate; 0 when the leaf must leave every firing
// to beginSlow), and the byte offsets of their words in Goroutine and
// Probe, and of the spotter's.
var quick quickPath

type quickPath struct {
	mode       uintptr
	goff, poff uintptr
	soff       uintptr // the spotter's word; 0 without one
}

func probeWord(w int) uintptr {
	return unsafe.Offsetof(Probe{}.Ext) + uintptr(max(w, 0)&(ProbeWords-1))*8
}

// gating sorts chains by what a firing outside a trace needs.
type gating uint8

const (
	ungated            gating = iota // no trace gate: every firing goes on to budget
	goroutineCountdown               // one countdown per goroutine (flowcheck)
	probeCountdown                   // one countdown per probe (tracepoint)
	bothCountdowns                   // one of each
	gatesToAsk                       // some gate must see every firing
)

// registered lets the gates and the spotter set up p's words.
func registered(p *Probe) {
	for _, gt := range engine.all {
		if r, ok := gt.(Registrar); ok {
			r.Registered(p)
		}
	}
	if r, ok := engine.spotter.(Registrar); ok {
		r.Registered(p)
	}
}

// resetGoroutines zeroes every goroutine's extension words, so that a new
// chain never reads what an earlier one left there.
func resetGoroutines() {
	gmu.Lock()
	defer gmu.Unlock()
	t := gtab.Load()
	for i := range t.entries {
		if g := t.entries[i].val.Load(); g != nil {
			g.acquire()
			g.Ext = [GoroutineWords]int64{}
			g.release()
		}
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// Extensions returns the wired extensions, in chain order.
func Extensions() []Extension { return engine.exts }
