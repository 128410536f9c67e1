package probe

import (
	"reflect"
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
// word, 0 when End has nothing to do.
type Firing = meter.Firing

// Unmetered returns the firing of a call that is not metered, 0: what
// generated code declares its firing variable with, for Begin to fill.
// (A declaration that names the type would need the probe package, or a
// type alias, which a module on a go line before 1.9 cannot have.)
func (p *Probe) Unmetered() Firing { return 0 }

// On reports whether p's on-word is set: the test generated code makes
// before Begin, in an expression of the function's own,
//
//	meter__f := meter__probes[3].Unmetered()
//	_ = meter__probes[3].On() && meter__probes[3].Begin(&meter__f)
//
// so that a disabled probe costs the load of its on-word and a branch, and
// the branch, with the statement's line, stands for On's inline mark: a
// test inside a call's own body leaves that mark as a NOP in every firing,
// disabled ones included. An expression, not an if statement, so that
// coverage sees no block of the probe's own. (On is written out in on.go
// and on_race.go: a plain load, or an atomic one under the race detector.)

// Begin starts a firing into *f, a variable of the instrumented function's
// own, after On said the probe is on: the engine counts the firing and
// decides whether to meter it (meter.Probe.Begin). It reports whether End
// has anything to do with the firing (*f != 0): a function with defers
// of its own defers End only then,
//
//	meter__f := meter__probes[4].Unmetered()
//	if meter__probes[4].On() && meter__probes[4].Begin(&meter__f) {
//		defer meter__probes[4].End(&meter__f)
//	}
//
// Taking the firing's address keeps it in memory, out of the registers:
// in a function whose loops need every register, a firing value kept in
// one for End across the body costs more than the probe's own
// instructions (docs/meterinject.md has the measurements). f does not
// escape: the firing stays on the caller's stack.
func (p *Probe) Begin(f *Firing) bool {
	*f = p.m.Begin()
	return *f != 0
}

// End ends the firing *f, one that Begin began, on the same goroutine,
// before the function returns, if it is not 0. Generated code calls it
// before each return, after the results are evaluated, so that no frame
// is added between the function and its callers, in an expression of its
// own,
//
//	_ = meter__f != 0 && meter__probes[3].End(&meter__f)
//
// so that a firing that is not metered costs a compare of memory and a
// branch, on the statement's line (no inline mark's NOP); it returns true,
// for that expression. Where a branch would cost more than a call (an exit
// reached straight from a condition whose && or || calls a function: the
// compiler's short circuit of that condition needs a successor that
// returns without branching; see meterinject's exits.go), generated code
// calls End alone, and the engine's End tests *f. A function with defers
// of its own defers End (see Begin).
func (p *Probe) End(f *Firing) bool {
	p.m.End(f)
	return true
}

// Mark marks the point right after a go statement of the function's own
// body, in the firing *f, one that Begin began, if it is not 0: the
// engine begins a new stretch of its own time there (meter.Probe.Mark),
// so that the CPU time of starting goroutines stays out of the stretch in
// which the function may then wait for them. Generated code calls it in
// an expression of its own, after the go statement, on a line of its own,
//
//	_ = meter__f != 0 && meter__probes[3].Mark(&meter__f)
//
// and returns true, for that expression.
func (p *Probe) Mark(f *Firing) bool {
	p.m.Mark(f)
	return true
}

// Wait and Woke bracket a statement of the function's own body that may
// block (a channel send or receive, a select, a range over a channel, a
// lock, a sleep), in the firing *f, if it is not 0: where the goroutine
// parks there, the engine leaves the wait out of the function's own time
// and keeps the time before it and after it (meter.Probe.Wait). Generated
// code calls them as it calls Mark, each on a line of its own,
//
//	_ = meter__f != 0 && meter__probes[3].Wait(&meter__f)
//	v := <-in
//	_ = meter__f != 0 && meter__probes[3].Woke(&meter__f)
//
// and they return true, for that expression.
func (p *Probe) Wait(f *Firing) bool {
	p.m.Wait(f)
	return true
}

// Woke: see Wait.
func (p *Probe) Woke(f *Firing) bool {
	p.m.Woke(f)
	return true
}

// Panicking marks the moment a panic is done with a function that calls
// recover itself (a deferred closure that recovers), where the goroutine
// is panicking (meter.Panicking): the function that panicked, metered,
// then keeps its work up to the panic and the deferred calls that ran on
// top of it. Generated code defers it first in such a function, whatever
// the probe's state, so that it runs as the function returns,
//
//	defer meter__probes[5].Panicking()
//
// and it returns true (earlier versions called it in an expression of its
// own, _ = meter__probes[5].Panicking(), first in the function).
func (p *Probe) Panicking() bool {
	meter.Panicking()
	return true
}

// Where the compiler leaves Begin a call of its own (in a closure made by
// an inlined function), the engine must know Begin's code to find the
// instrumented function beyond it.
func init() { meter.NoteBeginShim(reflect.ValueOf((*Probe).Begin).Pointer()) }

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
		// The on-word last: a goroutine that a package variable's
		// initialiser started may be calling the probe's function (on.go).
		m := meter.NewProbe(names[i], nil)
		probes[i].m = m
		m.SetGate(&probes[i].on)
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
