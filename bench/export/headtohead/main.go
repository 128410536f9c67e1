// Command headtohead runs meter's trace export path and the OpenTelemetry
// Go SDK's BatchSpanProcessor through the same benchmark, in one process,
// after the design of DoorDash's batch span processor study: a no-op
// exporter, queue 2048, batch 512, schedule delay 5 s.
//
//	go run ./headtohead      # from bench/export
//
// For each system and 1, 2, 4 and 8 producer goroutines it reports:
//   - exported spans per second, producers creating and ending spans as fast
//     as they can (spans dropped on a full queue are not counted);
//   - the same into a real OTLP receiver over gRPC on loopback, in a
//     process of its own (otlptest, decoding every request): meter's
//     pipeline with the otlp module's exporter, the BSP with the
//     OpenTelemetry otlptracegrpc exporter, same queue and batch; spans/s
//     counted by the receiver;
//   - the exporter goroutine's CPU time at a steady 10,000 spans/s per
//     producer: its running time in a runtime/trace of the run, read with
//     `go tool trace -d=parsed` (the time between its transitions to and
//     from running), the same method for both systems. Process CPU is
//     shown too;
//   - exporter wake-ups per 10,000 spans in that run: the exporter
//     goroutine's transitions from waiting to runnable in the same trace
//     (meter's own count is shown beside it and agrees);
//   - producer allocations per span (1 producer, runtime.MemStats over the
//     whole process: the exporters allocate per batch, not per span).
//
// The no-op exporter only counts spans, as in the study. meter's pipeline
// converts its queued records into export.Span values on the exporter
// goroutine for any exporter; the SDK builds its spans on the producer.
// -read makes the exporter read every field of every span, as an OTLP
// exporter does.
//
// Steady pacing: a virtual machine's timers may not keep a sleep much
// shorter than a millisecond, so each producer makes 10 spans every 1 ms.
// That favours the BSP, which is woken once per burst instead of once per
// span.
// -spin makes one span at a time with the producer spinning in between; on
// a 2-core VM the trace-derived running time of meter's exporter is then
// far above what getrusage reads for its locked thread, so those rows are
// not trusted and not shown by default.
//
// A span is created and ended the way each system's users do it: for meter,
// a probe's Begin and End inside a trace (the engine reads the clock, keeps
// the model and hands the trace over at its end); for the SDK,
// tracer.Start and span.End. Each trace holds -spans spans (default 1, as in
// the study: every span is a root).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/meterio/meter/bench/export/internal/harness"
	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/otlp"
)

var (
	flagDuration  = flag.Duration("duration", time.Second, "throughput run per producer count")
	flagSteady    = flag.Duration("steady", 2*time.Second, "steady-rate run per producer count")
	flagProducers = flag.String("producers", "1,2,4,8", "producer goroutine counts")
	flagRate      = flag.Int("rate", 10000, "spans per second per producer in the steady run")
	flagSpans     = flag.Int("spans", 1, "spans per trace")
	flagRead      = flag.Bool("read", false, "the no-op exporter reads every field of every span, as an OTLP exporter does")
	flagSpin      = flag.Bool("spin", false, "also run the steady phase with spinning producers, while producers < GOMAXPROCS (see the package doc)")
	flagWakeups   = flag.Bool("trace", true, "read exporter wake-ups and running time from a runtime trace of the steady run")
	flagReceiver  = flag.Bool("receiver", true, "also export into a loopback OTLP receiver")
)

// counter is the no-op exporter: it counts spans. With -read it also reads
// every field of each span, as an OTLP exporter does.
type counter struct {
	n    atomic.Int64
	sink int64
}

// ExportSpans is meter's side.
func (c *counter) ExportSpans(_ context.Context, s []export.Span) error {
	c.n.Add(int64(len(s)))
	if *flagRead {
		for i := range s {
			sp := &s[i]
			c.sink += int64(len(sp.Name)) + int64(sp.Trace) + int64(sp.Index) + int64(sp.Parent) + sp.Start - sp.End + sp.Inherent
			if sp.Truncated {
				c.sink++
			}
		}
	}
	return nil
}

