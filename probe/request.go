package probe

import (
	"context"

	"github.com/meterio/meter/meter"
)

// The request a trace starts for. Generated code gives the probe of a
// function that may start traces (a request handler, a gRPC method, a
// goroutine's function) and has a context.Context parameter, or a
// handler's http.ResponseWriter and *http.Request, to Within or Serving,
// after StartMetered,
//
//	_ = meter__probes[3].On() && meter__probes[3].StartMetered(&meter__f) && meter__probes[3].Within(meter__f, ctx)
//
// or inside the conditional defer's block. Only a firing that starts a
// trace hands them on, to the hook a program built with -otlp registers
// (meter.RootHook): the trace becomes a child of the caller's span, and its
// root span carries the request. A firing that is not metered costs one
// test more than Start, of the firing Begin returned; a metered firing
// that starts no trace, one more: nothing is stored, and the context is
// not read. The request is passed as any, so that a program links no
// net/http on the probe's account.

// StartMetered is Start, reporting whether the firing is metered: only
// then does the expression go on to Within or Serving.
func (p *Probe) StartMetered(f *Firing) bool {
	*f = p.m.Begin()
	return *f != nil
}

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
