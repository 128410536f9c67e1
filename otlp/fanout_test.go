package otlp

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/meterio/meter/otlp/otlptest"
)

// Probe names of example/fanout, one per goroutine of a request: the
// handler, the goroutine of its go statement, the errgroup's, and the
// audit that outlives the request.
const (
	fanHandler = "main.(*server).fan"
	fanGo      = "main.(*server).fan.func1"
	fanGroup   = "main.(*server).lookup"
	fanAudit   = "main.(*server).audit"
	fanFetch   = "main.(*server).fetch"
)

// TestFanOut serves example/fanout, instrumented by meterinject -otlp,
// with tracepoint on, and reads what a real OTLP receiver gets: one trace
// per sampled request, holding the spans of the handler and of its three
// goroutines, each goroutine's first span a child of the handler's, the
// calls the handler waits for inside it in time; the root span carries the
// request. Wrapped in otelhttp's handler, each of those traces sits under
// otelhttp's server span, with its trace id.
func TestFanOut(t *testing.T) {
	if testing.Short() {
		t.Skip("instruments and builds a program")
	}
	svc, _, r := buildExample(t, "./fanout")

	const requests, sample = 300, 10
	for _, withOTel := range []bool{false, true} {
		t.Run(fmt.Sprintf("otelhttp=%v", withOTel), func(t *testing.T) {
			before := len(r.Spans())
			args := []string{}
			if withOTel {
				args = append(args, "-otelhttp")
			}
			cmd, url, stderr := startTraced(t, svc, args, r.GRPCAddr, sample, "OTEL_SERVICE_NAME=fanout")
			for i := 0; i < requests; i++ {
				resp, err := http.Get(url + "/fan?n=2")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: %s %s", i, resp.Status, body)
				}
			}
			cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("fanout after SIGTERM: %v; stderr:\n%s", err, stderr.String())
			}
			// The SDK's batch and meter's export are flushed at exit.
			spans := r.Spans()[before:]
			checkFanOut(t, spans, requests, sample, withOTel)
		})
	}
}

// checkFanOut checks the spans of one run of example/fanout.
func checkFanOut(t *testing.T, spans []otlptest.Span, requests, sample int, withOTel bool) {
	t.Helper()
	type key struct{ trace, span string }
	byID := map[key]otlptest.Span{}
	byTrace := map[string][]otlptest.Span{}
	for _, s := range spans {
		tid := fmt.Sprintf("%x", s.TraceId)
		byID[key{tid, fmt.Sprintf("%x", s.SpanId)}] = s
		byTrace[tid] = append(byTrace[tid], s)
	}
	parentOf := func(s otlptest.Span) (otlptest.Span, bool) {
		p, ok := byID[key{fmt.Sprintf("%x", s.TraceId), fmt.Sprintf("%x", s.ParentSpanId)}]
		return p, ok
	}
	traces := 0
	for tid, ss := range byTrace {
		var handler *otlptest.Span
		for i := range ss {
			if ss[i].Name == fanHandler && ss[i].Scope == ScopeName {
				if p, ok := parentOf(ss[i]); !ok || p.Scope != ScopeName {
					if handler != nil {
						t.Fatalf("trace %s has two handler roots", tid)
					}
					handler = &ss[i]
				}
			}
		}
		if handler == nil {
			continue // a trace that a goroutine's function started on its own
		}
		traces++
		// The request on the root.
		attrs := map[string]string{}
		for _, kv := range handler.Attributes {
			attrs[kv.Key] = kv.Value.String()
		}
		for k, v := range map[string]string{AttrHTTPMethod: "GET", AttrURLPath: "/fan", AttrHTTPRoute: "GET /fan", AttrHTTPStatus: "200"} {
			if !strings.Contains(attrs[k], v) {
				t.Errorf("trace %s: root attribute %s = %q, want %s", tid, k, attrs[k], v)
			}
		}
		// Under otelhttp's server span, or a root of its own.
		p, hasParent := parentOf(*handler)
		switch {
		case withOTel && (!hasParent || p.Scope == ScopeName || p.Kind.String() != "SPAN_KIND_SERVER"):
			t.Errorf("trace %s: handler root's parent %v, want otelhttp's server span", tid, p.Span)
		case !withOTel && len(handler.ParentSpanId) != 0:
			t.Errorf("trace %s: handler root has a parent %x", tid, handler.ParentSpanId)
		case !withOTel && handler.Kind.String() != "SPAN_KIND_SERVER":
			t.Errorf("trace %s: handler root of kind %s, want server", tid, handler.Kind)
		}
		// One first span for each goroutine, a child of the handler's.
		first := map[string]otlptest.Span{}
		for _, s := range ss {
			if s.Scope != ScopeName {
				continue
			}
			if p, ok := parentOf(s); ok && string(p.SpanId) == string(handler.SpanId) {
				first[s.Name] = s
			}
		}
		for _, name := range []string{fanGo, fanGroup, fanAudit} {
			s, ok := first[name]
			if !ok {
				t.Errorf("trace %s: no span of %s under the handler's; spans: %v", tid, name, names(ss))
				continue
			}
			if s.StartTimeUnixNano < handler.StartTimeUnixNano {
				t.Errorf("trace %s: %s starts before its parent", tid, name)
			}
			// The handler waits for lookup's return (errgroup's Done
			// follows it) and for fetch's (the go statement's closure
			// calls wg.Done after it). The closure's own span ends after
			// its deferred wg.Done, so the handler may end first.
			waited := s
			if name == fanGo {
				if waited, ok = child(ss, s, fanFetch); !ok {
					t.Errorf("trace %s: %s's span has no child fetch: %v", tid, name, names(ss))
					continue
				}
			}
			if name != fanAudit && waited.EndTimeUnixNano > handler.EndTimeUnixNano {
				t.Errorf("trace %s: %s, which the handler waits for, ends after it", tid, waited.Name)
			}
		}
		// The errgroup goroutine's span holds its callee's.
		if !hasChild(ss, first[fanGroup], "main.(*server).key") {
			t.Errorf("trace %s: lookup's span has no child key: %v", tid, names(ss))
		}
	}
	// One trace in every SAMPLE requests: whole rounds are exact, the
	// stripes of the count may hold up to one round each.
	if lo, hi := requests/sample-8, requests/sample; traces < lo || traces > hi {
		t.Errorf("%d traces of the handler for %d requests at 1 in %d, want %d to %d", traces, requests, sample, lo, hi)
	}
	t.Logf("%d spans, %d handler traces", len(spans), traces)
}

func hasChild(ss []otlptest.Span, parent otlptest.Span, name string) bool {
	_, ok := child(ss, parent, name)
	return ok
}

// child returns parent's child span called name.
func child(ss []otlptest.Span, parent otlptest.Span, name string) (otlptest.Span, bool) {
	for _, s := range ss {
		if s.Name == name && string(s.ParentSpanId) == string(parent.SpanId) && string(s.TraceId) == string(parent.TraceId) {
			return s, true
		}
	}
	return otlptest.Span{}, false
}

func names(ss []otlptest.Span) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}
