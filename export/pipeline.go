package export

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/meter"
)

// Defaults of the trace pipeline. Queue, batch and delay are the
// OpenTelemetry batch span processor's; the back-off starts at one second
// and doubles up to thirty, as the OpenTelemetry exporters' retries do.
const (
	defaultQueueSize     = 2048
	defaultBatchSize     = 512
	defaultScheduleDelay = 5 * time.Second
	defaultExportTimeout = 30 * time.Second
	defaultDropReport    = 10 * time.Second
	defaultBackoff       = time.Second
	defaultBackoffMax    = 30 * time.Second
	// defaultMaxExportBatches is how many batches, at most, go out in one
	// export call when more than one waits.
	defaultMaxExportBatches = 4
)

// PipelineConfig configures a Pipeline that NewPipeline builds. A zero
// field takes its default.
type PipelineConfig struct {
	// Exporter receives the spans. Nil: none; spans are then counted as
	// exported once taken from the queue.
	Exporter SpanExporter
	// QueueSize is how many spans may wait for export (default 2048, the
	// OpenTelemetry batch span processor's). Spans that do not fit are
	// dropped and counted.
	QueueSize int
	// BatchSize is how many spans wake the exporter goroutine and go out
	// in one export call (default 512).
	BatchSize int
	// MaxExportBatch is how many spans, at most, go out in one export call
	// when more than a batch waits, so that a backlog goes out in fewer
	// round trips (default four batches; less than BatchSize takes the
	// default).
	MaxExportBatch int
	// ScheduleDelay is how long a partial batch may wait (default 5 s).
	ScheduleDelay time.Duration
	// Stderr takes the line about lost spans (default os.Stderr).
	Stderr io.Writer
	// Clock is the time the pipeline keeps (default the system's): see
	// Clock.
	Clock Clock
}

// Clock is the time a Pipeline keeps: when a partial batch goes out, an
// export call's deadline, the back-off after a failed call, and how often
// lost spans are reported. The system's clock is the default; a test
// passes one that it moves by hand, so that it waits for none of these.
//
// AfterFunc calls f on a goroutine of its own once d has passed, as
// time.AfterFunc does, and returns the timer, which Reset arms again and
// Stop disarms (each reports whether the timer was armed). A *time.Timer
// is such a timer; the interface is spelled out, rather than named, so
// that a clock needs no import of this package.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) interface {
		Reset(d time.Duration) bool
		Stop() bool
	}
}

// timer is what Clock.AfterFunc returns.
type timer = interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// systemClock is the time package's clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) interface {
	Reset(d time.Duration) bool
	Stop() bool
} {
	return time.AfterFunc(d, f)
}

// config is what a pipeline runs with: a PipelineConfig's fields, and
// what only this package sets.
type config struct {
	queueSize     int
	batchSize     int
	maxExport     int
	delay         time.Duration
	exportTimeout time.Duration
	dropReport    time.Duration
	backoff       time.Duration
	backoffMax    time.Duration
	exporter      SpanExporter
	paths         *CallPaths
	stderr        io.Writer
	clock         Clock
	// hold keeps spans queued until an exporter is attached (or attach
	// says none will be): an exporter registered by a package whose init
	// runs after the first probe registration still gets the traces that
	// ended in between.
	hold bool
}

// withDefaults returns c with every zero field set to its default, and
// the batch and export sizes made to fit the queue.
func (c config) withDefaults() config {
	if c.queueSize < 1 {
		c.queueSize = defaultQueueSize
	}
	if c.batchSize < 1 {
		c.batchSize = defaultBatchSize
	}
	c.batchSize = min(c.batchSize, c.queueSize)
	if c.maxExport < c.batchSize {
		c.maxExport = defaultMaxExportBatches * c.batchSize
	}
	if c.delay <= 0 {
		c.delay = defaultScheduleDelay
	}
	if c.exportTimeout <= 0 {
		c.exportTimeout = defaultExportTimeout
	}
	if c.dropReport <= 0 {
		c.dropReport = defaultDropReport
	}
	if c.backoff <= 0 {
		c.backoff = defaultBackoff
	}
	c.backoffMax = max(c.backoffMax, c.backoff)
	if c.stderr == nil {
		c.stderr = os.Stderr
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}
	return c
}

