package otlp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/export"
	"github.com/meterio/meter/internal/fakeclock"
	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/meter/metertest"
	"github.com/meterio/meter/otlp/otlptest"
)

// TestMain fails the package when goroutines outlive the tests: every
// pipeline, exporter and receiver a test starts must be stopped.
func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		if err := settle(base, 10*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			code = 1
		}
	}
	os.Exit(code)
}

// settle waits until at most base goroutines run. Connections the
// transports closed take a moment to let their goroutines go; nothing here
// can signal that, so it yields until they are gone or the timeout has
// passed.
func settle(base int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("goroutine leak: %d running, %d at the start", n, base)
		}
		runtime.Gosched()
	}
}

// app is a small instrumented program: handle → parse → lex, then handle →
// parse again, with times set on a manual clock.
type app struct {
	handle, parse, lex *meter.Probe
	clk                *clock.Manual
}

var apps int

func newApp() *app {
	apps++
	pre := fmt.Sprintf("example.com/app%d.", apps)
	return &app{
		handle: meter.NewProbe(pre+"handle", nil),
		parse:  meter.NewProbe(pre+"parse", nil),
		lex:    meter.NewProbe(pre+"(*lexer).next", nil),
		clk:    clock.NewManual(),
	}
}

// Times, in ns, of one request on the manual clock.
const (
	handleIncl = 215
	handleInh  = 105
	parse1Incl = 100
	parse1Inh  = 80
	lexIncl    = 20
	parse2Incl = 10
)

// request runs one traced request: four spans.
func (a *app) request() {
	h := a.handle.Begin()
	a.clk.Advance(100)
	p := a.parse.Begin()
	a.clk.Advance(50)
	l := a.lex.Begin()
	a.clk.Advance(lexIncl)
	a.lex.End(&l)
	a.clk.Advance(30)
	a.parse.End(&p)
	p2 := a.parse.Begin()
	a.clk.Advance(parse2Incl)
	a.parse.End(&p2)
	a.clk.Advance(5)
	a.handle.End(&h)
}

// startExports starts the runtime's exports with OTLP on, as
// METER_EXPORT_OTLP=true with a trace gate does, and wires the app's
// engine to them. This package's init has registered OTLP already.
func (a *app) startExports(t *testing.T, stderr *syncBuffer) *export.Exports {
	e := export.Start(export.Settings{OTLP: true, Traces: true, TraceMax: 10000, Stderr: stderr, Model: meter.Take})
	meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(a.handle), Sink: e.Sink(), Clock: a.clk})
	t.Cleanup(func() { meter.Configure(meter.Chain{}) })
	e.Run()
	metertest.Fire(a.handle, nil)
	return e
}

func stop(e *export.Exports, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	e.StopTraces(ctx)
	e.Close(ctx)
}

// TestOTLP sends the traces and the model of a small instrumented program
// to a real OTLP receiver on loopback, over gRPC and over HTTP/protobuf,
// configured only by the standard variables.
func TestOTLP(t *testing.T) {
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(proto, func(t *testing.T) { testOTLP(t, proto) })
	}
}

func testOTLP(t *testing.T, proto string) {
	r, err := otlptest.Start()
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

	a := newApp()
	var stderr syncBuffer
	e := a.startExports(t, &stderr)
	ids := &idSink{Sink: e.Sink()}
	meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(a.handle), Sink: ids, Clock: a.clk})
	const requests = 3
	for range requests {
		a.clk.Advance(1000)
		a.request()
	}
	stop(e, 10*time.Second)
	if st := e.Pipeline().Stats(); st.Exported != 4*requests || st.Failed != 0 || st.Dropped != 0 {
		t.Fatalf("pipeline: %+v", st)
	}
	if stderr.String() != "" {
		t.Errorf("stderr: %q", stderr.String())
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
	byTrace := map[string][]otlptest.Span{}
	for _, s := range spans {
		byTrace[string(s.TraceId)] = append(byTrace[string(s.TraceId)], s)
		if s.Resource["service.name"] != "metertest" {
			t.Errorf("service.name %q", s.Resource["service.name"])
		}
		if s.Scope != ScopeName {
			t.Errorf("scope %q", s.Scope)
		}
	}
	if len(byTrace) != requests {
		t.Fatalf("%d traces, want %d", len(byTrace), requests)
	}
	for _, id := range ids.ids {
		tid := TraceID(id)
		tr := byTrace[string(tid[:])]
		if len(tr) != 4 {
			t.Fatalf("trace %x: %d spans, want 4", tid, len(tr))
		}
		checkTrace(t, a, tr)
	}

	// Metrics: the model as it was pushed at Close.
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
	if got, ok := r.Sum(MetricTraces, "", ""); !ok || got != model.Traces {
		t.Errorf("%s: got %d (%v), the model says %d", MetricTraces, got, ok, model.Traces)
	}
	if got, ok := r.Sum(MetricDropped, "", ""); !ok || got != model.Dropped {
		t.Errorf("%s: got %d (%v), the model says %d", MetricDropped, got, ok, model.Dropped)
	}
}

