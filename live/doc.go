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
// With port 0 (METER_HTTP=127.0.0.1:0) the system picks a free port and
// one line on standard error says which. An address that cannot be
// listened on is reported in one line, and the program goes on without
// the page. An empty host (:6060) listens on every interface: the model
// names the program's functions, so prefer 127.0.0.1 outside a trusted
// network.
//
// The page is as of each request: every request takes a snapshot of the
// model (meter.Take, which does not stop the program). The call paths of
// the flame graph and of /profile are collected only while a pprof export
// is configured (METER_EXPORT_PPROF); without it the profile holds the
// model alone. The share of the run the model covers is taken against
// the time since this package was initialised, at the program's start,
// and the process's CPU time where the system reports it (getrusage).
package live