// Pipeline is the trace export path, and the meter.Sink that feeds it. The
// traced goroutine copies spans into a bounded lock-free queue; one
// exporter goroutine takes them in batches, adds them where they lie to the
// call paths, and converts them into a buffer of its own for the span
// exporter.
type Pipeline struct {
	cfg config
	q   *queue

	// Read by producers on every hand-over; dropped written only on drops.
	closed   atomic.Bool  // Shutdown has begun
	refusing atomic.Bool  // backing off, and nothing else wants the spans: drop at once
	idle     atomic.Bool  // nothing will ever want the spans: ignore them
	dropped  atomic.Int64 // spans lost before reaching the exporter, since the start
	_        pad
	// Written by the exporter goroutine, on a line of their own.
	wakeups atomic.Int64 // times the exporter goroutine woke
	stalls  atomic.Int64 // of those, waits for a producer between claim and publication
	sent    atomic.Int64 // spans handed to the exporter, or to the call paths alone
	failed  atomic.Int64 // spans in export calls that returned an error
	errors  atomic.Int64 // export calls that returned an error
	_       pad

	ctx      context.Context // canceled when Shutdown runs out of time
	cancel   context.CancelFunc
	stop     chan struct{}
	flushReq chan chan struct{}
	attachCh chan attachment
	done     chan struct{}
	tick     chan struct{} // the exporter's timer fired
	stopOnce sync.Once

	// Owned by the exporter goroutine.
	exporter     SpanExporter
	holding      bool
	buf          []Span // the batch handed to the exporter
	names        probeNames
	timer        timer     // sends on tick
	nextTick     time.Time // when partial batches go out next
	failures     int       // export calls failed in a row
	backoffUntil time.Time // no export call before this
	reported     int64     // dropped, as of the last line on stderr
	failRep      int64     // failed, as of the last line on stderr
	lastErr      error     // the last export error
	lastLine     time.Time // when the last line was written
	gen          exportGen
}

type attachment struct{ e SpanExporter }

var _ meter.Sink = (*Pipeline)(nil)

// NewPipeline starts a trace pipeline and its exporter goroutine; stop it
// with Shutdown. The probe package builds the pipeline that the METER_*
// properties ask for by itself (Start); NewPipeline is for a program that
// wires the engine by hand (meter.Configure, with the pipeline as the
// chain's Sink) and brings its own exporter: otlp.NewSpanExporter's, or a
// benchmark's.
func NewPipeline(c PipelineConfig) *Pipeline {
	return newPipeline(config{
		exporter:  c.Exporter,
		queueSize: c.QueueSize,
		batchSize: c.BatchSize,
		maxExport: c.MaxExportBatch,
		delay:     c.ScheduleDelay,
		stderr:    c.Stderr,
		clock:     c.Clock,
	})
}

