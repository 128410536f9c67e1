package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/meterio/meter/meter"
)

// checkingExporter counts the spans it is given and checks each batch's
// structure: a root has no parent, any other span's parent came earlier in
// its trace.
type checkingExporter struct {
	mu      sync.Mutex
	spans   int
	batches int
	errs    []string
	slow    time.Duration
}

func (e *checkingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.batches++
	e.spans += len(spans)
	for _, s := range spans {
		if a := s.Attributes(); len(a) != 1 || a[0].Value.AsInt64() != 5 {
			e.errs = append(e.errs, fmt.Sprintf("attributes %v", a))
		}
		id := s.SpanContext().SpanID()
		index := binary.BigEndian.Uint32(id[4:]) - 1
		if !s.Parent().IsValid() {
			if index != 0 {
				e.errs = append(e.errs, fmt.Sprintf("span %d of a trace has no parent", index))
			}
			continue
		}
		pid := s.Parent().SpanID()
		if parent := binary.BigEndian.Uint32(pid[4:]) - 1; parent >= index {
			e.errs = append(e.errs, fmt.Sprintf("span %d has parent %d", index, parent))
		}
		if s.Parent().TraceID() != s.SpanContext().TraceID() {
			e.errs = append(e.errs, "parent in another trace")
		}
	}
	if e.slow > 0 {
		time.Sleep(e.slow)
	}
	return ctx.Err()
}

func (e *checkingExporter) Shutdown(context.Context) error { return nil }

// spansOf builds a trace of n spans: a chain root → 1 → 2 with the rest
// children of the root.
func spansOf(p *meter.Probe, n int) []meter.Span {
	s := make([]meter.Span, n)
	for i := range s {
		s[i] = meter.Span{Probe: p, Parent: int32(min(i-1, 1)), Start: int64(10 * i), End: int64(10*i + 5), Inherent: 5}
	}
	s[0].Parent = -1
	return s
}

// TestPipelineAccountsForEverySpan drives TraceEnded from concurrent
// producers: every span is either exported or dropped and counted, and the
// exporter goroutine wakes about once per batch, never per span. Saturated:
// a small queue behind a slow exporter, so that many spans drop. Keeping up:
// a large queue, so that the exporter sleeps between batches.
//
// Each runs twice: with an exporter that may keep the spans (it gets copies)
// and with a SpanCopier, which reads the records in place in the queue
// while producers fill other slots (under -race, a producer writing a slot
// the exporter still reads would show).
func TestPipelineAccountsForEverySpan(t *testing.T) {
	for _, c := range []struct {
		name  string
		queue int
		slow  time.Duration
	}{{"saturated", 256, time.Millisecond}, {"keeping-up", 1 << 16, 0}} {
		for _, copier := range []bool{false, true} {
			name := c.name
			if copier {
				name += "/in-place"
			}
			t.Run(name, func(t *testing.T) { testAccounting(t, c.queue, c.slow, copier) })
		}
	}
}

// copyingChecker is a checkingExporter that declares it keeps nothing.
type copyingChecker struct{ *checkingExporter }

func (copyingChecker) CopiesSpans() {}

