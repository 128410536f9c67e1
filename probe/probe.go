package probe

import (
	"sync"
	"sync/atomic"

	"github.com/meterio/meter/meter"
)

// Probe is one instrumented function, as generated code declares it: an
// element of a package-level array, so that the test of its on-word is one
// load from a fixed address. The zero Probe is off; Register switches it on.
type Probe struct {
	on atomic.Uint32
	m  *meter.Probe
}

// Firing is one call of an instrumented function, from Begin to End: one
// word, nil when End has nothing to do.
type Firing = meter.Firing

// Begin starts a firing. It is inlined into the instrumented function: a
// disabled probe costs the load of its on-word and a branch; otherwise the
// engine decides (meter.Probe.Begin). Begin on an unregistered Probe
// returns a firing that does nothing.
func (p *Probe) Begin() Firing {
	if p.off() {
		return nil
	}
	return p.m.Begin()
}

// End ends a firing that Begin, Start or BeginAt started, on the same goroutine,
// before the function returns: generated code calls it before each return,
// after the results are evaluated, so that no frame is added between the
// function and its callers (or defers it, in a function with defers of its
// own). End of a firing that is not metered is a test and a branch.
func (p *Probe) End(f Firing) {
	if f != nil {
		p.m.End(f)
	}
}

// Unmetered returns the firing of a call that is not metered, nil: what
// generated code declares its firing variable with, for Start to fill.
// (A declaration that names the type would need the probe package, or a
// type alias, which a module on a go line before 1.9 cannot have.)
func (p *Probe) Unmetered() Firing { return nil }

// BeginAt starts a firing into *f, a variable the function declared for
// it (nil), and End(f) ends it: what sources instrumented by an earlier
// meterinject call, and what On and Start do in two steps. A disabled
// probe costs the load of its on-word and a branch at BeginAt, which then
// leaves *f nil, and a load and a test of f at End. Taking the firing's
// address keeps it out of the registers: in a function whose loops need
// every register, a firing value kept in one for End across the body
// costs more than the probe's own instructions (docs/meterinject.md has
// the measurements). BeginAt keeps f on the caller's stack.
func (p *Probe) BeginAt(f *Firing) {
	if p.off() {
		return
	}
	*f = p.m.Begin()
}

// On reports whether p's on-word is set: the test generated code makes
// before Start, in an expression of the function's own,
//
//	meter__f := meter__probes[3].Unmetered()
//	_ = meter__probes[3].On() && meter__probes[3].Start(&meter__f)
//
// which is BeginAt(&meter__f) with the test in the caller's code: the
// branch then has the statement's line, and stands for On's inline mark,
// which BeginAt leaves as a NOP in every firing, disabled ones included.
// An expression, not an if statement, so that coverage sees no block of
// the probe's own. (On is off's negation, written out in off.go and
// off_race.go: a call of off in its body would leave off's inline mark as
// that NOP instead.)

// Start starts a firing into *f, after On said the probe is on: the
// engine decides whether to meter it. It returns true, for the expression
// On documents.
func (p *Probe) Start(f *Firing) bool {
	*f = p.m.Begin()
	return true
}

// Stop ends the firing *f, one that Start began, on the same goroutine,
// before the function returns: generated code calls it before each return
// in an expression of its own,
//
//	_ = meter__f != nil && meter__probes[3].Stop(&meter__f)
//
// so that a firing that is not metered costs a compare of memory and a
// branch, on the statement's line (no inline mark's NOP), where End(f)
// loads the firing and then tests it. It returns true, for that
// expression.
func (p *Probe) Stop(f *Firing) bool {
	p.m.EndAt(f)
	return true
}

// EndAt ends the firing *f, one that Start or BeginAt began, on the same
// goroutine, before the function returns, as Stop does, with the test of
// *f inside the engine's call: no branch in the generated code. Generated
// code calls it where a branch would cost more than the call (an exit
// reached straight from a condition whose && or || calls a function:
// the compiler's short circuit of that condition needs a successor that
// returns without branching; see meterinject's exits.go), and sources
// instrumented by an earlier meterinject call at every exit.
func (p *Probe) EndAt(f *Firing) { p.m.Exit(f) }

// Name returns the probe's name, or "" before registration.
func (p *Probe) Name() string {
	if p.m == nil {
		return ""
	}
	return p.m.Name()
}

var setupOnce sync.Once

// Register names a package's probes, once, from the package's generated
// registration file: probes[i] is the function names[i]. The first call
// reads the METER_* properties and wires the chain.
func Register(probes []Probe, names ...string) {
	setupOnce.Do(setup)
	if len(names) != len(probes) {
		panic("probe: Register needs one name per probe")
	}
	packages.Add(1)
	for i := range probes {
		probes[i].m = meter.NewProbe(names[i], &probes[i].on)
	}
}

// Roots marks probes[i], for each i in idx, as the entry of a unit of work
// (a request handler, a goroutine's function): where traces start by
// default. Generated registration files call it after Register.
func Roots(probes []Probe, idx ...int) {
	for _, i := range idx {
		if m := probes[i].m; m != nil {
			m.SetRoot()
		}
	}
}
