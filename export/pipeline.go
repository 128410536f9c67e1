package export

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/meterio/meter/meter"
)

// Defaults of the trace pipeline, the same as the OpenTelemetry batch span
// processor's.
const (
	DefaultQueueSize     = 2048
	DefaultBatchSize     = 512
	DefaultScheduleDelay = 5 * time.Second
	DefaultExportTimeout = 30 * time.Second
	DefaultDropReport    = 10 * time.Second
)

type config struct {
	queueSize     int
	batchSize     int
	delay         time.Duration
	exportTimeout time.Duration
	dropReport    time.Duration
	exporter      sdktrace.SpanExporter
	paths         *CallPaths
	labels        bool
	stderr        io.Writer
	lockThread    bool
}

// Option configures a Pipeline.
type Option interface{ apply(config) config }

type optionFunc func(config) config

func (f optionFunc) apply(c config) config { return f(c) }

// WithQueueSize sets how many spans may wait for export (rounded up to a
// power of two). Spans that do not fit are dropped and counted.
func WithQueueSize(n int) Option {
	return optionFunc(func(c config) config { c.queueSize = n; return c })
}

// WithBatchSize sets how many spans wake the exporter and go out in one
// export call.
func WithBatchSize(n int) Option {
	return optionFunc(func(c config) config { c.batchSize = n; return c })
}

// WithScheduleDelay sets how long a partial batch may wait.
func WithScheduleDelay(d time.Duration) Option {
	return optionFunc(func(c config) config { c.delay = d; return c })
}

// WithExportTimeout bounds one export call.
func WithExportTimeout(d time.Duration) Option {
	return optionFunc(func(c config) config { c.exportTimeout = d; return c })
}

// WithDropReport sets how often, at most, a line on standard error reports
// dropped spans.
func WithDropReport(d time.Duration) Option {
	return optionFunc(func(c config) config { c.dropReport = d; return c })
}

// WithSpanExporter sends the spans through an OpenTelemetry span exporter
// (otlptracegrpc, otlptracehttp, or any other).
func WithSpanExporter(e sdktrace.SpanExporter) Option {
	return optionFunc(func(c config) config { c.exporter = e; return c })
}

// WithCallPaths adds every exported span to paths, for the pprof profile.
func WithCallPaths(paths *CallPaths) Option {
	return optionFunc(func(c config) config { c.paths = paths; return c })
}

// WithLabels sets whether traced goroutines carry pprof labels (default
// true).
func WithLabels(on bool) Option {
	return optionFunc(func(c config) config { c.labels = on; return c })
}

// WithStderr sets where the dropped-spans line goes (default os.Stderr).
func WithStderr(w io.Writer) Option {
	return optionFunc(func(c config) config { c.stderr = w; return c })
}

// WithLockedThread locks the exporter goroutine to its OS thread, so that
// a benchmark can read that thread's CPU time.
func WithLockedThread() Option {
	return optionFunc(func(c config) config { c.lockThread = true; return c })
}

// Pipeline is the trace export path, and the meter.Sink that feeds it. The
// traced goroutine copies a finished trace's spans into a bounded lock-free
// queue; one exporter goroutine takes them in batches and hands them, where
// they lie in the queue, to the span exporter and the call paths.
type Pipeline struct {
	cfg   config
	q     *queue
	trace [8]byte // high half of every trace id: random per process
	span  uint32  // high half of every span id: random per process

	// Read by producers on every trace; dropped written only on drops.
	closed  atomic.Bool
	dropped atomic.Int64 // spans dropped, since the start
	_       pad
	// Written by the exporter goroutine, on a line of their own.
	wakeups atomic.Int64 // times the exporter goroutine woke
	stalls  atomic.Int64 // of those, waits for a producer between claim and publication
	sent    atomic.Int64 // spans handed to the exporter and the paths
	failed  atomic.Int64 // spans in export calls that returned an error
	_       pad

	ctx      context.Context // canceled when Shutdown runs out of time
	cancel   context.CancelFunc
	stop     chan struct{}
	flushReq chan chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	cpu      atomic.Int64 // exporter thread CPU ns, with WithLockedThread

	// Owned by the exporter goroutine. For a SpanCopier, views[i] shows the
	// record in the queue's slot i, for good; ro[j] is &views[j&mask] for j
	// up to queue size + batch size, so that ro[i:i+n] are the spans of n
	// records from slot i on, wrapped around the ring or not.
	views    []spanView
	ro       []sdktrace.ReadOnlySpan
	res      *resource.Resource
	reported int64     // dropped, as of the last line on stderr
	failRep  int64     // failed, as of the last line on stderr
	lastErr  error     // the last export error
	lastLine time.Time // when the last line was written

	reuse  bool // the exporter is a SpanCopier: reuse views across batches
	gen    exportGen
	labels labeler
}