// newPipeline starts the exporter goroutine of a pipeline configured by c,
// whose zero fields take their defaults.
func newPipeline(c config) *Pipeline {
	c = c.withDefaults()
	p := &Pipeline{
		cfg:      c,
		q:        newQueue(c.queueSize, c.maxExport),
		stop:     make(chan struct{}),
		flushReq: make(chan chan struct{}),
		attachCh: make(chan attachment),
		done:     make(chan struct{}),
		tick:     make(chan struct{}, 1),
		exporter: c.exporter,
		holding:  c.hold && c.exporter == nil,
		buf:      make([]Span, c.maxExport),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.run()
	return p
}

// TraceStarted does nothing: the pipeline needs only the spans.
func (p *Pipeline) TraceStarted(*meter.Goroutine, *meter.Probe) {}

// TraceSpans copies spans into the queue and wakes the exporter if they
// complete a batch. It runs on the traced goroutine (or the engine's, for
// a goroutine that has blocked).
//
// Cost: one CAS on the queue's tail for the whole part, a 48-byte copy per
// span (no pointers: no write barrier), then one atomic store and one atomic add for the whole part; no
// lock, no allocation, no blocking. A part longer than 65,535 spans is
// cut there (METER_TRACE_MAX is at most 100,000: such a trace fits in two
// parts of a hand-over). Spans that do not fit are
// dropped and counted. The producer whose spans complete a batch, or fill
// the slot the exporter waits on, wakes the exporter. A producer that
// finds the queue full yields its processor (runtime.Gosched), so that an
// exporter waiting for one gets to run.
// While the exporter backs off from a collector that fails, and nothing
// else wants the spans, they are dropped here at once.
func (p *Pipeline) TraceSpans(trace uint64, spans []meter.Span, final, truncated bool) {
	n := len(spans)
	if n == 0 || p.idle.Load() {
		return
	}
	if p.closed.Load() || p.refusing.Load() {
		p.drop(n)
		return
	}
	var flags uint16
	if truncated {
		flags = flagTruncated
	}
	q := p.q // locals: the record stores below could alias p's fields
	slots, mask := q.slots, q.mask
	off := 0
	for off < n { // one claim, unless the part is longer than a claim may be
		pos, k := q.claim(n - off)
		if k == 0 {
			break
		}
		part := spans[off : off+k]
		for i := range part {
			s := &part[i]
			slots[(pos+uint64(i))&mask].rec = record{trace: trace, start: s.Start, end: s.End, inherent: s.Inherent,
				parent: s.Parent, index: s.Index, probe: int32(s.Probe.ID()), flags: flags}
		}
		if final && off+k == n {
			slots[(pos+uint64(k-1))&mask].rec.flags |= flagFinal
		}
		q.publish(pos, k)
		q.produced(pos, k)
		off += k
		if k < min(n-off+k, maxRun) {
			break // full
		}
	}
	if off < n {
		// Spans are in the order their firings began, so the prefix
		// that fits keeps every parent link.
		p.drop(n - off)
		// Full: the exporter is behind. If it waits for a processor (woken,
		// or back from its export call), Go runs it only when one is
		// free, and with every P producing it would wait for preemption
		// (10 ms) while spans drop. Yield the processor; when nothing
		// else is runnable this goes on at once.
		runtime.Gosched()
	}
}

func (p *Pipeline) drop(n int) {
	p.dropped.Add(int64(n))
	meter.AddDropped(int64(n))
}

// Stats describes what the pipeline did so far. Every span handed to
// TraceSpans ends up Exported or Dropped, or is still queued.
type Stats struct {
	Queued   int64 // spans that entered the queue
	Dropped  int64 // spans that never reached the exporter: queue full, backing off, or shut down
	Exported int64 // spans handed to the exporter (or to the call paths, without one)
	Failed   int64 // of those, spans whose export call returned an error
	Errors   int64 // export calls that returned an error
	Wakeups  int64 // times the exporter goroutine woke up
	Stalls   int64 // of those, after waiting for a producer between its claim and its publication
}

// Stats returns the pipeline's counters.
func (p *Pipeline) Stats() Stats {
	return Stats{
		Queued:   int64(p.q.tail.Load()), // every claimed slot is a queued span
		Dropped:  p.dropped.Load(),
		Exported: p.sent.Load(),
		Failed:   p.failed.Load(),
		Errors:   p.errors.Load(),
		Wakeups:  p.wakeups.Load(),
		Stalls:   p.stalls.Load(),
	}
}

// Flush exports everything queued now and waits until it is out, or until
// ctx is done. While the pipeline waits for an exporter to be attached,
// the spans stay queued.
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

// attach gives a pipeline built with config.hold its exporter (nil: none will
// come), and lets it export what it holds.
func (p *Pipeline) attach(e SpanExporter) {
	select {
	case p.attachCh <- attachment{e}:
	case <-p.done:
		if e != nil {
			e.Shutdown(context.Background())
		}
	}
}

// Shutdown stops taking spans, exports what is queued (unless the exporter
// is backing off from a collector that failed: then it is dropped and
// counted) and stops the exporter goroutine and the span exporter. If ctx
// ends first, the export in flight is canceled and what is left is
// dropped and counted; Shutdown still returns only once the goroutine has
// stopped. Later calls do nothing.
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
		if p.exporter != nil { // the goroutine has stopped: its fields are ours
			sctx := ctx
			if sctx.Err() != nil { // out of time: give the exporter a moment to close its connections
				var cancel context.CancelFunc
				sctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
			}
			if e := p.exporter.Shutdown(sctx); err == nil {
				err = e
			}
		}
	})
	return err
}

