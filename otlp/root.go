package otlp

import (
	"context"
	"encoding/binary"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
)

func init() { meter.SetRootHook(roots) }

// Attribute keys of a root span's request: OpenTelemetry's semantic
// conventions for HTTP servers and RPC, which Jaeger and Tempo show.
const (
	AttrHTTPMethod = "http.request.method"       // GET, POST, ...
	AttrURLPath    = "url.path"                  // the request's path
	AttrHTTPRoute  = "http.route"                // the ServeMux pattern that matched, when there is one
	AttrHTTPStatus = "http.response.status_code" // int
	AttrRPCSystem  = "rpc.system"                // "grpc"
	AttrRPCService = "rpc.service"               // package.Service
	AttrRPCMethod  = "rpc.method"                // Method
)

// maxRequests bounds the requests remembered for the traces that have
// them: a joined goroutine's part that comes after that many later traced
// requests gets the meter trace's own ids.
const maxRequests = 4096

// roots is the meter.RootHook this package registers: at the start of a
// trace whose root function has a context or a request, it keeps the
// caller's span context and the request, by meter trace id, for the
// exporter; at the root's end, the response status. Only traced requests
// reach it.
var roots = &requests{byID: map[uint64]*request{}}

type requests struct {
	mu   sync.Mutex
	byID map[uint64]*request
	ring [maxRequests]uint64 // ids in the order they came, to forget the oldest
	next int
	free []*request
}

// request is what a traced request's root span carries.
type request struct {
	view requestView
	w    any // the handler's http.ResponseWriter, until the root ends
}

// requestView is a request as the exporter reads it, copied.
type requestView struct {
	parentTrace [16]byte
	parentSpan  [8]byte
	hasParent   bool
	server      bool // the root span is this process's span of the request: kind server
	method      string
	path        string
	route       string
	status      int
	rpcService  string
	rpcMethod   string
}

var _ meter.RootHook = (*requests)(nil)

// Started records what the trace's root span carries: the span context of
// ctx (for an HTTP handler, its request's), or else of the request's W3C
// traceparent header or gRPC metadata, and the request.
func (h *requests) Started(id uint64, ctx context.Context, w, r any) {
	var v requestView
	req, _ := r.(*http.Request)
	if req != nil {
		if ctx == nil {
			ctx = req.Context()
		}
		v.server = true
		v.method, v.path, v.route = req.Method, req.URL.Path, req.Pattern
	}
	var sc trace.SpanContext
	if ctx != nil {
		sc = trace.SpanContextFromContext(ctx)
		if full, ok := grpc.Method(ctx); ok {
			v.server = true
			v.rpcService, v.rpcMethod = splitMethod(full)
			if md, ok := metadata.FromIncomingContext(ctx); ok && !sc.IsValid() {
				sc = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(ctx, metadataCarrier(md)))
			}
		}
	}
	if req != nil && !sc.IsValid() && req.Header.Get("traceparent") != "" {
		sc = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(req.Header)))
	}
	if sc.IsValid() {
		v.parentTrace, v.parentSpan, v.hasParent = sc.TraceID(), sc.SpanID(), true
		// Under a span of this process (otelhttp's, say), the root is
		// one step of that server span; under a remote one, or none, it
		// is the server span.
		v.server = v.server && sc.IsRemote()
	}
	if !v.server && !v.hasParent && v.rpcService == "" {
		return // nothing to add to the meter trace's own ids
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.take(id)
	q.view, q.w = v, w
}

// Ended records the response status the handler wrote.
func (h *requests) Ended(id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.byID[id]; q != nil && q.w != nil {
		q.view.status = statusOf(q.w)
		q.w = nil
	}
}

// take returns the entry for id, forgetting the oldest one when the ring
// is full. Under mu.
func (h *requests) take(id uint64) *request {
	if old := h.ring[h.next]; old != 0 {
		if q := h.byID[old]; q != nil {
			delete(h.byID, old)
			*q = request{}
			h.free = append(h.free, q)
		}
	}
	h.ring[h.next] = id
	h.next = (h.next + 1) % maxRequests
	var q *request
	if n := len(h.free); n > 0 {
		q, h.free = h.free[n-1], h.free[:n-1]
	} else {
		q = &request{}
	}
	h.byID[id] = q
	return q
}

