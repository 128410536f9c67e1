package probe

import (
	"context"

	"github.com/meterio/meter/meter"
)

// The request a trace starts for. Generated code gives the probe of a
// function that may start traces (a request handler, a gRPC method, a
// goroutine's function) and has a context.Context parameter, or a
// handler's http.ResponseWriter and *http.Request, to Within or Serving,
// once Begin said the firing is metered,
//
//	_ = meter__probes[3].On() && meter__probes[3].Begin(&meter__f) && meter__probes[3].Within(meter__f, ctx)
//
// or inside the conditional defer's block. Only a firing that starts a
// trace hands them on, to the hook a program built with -otlp registers
// (meter.RootHook): the trace becomes a child of the caller's span, and its
// root span carries the request. A firing that is not metered costs the
// test of Begin's result; a metered firing that starts no trace, one test
// more: nothing is stored, and the context is not read. The request is passed as any, so that a program links no
// net/http on the probe's account.

// Within hands ctx, the context.Context parameter of the function, to the
// root hook if the metered firing f started a trace. It returns true, for
// the expression above.
func (p *Probe) Within(f Firing, ctx context.Context) bool {
	if f.Starts() {
		meter.Within(f, ctx, nil, nil)
	}
	return true
}

// Serving hands w and r, the http.ResponseWriter and *http.Request
// parameters of an HTTP handler (either may be nil), to the root hook if
// the metered firing f started a trace. It returns true.
func (p *Probe) Serving(f Firing, w, r any) bool {
	if f.Starts() {
		meter.Within(f, nil, w, r)
	}
	return true
}