var _ meter.Sink = (*Pipeline)(nil)

// NewPipeline starts the exporter goroutine. Stop it with Shutdown.
func NewPipeline(opts ...Option) *Pipeline {
	c := config{
		queueSize:     DefaultQueueSize,
		batchSize:     DefaultBatchSize,
		delay:         DefaultScheduleDelay,
		exportTimeout: DefaultExportTimeout,
		dropReport:    DefaultDropReport,
		labels:        true,
		stderr:        os.Stderr,
	}
	for _, o := range opts {
		c = o.apply(c)
	}
	if c.queueSize < 1 {
		c.queueSize = DefaultQueueSize
	}
	if c.batchSize < 1 {
		c.batchSize = DefaultBatchSize
	}
	if c.batchSize > c.queueSize {
		c.batchSize = c.queueSize
	}
	if c.delay <= 0 {
		c.delay = DefaultScheduleDelay
	}
	if c.exportTimeout <= 0 {
		c.exportTimeout = DefaultExportTimeout
	}
	p := &Pipeline{
		cfg:      c,
		q:        newQueue(c.queueSize, c.batchSize),
		stop:     make(chan struct{}),
		flushReq: make(chan chan struct{}),
		done:     make(chan struct{}),
		lastLine: time.Now(),
	}
	var salt [12]byte
	rand.Read(salt[:])
	copy(p.trace[:], salt[:8])
	p.span = binary.BigEndian.Uint32(salt[8:]) | 1
	p.initViews()
	p.labels.on = c.labels
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.run()
	return p
}

// initViews sets up the spans handed to the exporter: for a SpanCopier, one
// fixed view per queue slot (see the Pipeline's fields).
func (p *Pipeline) initViews() {
	if p.cfg.exporter == nil {
		return
	}
	p.res = resourceOf(p.cfg.exporter)
	_, p.reuse = p.cfg.exporter.(SpanCopier)
	if !p.reuse {
		return
	}
	p.views = make([]spanView, len(p.q.slots))
	for i := range p.views {
		p.view(&p.views[i], &p.q.slots[i].rec, p.res)
	}
	p.ro = make([]sdktrace.ReadOnlySpan, len(p.q.slots)+p.cfg.batchSize)
	for i := range p.ro {
		p.ro[i] = &p.views[i&int(p.q.mask)]
	}
}

// TraceStarted sets the goroutine's pprof labels (see labels.go).
func (p *Pipeline) TraceStarted(g *meter.Goroutine, root *meter.Probe) {
	p.labels.started(g, root)
}

// TraceSpans copies the trace's spans into the queue and wakes the exporter
// if they complete a batch. It runs on the traced goroutine.
//
// Cost: one CAS on the queue's tail for the whole trace, then a 64-byte copy
// and an atomic store per span, then one atomic add for the whole trace; no
// lock, no allocation, no blocking. Spans that do not fit are dropped and
// counted. The producer whose spans complete a batch, or fill the slot the
// exporter waits on, wakes the exporter. A producer that finds the queue
// full while the exporter is still parked yields its processor
// (runtime.Gosched), so that the woken exporter gets to run.
func (p *Pipeline) TraceSpans(trace uint64, spans []meter.Span, final, truncated bool) {
	n := len(spans)
	if n == 0 {
		return
	}
	if p.closed.Load() {
		p.drop(n)
		return
	}
	pos, k := p.q.claim(n)
	r := record{trace: trace}
	for i := 0; i < k; i++ {
		s := &spans[i]
		r.probe, r.start, r.end, r.inherent, r.parent, r.index = s.Probe, s.Start, s.End, s.Inherent, s.Parent, s.Index
		r.flags = 0
		if s.Parent < 0 && truncated {
			r.flags = flagTruncated
		}
		p.q.publish(pos+uint64(i), &r)
	}
	if k < n {
		// Spans are in the order their firings began, so the prefix
		// that fits keeps every parent link.
		p.drop(n - k)
		if p.q.parked.Load() {
			// Full, and the exporter has been woken but has not run:
			// Go runs a woken goroutine only when a processor is free,
			// and with every P producing it would wait for preemption
			// (10 ms) while spans drop. Yield the processor.
			runtime.Gosched()
		}
	}
	if k > 0 {
		p.q.produced(pos, k)
	}
}

func (p *Pipeline) drop(n int) {
	p.dropped.Add(int64(n))
	meter.AddDropped(int64(n))
}