// bspCounter is the SDK's side.
type bspCounter struct{ *counter }

func (c bspCounter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.n.Add(int64(len(s)))
	if *flagRead {
		for _, sp := range s {
			c.sink += readSpan(sp)
		}
	}
	return nil
}

// readSpan reads every field the OTLP exporters turn into protobuf.
func readSpan(s sdktrace.ReadOnlySpan) int64 {
	sc, parent := s.SpanContext(), s.Parent()
	n := int64(len(s.Name())) + int64(sc.SpanID()[7]) + int64(sc.TraceID()[15]) + int64(parent.SpanID()[7])
	n += s.StartTime().UnixNano() - s.EndTime().UnixNano() + int64(s.SpanKind())
	for _, kv := range s.Attributes() {
		n += int64(len(kv.Key)) + kv.Value.AsInt64()
	}
	n += int64(len(s.Links()) + len(s.Events()) + s.DroppedAttributes() + s.DroppedEvents() + s.DroppedLinks())
	n += int64(len(s.InstrumentationScope().Name)) + int64(s.Resource().Len()) + int64(s.Status().Code)
	return n
}
func (c *counter) Shutdown(context.Context) error { return nil }

// system is one export path under test.
type system interface {
	name() string
	start(exp *counter)
	startOTLP(ctx context.Context) error // exports to the receiver, over gRPC, as OTEL_EXPORTER_OTLP_* say
	trace()                              // one trace of *flagSpans spans, on the calling goroutine
	stop()
	wakeups() int64 // as the system counts them itself; -1 if it does not
	exporterFunc() string
}

// meterSystem drives probes through the meter engine into export.Pipeline.
type meterSystem struct {
	tr *harness.Traffic
	p  *export.Pipeline
}

func (m *meterSystem) name() string       { return "meter" }
func (m *meterSystem) start(exp *counter) { m.run(exp) }
func (m *meterSystem) startOTLP(ctx context.Context) error {
	e, err := otlp.NewSpanExporter(ctx)
	if err != nil {
		return err
	}
	m.run(e)
	return nil
}
func (m *meterSystem) run(e export.SpanExporter) {
	if m.tr == nil {
		m.tr = harness.NewTraffic(*flagSpans)
	}
	m.p = export.NewPipeline(export.PipelineConfig{Exporter: e, QueueSize: 2048, BatchSize: 512, MaxExportBatch: 512,
		ScheduleDelay: 5 * time.Second, Stderr: discard{}})
	m.tr.Configure(m.p)
}
func (m *meterSystem) trace() { m.tr.Trace() }
func (m *meterSystem) stop() {
	m.p.Shutdown(context.Background())
	meter.Configure(meter.Chain{})
}
func (m *meterSystem) wakeups() int64       { return m.p.Stats().Wakeups }
func (m *meterSystem) exporterFunc() string { return "export.(*Pipeline).run" }

// bspSystem drives the SDK's tracer into its BatchSpanProcessor.
type bspSystem struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

func (b *bspSystem) name() string       { return "otel BSP" }
func (b *bspSystem) start(exp *counter) { b.run(bspCounter{exp}) }
func (b *bspSystem) startOTLP(ctx context.Context) error {
	e, err := otlptrace.New(ctx, otlptracegrpc.NewClient())
	if err != nil {
		return err
	}
	b.run(e)
	return nil
}
func (b *bspSystem) run(exp sdktrace.SpanExporter) {
	bsp := sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithMaxQueueSize(2048), sdktrace.WithMaxExportBatchSize(512),
		sdktrace.WithBatchTimeout(5*time.Second))
	b.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(bsp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.tracer = b.tp.Tracer("headtohead")
}
func (b *bspSystem) trace() {
	ctx, root := b.tracer.Start(context.Background(), "headtohead.root")
	for i := 1; i < *flagSpans; i++ {
		_, c := b.tracer.Start(ctx, "headtohead.child")
		c.End()
	}
	root.End()
}
func (b *bspSystem) stop()                { b.tp.Shutdown(context.Background()) }
func (b *bspSystem) wakeups() int64       { return -1 }
func (b *bspSystem) exporterFunc() string { return "trace.(*batchSpanProcessor).processQueue" }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// throughput runs n producers flat out for d and returns exported and
// produced spans per second.
func throughput(s system, n int, d time.Duration) (exported, produced float64) {
	exp := &counter{}
	s.start(exp)
	var stop atomic.Bool
	var made atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := int64(0)
			for !stop.Load() {
				s.trace()
				k += int64(*flagSpans)
			}
			made.Add(k)
		}()
	}
	time.Sleep(d / 10) // warm up
	e0, t0 := exp.n.Load(), time.Now()
	m0 := made.Load()
	time.Sleep(d)
	e1, el := exp.n.Load(), time.Since(t0)
	stop.Store(true)
	wg.Wait()
	_ = m0
	produced = float64(made.Load()) / (el + d/10).Seconds()
	s.stop()
	return float64(e1-e0) / el.Seconds(), produced
}

