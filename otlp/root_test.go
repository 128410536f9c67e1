package otlp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

var (
	callerTrace = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	callerSpan  = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func viewOf(t *testing.T, id uint64) requestView {
	t.Helper()
	v, ok := roots.view(id)
	if !ok {
		t.Fatalf("no request kept for trace %d", id)
	}
	return v
}

// A context with a span of this process: the trace is its child, and its
// root is not the server span.
func TestRootUnderTheContextsSpan(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: callerTrace, SpanID: callerSpan, TraceFlags: trace.FlagsSampled})
	roots.Started(101, trace.ContextWithSpanContext(context.Background(), sc), nil, nil)
	v := viewOf(t, 101)
	if !v.hasParent || v.parentTrace != callerTrace || v.parentSpan != callerSpan || v.server {
		t.Fatalf("view %+v", v)
	}
	// A context with no span and no request adds nothing.
	roots.Started(102, context.Background(), nil, nil)
	if _, ok := roots.view(102); ok {
		t.Fatalf("a trace with nothing to add was kept")
	}
}

// An HTTP request with a W3C traceparent and no middleware: the root is
// the server span, a child of the remote caller, and carries the method,
// path, route and the status the handler wrote.
func TestRootOfAnHTTPRequest(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		roots.Started(103, nil, w, r)
		w.WriteHeader(http.StatusTeapot)
		roots.Ended(103)
	})
	mux.HandleFunc("GET /plain", func(w http.ResponseWriter, r *http.Request) {
		roots.Started(104, nil, w, r)
		w.Write([]byte("ok"))
		roots.Ended(104)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/items/7", nil)
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	v := viewOf(t, 103)
	if !v.hasParent || v.parentTrace != callerTrace || v.parentSpan != callerSpan || !v.server {
		t.Fatalf("parent: %+v", v)
	}
	if v.method != "GET" || v.path != "/items/7" || v.route != "GET /items/{id}" || v.status != http.StatusTeapot {
		t.Fatalf("request: %+v", v)
	}
	resp, err = http.Get(srv.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := viewOf(t, 104); v.hasParent || !v.server || v.status != http.StatusOK || v.path != "/plain" {
		t.Fatalf("request with no caller: %+v", v)
	}
}

type methodStream struct{ grpc.ServerTransportStream }

func (methodStream) Method() string { return "/helloworld.Greeter/SayHello" }

// A gRPC method's context: the full method, and the caller's traceparent
// from the incoming metadata.
func TestRootOfAGRPCCall(t *testing.T) {
	ctx := grpc.NewContextWithServerTransportStream(context.Background(), methodStream{})
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("traceparent", traceparent))
	roots.Started(105, ctx, nil, nil)
	v := viewOf(t, 105)
	if v.rpcService != "helloworld.Greeter" || v.rpcMethod != "SayHello" || !v.server || v.parentTrace != callerTrace {
		t.Fatalf("view %+v", v)
	}
}

// The table forgets the oldest requests, and keeps its size.
func TestRootTableIsBounded(t *testing.T) {
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: callerTrace, SpanID: callerSpan}))
	for i := uint64(0); i < 2*maxRequests; i++ {
		roots.Started(1<<50+i, ctx, nil, nil)
	}
	if _, ok := roots.view(1 << 50); ok {
		t.Fatalf("the oldest request is still kept")
	}
	if _, ok := roots.view(1<<50 + 2*maxRequests - 1); !ok {
		t.Fatalf("the newest request is not kept")
	}
	roots.mu.Lock()
	n := len(roots.byID)
	roots.mu.Unlock()
	if n > maxRequests {
		t.Fatalf("%d requests kept, at most %d", n, maxRequests)
	}
}