// Stats describes what the pipeline did so far.
type Stats struct {
	Queued   int64 // spans that entered the queue
	Dropped  int64 // spans dropped: queue full or pipeline shut down
	Exported int64 // spans handed to the exporter (and the call paths)
	Failed   int64 // of those, spans whose export call returned an error
	Wakeups  int64 // times the exporter goroutine woke up
	Stalls   int64 // of those, after waiting for a producer between its claim and its publication
}

// Stats returns the pipeline's counters.
func (p *Pipeline) Stats() Stats {
	return Stats{
		Queued:   int64(p.q.tail.Load()), // every claimed slot is a queued span
		Dropped:  p.dropped.Load(),
		Exported: p.sent.Load(),
		Wakeups:  p.wakeups.Load(),
		Stalls:   p.stalls.Load(),
		Failed:   p.failed.Load(),
	}
}

// ExporterCPU returns the exporter thread's CPU time so far, when the
// pipeline was built WithLockedThread (0 otherwise or where unsupported).
func (p *Pipeline) ExporterCPU() time.Duration { return time.Duration(p.cpu.Load()) }

// Flush exports everything queued now and waits until it is out, or until
// ctx is done.
func (p *Pipeline) Flush(ctx context.Context) error {
	reply := make(chan struct{})
	select {
	case p.flushReq <- reply:
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops taking spans, exports what is queued and stops the
// exporter goroutine and the span exporter. If ctx ends first, the export in
// flight is canceled and what is left is dropped and counted; Shutdown still
// returns only once the goroutine has stopped. Later calls do nothing.
func (p *Pipeline) Shutdown(ctx context.Context) error {
	var err error
	p.stopOnce.Do(func() {
		p.closed.Store(true)
		close(p.stop)
		select {
		case <-p.done:
		case <-ctx.Done():
			err = ctx.Err()
			p.cancel()
			<-p.done
		}
		p.cancel()
		if p.cfg.exporter != nil {
			sctx := ctx
			if sctx.Err() != nil { // out of time: give the exporter a moment to close its connections
				var cancel context.CancelFunc
				sctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
			}
			if e := p.cfg.exporter.Shutdown(sctx); err == nil {
				err = e
			}
		}
	})
	return err
}

func (p *Pipeline) run() {
	defer close(p.done)
	if p.cfg.lockThread {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer p.readCPU()
	}
	timer := time.NewTimer(p.cfg.delay)
	defer timer.Stop()
	batch := p.cfg.batchSize
	for {
		// Full batches first.
		for p.q.pending() >= batch {
			if p.exportOnce() == 0 {
				p.waitHole()
			}
			if p.ctx.Err() != nil {
				break
			}
		}
		if p.cfg.lockThread {
			p.readCPU()
		}
		if !p.q.arm(batch) {
			continue
		}
		p.q.parked.Store(true)
		select {
		case <-p.q.wake:
			p.q.parked.Store(false)
			p.q.disarm()
			p.wakeups.Add(1)
		case <-timer.C:
			p.q.parked.Store(false)
			p.q.disarm()
			p.wakeups.Add(1)
			p.exportAll()
			timer.Reset(p.cfg.delay)
		case reply := <-p.flushReq:
			p.q.parked.Store(false)
			p.q.disarm()
			p.exportAll()
			close(reply)
		case <-p.stop:
			p.q.parked.Store(false)
			p.q.disarm()
			p.exportAll()
			p.report(true)
			return
		}
		p.report(false)
	}
}

// waitHole waits until the producer that claimed the position at the head
// has published it, or the pipeline's context ends. That producer is
// between its claim and its add, usually running on another processor and
// done within nanoseconds, so yielding once is often enough; but it may
// have lost its thread (to the OS, or to Go's preemption), for
// milliseconds: then the exporter sleeps until the producer wakes it,
// rather than spin.
func (p *Pipeline) waitHole() {
	runtime.Gosched()
	if !p.q.armHole() {
		p.q.disarmHole()
		return
	}
	p.q.parked.Store(true) // producers that find the queue full yield (TraceEnded)
	select {
	case <-p.q.wake:
	case <-p.ctx.Done():
	}
	p.q.parked.Store(false)
	p.q.disarmHole()
	p.wakeups.Add(1)
	p.stalls.Add(1)
}

// exportAll exports until the queue is empty, waiting briefly for producers
// that claimed slots and have not filled them yet, and giving up when the
// pipeline's context is canceled.
func (p *Pipeline) exportAll() {
	for p.q.pending() > 0 && p.ctx.Err() == nil {
		if p.exportOnce() == 0 {
			p.waitHole()
		}
	}
	if n := p.q.pending(); n > 0 && p.ctx.Err() != nil {
		// Out of time: what is left is dropped. Taking it frees the room
		// that published spans held; count what was taken.
		for {
			_, k := p.q.take(p.cfg.batchSize)
			if k == 0 {
				break
			}
			p.drop(k)
		}
	}
}

// exportOnce takes up to one batch of published records and exports it.
// The records are read where they lie in the queue, which producers leave
// alone until the next take: for a SpanCopier, the spans handed over are
// the fixed views of those slots, and nothing is copied or written per
// span. An exporter that may keep the spans gets copies of its own.
func (p *Pipeline) exportOnce() int {
	h, n := p.q.take(p.cfg.batchSize)
	if n == 0 {
		return 0
	}
	if p.cfg.paths != nil {
		p.cfg.paths.add(p.q.records(h, n))
	}
	if p.cfg.exporter != nil {
		var ro []sdktrace.ReadOnlySpan
		if p.reuse {
			i := int(h & p.q.mask)
			ro = p.ro[i : i+n]
		} else {
			// The exporter may keep the spans: give it memory of its own.
			recs := make([]record, 0, n)
			a, b := p.q.records(h, n)
			for i := range a {
				recs = append(recs, a[i].rec)
			}
			for i := range b {
				recs = append(recs, b[i].rec)
			}
			views := make([]spanView, n)
			ro = make([]sdktrace.ReadOnlySpan, n)
			for i := range ro {
				p.view(&views[i], &recs[i], p.res)
				ro[i] = &views[i]
			}
		}
		ctx := p.exportCtx()
		if err := p.cfg.exporter.ExportSpans(ctx, ro); err != nil {
			// Lost too: the model counts them with the dropped spans.
			p.failed.Add(int64(n))
			meter.AddDropped(int64(n))
			p.lastErr = err
		}
		p.exportDone()
	}
	p.sent.Add(int64(n))
	return n
}

// exportGen is what bounds export calls in time, reused from one call to
// the next until a call runs out of time: a context canceled by the
// pipeline's (at Shutdown) or by the timer, and the timer, armed for each
// call. A context.WithTimeout per call would cost, per batch, a timer and
// a context made and discarded and a child registered with the pipeline's
// context and removed again: most of the exporter goroutine's work for a
// batch of 512 spans to a no-op exporter.
type exportGen struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

// exportCtx returns the context for one export call, with its deadline set
// exportTimeout from now, and arms the timer. One small allocation.
func (p *Pipeline) exportCtx() context.Context {
	g := &p.gen
	if g.ctx == nil {
		ctx, cancel := context.WithCancelCause(p.ctx)
		g.ctx, g.cancel = ctx, cancel
		g.timer = time.AfterFunc(time.Hour, func() { cancel(context.DeadlineExceeded) })
		g.timer.Stop()
	}
	d := p.cfg.exportTimeout
	g.timer.Reset(d)
	return &callCtx{Context: g.ctx, deadline: time.Now().Add(d)}
}

// exportDone disarms the timer after an export call; if the call ran out
// of time (or Shutdown canceled it), the next call gets a fresh context.
func (p *Pipeline) exportDone() {
	g := &p.gen
	if !g.timer.Stop() || g.ctx.Err() != nil {
		g.cancel(context.Canceled) // releases it from the pipeline's context
		*g = exportGen{}
	}
}

// callCtx is the context of one export call: the reused context, with that
// call's deadline. Err is context.DeadlineExceeded once the call has run out
// of time, as with context.WithTimeout.
type callCtx struct {
	context.Context
	deadline time.Time
}

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callCtx) Err() error {
	if c.Context.Err() == nil {
		return nil
	}
	return context.Cause(c.Context)
}

// report prints one line on standard error about spans dropped, and one
// about failed exports, since the last lines: at most once per drop-report
// interval, and at the end.
func (p *Pipeline) report(final bool) {
	d, fl := p.dropped.Load(), p.failed.Load()
	if d == p.reported && fl == p.failRep {
		return
	}
	now := time.Now()
	if !final && now.Sub(p.lastLine) < p.cfg.dropReport {
		return
	}
	if d != p.reported {
		fmt.Fprintf(p.cfg.stderr, "meter: export queue full: dropped %d spans (%d in all)\n", d-p.reported, d)
	}
	if fl != p.failRep {
		fmt.Fprintf(p.cfg.stderr, "meter: exporting spans failed: %v; lost %d spans (%d in all)\n", p.lastErr, fl-p.failRep, fl)
	}
	p.reported, p.failRep, p.lastLine = d, fl, now
}