func testAccounting(t *testing.T, queue int, slow time.Duration, copier bool) {
	const (
		producers = 4
		traces    = 3000
		batch     = 64
	)
	probe := meter.NewProbe("example.com/queue.work", nil)
	pace := 20 // traces between pauses
	if slow == 0 {
		pace = 5
	}
	e := &checkingExporter{slow: slow}
	var exp sdktrace.SpanExporter = e
	if copier {
		exp = copyingChecker{e}
	}
	var stderr syncBuffer
	p := NewPipeline(WithSpanExporter(exp), WithQueueSize(queue), WithBatchSize(batch),
		WithScheduleDelay(time.Hour), WithLabels(false), WithStderr(&stderr), WithDropReport(time.Nanosecond))
	droppedBefore := meter.Take().Dropped
	var produced atomic.Int64
	var wg sync.WaitGroup
	for w := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &meter.Goroutine{}
			var shapes [8][]meter.Span
			for i := range shapes {
				shapes[i] = spansOf(probe, i+1)
			}
			for i := range traces {
				g.TraceID = uint64(w*traces + i + 1)
				s := shapes[(i+w)%8]
				p.TraceEnded(g, s, false)
				produced.Add(int64(len(s)))
				if i%pace == pace-1 {
					time.Sleep(time.Millisecond) // let the exporter keep up, or partly
				}
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	n := produced.Load()
	t.Logf("produced %d, exported %d, dropped %d, wake-ups %d, batches %d", n, st.Exported, st.Dropped, st.Wakeups, e.batches)
	if st.Exported+st.Dropped != n {
		t.Errorf("exported %d + dropped %d != produced %d", st.Exported, st.Dropped, n)
	}
	if int64(e.spans) != st.Exported {
		t.Errorf("the exporter got %d spans, the pipeline says %d", e.spans, st.Exported)
	}
	if st.Queued != st.Exported {
		t.Errorf("queued %d, exported %d", st.Queued, st.Exported)
	}
	if got := meter.Take().Dropped - droppedBefore; got != st.Dropped {
		t.Errorf("the model counts %d dropped spans, the pipeline %d", got, st.Dropped)
	}
	if slow > 0 {
		if st.Dropped == 0 || st.Exported < 20*batch {
			t.Errorf("exported %d, dropped %d: the test wants both many exports and drops", st.Exported, st.Dropped)
		}
		if !strings.Contains(stderr.String(), "dropped") {
			t.Errorf("nothing on stderr about drops: %q", stderr.String())
		}
	} else {
		if st.Dropped != 0 {
			t.Errorf("dropped %d spans from a queue of %d", st.Dropped, queue)
		}
		if st.Wakeups < 5 {
			t.Errorf("%d wake-ups: the exporter never slept, the test does not test signal batching", st.Wakeups)
		}
	}
	// A wake-up comes only when a full batch is claimed, so each one leads
	// to at least one export call: never one per span.
	if st.Wakeups > int64(e.batches) || st.Wakeups*batch > n*11/10+8*batch {
		t.Errorf("%d wake-ups for %d spans produced and %d export calls in batches of %d", st.Wakeups, n, e.batches, batch)
	}
	for _, msg := range e.errs[:min(len(e.errs), 5)] {
		t.Error(msg)
	}
}

// TestDropReportOncePerInterval: one line, however many drops, until the
// interval passes; and one at the end.
func TestDropReportOncePerInterval(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.report", nil)
	var stderr syncBuffer
	p := NewPipeline(WithQueueSize(4), WithBatchSize(4), WithScheduleDelay(time.Hour),
		WithLabels(false), WithStderr(&stderr), WithDropReport(time.Hour))
	g := &meter.Goroutine{TraceID: 1}
	for range 100 {
		p.TraceEnded(g, spansOf(probe, 8), false) // 4 fit (at most), the rest drop
	}
	p.Flush(context.Background())
	for range 100 {
		p.TraceEnded(g, spansOf(probe, 8), false)
	}
	p.Flush(context.Background())
	if got := strings.Count(stderr.String(), "\n"); got != 0 {
		t.Errorf("%d lines before the interval passed: %q", got, stderr.String())
	}
	p.Shutdown(context.Background())
	st := p.Stats()
	want := fmt.Sprintf("meter: export queue full: dropped %d spans (%d in all)\n", st.Dropped, st.Dropped)
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
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

// TestScheduleDelay: a partial batch goes out when the delay passes, with
// one wake-up.
func TestScheduleDelay(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.delay", nil)
	e := &checkingExporter{}
	const delay = 50 * time.Millisecond
	p := NewPipeline(WithSpanExporter(e), WithScheduleDelay(delay), WithLabels(false))
	defer p.Shutdown(context.Background())
	g := &meter.Goroutine{TraceID: 7}
	start := time.Now()
	p.TraceEnded(g, spansOf(probe, 3), false)
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().Exported < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	st := p.Stats()
	elapsed := time.Since(start)
	if st.Exported != 3 {
		t.Fatalf("exported %d of 3 spans after the delay", st.Exported)
	}
	// The timer alone wakes the exporter: once per delay that passed.
	if st.Wakeups < 1 || st.Wakeups > int64(elapsed/delay)+1 {
		t.Errorf("%d wake-ups in %v with a delay of %v", st.Wakeups, elapsed, delay)
	}
}

// TestShutdownFlushes: what is queued at Shutdown goes out, and spans that
// arrive after it are dropped and counted.
func TestShutdownFlushes(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.shutdown", nil)
	e := &checkingExporter{}
	p := NewPipeline(WithSpanExporter(e), WithScheduleDelay(time.Hour), WithLabels(false))
	g := &meter.Goroutine{TraceID: 9}
	for range 10 {
		p.TraceEnded(g, spansOf(probe, 5), false)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.spans != 50 {
		t.Errorf("exported %d spans at Shutdown, want 50", e.spans)
	}
	p.TraceEnded(g, spansOf(probe, 5), false)
	if st := p.Stats(); st.Dropped != 5 {
		t.Errorf("dropped %d spans after Shutdown, want 5", st.Dropped)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// TestShutdownTimeout: an exporter stuck until its context ends does not
// hold Shutdown past its deadline.
func TestShutdownTimeout(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.stuck", nil)
	p := NewPipeline(WithSpanExporter(stuckExporter{}), WithBatchSize(4), WithScheduleDelay(time.Hour), WithLabels(false), WithStderr(io.Discard))
	g := &meter.Goroutine{TraceID: 3}
	for range 10 {
		p.TraceEnded(g, spansOf(probe, 4), false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Shutdown(ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Shutdown took %v with a 200ms deadline", took)
	}
	if err == nil {
		t.Errorf("Shutdown reported no error though the exporter never finished")
	}
	st := p.Stats()
	if st.Exported+st.Dropped != 40 {
		t.Errorf("exported %d + dropped %d != 40", st.Exported, st.Dropped)
	}
}

type stuckExporter struct{}

func (stuckExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	<-ctx.Done()
	return ctx.Err()
}
func (stuckExporter) Shutdown(context.Context) error { return nil }

// TestTraceEndedAllocatesNothing: the producer's side, for a warm
// goroutine, with room in the queue and without.
func TestTraceEndedAllocatesNothing(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.allocs", nil)
	spans := spansOf(probe, 8)
	g := &meter.Goroutine{TraceID: 1}
	for _, c := range []struct {
		name   string
		queue  int
		labels bool
	}{{"room", 1 << 16, false}, {"room/labels", 1 << 16, true}, {"full", 4, false}} {
		t.Run(c.name, func(t *testing.T) {
			// The batch is the whole queue, so the exporter goroutine
			// sleeps through the measurement.
			p := NewPipeline(WithQueueSize(c.queue), WithBatchSize(c.queue), WithScheduleDelay(time.Hour), WithLabels(c.labels), WithStderr(io.Discard))
			defer p.Shutdown(context.Background())
			p.TraceEnded(g, spans, false)
			if a := testing.AllocsPerRun(1000, func() { p.TraceEnded(g, spans, false) }); a != 0 {
				t.Errorf("TraceEnded allocates %v times per call", a)
			}
		})
	}
}

// TestTracedCallAllocatesNothing: a whole traced request through the meter
// engine and the pipeline, labels off, allocates nothing once warm.
func TestTracedCallAllocatesNothing(t *testing.T) {
	a := newApp(t)
	p := NewPipeline(WithQueueSize(1<<16), WithBatchSize(1<<16), WithScheduleDelay(time.Hour), WithLabels(false))
	defer p.Shutdown(context.Background())
	a.configure(t, p)
	a.request()
	if n := testing.AllocsPerRun(1000, a.request); n != 0 {
		t.Errorf("a traced request allocates %v times", n)
	}
}

// TestRetainingExporter: an exporter that keeps the spans it is given (the
// SDK's in-memory test exporter keeps their attribute slices) still holds
// the right values after later batches.
func TestRetainingExporter(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.retain", nil)
	mem := tracetest.NewInMemoryExporter()
	p := NewPipeline(WithSpanExporter(mem), WithBatchSize(4), WithScheduleDelay(time.Hour), WithLabels(false))
	g := &meter.Goroutine{}
	const traces = 6
	for i := range traces {
		g.TraceID = uint64(i + 1)
		s := spansOf(probe, 2)
		s[0].Inherent, s[1].Inherent = int64(100*i), int64(100*i+1)
		p.TraceEnded(g, s, false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	stubs := mem.GetSpans() // before Shutdown, which empties the exporter
	p.Shutdown(context.Background())
	if len(stubs) != 2*traces {
		t.Fatalf("%d spans, want %d", len(stubs), 2*traces)
	}
	for i, s := range stubs {
		want := int64(100*(i/2) + i%2)
		if len(s.Attributes) != 1 || s.Attributes[0].Value.AsInt64() != want {
			t.Errorf("span %d: attributes %v, want %s=%d", i, s.Attributes, AttrInherent, want)
		}
		if got := s.SpanContext.TraceID(); got != p.TraceID(uint64(i/2+1)) {
			t.Errorf("span %d: trace %v", i, got)
		}
	}
}

// TestExportTimeout: an export call that runs out of time sees its context
// end with context.DeadlineExceeded at its deadline; the next call gets a
// live context again.
func TestExportTimeout(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.timeout", nil)
	e := &timeoutExporter{}
	p := NewPipeline(WithSpanExporter(e), WithBatchSize(1), WithExportTimeout(50*time.Millisecond),
		WithScheduleDelay(time.Hour), WithLabels(false), WithStderr(io.Discard))
	g := &meter.Goroutine{TraceID: 1}
	for range 3 {
		p.TraceEnded(g, spansOf(probe, 1), false)
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	p.Shutdown(context.Background())
	if len(e.calls) != 3 {
		t.Fatalf("%d export calls, want 3", len(e.calls))
	}
	for i, c := range e.calls {
		if !c.hasDeadline || c.deadline < 30*time.Millisecond || c.deadline > 60*time.Millisecond {
			t.Errorf("call %d: deadline %v (set %v), want about 50ms from the call", i, c.deadline, c.hasDeadline)
		}
	}
	if c := e.calls[0]; c.err != context.DeadlineExceeded || c.waited < 40*time.Millisecond {
		t.Errorf("first call: ended with %v after %v, want context.DeadlineExceeded after about 50ms", c.err, c.waited)
	}
	for i, c := range e.calls[1:] {
		if c.err != nil {
			t.Errorf("call %d: context ended: %v", i+1, c.err)
		}
	}
	if st := p.Stats(); st.Failed != 1 || st.Exported != 3 {
		t.Errorf("failed %d, exported %d; want 1 and 3", st.Failed, st.Exported)
	}
}

// timeoutExporter waits for its context to end in its first call and
// records what each call's context says.
type timeoutExporter struct {
	calls []timeoutCall
}

type timeoutCall struct {
	hasDeadline      bool
	deadline, waited time.Duration
	err              error
}

func (e *timeoutExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	start := time.Now()
	d, ok := ctx.Deadline()
	if len(e.calls) == 0 {
		<-ctx.Done()
	}
	e.calls = append(e.calls, timeoutCall{ok, d.Sub(start), time.Since(start), ctx.Err()})
	return ctx.Err()
}
func (e *timeoutExporter) Shutdown(context.Context) error { return nil }