// intoReceiver runs n producers flat out for d, exporting over gRPC into
// r, and returns the spans per second r received in that time.
func intoReceiver(s system, r *harness.Receiver, n int, d time.Duration) float64 {
	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.GRPCAddr)
	os.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if err := s.startOTLP(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "headtohead:", err)
		return -1
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				s.trace()
			}
		}()
	}
	time.Sleep(d / 10) // warm up: connections made
	r0, t0 := count(r), time.Now()
	time.Sleep(d)
	r1, el := count(r), time.Since(t0)
	stop.Store(true)
	wg.Wait()
	s.stop()
	return float64(r1-r0) / el.Seconds()
}

func count(r *harness.Receiver) int64 {
	n, _ := r.Count()
	return n
}

// allocs returns heap allocations and bytes per span with one producer.
func allocs(s system) (float64, float64) {
	exp := &counter{}
	s.start(exp)
	defer s.stop()
	for range 1000 {
		s.trace()
	}
	const traces = 20000
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for range traces {
		s.trace()
	}
	runtime.ReadMemStats(&b)
	spans := float64(traces * *flagSpans)
	return float64(b.Mallocs-a.Mallocs) / spans, float64(b.TotalAlloc-a.TotalAlloc) / spans
}

type steadyResult struct {
	spans       int64
	process     time.Duration // process CPU
	selfWakeups int64         // as meter counts them; -1 if unknown
	trace       traced        // from the runtime trace
}

// steady runs n producers at rate spans/s each for d, under a runtime trace.
// spin: each producer makes one span at a time and spins until the next is
// due, a steady rate for as many producers as there are idle cores; else
// producers sleep 1 ms between bursts.
func steady(s system, n, rate int, d time.Duration, spin bool) steadyResult {
	exp := &counter{}
	s.start(exp)
	time.Sleep(50 * time.Millisecond)
	var r steadyResult
	w0 := s.wakeups()
	stopTrace := startTrace(s)
	proc0 := harness.ProcessCPU()
	// Paced in ticks of 1 ms (10 spans per tick at the default rate): a
	// virtual machine may not keep finer ticks (see the package doc), and
	// bursts favour the BSP: it wakes once per burst, not once per span.
	r.spans = harness.Produce(n, float64(n*rate), d, *flagSpans, spin, s.trace)
	r.process = time.Duration(harness.ProcessCPU() - proc0)
	r.trace = stopTrace()
	r.selfWakeups = -1
	if w := s.wakeups(); w >= 0 {
		r.selfWakeups = w - w0
	}
	s.stop()
	return r
}

