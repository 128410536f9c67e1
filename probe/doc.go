// Package probe is the API that instrumented code calls.
//
// meterinject declares, in each instrumented package, a package-level array
// of Probe and a generated file whose init calls Register with the probes'
// names (as the Go toolchain names the functions in stack traces). Each
// instrumented function tests its probe with On, one load from a fixed
// address, before anything else, and only then begins a firing:
//
//	if probes[3].On() {
//		if f := probes[3].Begin(); f.Active() {
//			defer f.End()
//		}
//	}
//
// (or the metered-twin shape that meterinject generates by default; see
// docs/meterinject.md). A disabled probe therefore costs one load and one
// branch. A zero Probe is off: firings before registration (from package
// variable initialisers) are simply not metered.
//
// The first Register reads every METER_* property (see internal/env and
// DESIGN.md), selects the clock, and wires the chain of extensions. A bad
// value prints one line on standard error and the default is used. With
// METER_ENABLED=false no probe is ever switched on.
//
// Shutdown, which meterinject calls when main returns, writes the exports a
// last time; with METER_EXPORT_INTERVAL they are also written periodically.
// A program that leaves through os.Exit skips it; call Shutdown first.
package probe