// view copies the request of trace id, if it has one.
func (h *requests) view(id uint64) (requestView, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.byID[id]; q != nil {
		return q.view, true
	}
	return requestView{}, false
}

// splitMethod splits a gRPC full method, "/package.Service/Method".
func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return full, ""
}

// metadataCarrier reads gRPC metadata as a propagation carrier.
type metadataCarrier metadata.MD

func (c metadataCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}
func (c metadataCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }
func (c metadataCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// statusOf returns the status a handler's http.ResponseWriter wrote:
// net/http's own writer keeps it in a field, as most middleware's
// wrappers do, and the wrappers that follow http.ResponseController's
// convention (Unwrap) lead to the writer beneath. A handler that wrote
// nothing gets 200, which net/http sends for it.
func statusOf(w any) int {
	for range 8 {
		if s := statusField(w); s != 0 {
			return s
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return http.StatusOK
}

// statusFields caches, by writer type, the index of its status field, or
// -1.
var statusFields sync.Map // reflect.Type → int

func statusField(w any) int {
	v := reflect.ValueOf(w)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	t := v.Elem().Type()
	i, ok := statusFields.Load(t)
	if !ok {
		idx := -1
		for k := 0; k < t.NumField() && idx < 0; k++ {
			f := t.Field(k)
			switch strings.ToLower(f.Name) {
			case "status", "statuscode", "code":
				if f.Type.Kind() == reflect.Int {
					idx = k
				}
			}
		}
		i = idx
		statusFields.Store(t, i)
	}
	if i.(int) < 0 {
		return 0
	}
	s := int(v.Elem().Field(i.(int)).Int())
	if s < 100 || s > 999 {
		return 0
	}
	return s
}

// ids is what the encoder writes of a span beyond export.Span: its trace,
// span and parent ids, its kind, and for a root span its request.
type ids struct {
	trace        [16]byte
	span, parent [8]byte
	hasParent    bool
	kind         int32
	req          *requestView // on a root span with a request; nil otherwise
}

// resolver finds each span's ids, reading the request table once per
// trace of a batch (spans come grouped by trace).
type resolver struct {
	table *requests
	last  uint64
	have  bool
	ok    bool
	view  requestView
}

// of returns the ids of s.
func (r *resolver) of(s *export.Span) ids {
	if r.table != nil && (!r.have || r.last != s.Trace) {
		r.view, r.ok = r.table.view(s.Trace)
		r.last, r.have = s.Trace, true
	}
	var x ids
	x.kind = spanKindInternal
	salt := spanSalt
	if r.table != nil && r.ok && r.view.hasParent {
		// A trace under a caller's span takes the caller's trace id; its
		// span ids mix in the meter trace id, so that two meter traces
		// under one caller's trace never share one.
		x.trace = r.view.parentTrace
		salt ^= uint32(s.Trace * 0x9E3779B97F4A7C15 >> 32)
	} else {
		binary.BigEndian.PutUint64(x.trace[0:], traceSalt)
		binary.BigEndian.PutUint64(x.trace[8:], s.Trace)
	}
	binary.BigEndian.PutUint32(x.span[0:], salt)
	binary.BigEndian.PutUint32(x.span[4:], uint32(s.Index)+1)
	switch {
	case s.Parent >= 0:
		binary.BigEndian.PutUint32(x.parent[0:], salt)
		binary.BigEndian.PutUint32(x.parent[4:], uint32(s.Parent)+1)
		x.hasParent = true
	case r.table != nil && r.ok:
		if r.view.hasParent {
			x.parent, x.hasParent = r.view.parentSpan, true
		}
		if r.view.server {
			x.kind = spanKindServer
		}
		x.req = &r.view
	}
	return x
}
