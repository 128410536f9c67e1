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
//		_ = meter__probes[3].On() && meter__probes[3].Start(&meter__f)
//		...
//		_ = meter__f != nil && meter__probes[3].Stop(&meter__f)
//	}
//
// or, in a function with defers of its own, with a deferred End. A disabled
// probe costs the compare of its on-word and a branch (On), and a compare
// of the firing and a branch at each exit; an exit where a branch would
// cost the user's condition before it its short circuit calls EndAt
// instead, which tests the firing inside the engine. A zero Probe is off: firings before registration (from package
// variable initialisers) are not metered.
//
// The first Register reads every METER_* property, selects the clock and
// wires the chain of extensions. A bad value prints one line on standard
// error and the default is used; a METER_ variable that is not a property
// prints one line naming the nearest one. All are read once; none needs a
// rebuild.
//
//	property                          default  meaning
//	METER_ENABLED                     true     false: every probe disabled, near-zero cost
//	METER_CLOCK                       auto     tsc, mono or auto (tsc where the TSC is invariant)
//	METER_HOTSPOT_ENABLED             true
//	METER_HOTSPOT_THRESHOLD           10       µs, inclusive: a firing at or above both thresholds is hot
//	METER_HOTSPOT_THRESHOLD_INHERENT  2        µs, inherent
//	METER_HOTSPOT_INITIAL             1000     starting credit balance: cold firings until disabled
//	METER_HOTSPOT_SAMPLE              100      a cold probe that is large in total, or a root, is sampled:
//	                                           metered in windows open 1/N of the time, counted in 4/N
//	                                           (0: disabled instead)
//	METER_HOTSPOT_SAMPLE_SHARE        0.05     %: its metered firings' inherent share of wall time to be sampled
//	METER_HOTSPOT_WINDOW              250      µs (10 or more): a sampling window's length, at least; the gaps scale
//	                                           with it, so the shares stay as SAMPLE sets them
//	METER_HOTSPOT_COST                2        %: a probe hot only on average is metered at every call while
//	                                           metering a firing costs at most this share of its own time per
//	                                           firing; sampled otherwise (0: no limit)
//	METER_BUDGET_ENABLED              false
//	METER_BUDGET_PERCENT              10       1..100: measurements one call may cause, as a share of its time
//	METER_BUDGET_UNIT                 1        µs charged per measurement
//	METER_TRACEPOINT_ENABLED          false
//	METER_TRACEPOINT_SAMPLE           100      every Nth firing of a probe starts a trace
//	METER_TRACEPOINT_INCLUDE          (roots)  regexp on probe names; unset: the request handlers and
//	                                           goroutine functions meterinject marks (all probes if none)
//	METER_FLOWCHECK_ENABLED           false
//	METER_FLOWCHECK_LOWER             0        a goroutine starts a trace after a gap of LOWER +
//	METER_FLOWCHECK_UPPER             100      a random number in [0, UPPER−LOWER) firings
//	METER_SPOTCHECK_ENABLED           false
//	METER_SPOTCHECK_INTERVAL          10000    every Nth firing of a disabled probe is metered
//	METER_TRACE_MAX                   10000    firings metered in one trace at most
//	METER_EXPORT_CSV                  (none)   path: the performance model, at exit and each interval
//	METER_EXPORT_PPROF                (none)   path: metered call paths as a pprof profile
//	METER_EXPORT_OTLP                 false    traces and the model over OTLP (needs the otlp import)
//	METER_EXPORT_INTERVAL             0        Go duration; 0: at exit only
//	METER_HTTP                        (off)    host:port: the live page (needs the live import; see package live)
//
// # Ending
//
// The exports are written when main returns (meterinject defers Shutdown in
// main), before the program leaves through os.Exit or log.Fatal in
// instrumented code (meterinject inserts Shutdown there), at each
// METER_EXPORT_INTERVAL, and on SIGTERM and SIGINT. Main, which meterinject
// calls at the start of main, catches those two signals: the model is
// written, and a program that does not handle them itself then dies of the
// signal, with the same exit status as without meter; one that handles
// them (through signal.Notify or signal.NotifyContext, which meterinject
// routes through Notify and NotifyContext here) keeps its own shutdown, and
// its model is written again when it ends. Whether the program handles a
// signal is decided as of its arrival: a shutdown that ends the program's
// handling (NotifyContext's stop) before the runtime has looked does not
// make the runtime end the process under it. A test binary, which has no
// main of the program's own, does not catch signals.
//
// When an export is configured, Main prints one line on standard error:
// how many probes in how many packages, the chain, and where the model
// goes. It is silent otherwise.
package probe
