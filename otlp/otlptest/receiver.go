// Package otlptest is a real OTLP receiver for tests: a gRPC server on the
// official OTLP collector service definitions and an HTTP/protobuf handler,
// both on loopback, keeping (or only counting) what they receive. Tests
// check what goes over the wire with it, not what a mock of an exporter was
// told. It also has a listener that refuses every connection, for tests of
// a collector that is down.
package otlptest

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // OTEL_EXPORTER_OTLP_COMPRESSION=gzip over gRPC
	"google.golang.org/protobuf/proto"
)

// Receiver listens for OTLP traces and metrics over gRPC and HTTP on
// loopback.
type Receiver struct {
	GRPCAddr string // host:port of the gRPC server
	HTTPAddr string // host:port of the HTTP/protobuf server

	keep  bool
	spans atomic.Int64 // spans received, kept or not

	grpc *grpc.Server
	http *http.Server
	wg   sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever something arrives
	traces  []*tracepb.ResourceSpans
	metrics []*metricspb.ResourceMetrics
	calls   map[string]int // requests by transport and signal: "grpc/traces"
}

// Option configures a Receiver.
type Option func(*Receiver)

// CountOnly makes the receiver decode what it receives and count the
// spans, without keeping them: for load tests, whose spans would fill the
// memory. Spans and Metrics then return nothing; SpanCount and Calls work.
func CountOnly() Option { return func(r *Receiver) { r.keep = false } }

// Start starts both servers on 127.0.0.1, on ports the kernel picks.
func Start(opts ...Option) (*Receiver, error) {
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gl.Close()
		return nil, err
	}
	r := &Receiver{
		GRPCAddr: gl.Addr().String(),
		HTTPAddr: hl.Addr().String(),
		keep:     true,
		grpc:     grpc.NewServer(),
		changed:  make(chan struct{}),
		calls:    map[string]int{},
	}
	for _, o := range opts {
		o(r)
	}
	colltrace.RegisterTraceServiceServer(r.grpc, traceService{r: r})
	collmetrics.RegisterMetricsServiceServer(r.grpc, metricsService{r: r})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.httpTraces)
	mux.HandleFunc("POST /v1/metrics", r.httpMetrics)
	r.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	r.wg.Add(2)
	go func() { defer r.wg.Done(); r.grpc.Serve(gl) }()
	go func() { defer r.wg.Done(); r.http.Serve(hl) }()
	return r, nil
}

// Close stops both servers and waits for them.
func (r *Receiver) Close() {
	r.grpc.Stop()
	r.http.Close()
	r.wg.Wait()
}

func (r *Receiver) addTraces(transport string, rs []*tracepb.ResourceSpans) {
	n := 0
	for _, x := range rs {
		for _, ss := range x.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	r.spans.Add(int64(n))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keep {
		r.traces = append(r.traces, rs...)
	}
	r.calls[transport+"/traces"]++
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *Receiver) addMetrics(transport string, rm []*metricspb.ResourceMetrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keep {
		r.metrics = append(r.metrics, rm...)
	}
	r.calls[transport+"/metrics"]++
	close(r.changed)
	r.changed = make(chan struct{})
}

// SpanCount returns how many spans arrived, kept or not.
func (r *Receiver) SpanCount() int64 { return r.spans.Load() }

// Calls returns how many export requests arrived by "grpc/traces",
// "http/metrics" and so on.
func (r *Receiver) Calls(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[key]
}

// Span is a received span with the resource and scope it came under.
type Span struct {
	*tracepb.Span
	Resource map[string]string // string attributes of the resource
	Scope    string
}

// Spans returns every span received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, rs := range r.traces {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.Key] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out = append(out, Span{Span: s, Resource: res, Scope: ss.GetScope().GetName()})
			}
		}
	}
	return out
}

// Metrics returns every metric received so far, in arrival order.
func (r *Receiver) Metrics() []*metricspb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*metricspb.Metric
	for _, rm := range r.metrics {
		for _, sm := range rm.ScopeMetrics {
			out = append(out, sm.Metrics...)
		}
	}
	return out
}

// Sum returns the latest value of a cumulative integer sum for the data
// point whose attribute key has the value val (key "" for a point without
// attributes), and whether one arrived.
func (r *Receiver) Sum(name, key, val string) (int64, bool) {
	var v int64
	found := false
	for _, m := range r.Metrics() {
		if m.Name != name || m.GetSum() == nil {
			continue
		}
		for _, dp := range m.GetSum().DataPoints {
			match := key == "" && len(dp.Attributes) == 0
			for _, kv := range dp.Attributes {
				if kv.Key == key && kv.GetValue().GetStringValue() == val {
					match = true
				}
			}
			if match {
				v, found = dp.GetAsInt(), true
			}
		}
	}
	return v, found
}

// Wait waits until cond holds, checking it whenever something arrives, or
// until timeout; it reports whether cond held.
func (r *Receiver) Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return cond()
		}
	}
}

type traceService struct {
	colltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	s.r.addTraces("grpc", req.ResourceSpans)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	collmetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(_ context.Context, req *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	s.r.addMetrics("grpc", req.ResourceMetrics)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

func readBody(req *http.Request) ([]byte, error) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		body = z
	}
	return io.ReadAll(body)
}

func (r *Receiver) httpTraces(w http.ResponseWriter, req *http.Request) {
	var msg colltrace.ExportTraceServiceRequest
	if readProto(w, req, &msg) {
		r.addTraces("http", msg.ResourceSpans)
		writeProto(w, &colltrace.ExportTraceServiceResponse{})
	}
}

func (r *Receiver) httpMetrics(w http.ResponseWriter, req *http.Request) {
	var msg collmetrics.ExportMetricsServiceRequest
	if readProto(w, req, &msg) {
		r.addMetrics("http", msg.ResourceMetrics)
		writeProto(w, &collmetrics.ExportMetricsServiceResponse{})
	}
}

// readProto decodes an OTLP/HTTP request body into msg, or answers 400 and
// reports false.
func readProto(w http.ResponseWriter, req *http.Request, msg proto.Message) bool {
	b, err := readBody(req)
	if err == nil {
		err = proto.Unmarshal(b, msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

// Refuser is a loopback port that accepts every connection and closes it
// at once, counting them: a collector that is down, seen from a client,
// where each connection attempt can be counted.
type Refuser struct {
	Addr     string // host:port
	attempts atomic.Int64
	l        net.Listener
	done     chan struct{}
}

// StartRefuser listens on a loopback port the kernel picks.
func StartRefuser() (*Refuser, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &Refuser{Addr: l.Addr().String(), l: l, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.attempts.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, as from a closed port
			}
			c.Close()
		}
	}()
	return f, nil
}

// Attempts returns how many connections were made to it.
func (f *Refuser) Attempts() int64 { return f.attempts.Load() }

// Close stops listening.
func (f *Refuser) Close() {
	f.l.Close()
	<-f.done
}