func (p *Pipeline) run() {
	defer close(p.done)
	p.timer = p.cfg.clock.AfterFunc(time.Hour, func() {
		select {
		case p.tick <- struct{}{}:
		default: // a tick is pending already
		}
	})
	p.timer.Stop()
	defer p.timer.Stop()
	p.nextTick = p.now().Add(p.cfg.delay)
	batch := p.cfg.batchSize
	for {
		now := p.now()
		p.endBackoff(now)
		p.report(now, false)
		if !p.holding {
			// Full batches first.
			for p.q.pending() >= batch && p.ctx.Err() == nil {
				if p.exportOnce() == 0 {
					p.waitHole()
				}
				p.report(p.now(), false)
			}
			if !p.q.arm(batch) {
				continue
			}
		}
		p.q.parked.Store(true)
		p.setTimer(now)
		if p.refusing.Load() && !p.inBackoff(p.now()) {
			// The back-off ended after now was read and before the timer
			// was armed, which a clock that moves in steps (a test's)
			// shows: its timer would wait for the next step while
			// producers drop their spans. Look again at once.
			p.q.parked.Store(false)
			p.q.disarm()
			p.stopTimer()
			continue
		}
		fired, woken := false, false
		select {
		case <-p.q.wake:
			woken = true
		case <-p.tick:
			fired, woken = true, true
		case a := <-p.attachCh:
			p.holding = false
			p.exporter = a.e
			if p.exporter == nil && p.cfg.paths == nil {
				p.idle.Store(true)
				p.discard()
			} else {
				p.exportAll() // what was held
			}
		case reply := <-p.flushReq:
			p.q.parked.Store(false)
			p.q.disarm()
			if !p.holding {
				p.exportAll()
			}
			close(reply)
		case <-p.stop:
			p.q.parked.Store(false)
			p.q.disarm()
			p.holding = false
			if p.exporter == nil && p.cfg.paths == nil && p.cfg.hold {
				p.discard() // held for an exporter that never came
			} else if p.inBackoff(p.now()) && p.cfg.paths == nil {
				p.dropQueued()
			} else {
				p.exportAll()
			}
			p.report(p.now(), true)
			return
		}
		p.q.parked.Store(false)
		p.q.disarm()
		if woken {
			p.wakeups.Add(1)
		}
		if !fired {
			p.stopTimer()
		}
		if now := p.now(); !p.holding && !now.Before(p.nextTick) {
			p.exportAll()
			p.nextTick = p.now().Add(p.cfg.delay)
		}
	}
}

// stopTimer stops the exporter's timer, and takes the tick it sent if it
// fired before it could be stopped.
func (p *Pipeline) stopTimer() {
	if !p.timer.Stop() {
		select {
		case <-p.tick:
		default:
		}
	}
}

// setTimer arms the exporter's one timer for the earliest of: the next
// partial batch, the end of a back-off, the next lost-spans line when one
// is due.
func (p *Pipeline) setTimer(now time.Time) {
	wake := p.nextTick
	if p.failures > 0 && p.backoffUntil.After(now) && p.backoffUntil.Before(wake) {
		wake = p.backoffUntil
	}
	if p.dropped.Load() != p.reported || p.failed.Load() != p.failRep {
		if at := p.lastLine.Add(p.cfg.dropReport); at.Before(wake) {
			wake = at
		}
	}
	p.timer.Reset(max(wake.Sub(now), time.Millisecond))
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
	p.q.parked.Store(true)
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
	if p.q.pending() > 0 && p.ctx.Err() != nil {
		p.dropQueued() // out of time
	}
}

// dropQueued takes what is published in the queue and counts it dropped.
func (p *Pipeline) dropQueued() {
	for {
		_, k := p.q.take(p.cfg.maxExport)
		if k == 0 {
			return
		}
		p.drop(k)
	}
}

// discard empties the queue of spans nobody wants, without counting them.
func (p *Pipeline) discard() {
	for {
		_, k := p.q.take(p.cfg.maxExport)
		if k == 0 {
			return
		}
	}
}

// exportOnce takes up to one batch of published records and hands it on.
// The records are read where they lie in the queue, which producers leave
// alone until the next take: the call paths read them in place, and the
// exporter gets them converted into the pipeline's own buffer of Spans.
// Nothing is allocated per batch.
func (p *Pipeline) exportOnce() int {
	h, n := p.q.take(p.cfg.maxExport)
	if n == 0 {
		return 0
	}
	a, b := p.q.records(h, n)
	if p.cfg.paths != nil {
		p.cfg.paths.add(a, b)
	}
	if p.exporter == nil {
		p.sent.Add(int64(n))
		return n
	}
	if p.inBackoff(p.now()) {
		p.drop(n) // the call paths have them; the collector does not
		return n
	}
	buf := p.buf[:n]
	p.names.fill(buf, a, b)
	ctx := p.exportCtx()
	err := p.exporter.ExportSpans(ctx, buf)
	p.exportDone()
	p.sent.Add(int64(n))
	if err != nil {
		// Lost too: the model counts them with the dropped spans.
		p.failed.Add(int64(n))
		meter.AddDropped(int64(n))
		p.fail(err)
	} else {
		p.failures = 0
	}
	return n
}

