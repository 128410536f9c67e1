package export

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/meterio/meter/internal/otlpreceiver"
	"github.com/meterio/meter/meter"
)

// TestOTLP sends the traces and the model of a small instrumented program
// to a real OTLP receiver on loopback, over gRPC and over HTTP/protobuf,
// configured only by the standard variables.
func TestOTLP(t *testing.T) {
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(proto, func(t *testing.T) { testOTLP(t, proto) })
	}
}

func testOTLP(t *testing.T, proto string) {
	r, err := otlpreceiver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr, transport := r.HTTPAddr, "http"
	if proto == ProtocolGRPC {
		addr, transport = r.GRPCAddr, "grpc"
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
	t.Setenv("OTEL_SERVICE_NAME", "metertest")

	a := newApp(t)
	ctx := context.Background()
	exp, err := NewOTLPTraceExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(WithSpanExporter(exp), WithScheduleDelay(time.Hour))
	ids := &idSink{Sink: p}
	a.configure(t, ids)
	const requests = 3
	for range requests {
		a.clk.Advance(1000)
		a.request()
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if st := p.Stats(); st.Exported != 4*requests || st.Failed != 0 || st.Dropped != 0 {
		t.Fatalf("pipeline: %+v", st)
	}
	m, err := NewOTLPMetrics(ctx, 0, meter.Take)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Shutdown(sctx); err != nil {
		t.Fatalf("metrics Shutdown: %v", err)
	}
	model := meter.Take()

	// Traces.
	if r.Calls(transport+"/traces") == 0 {
		t.Errorf("no trace export arrived over %s", transport)
	}
	spans := r.Spans()
	if len(spans) != 4*requests {
		t.Fatalf("received %d spans, want %d", len(spans), 4*requests)
	}
	byTrace := map[string][]otlpreceiver.Span{}
	for _, s := range spans {
		byTrace[string(s.TraceId)] = append(byTrace[string(s.TraceId)], s)
		if s.Resource["service.name"] != "metertest" {
			t.Errorf("service.name %q", s.Resource["service.name"])
		}
		if s.Scope != Scope.Name {
			t.Errorf("scope %q", s.Scope)
		}
	}
	if len(byTrace) != requests {
		t.Fatalf("%d traces, want %d", len(byTrace), requests)
	}
	for _, id := range ids.ids {
		tid := p.TraceID(id)
		tr := byTrace[string(tid[:])]
		if len(tr) != 4 {
			t.Fatalf("trace %x: %d spans, want 4", tid, len(tr))
		}
		checkTrace(t, a, tr)
	}

	// Metrics: the model as it was pushed at Shutdown.
	if r.Calls(transport+"/metrics") == 0 {
		t.Errorf("no metrics export arrived over %s", transport)
	}
	for _, pr := range []*meter.Probe{a.handle, a.parse, a.lex} {
		want := row(t, model, pr.Name())
		for name, w := range map[string]int64{MetricCount: want.Count, MetricTotal: want.Total, MetricInherentTotal: want.InherentTotal} {
			got, ok := r.Sum(name, AttrProbe, pr.Name())
			if !ok || got != w {
				t.Errorf("%s{%s}: got %d (received: %v), the model says %d", name, pr.Name(), got, ok, w)
			}
		}
	}
	if row(t, model, a.handle.Name()).Count != requests || row(t, model, a.parse.Name()).Count != 2*requests {
		t.Errorf("model counts: %+v", model.Rows)
	}
	if got, ok := r.Sum(MetricTraces, "", ""); !ok || got != model.Traces {
		t.Errorf("%s: got %d (%v), the model says %d", MetricTraces, got, ok, model.Traces)
	}
}

// idSink records the meter trace id of every trace that ends.
type idSink struct {
	meter.Sink
	ids []uint64
}

func (s *idSink) TraceEnded(g *meter.Goroutine, spans []meter.Span, truncated bool) {
	s.ids = append(s.ids, g.TraceID)
	s.Sink.TraceEnded(g, spans, truncated)
}

// checkTrace checks one received request: names, parent links, times on the
// manual clock and the inherent attribute.
func checkTrace(t *testing.T, a *app, tr []otlpreceiver.Span) {
	t.Helper()
	byName := map[string][]*tracepb.Span{}
	for _, s := range tr {
		byName[s.Name] = append(byName[s.Name], s.Span)
	}
	h, ps, l := byName[a.handle.Name()], byName[a.parse.Name()], byName[a.lex.Name()]
	if len(h) != 1 || len(ps) != 2 || len(l) != 1 {
		t.Fatalf("span names: %v", keys(byName))
	}
	root := h[0]
	if len(root.ParentSpanId) != 0 {
		t.Errorf("root has parent %x", root.ParentSpanId)
	}
	p1, p2 := ps[0], ps[1]
	if p1.StartTimeUnixNano > p2.StartTimeUnixNano {
		p1, p2 = p2, p1
	}
	for _, c := range []struct {
		s      *tracepb.Span
		parent *tracepb.Span
		incl   uint64
		inh    int64
		offset uint64 // start − root's start
	}{
		{root, nil, handleIncl, handleInh, 0},
		{p1, root, parse1Incl, parse1Inh, 100},
		{l[0], p1, lexIncl, lexIncl, 150},
		{p2, root, parse2Incl, parse2Incl, 200},
	} {
		if c.parent != nil && string(c.s.ParentSpanId) != string(c.parent.SpanId) {
			t.Errorf("%s: parent %x, want %s's %x", c.s.Name, c.s.ParentSpanId, c.parent.Name, c.parent.SpanId)
		}
		if got := c.s.EndTimeUnixNano - c.s.StartTimeUnixNano; got != c.incl {
			t.Errorf("%s: end − start = %d ns, want %d", c.s.Name, got, c.incl)
		}
		if got := c.s.StartTimeUnixNano - root.StartTimeUnixNano; got != c.offset {
			t.Errorf("%s: starts %d ns after the root, want %d", c.s.Name, got, c.offset)
		}
		if c.parent != nil && (c.s.StartTimeUnixNano < c.parent.StartTimeUnixNano || c.s.EndTimeUnixNano > c.parent.EndTimeUnixNano) {
			t.Errorf("%s is not inside its parent's time", c.s.Name)
		}
		var inh int64 = -1
		for _, kv := range c.s.Attributes {
			if kv.Key == AttrInherent {
				inh = kv.GetValue().GetIntValue()
			}
		}
		if inh != c.inh {
			t.Errorf("%s: %s = %d, want %d", c.s.Name, AttrInherent, inh, c.inh)
		}
		if c.s.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
			t.Errorf("%s: kind %v", c.s.Name, c.s.Kind)
		}
	}
	now := uint64(time.Now().UnixNano())
	if root.StartTimeUnixNano > now || now-root.StartTimeUnixNano > uint64(time.Hour) {
		t.Errorf("root starts at %d, not wall-clock time near %d", root.StartTimeUnixNano, now)
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

// TestUnreachableCollector points the exporters at a loopback port where
// nothing listens: producers are never blocked, drops are counted, Shutdown
// returns on time and nothing leaks (TestMain checks goroutines).
func TestUnreachableCollector(t *testing.T) {
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(proto, func(t *testing.T) { testUnreachable(t, proto) })
	}
}

func testUnreachable(t *testing.T, proto string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)

	a := newApp(t)
	ctx := context.Background()
	exp, err := NewOTLPTraceExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Defaults but a small queue: the exporter retries for as long as its
	// 30 s timeout lets it, so everything past the first batches drops.
	var stderr syncBuffer
	p := NewPipeline(WithSpanExporter(exp), WithQueueSize(64), WithBatchSize(16), WithStderr(&stderr))
	a.configure(t, p)
	droppedBefore := meter.Take().Dropped
	const requests = 2000
	start := time.Now()
	for range requests {
		a.request()
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("%d traced requests took %v: producers were held up", requests, took)
	}
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start = time.Now()
	p.Shutdown(sctx)
	m, err := NewOTLPMetrics(ctx, 0, meter.Take)
	if err != nil {
		t.Fatal(err)
	}
	m.Shutdown(sctx)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Shutdown of traces and metrics took %v with a 1 s deadline", took)
	}
	st := p.Stats()
	if st.Exported+st.Dropped != 4*requests {
		t.Errorf("exported %d + dropped %d != %d spans", st.Exported, st.Dropped, 4*requests)
	}
	if st.Failed != st.Exported {
		t.Errorf("%d spans handed to an exporter with nowhere to send them, %d failed", st.Exported, st.Failed)
	}
	if st.Dropped == 0 {
		t.Errorf("nothing dropped: the queue never filled")
	}
	if got := meter.Take().Dropped - droppedBefore; got != st.Dropped+st.Failed {
		t.Errorf("the model counts %d lost spans, the pipeline %d dropped + %d failed", got, st.Dropped, st.Failed)
	}
	if !strings.Contains(stderr.String(), "dropped") || !strings.Contains(stderr.String(), "failed") {
		t.Errorf("stderr: %q", stderr.String())
	}
}