// idSink records the meter trace id of every trace that ends.
type idSink struct {
	meter.Sink
	ids []uint64
}

func (s *idSink) TraceSpans(trace uint64, spans []meter.Span, final, truncated bool) {
	if final {
		s.ids = append(s.ids, trace)
	}
	s.Sink.TraceSpans(trace, spans, final, truncated)
}

func row(t *testing.T, s meter.Snapshot, name string) meter.Row {
	t.Helper()
	for _, r := range s.Rows {
		if r.Probe == name {
			return r
		}
	}
	t.Fatalf("no row for %s in the model", name)
	return meter.Row{}
}

// checkTrace checks one received request: names, parent links, times on the
// manual clock and the inherent attribute.
func checkTrace(t *testing.T, a *app, tr []otlptest.Span) {
	t.Helper()
	byName := map[string][]*tracepb.Span{}
	for _, s := range tr {
		byName[s.Name] = append(byName[s.Name], s.Span)
	}
	h, ps, l := byName[a.handle.Name()], byName[a.parse.Name()], byName[a.lex.Name()]
	if len(h) != 1 || len(ps) != 2 || len(l) != 1 {
		t.Fatalf("span names: %v", byName)
	}
	root := h[0]
	if len(root.ParentSpanId) != 0 {
		t.Errorf("root has parent %x", root.ParentSpanId)
	}
	if id := SpanID(0); string(root.SpanId) != string(id[:]) {
		t.Errorf("root span id %x, want %x", root.SpanId, id)
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
		var inh int64 = -1
		for _, kv := range c.s.Attributes {
			if kv.Key == AttrInherent {
				inh = kv.GetValue().GetIntValue()
			}
			if kv.Key == AttrTruncated {
				t.Errorf("%s: marked truncated", c.s.Name)
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

// TestUnreachableCollector points the exporters at a loopback port where
// nothing listens: producers are never held up, losses are counted in the
// pipeline and the model, stderr says so, Shutdown returns on time and
// nothing leaks (TestMain checks goroutines).
func TestUnreachableCollector(t *testing.T) {
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(proto, func(t *testing.T) { testUnreachable(t, proto) })
	}
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	return addr
}

func testUnreachable(t *testing.T, proto string) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+closedPort(t))
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
	a := newApp()
	var stderr syncBuffer
	e := a.startExports(t, &stderr)
	droppedBefore := meter.Take().Dropped
	const requests = 5000 // 20,000 spans: more than the queue holds
	start := time.Now()
	for range requests {
		a.request()
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("%d traced requests took %v: producers were held up", requests, took)
	}
	start = time.Now()
	stop(e, time.Second)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Shutdown of traces and metrics took %v with a 1 s deadline", took)
	}
	st := e.Pipeline().Stats()
	if st.Exported+st.Dropped != 4*requests {
		t.Errorf("exported %d + dropped %d != %d spans", st.Exported, st.Dropped, 4*requests)
	}
	if st.Failed != st.Exported || st.Errors == 0 {
		t.Errorf("%+v: every span handed to an exporter with nowhere to send them must fail", st)
	}
	if got := meter.Take().Dropped - droppedBefore; got != st.Dropped+st.Failed {
		t.Errorf("the model counts %d lost spans, the pipeline %d dropped + %d failed", got, st.Dropped, st.Failed)
	}
	out := stderr.String()
	if !strings.Contains(out, "meter: exporting spans failed: ") || !strings.Contains(out, "sending the model over OTLP at exit") {
		t.Errorf("stderr: %q", out)
	}
	if n := strings.Count(out, "exporting spans failed"); n > 2 {
		t.Errorf("%d lines about failed exports in a run under the report interval: %q", n, out)
	}
}