func main() {
	harness.ServeIfChild()
	flag.Parse()
	if err := clock.Setup("auto"); err != nil {
		clock.Setup("mono")
	}
	var counts []int
	for _, f := range strings.Split(*flagProducers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "headtohead: bad -producers %q\n", *flagProducers)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	var recv *harness.Receiver
	if *flagReceiver {
		var err error
		if recv, err = harness.StartReceiver(); err != nil {
			fmt.Fprintln(os.Stderr, "headtohead:", err)
			os.Exit(1)
		}
		defer recv.Close()
	}
	systems := []system{&meterSystem{}, &bspSystem{}}
	fmt.Printf("GOMAXPROCS=%d, %s, spans per trace %d, exporter reads spans %v, clock %s, %s\n\n",
		runtime.GOMAXPROCS(0), runtime.Version(), *flagSpans, *flagRead, clock.Source(), time.Now().Format("2006-01-02"))

	fmt.Printf("Exported spans/s, producers flat out for %v (produced spans/s in brackets); into the receiver: spans/s it decoded (gRPC, loopback, its own process)\n", *flagDuration)
	fmt.Printf("%-10s %-26s %-26s %-10s %-16s %-16s %s\n", "producers", "meter", "otel BSP", "meter/BSP", "meter→receiver", "BSP→receiver", "meter/BSP")
	for _, n := range counts {
		var ex, pr, rc [2]float64
		for i, s := range systems {
			ex[i], pr[i] = throughput(s, n, *flagDuration)
			rc[i] = -1
			if recv != nil {
				rc[i] = intoReceiver(s, recv, n, *flagDuration)
			}
		}
		rs := func(v float64) string {
			if v < 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.3gk", v/1e3)
		}
		fmt.Printf("%-10d %-26s %-26s %-10s %-16s %-16s %.1fx\n", n, fmt.Sprintf("%.3gM (%.3gM)", ex[0]/1e6, pr[0]/1e6),
			fmt.Sprintf("%.3gM (%.3gM)", ex[1]/1e6, pr[1]/1e6), fmt.Sprintf("%.1fx", ex[0]/ex[1]), rs(rc[0]), rs(rc[1]), rc[0]/rc[1])
	}

	fmt.Printf("\nSteady %d spans/s per producer for %v, per second of run: the exporter goroutine's running time (runtime trace),\n", *flagRate, *flagSteady)
	fmt.Printf("process CPU; exporter wake-ups per 10,000 spans (runtime trace).\n")
	fmt.Printf("bursts: producers sleep 1 ms between bursts of rate/1000 spans; spin (-spin): one span at a time, spinning in between.\n")
	fmt.Printf("%-15s %-11s %-11s %-10s %-11s %-11s %-11s %-9s %s\n", "producers", "meter exp", "BSP exp", "meter/BSP", "meter proc", "BSP proc", "meter wakes", "BSP wakes", "(meter self-count)")
	type pacing struct {
		n    int
		spin bool
	}
	var pacings []pacing
	for _, n := range counts {
		if *flagSpin && n < runtime.GOMAXPROCS(0) {
			pacings = append(pacings, pacing{n, true})
		}
	}
	for _, n := range counts {
		pacings = append(pacings, pacing{n, false})
	}
	for _, pace := range pacings {
		n := pace.n
		label := fmt.Sprintf("%d bursts", n)
		if pace.spin {
			label = fmt.Sprintf("%d spin", n)
		}
		var rs [2]steadyResult
		for i, s := range systems {
			rs[i] = steady(s, n, *flagRate, *flagSteady, pace.spin)
		}
		ms := func(d time.Duration) string {
			if d < 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2fms", float64(d)/1e6/flagSteady.Seconds())
		}
		wakes := func(w, spans int64) string {
			if w < 0 || spans == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.1f", float64(w)*10000/float64(spans))
		}
		ratio := "n/a"
		if rs[0].trace.running >= 0 && rs[1].trace.running > 0 {
			ratio = fmt.Sprintf("%.3f", float64(rs[0].trace.running)/float64(rs[1].trace.running))
		}
		fmt.Printf("%-15s %-11s %-11s %-10s %-11s %-11s %-11s %-9s %s\n", label,
			ms(time.Duration(rs[0].trace.running)), ms(time.Duration(rs[1].trace.running)), ratio,
			ms(rs[0].process), ms(rs[1].process),
			wakes(rs[0].trace.wakeups, rs[0].spans), wakes(rs[1].trace.wakeups, rs[1].spans), wakes(rs[0].selfWakeups, rs[0].spans))
	}

	fmt.Printf("\nProducer allocations per span (1 producer)\n")
	for _, s := range systems {
		a, b := allocs(s)
		fmt.Printf("%-10s %.2f allocs, %.0f B\n", s.name(), a, b)
	}
}
