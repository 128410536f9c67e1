// Package live serves the performance model of a running program over
// HTTP. It is opt-in: a program asks for it with one blank import
//
//	import _ "github.com/meterio/meter/live"
//
// (meterinject -live adds it to package main) and runs with
// METER_HTTP=host:port. Only such a program links net/http; the runtime's
// own packages never import it. It then serves, on that address:
//
//	/debug/meter/            the current model as the page meter report draws
//	                         (?refresh=N reloads it every N seconds)
//	/debug/meter/model.csv   the model as METER_EXPORT_CSV writes it
//	/debug/meter/profile     the model and the traced call paths as a pprof
//	                         profile: go tool pprof http://host:port/debug/meter/profile
//	/debug/meter/chain       the chain's extensions, settings and counters, as
//	                         "key: value" text, or JSON with ?format=json or
//	                         Accept: application/json
//
// The server is a server of its own, on its own mux: nothing is added to
// http.DefaultServeMux, so a program's public server never shows the
// model unasked. A program that would rather serve the page on its own
// server mounts Handler at /debug/meter/.
//
// The runtime's start-up line on standard error (probe.Main, at the start
// of main) says where the page is: "meter: …; live page at
// http://127.0.0.1:41234/debug/meter/", with the port the system picked
// for port 0 (METER_HTTP=127.0.0.1:0). The page has no authentication:
// when it listens beyond loopback (an empty host, :6060, listens on every
// interface) the line warns that anyone who can reach the port reads the
// model, which names the program's functions. An address that cannot be
// listened on is reported in one line, and the program goes on without
// the page.
//
// The page is as of each request: every request takes a snapshot of the
// model (meter.Take, which does not stop the program). The call paths of
// the flame graph and of /profile are collected while a trace gate is on
// (tracepoint or flowcheck) and METER_HTTP or METER_EXPORT_PPROF is set
// (a Handler mounted on the program's own server, with METER_HTTP unset,
// has them with METER_EXPORT_PPROF only). Its headline counts each entry
// probe's firings once, from those paths (see report.Coverage); without
// them it gives a range. The share of the run the model covers is taken against
// the time since this package was initialised, at the program's start,
// and the process's CPU time where the system reports it (getrusage).
package live