// TestBackoffAttempts: against a port that refuses every connection, with
// traces ending all the while, the exporter makes no export call while the
// pipeline backs off, and so no connection attempt: the spans drop at the
// queue. Each time the back-off ends, the next batch is one more call. The
// transports do not retry on their own: over HTTP each call is one
// connection attempt. Over gRPC the client's reconnection back-off (1 s,
// growing by 1.6) decides when a call connects, so a call may fail without
// an attempt, and the client may make one attempt a second of its own.
func TestBackoffAttempts(t *testing.T) {
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(proto, func(t *testing.T) {
			f, err := otlptest.StartRefuser()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+f.Addr)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			exp, err := NewSpanExporter(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			clk := fakeclock.New(time.Unix(0, 0))
			p := export.NewPipeline(export.PipelineConfig{Exporter: exp, Clock: clk, Stderr: io.Discard})
			a := newApp()
			meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(a.handle), Sink: p, Clock: a.clk})
			defer meter.Configure(meter.Chain{})
			metertest.Fire(a.handle, nil)
			start := time.Now()
			const calls = 3
			for call := int64(1); call <= calls; call++ {
				for p.Stats().Errors < call { // a batch is 128 requests of 4 spans
					for range 128 {
						a.request()
					}
					runtime.Gosched()
				}
				if err := p.Flush(context.Background()); err != nil { // what was queued before the call failed drops now
					t.Fatal(err)
				}
				dropped, attempts := p.Stats().Dropped, f.Attempts()
				for range 1000 {
					a.request()
				}
				if err := p.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				st := p.Stats()
				if st.Errors != call || st.Dropped != dropped+4000 || proto == ProtocolHTTP && f.Attempts() != attempts {
					t.Fatalf("while backing off after call %d: %+v, %d connection attempts before, %d after; want no call, no attempt and 4000 spans dropped",
						call, st, attempts, f.Attempts())
				}
				clk.Advance(30 * time.Second) // the longest back-off
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			p.Shutdown(ctx)
			attempts, errs := f.Attempts(), p.Stats().Errors
			t.Logf("%s: %d connection attempts, %d export calls", proto, attempts, errs)
			ownAttempts := int64(time.Since(start)/time.Second) + 1 // the gRPC client's own, at most
			if proto == ProtocolHTTP && attempts != errs || attempts < 1 || attempts > errs+ownAttempts {
				t.Errorf("%d connection attempts for %d failed export calls", attempts, errs)
			}
		})
	}
}

// TestSignalsSwitchedOff: OTEL_TRACES_EXPORTER=none sends no spans, and
// OTEL_METRICS_EXPORTER=none sends no metrics and says nothing about a
// metrics endpoint that is not there (Jaeger has none).
func TestSignalsSwitchedOff(t *testing.T) {
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := otlptest.StartRefuser()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.GRPCAddr)
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://"+f.Addr)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	a := newApp()
	var stderr syncBuffer
	e := a.startExports(t, &stderr)
	a.request()
	stop(e, 5*time.Second)
	if len(r.Spans()) != 4 || f.Attempts() != 0 || stderr.String() != "" {
		t.Errorf("metrics off: %d spans, %d attempts on the metrics endpoint, stderr %q", len(r.Spans()), f.Attempts(), stderr.String())
	}

	t.Setenv("OTEL_METRICS_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://"+r.GRPCAddr)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	a = newApp()
	var stderr2 syncBuffer
	e = a.startExports(t, &stderr2)
	a.request()
	stop(e, 5*time.Second)
	if len(r.Spans()) != 4 || r.Calls("grpc/metrics") != 1 || stderr2.String() != "" {
		t.Errorf("traces off: %d spans (4 from before), %d metric pushes, stderr %q", len(r.Spans()), r.Calls("grpc/metrics"), stderr2.String())
	}
}

