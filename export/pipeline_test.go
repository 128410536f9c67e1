package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meterio/meter/internal/fakeclock"
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
	names   map[string]int
}

func (e *checkingExporter) ExportSpans(ctx context.Context, spans []Span) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.batches++
	e.spans += len(spans)
	for _, s := range spans {
		if e.names != nil {
			e.names[s.Name]++
		}
		if s.Inherent != 5 || s.End-s.Start != 5 {
			e.errs = append(e.errs, fmt.Sprintf("span %+v: want inherent 5 and 5 ns long", s))
		}
		if s.Parent < 0 {
			if s.Index != 0 {
				e.errs = append(e.errs, fmt.Sprintf("span %d of a trace has no parent", s.Index))
			}
			continue
		}
		if s.Parent >= s.Index {
			e.errs = append(e.errs, fmt.Sprintf("span %d has parent %d", s.Index, s.Parent))
		}
	}
	if e.slow > 0 {
		// A slow collector: the load under which the test measures what
		// the pipeline drops and counts.
		time.Sleep(e.slow)
	}
	return ctx.Err()
}

func (e *checkingExporter) Shutdown(context.Context) error { return nil }

func (e *checkingExporter) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.spans
}

// spansOf builds a trace of n spans: a chain root → 1 → 2 with the rest
// children of the root.
func spansOf(p *meter.Probe, n int) []meter.Span {
	s := make([]meter.Span, n)
	for i := range s {
		s[i] = meter.Span{Probe: p, Index: int32(i), Parent: int32(min(i-1, 1)), Start: int64(10 * i), End: int64(10*i + 5), Inherent: 5}
	}
	s[0].Parent = -1
	return s
}

// TestPipelineAccountsForEverySpan hands spans over from concurrent
// producers: every span is either exported or dropped and counted, and the
// exporter goroutine wakes about once per batch, never per span. Saturated:
// a small queue behind a slow exporter, so that many spans drop. Keeping up:
// a large queue, so that the exporter sleeps between batches. Under -race,
// a producer writing a slot the exporter still reads would show.
func TestPipelineAccountsForEverySpan(t *testing.T) {
	for _, c := range []struct {
		name  string
		queue int
		slow  time.Duration
	}{{"saturated", 256, time.Millisecond}, {"keeping-up", 1 << 16, 0}} {
		t.Run(c.name, func(t *testing.T) { testAccounting(t, c.queue, c.slow) })
	}
}

