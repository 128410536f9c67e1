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
