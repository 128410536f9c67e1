package probe

import (
	"sync"
	"sync/atomic"

	"github.com/meterio/meter/meter"
)

// Probe is one instrumented function, as generated code declares it: an
// element of a package-level array, so that On is one load from a fixed
// address. The zero Probe is off; Register switches it on.
type Probe struct {
	on atomic.Uint32
	m  *meter.Probe
}

// Firing is one call of an instrumented function; end it with End.
type Firing = meter.Firing

// On reports whether a firing of p may be metered. It is one load: the
// generated code tests it before anything else, so a disabled probe costs a
// load and a branch.
func (p *Probe) On() bool { return p.on.Load() != 0 }

// Begin starts a firing. Generated code calls it as
//
//	if probes[i].On() {
//		if f := probes[i].Begin(); f.Active() { defer f.End() }
//	}
//
// Begin on an unregistered Probe returns a firing that does nothing.
func (p *Probe) Begin() Firing {
	if p.m == nil {
		return Firing{}
	}
	return p.m.Begin()
}

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
	for i := range probes {
		probes[i].m = meter.NewProbe(names[i], &probes[i].on)
	}
}

// End ends a firing that Begin returned on the same goroutine. Generated
// code calls it before each return of the function, after the results are
// evaluated:
//
//	meter__f := probes[i].Begin()
//	...
//	probes[i].End(meter__f)
//	return
//
// so that no frame is added between the function and its callers. End of
// a firing that is not metered does nothing.
func (p *Probe) End(f Firing) {
	if f.Active() {
		f.End()
	}
}

// Roots marks probes[i] for each i in idx as the entry of a unit of work
// (a request handler, a goroutine's function): where traces start by
// default. Generated registration files call it after Register.
func Roots(probes []Probe, idx ...int) {
	for _, i := range idx {
		if m := probes[i].m; m != nil {
			m.SetRoot()
		}
	}
}
