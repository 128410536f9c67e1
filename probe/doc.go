// Package probe is the API that instrumented code calls.
//
// meterinject declares, in each instrumented package, a package-level array
// of Probe and a generated file whose init calls Register with the probes'
// names (as the Go toolchain names the functions in stack traces and
// profiles), and Roots with the request handlers and goroutine functions
// among them. Each instrumented function begins a firing first and ends it
// before each return, with no extra frame between it and its callers:
//
//	func handle(w http.ResponseWriter, r *http.Request) {
//		meter__f := meter__probes[3].Unmetered()
//		_ = meter__probes[3].On() && meter__probes[3].Begin(&meter__f)
//		...
//		_ = meter__f != 0 && meter__probes[3].End(&meter__f)
//	}
//
// or, in a function with defers of its own, with End deferred for a
// firing that has one to do:
//
//	meter__f := meter__probes[4].Unmetered()
//	if meter__probes[4].On() && meter__probes[4].Begin(&meter__f) {
//		defer meter__probes[4].End(&meter__f)
//	}
//
// A disabled probe costs the compare of its on-word and a branch (On), and
// a compare of the firing and a branch at each exit; an exit where a
// branch would cost the user's condition before it its short circuit
// calls End alone, meter__probes[3].End(&meter__f), which tests the firing
// inside the engine. Every other firing is
// counted, in a call of the engine's assembly leaf, and some are metered.
// A zero Probe is off: firings before registration (from package variable
// initialisers) are neither counted nor metered.
//
// The first Register reads every METER_* property, selects the clock and
// wires the chain of extensions. A bad value prints one line on standard
// error and the default is used; a METER_ variable that is not a property
// prints one line naming the nearest one. All are read once; none needs a
// rebuild.
//
//	property                           default  meaning
//	METER_ENABLED                      true     false: every probe disabled, a firing costs a load and a branch
//	METER_CLOCK                        auto     tsc, mono or auto (tsc where the TSC is invariant)
//	METER_HOTSPOT_ENABLED              true     false: every firing metered, but an untimed probe's (METER_HOTSPOT_UNTIMED) after its first thousands
//	METER_HOTSPOT_THRESHOLD            10       µs, inclusive: a firing at or above both thresholds is hot
//	METER_HOTSPOT_THRESHOLD_INHERENT   2        µs, inherent
//	METER_HOTSPOT_INITIAL              1000     starting credit: cold firings, each metered, before a probe is judged on its totals
//	METER_HOTSPOT_SAMPLE               100      a sampled probe's calls are all counted, about one in N metered; 0: no probe sampled
//	METER_HOTSPOT_SAMPLE_SHARE         0.05     %: a cold probe whose own time (with its waits inside calls) is below this share of the time it ran is disabled (never a root)
//	METER_HOTSPOT_COST                 2        %: a probe is metered at every call while that costs at most this share of its own time and waits; sampled otherwise (0: no limit)
//	METER_HOTSPOT_UNTIMED              2        a cold probe whose calls take less than N times what timing a call costs (at most 300 ns) is untimed: counted, never metered, hotspot on or off; 0: none
//	METER_BUDGET_ENABLED               false
//	METER_BUDGET_PERCENT               10       1..100: measurements one call may cause, as a share of its time
//	METER_BUDGET_UNIT                  1        µs charged per measurement
//	METER_TRACEPOINT_ENABLED           false
//	METER_TRACEPOINT_SAMPLE            100      every Nth firing of a probe outside a trace starts one
//	METER_TRACEPOINT_INCLUDE           (roots)  regexp on probe names that may start traces; unset: the roots meterinject marks (every probe if none)
//	METER_FLOWCHECK_ENABLED            false
//	METER_FLOWCHECK_LOWER              0        a goroutine starts a trace after a gap of LOWER
//	METER_FLOWCHECK_UPPER              100      + a random number in [0, UPPER−LOWER) firings
//	METER_SPOTCHECK_ENABLED            false
//	METER_SPOTCHECK_INTERVAL           10000    every Nth firing of a disabled probe is metered; a hot one enables the probe again
//	METER_TRACE_MAX                    10000    firings metered in one trace at most (≤ 100000)
//	METER_PPROF_LABELS                 false    label goroutines with the trace they run (an allocation per trace start)
//	METER_SAMPLER_INTERVAL             5000     µs, mean interval at which a thread of the process looks at which goroutines run: the CPU time of stretches left out as waits; 0: off
//	METER_EXPORT_CSV                   (none)   path: the performance model, at exit and each interval
//	METER_EXPORT_PPROF                 (none)   path: metered call paths as a pprof profile
//	METER_EXPORT_OTLP                  false    traces and the model over OTLP (needs the otlp import)
//	METER_EXPORT_INTERVAL              0        Go duration; 0: at exit only
//	METER_HTTP                         (off)    host:port: the live page (needs the live import)
//
// # Ending
//
// The exports are written when main returns (meterinject defers Shutdown in
// main), before the program leaves through os.Exit or log.Fatal in
// instrumented code (meterinject inserts Shutdown there), at each
// METER_EXPORT_INTERVAL, and on SIGTERM and SIGINT. Main, which meterinject
// calls at the start of main, catches those two signals when something is
// written at exit (a goroutine waiting for signals keeps the runtime from
// reporting a deadlock, so a program without exports keeps that report):
// the model is
// written, and a program that does not handle them itself then dies of the
// signal, with the same exit status as without meter; one that handles
// them (through signal.Notify or signal.NotifyContext, which meterinject
// routes through SignalNotify and SignalNotifyContext here) keeps its own
// shutdown, and its model is written again when it ends. Whether the program handles a
// signal is decided as of its arrival: a shutdown that ends the program's
// handling (NotifyContext's stop) before the runtime has looked does not
// make the runtime end the process under it. A test binary, which has no
// main of the program's own, does not catch signals.
//
// When an export is configured, Main prints one line on standard error:
// how many probes in how many packages, the chain, and where the model
// goes. It is silent otherwise.
package probe