// now reads the pipeline's clock.
func (p *Pipeline) now() time.Time { return p.cfg.clock.Now() }

func (p *Pipeline) inBackoff(now time.Time) bool {
	return p.failures > 0 && now.Before(p.backoffUntil)
}

// fail starts or lengthens the back-off after a failed export call: no
// call until it ends, so that a collector that is down or refusing costs
// one connection attempt per back-off, not one per batch. Without call
// paths to feed, producers drop their spans at once meanwhile, rather than
// fill a queue that would only be dropped.
//
// The error is counted last, so that whoever reads it in Stats finds the
// back-off begun and the queue emptied.
func (p *Pipeline) fail(err error) {
	p.lastErr = err
	p.failures++
	p.backoffUntil = p.now().Add(backoffDelay(p.cfg, p.failures))
	if p.cfg.paths == nil {
		p.refusing.Store(true)
		p.dropQueued()
	}
	p.errors.Add(1)
}

// backoffDelay is the wait after the given number of failed calls in a
// row: the initial back-off doubled for each failure past the first, up to
// the cap, then drawn between half and all of that.
func backoffDelay(c config, failures int) time.Duration {
	d := c.backoff
	for i := 1; i < failures && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	return d/2 + rand.N(d/2+1)
}

// endBackoff lets producers queue again once the back-off is over; the
// next batch is the next attempt.
func (p *Pipeline) endBackoff(now time.Time) {
	if p.refusing.Load() && !p.inBackoff(now) {
		p.refusing.Store(false)
	}
}

// exportGen is what bounds export calls in time, reused from one call to
// the next until a call runs out of time: a context canceled by the
// pipeline's (at Shutdown) or by the timer, the timer, armed for each
// call, and the call's context, which adds the call's deadline. A
// context.WithTimeout per call would cost, per batch, a timer and a
// context made and discarded and a child registered with the pipeline's
// context and removed again.
type exportGen struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  timer
	call   callCtx
}

// exportCtx returns the context for one export call, with its deadline set
// exportTimeout from now, and arms the timer. No allocation once warm.
func (p *Pipeline) exportCtx() context.Context {
	g := &p.gen
	if g.ctx == nil {
		ctx, cancel := context.WithCancelCause(p.ctx)
		g.ctx, g.cancel = ctx, cancel
		g.timer = p.cfg.clock.AfterFunc(time.Hour, func() { cancel(context.DeadlineExceeded) })
		g.timer.Stop()
	}
	d := p.cfg.exportTimeout
	g.timer.Reset(d)
	g.call = callCtx{Context: g.ctx, deadline: p.now().Add(d)}
	return &g.call
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

// report prints at most one line on standard error per drop-report
// interval, and one at the end, about spans lost since the last line:
// dropped (the queue was full, or the exporter was backing off) and failed
// (their export call returned an error). While export calls fail, the
// line names the error and when the next attempt is due.
func (p *Pipeline) report(now time.Time, final bool) {
	d, fl := p.dropped.Load(), p.failed.Load()
	if d == p.reported && fl == p.failRep {
		return
	}
	if !final && now.Sub(p.lastLine) < p.cfg.dropReport {
		return
	}
	if fl != p.failRep || p.failures > 0 {
		fmt.Fprintf(p.cfg.stderr, "meter: exporting spans failed: %v; lost %d spans since the last report (%d in all)%s\n",
			p.lastErr, d-p.reported+fl-p.failRep, d+fl, p.retrying(now, final))
	} else {
		fmt.Fprintf(p.cfg.stderr, "meter: export queue full: dropped %d spans (%d lost in all)\n", d-p.reported, d+fl)
	}
	p.reported, p.failRep, p.lastLine = d, fl, now
}

func (p *Pipeline) retrying(now time.Time, final bool) string {
	if final || !p.inBackoff(now) {
		return ""
	}
	return fmt.Sprintf("; next attempt in %v", p.backoffUntil.Sub(now).Round(100*time.Millisecond))
}