func testAccounting(t *testing.T, queue int, slow time.Duration) {
	const (
		producers = 8
		traces    = 3000
		batch     = 64
	)
	probe := meter.NewProbe("example.com/queue.work", nil)
	pace := 20 // traces between pauses
	if slow == 0 {
		pace = 5
	}
	e := &checkingExporter{slow: slow}
	var stderr syncBuffer
	clk := fakeclock.New(time.Unix(0, 0))
	p := newPipeline(config{exporter: e, queueSize: queue, batchSize: batch, delay: time.Hour, stderr: &stderr,
		dropReport: time.Nanosecond, clock: clk})
	// A pause lets the exporter catch up: saturated, producers wait for
	// everything queued to go out (and fill the queue again while the slow
	// exporter works); keeping up, they wait until less than a batch is
	// queued, so that the exporter goes to sleep and is woken.
	pause := func() {
		if slow > 0 {
			clk.Advance(time.Nanosecond) // each drop report is due
			p.Flush(context.Background())
			return
		}
		for p.q.pending() >= batch {
			runtimeYield()
		}
	}
	droppedBefore := meter.Take().Dropped
	var produced atomic.Int64
	var wg sync.WaitGroup
	for w := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var shapes [8][]meter.Span
			for i := range shapes {
				shapes[i] = spansOf(probe, i+1)
			}
			for i := range traces {
				s := shapes[(i+w)%8]
				p.TraceSpans(uint64(w*traces+i+1), s, true, false)
				produced.Add(int64(len(s)))
				if i%pace == pace-1 {
					pause()
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
	// to at least one export call, but for the wake-ups that end a wait
	// for a producer between claim and publication: never one per span.
	if st.Wakeups > int64(e.batches)+st.Stalls || st.Wakeups*batch > n*11/10+8*batch {
		t.Errorf("%d wake-ups (%d after stalls) for %d spans produced and %d export calls in batches of %d",
			st.Wakeups, st.Stalls, n, e.batches, batch)
	}
	for _, msg := range e.errs[:min(len(e.errs), 5)] {
		t.Error(msg)
	}
}

// TestDropReportOncePerInterval: the first loss is reported at once, then
// at most one line per interval however many drops, and one at the end.
func TestDropReportOncePerInterval(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.report", nil)
	var stderr syncBuffer
	p := newPipeline(config{queueSize: 4, batchSize: 4, delay: time.Hour, stderr: &stderr, dropReport: time.Hour})
	for range 100 {
		p.TraceSpans(1, spansOf(probe, 8), true, false) // 4 fit (at most), the rest drop
	}
	p.Flush(context.Background())
	first := stderr.String()
	for range 100 {
		p.TraceSpans(2, spansOf(probe, 8), true, false)
	}
	p.Flush(context.Background())
	if got := stderr.String(); got != first {
		t.Errorf("a second line before the interval passed: %q", got)
	}
	p.Shutdown(context.Background())
	st := p.Stats()
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("stderr %q: want the first report and the last", stderr.String())
	}
	var n1, all1, n2, all2 int64
	if _, err := fmt.Sscanf(lines[0], "meter: export queue full: dropped %d spans (%d lost in all)", &n1, &all1); err != nil {
		t.Fatalf("first line %q: %v", lines[0], err)
	}
	if _, err := fmt.Sscanf(lines[1], "meter: export queue full: dropped %d spans (%d lost in all)", &n2, &all2); err != nil {
		t.Fatalf("last line %q: %v", lines[1], err)
	}
	if n1 != all1 || n1 == 0 || all2 != st.Dropped || n1+n2 != st.Dropped {
		t.Errorf("lines %q, the pipeline dropped %d", lines, st.Dropped)
	}
}

// gatedExporter lets one export call through per value sent on next.
type gatedExporter struct {
	next  chan struct{}
	calls atomic.Int64
}

func (e *gatedExporter) ExportSpans(ctx context.Context, _ []Span) error {
	e.calls.Add(1)
	select {
	case <-e.next:
	case <-ctx.Done():
	}
	return nil
}

func (e *gatedExporter) Shutdown(context.Context) error { return nil }

// TestDropReportWhileQueueStaysFull: while the queue stays full the
// exporter never sleeps, going from one full batch to the next; drops
// must still be reported once per interval. The interval here is 1 ns,
// and the clock moves on by as much in each round, so every batch that
// follows new drops reports them.
func TestDropReportWhileQueueStaysFull(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.full", nil)
	e := &gatedExporter{next: make(chan struct{})}
	var stderr syncBuffer
	clk := fakeclock.New(time.Unix(0, 0))
	p := newPipeline(config{exporter: e, queueSize: 8, batchSize: 4, maxExport: 4, delay: time.Hour,
		stderr: &stderr, dropReport: time.Nanosecond, clock: clk})
	p.TraceSpans(1, spansOf(probe, 4), true, false) // a full batch: the first call
	for e.calls.Load() < 1 {
		runtimeYield()
	}
	const rounds = 5
	for i := range rounds {
		// The exporter is in a call: fill the queue, and drop.
		dropped := p.Stats().Dropped
		for range 4 {
			p.TraceSpans(uint64(i+2), spansOf(probe, 4), true, false)
		}
		if p.Stats().Dropped == dropped {
			t.Fatalf("round %d: nothing dropped", i)
		}
		before := strings.Count(stderr.String(), "\n")
		clk.Advance(time.Nanosecond) // a report is due
		e.next <- struct{}{}         // one batch out; the loop goes on to the next full one
		for e.calls.Load() < int64(i+2) {
			runtimeYield()
		}
		if got := strings.Count(stderr.String(), "\n"); got <= before {
			t.Fatalf("round %d: no line about the drops while the queue stayed full: %q", i, stderr.String())
		}
	}
	close(e.next)
	p.Shutdown(context.Background())
}

// TestScheduleDelay: a partial batch goes out when the delay has passed,
// not before, with one wake-up: the timer's.
func TestScheduleDelay(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.delay", nil)
	e := &checkingExporter{}
	const delay = 50 * time.Millisecond
	clk := fakeclock.New(time.Unix(0, 0))
	p := newPipeline(config{exporter: e, delay: delay, clock: clk})
	defer p.Shutdown(context.Background())
	p.TraceSpans(7, spansOf(probe, 3), true, false)
	for !p.q.parked.Load() { // the exporter goes to sleep...
		runtimeYield()
	}
	clk.WaitArmed(1, nil) // ...until the delay has passed
	clk.Advance(delay - time.Nanosecond)
	if clk.Armed() != 1 || e.count() != 0 {
		t.Fatalf("before the delay: %d timers armed, %d spans exported; want 1 and 0", clk.Armed(), e.count())
	}
	clk.Advance(time.Nanosecond)
	for p.Stats().Exported < 3 { // counted once the export call has returned
		runtimeYield()
	}
	if st := p.Stats(); st.Exported != 3 || e.count() != 3 || st.Wakeups != 1 {
		t.Errorf("after the delay: %+v, the exporter got %d spans; want 3 spans exported and 1 wake-up", st, e.count())
	}
}

// TestShutdownFlushes: what is queued at Shutdown goes out, and spans that
// arrive after it are dropped and counted.
func TestShutdownFlushes(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.shutdown", nil)
	e := &checkingExporter{}
	p := newPipeline(config{exporter: e, delay: time.Hour})
	for range 10 {
		p.TraceSpans(9, spansOf(probe, 5), true, false)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.spans != 50 {
		t.Errorf("exported %d spans at Shutdown, want 50", e.spans)
	}
	p.TraceSpans(10, spansOf(probe, 5), true, false)
	if st := p.Stats(); st.Dropped != 5 {
		t.Errorf("dropped %d spans after Shutdown, want 5", st.Dropped)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// TestShutdownTimeout: an exporter stuck until its context ends does not
// hold Shutdown past the end of Shutdown's context: the call in flight is
// canceled, what is left is dropped and counted, and Shutdown says why.
func TestShutdownTimeout(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.stuck", nil)
	e := stuckExporter{called: make(chan struct{}, 1)}
	p := newPipeline(config{exporter: e, batchSize: 4, delay: time.Hour, stderr: io.Discard})
	for range 10 {
		p.TraceSpans(3, spansOf(probe, 4), true, false)
	}
	<-e.called // the exporter is stuck in its first call
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Shutdown(ctx) }()
	cancel() // Shutdown's time is up
	if err := <-done; err != context.Canceled {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	st := p.Stats()
	if st.Exported+st.Dropped != 40 || st.Dropped == 0 {
		t.Errorf("exported %d + dropped %d: want 40, some dropped", st.Exported, st.Dropped)
	}
}

// stuckExporter blocks each call until its context ends, saying on called
// (when there is room) that a call has begun.
type stuckExporter struct{ called chan struct{} }

func (e stuckExporter) ExportSpans(ctx context.Context, _ []Span) error {
	select {
	case e.called <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}
func (stuckExporter) Shutdown(context.Context) error { return nil }

// TestTraceSpansAllocatesNothing: the producer's side, for a warm
// goroutine, with room in the queue and without.
func TestTraceSpansAllocatesNothing(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.allocs", nil)
	spans := spansOf(probe, 8)
	for _, c := range []struct {
		name  string
		queue int
	}{{"room", 1 << 16}, {"full", 4}} {
		t.Run(c.name, func(t *testing.T) {
			// The batch is the whole queue, so the exporter goroutine
			// sleeps through the measurement.
			p := newPipeline(config{queueSize: c.queue, batchSize: c.queue, delay: time.Hour, stderr: io.Discard})
			defer p.Shutdown(context.Background())
			p.TraceSpans(1, spans, true, false)
			// The exporter goroutine's start (its timer) allocates; the
			// count is process-wide, so it must be over before the count
			// begins.
			for !p.q.parked.Load() {
				runtimeYield()
			}
			if a := allocsPerRun(1000, func() { p.TraceSpans(1, spans, true, false) }); a != 0 {
				t.Errorf("TraceSpans allocates %v times per call", a)
			}
		})
	}
}

// TestTracedCallAllocatesNothing: a whole traced request through the meter
// engine and the sink that Start builds, allocates nothing once warm,
// trace start included: with labels off, and with labels asked for but
// the labels package not linked. (With the pool of marks dry, a trace
// start allocates nothing either: meter's TestDryPoolAllocatesNothing.)
func TestTracedCallAllocatesNothing(t *testing.T) {
	for _, labels := range []bool{false, true} {
		t.Run(fmt.Sprintf("labels=%v", labels), func(t *testing.T) {
			a := newApp(t)
			// A queue that holds every span of the test: a slow exporter
			// (under -race) drops nothing, so nothing is reported.
			e := Start(Settings{Pprof: t.TempDir() + "/p.pprof", Labels: labels, Traces: true, TraceMax: 100_000, Stderr: io.Discard})
			defer e.Close(context.Background())
			defer e.StopTraces(context.Background())
			a.configure(t, e.Sink())
			e.Run()
			for range 2000 { // and the exporter's first batches: its tables grow once
				a.request()
			}
			e.Pipeline().Flush(context.Background())
			// The warm-up's blocks of marks (meter/join.go) back from the
			// collector, so that the pool needs no refill, whose goroutine
			// would allocate, while 100 traces run.
			for range 3 {
				runtime.GC()
				for range 10 {
					runtime.Gosched() // the finalizers' goroutine
				}
			}
			if n := allocsPerRun(100, a.request); n != 0 {
				t.Errorf("a traced request allocates %v times", n)
			}
		})
	}
}

// TestExportBatchAllocatesNothing: the exporter goroutine's work for a
// batch (take, call paths, conversion, the export call's context) allocates
// nothing once warm.
func TestExportBatchAllocatesNothing(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.batchallocs", nil)
	p := idlePipeline(nopExporter{}, newCallPaths())
	spans := spansOf(probe, 8)
	round := func() {
		for i := range 64 {
			p.TraceSpans(uint64(i), spans, true, false)
		}
		for p.exportOnce() > 0 {
		}
	}
	round()
	if n := allocsPerRun(100, round); n != 0 {
		t.Errorf("%v allocations per 512 spans exported", n)
	}
}

// idlePipeline is a pipeline whose goroutine does not run: the caller
// drives exportOnce.
func idlePipeline(e SpanExporter, paths *CallPaths) *Pipeline {
	c := config{exporter: e, paths: paths, exportTimeout: time.Hour, batchSize: 512, maxExport: 512, queueSize: 2048,
		backoff: time.Second, backoffMax: time.Second, stderr: io.Discard}.withDefaults()
	p := &Pipeline{cfg: c, q: newQueue(2048, 512), ctx: context.Background(), exporter: e, buf: make([]Span, 512)}
	return p
}

type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []Span) error { return nil }
func (nopExporter) Shutdown(context.Context) error            { return nil }

// failingExporter fails every call and counts them.
type failingExporter struct{ calls atomic.Int64 }

func (e *failingExporter) ExportSpans(context.Context, []Span) error {
	e.calls.Add(1)
	return errors.New("connection refused")
}
func (e *failingExporter) Shutdown(context.Context) error { return nil }

// TestBackoff: after a failed call the exporter makes no call until its
// back-off ends (here an hour: so none), producers drop their spans at
// once meanwhile, and every span is accounted for; the line on stderr
// names the error. At Shutdown, while backing off, no last attempt is made.
func TestBackoff(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.backoff", nil)
	e := &failingExporter{}
	var stderr syncBuffer
	p := newPipeline(config{exporter: e, queueSize: 64, batchSize: 8, delay: time.Hour,
		backoff: time.Hour, backoffMax: time.Hour, stderr: &stderr})
	p.TraceSpans(1, spansOf(probe, 8), true, false) // a full batch: one call, which fails
	for !p.refusing.Load() {
		runtimeYield()
	}
	for i := range 1000 {
		p.TraceSpans(uint64(i+2), spansOf(probe, 8), true, false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if e.calls.Load() != 1 || st.Errors != 1 || st.Failed != 8 || st.Dropped != 8000 {
		t.Errorf("calls %d, stats %+v: want 1 call, 8 spans failed, 8000 dropped at once", e.calls.Load(), st)
	}
	p.Shutdown(context.Background())
	if e.calls.Load() != 1 {
		t.Errorf("%d calls: Shutdown tried again while backing off", e.calls.Load())
	}
	out := stderr.String()
	if !strings.Contains(out, "connection refused") || !strings.Contains(out, "8008 in all") {
		t.Errorf("stderr %q", out)
	}
}

// TestBackoffRetries: no call is made while the back-off lasts, however
// many spans come; once it has ended, the next batch is tried. Each
// failure in a row doubles the wait up to the cap (TestBackoffDelays).
func TestBackoffRetries(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.retry", nil)
	e := &failingExporter{}
	clk := fakeclock.New(time.Unix(0, 0))
	p := newPipeline(config{exporter: e, queueSize: 64, batchSize: 8, delay: time.Hour,
		backoff: time.Millisecond, backoffMax: 4 * time.Millisecond, stderr: io.Discard, clock: clk})
	defer p.Shutdown(context.Background())
	for calls := int64(1); calls <= 5; calls++ {
		for p.Stats().Errors < calls { // an error counts once its call has returned
			p.TraceSpans(1, spansOf(probe, 8), true, false)
			runtimeYield()
		}
		// Backing off: the spans drop at once, and no call is made.
		if err := p.Flush(context.Background()); err != nil { // what was queued before the call failed drops now
			t.Fatal(err)
		}
		dropped := p.Stats().Dropped
		p.TraceSpans(2, spansOf(probe, 8), true, false)
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := p.Stats(); st.Errors != calls || e.calls.Load() != calls || st.Dropped != dropped+8 {
			t.Fatalf("while backing off after call %d: %+v, %d calls; want no call and 8 more spans dropped", calls, st, e.calls.Load())
		}
		for p.refusing.Load() { // the back-off ends when the clock passes it
			clk.Advance(time.Millisecond)
			runtimeYield()
		}
	}
}

func TestBackoffDelays(t *testing.T) {
	c := config{backoff: time.Second, backoffMax: 30 * time.Second}
	for failures, want := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		if failures == 0 {
			continue
		}
		for range 100 {
			d := backoffDelay(c, failures)
			if d < want/2 || d > want {
				t.Fatalf("after %d failures: %v, want between %v and %v", failures, d, want/2, want)
			}
		}
	}
	if d := backoffDelay(c, 1000); d > 30*time.Second {
		t.Fatalf("after 1000 failures: %v", d)
	}
}

// TestHoldUntilAttached: a pipeline built to wait for an exporter keeps
// what producers hand it until the exporter comes, then exports it all.
func TestHoldUntilAttached(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.hold", nil)
	p := newPipeline(config{hold: true, queueSize: 64, batchSize: 8, delay: time.Hour, stderr: io.Discard})
	defer p.Shutdown(context.Background())
	for i := range 5 {
		p.TraceSpans(uint64(i+1), spansOf(probe, 8), true, false)
	}
	p.Flush(context.Background())
	if st := p.Stats(); st.Exported != 0 || st.Queued != 40 {
		t.Fatalf("before the exporter came: %+v", st)
	}
	e := &checkingExporter{}
	p.attach(e)
	p.Flush(context.Background())
	if st := p.Stats(); st.Exported != 40 || e.count() != 40 || st.Dropped != 0 {
		t.Fatalf("after: %+v, the exporter got %d", st, e.count())
	}
}

// TestReleasedWithoutExporter: when no exporter will come and nothing else
// wants spans, the pipeline takes no more of them, and counts nothing lost.
func TestReleasedWithoutExporter(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.release", nil)
	p := newPipeline(config{hold: true, queueSize: 64, batchSize: 8, delay: time.Hour, stderr: io.Discard})
	defer p.Shutdown(context.Background())
	p.TraceSpans(1, spansOf(probe, 8), true, false)
	p.attach(nil)
	p.Flush(context.Background())
	p.TraceSpans(2, spansOf(probe, 8), true, false)
	if st := p.Stats(); st.Queued != 8 || st.Dropped != 0 || p.q.pending() != 0 {
		t.Fatalf("stats %+v, %d pending", st, p.q.pending())
	}
}

// TestExportTimeout: an export call's context has its deadline the export
// timeout from the call, and ends with context.DeadlineExceeded when the
// clock reaches it; the next call gets a live context again.
func TestExportTimeout(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.timeout", nil)
	const timeout = 50 * time.Millisecond
	clk := fakeclock.New(time.Unix(0, 0))
	e := &timeoutExporter{clk: clk, waiting: make(chan struct{})}
	p := newPipeline(config{exporter: e, batchSize: 1, exportTimeout: timeout, delay: time.Hour,
		backoff: time.Nanosecond, backoffMax: time.Nanosecond, stderr: io.Discard, clock: clk})
	for i := range 3 {
		p.TraceSpans(1, spansOf(probe, 1), true, false)
		if i == 0 {
			<-e.waiting // the first call waits for its context to end
			clk.WaitArmed(1, nil)
			clk.Advance(timeout - time.Nanosecond)
			if e.ended.Load() {
				t.Fatal("the first call's context ended before its deadline")
			}
			clk.Advance(time.Nanosecond)
		}
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		for p.refusing.Load() { // the back-off of a nanosecond ends at the exporter's next turn
			clk.Advance(time.Nanosecond)
			runtimeYield()
		}
	}
	p.Shutdown(context.Background())
	if len(e.calls) != 3 {
		t.Fatalf("%d export calls, want 3", len(e.calls))
	}
	for i, c := range e.calls {
		if !c.hasDeadline || c.deadline != timeout {
			t.Errorf("call %d: deadline %v from the call (set %v), want %v", i, c.deadline, c.hasDeadline, timeout)
		}
	}
	if c := e.calls[0]; c.err != context.DeadlineExceeded || c.waited != timeout {
		t.Errorf("first call: ended with %v after %v, want context.DeadlineExceeded after %v", c.err, c.waited, timeout)
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

// timeoutExporter waits for its context to end in its first call, saying
// on waiting that it does, and records what each call's context says, in
// the time of clk.
type timeoutExporter struct {
	clk     *fakeclock.Clock
	waiting chan struct{}
	ended   atomic.Bool // the first call's context has ended
	calls   []timeoutCall
}

type timeoutCall struct {
	hasDeadline      bool
	deadline, waited time.Duration
	err              error
}

func (e *timeoutExporter) ExportSpans(ctx context.Context, _ []Span) error {
	start := e.clk.Now()
	d, ok := ctx.Deadline()
	if len(e.calls) == 0 {
		close(e.waiting)
		<-ctx.Done()
		e.ended.Store(true)
	}
	e.calls = append(e.calls, timeoutCall{ok, d.Sub(start), e.clk.Now().Sub(start), ctx.Err()})
	return ctx.Err()
}
func (e *timeoutExporter) Shutdown(context.Context) error { return nil }

// recordingExporter keeps a copy of every span it is given.
type recordingExporter struct {
	mu    sync.Mutex
	spans []Span
}

func (e *recordingExporter) ExportSpans(_ context.Context, spans []Span) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.spans = append(e.spans, spans...)
	return nil
}
func (e *recordingExporter) Shutdown(context.Context) error { return nil }

// TestParts: a trace handed over in parts reaches the exporter with its
// indexes and parent links as given, the truncated part's spans marked,
// and times converted to wall-clock nanoseconds.
func TestParts(t *testing.T) {
	a := newApp(t)
	e := &recordingExporter{}
	p := newPipeline(config{exporter: e, delay: time.Hour})
	// root(0) → work(1) → leaf(2); leaf and... the first part holds the
	// span that ended while the root ran, the final part the rest.
	first := []meter.Span{{Probe: a.lex, Index: 2, Parent: 1, Start: 30, End: 40, Inherent: 10}}
	final := []meter.Span{
		{Probe: a.handle, Index: 0, Parent: -1, Start: 10, End: 100, Inherent: 50},
		{Probe: a.parse, Index: 1, Parent: 0, Start: 20, End: 60, Inherent: 30},
		{Probe: a.parse, Index: 3, Parent: 0, Start: 70, End: 0, Inherent: 0}, // cut off
	}
	p.TraceSpans(42, first, false, true)
	p.TraceSpans(42, final, true, false)
	p.Shutdown(context.Background())
	if len(e.spans) != 4 {
		t.Fatalf("%d spans", len(e.spans))
	}
	base := e.spans[1].Start - 10 // the manual clock's tick 0 in wall time
	for i, want := range []Span{
		{Trace: 42, Index: 2, Parent: 1, Name: a.lex.Name(), Start: base + 30, End: base + 40, Inherent: 10, Truncated: true},
		{Trace: 42, Index: 0, Parent: -1, Name: a.handle.Name(), Start: base + 10, End: base + 100, Inherent: 50},
		{Trace: 42, Index: 1, Parent: 0, Name: a.parse.Name(), Start: base + 20, End: base + 60, Inherent: 30},
		{Trace: 42, Index: 3, Parent: 0, Name: a.parse.Name(), Start: base + 70, End: base + 70},
	} {
		if e.spans[i] != want {
			t.Errorf("span %d: %+v, want %+v", i, e.spans[i], want)
		}
	}
	if now := time.Now().UnixNano(); base > now || now-base > int64(time.Hour) {
		t.Errorf("times are not wall-clock nanoseconds: %d, now %d", base, now)
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

var _ Clock = (*fakeclock.Clock)(nil)