// TestProgramWithTheImport builds a small instrumented program that asks
// for OTLP with the blank import, runs it configured by the environment
// only, and finds its traces and model at the receiver.
func TestProgramWithTheImport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bin := filepath.Join(t.TempDir(), "e2eprog")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, "./internal/e2eprog")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		addr := r.HTTPAddr
		if proto == ProtocolGRPC {
			addr = r.GRPCAddr
		}
		before := len(r.Spans())
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "METER_EXPORT_OTLP=true", "METER_HOTSPOT_ENABLED=false", "METER_EXPORT_INTERVAL=50ms",
			"METER_TRACEPOINT_ENABLED=true", "METER_TRACEPOINT_SAMPLE=1", "METER_TRACEPOINT_INCLUDE=^example.com/e2e.main$",
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+addr, "OTEL_EXPORTER_OTLP_PROTOCOL="+proto, "OTEL_SERVICE_NAME=e2e")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil || errb.Len() != 0 {
			t.Fatalf("%s: %v, stderr %q", proto, err, errb.String())
		}
		spans := r.Spans()[before:]
		names := map[string]int{}
		for _, s := range spans {
			names[s.Name]++
			if s.Resource["service.name"] != "e2e" {
				t.Errorf("service.name %q", s.Resource["service.name"])
			}
		}
		if len(spans) != 25 || names["example.com/e2e.leaf"] != 10 || names["example.com/e2e.main"] != 5 {
			t.Errorf("%s: received %d spans: %v", proto, len(spans), names)
		}
		if got, ok := r.Sum(MetricCount, AttrProbe, "example.com/e2e.leaf"); !ok || got != 10 {
			t.Errorf("%s: %s{leaf} = %d (%v), want 10", proto, MetricCount, got, ok)
		}
	}
}

func TestProtocolAndExporterVariables(t *testing.T) {
	env := map[string]string{}
	lookup = func(k string) string { return env[k] }
	defer func() { lookup = os.Getenv }()
	var w bytes.Buffer
	for _, c := range []struct {
		signal, generic, want string
		lines                 int
	}{
		{"", "", ProtocolHTTP, 0},
		{"", "grpc", ProtocolGRPC, 0},
		{"http/json", "grpc", ProtocolHTTPJSON, 0},
		{"", "carrier-pigeon", ProtocolHTTP, 1},
	} {
		w.Reset()
		env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"], env["OTEL_EXPORTER_OTLP_PROTOCOL"] = c.signal, c.generic
		if got := protocol("TRACES", &w); got != c.want || strings.Count(w.String(), "\n") != c.lines {
			t.Errorf("%+v: %s, stderr %q", c, got, w.String())
		}
	}
	for v, want := range map[string]bool{"": true, "otlp": true, "none": false, "otlp,none": false, " None ": false} {
		w.Reset()
		env["OTEL_TRACES_EXPORTER"] = v
		if got := enabled("OTEL_TRACES_EXPORTER", &w); got != want || w.Len() != 0 {
			t.Errorf("OTEL_TRACES_EXPORTER=%q: %v, stderr %q", v, got, w.String())
		}
	}
	w.Reset()
	env["OTEL_TRACES_EXPORTER"] = "zipkin"
	if !enabled("OTEL_TRACES_EXPORTER", &w) || strings.Count(w.String(), "\n") != 1 {
		t.Errorf("zipkin: stderr %q", w.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMetricsEveryInterval: with METER_EXPORT_INTERVAL set, the model is
// pushed while the program runs, not only at exit.
func TestMetricsEveryInterval(t *testing.T) {
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.HTTPAddr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", ProtocolHTTP)
	a := newApp()
	var stderr syncBuffer
	e := export.Start(export.Settings{OTLP: true, Interval: 20 * time.Millisecond, Stderr: &stderr, Model: meter.Take})
	meter.Configure(meter.Chain{Enabled: true})
	t.Cleanup(func() { meter.Configure(meter.Chain{}) })
	e.Run()
	a.request()
	if !r.Wait(10*time.Second, func() bool { return r.Calls("http/metrics") >= 2 }) {
		t.Errorf("%d metric pushes while running", r.Calls("http/metrics"))
	}
	if got, ok := r.Sum(MetricCount, AttrProbe, a.lex.Name()); !ok || got != 1 {
		t.Errorf("%s{lex} = %d (%v), want 1", MetricCount, got, ok)
	}
	stop(e, 5*time.Second)
	if e.Pipeline() != nil || stderr.String() != "" {
		t.Errorf("no trace gate, yet a pipeline; stderr %q", stderr.String())
	}
}
