package otlp

import (
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/meterio/meter/otlp/otlptest"
)

// TestGRPCRoot serves gRPC's health service from example/grpchealth,
// instrumented by meterinject -otlp, with tracepoint on at every call, and
// reads what a real OTLP receiver gets: each traced Check is a root span
// of kind server carrying the full method (rpc.system, rpc.service,
// rpc.method), under the caller's span that the call's traceparent
// metadata names, with its timed child inside it.
func TestGRPCRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("instruments and builds a program")
	}
	prog, _, r := buildExample(t, "./grpchealth")
	const calls = 20
	cmd := exec.Command(prog, "-n", fmt.Sprint(calls))
	cmd.Env = append(tracedEnv(r.GRPCAddr, 1), "OTEL_SERVICE_NAME=grpchealth")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("%d calls", calls)) {
		t.Fatalf("grpchealth: %v\n%s", err, out)
	}

	const (
		check      = "main.(*checker).Check"
		weigh      = "main.weigh"
		callerTID  = "4bf92f3577b34da6a3ce929d0e0e4736" // example/grpchealth's Traceparent
		callerSpan = "00f067aa0ba902b7"
	)
	roots := map[string]otlptest.Span{} // by span id
	var children []otlptest.Span
	for _, s := range r.Spans() {
		switch {
		case s.Scope != ScopeName:
		case s.Name == check:
			roots[hex.EncodeToString(s.SpanId)] = s
		case s.Name == weigh:
			children = append(children, s)
		}
	}
	// The first call ends before its probe may start a trace (a probe none
	// of whose firings has ended cannot): the others are traced.
	if len(roots) < calls-1 {
		t.Fatalf("%d traced Check roots, want %d at least", len(roots), calls-1)
	}
	for id, s := range roots {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value.GetStringValue()
		}
		for k, v := range map[string]string{AttrRPCSystem: "grpc", AttrRPCService: "grpc.health.v1.Health", AttrRPCMethod: "Check"} {
			if attrs[k] != v {
				t.Errorf("root %s: %s = %q, want %q", id, k, attrs[k], v)
			}
		}
		if s.Kind.String() != "SPAN_KIND_SERVER" {
			t.Errorf("root %s of kind %s, want server", id, s.Kind)
		}
		if tid, pid := hex.EncodeToString(s.TraceId), hex.EncodeToString(s.ParentSpanId); tid != callerTID || pid != callerSpan {
			t.Errorf("root %s in trace %s under span %s, want the caller's %s and %s", id, tid, pid, callerTID, callerSpan)
		}
	}
	t.Logf("%d Check roots, %d weigh spans", len(roots), len(children))
	inside := 0
	for _, c := range children {
		p, ok := roots[hex.EncodeToString(c.ParentSpanId)]
		if !ok {
			continue
		}
		inside++
		if c.StartTimeUnixNano < p.StartTimeUnixNano || c.EndTimeUnixNano > p.EndTimeUnixNano {
			t.Errorf("weigh [%d, %d] not inside its Check [%d, %d]", c.StartTimeUnixNano, c.EndTimeUnixNano, p.StartTimeUnixNano, p.EndTimeUnixNano)
		}
	}
	if inside < len(roots) {
		t.Errorf("%d weigh spans under the %d Check roots, want one each", inside, len(roots))
	}
}
