package export

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/puzpuzpuz/xsync/v3"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/meterio/meter/meter"
)

type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (nopExporter) Shutdown(context.Context) error                             { return nil }

// copyingNop is a no-op exporter that declares it keeps nothing (a
// SpanCopier), as the OTLP exporters do.
type copyingNop struct{ nopExporter }

func (copyingNop) CopiesSpans() {}

// BenchmarkTraceEnded is the producer's side: one trace of 1 or 8 spans
// handed to the pipeline, serially and from parallel goroutines. ns/op is
// per trace.
func BenchmarkTraceEnded(b *testing.B) {
	probe := meter.NewProbe("example.com/bench.traceEnded", nil)
	for _, n := range []int{1, 8} {
		spans := spansOf(probe, n)
		b.Run("spans="+itoa(n), func(b *testing.B) {
			p := NewPipeline(WithSpanExporter(nopExporter{}), WithLabels(false), WithStderr(io.Discard))
			defer p.Shutdown(context.Background())
			g := &meter.Goroutine{TraceID: 1}
			b.ReportAllocs()
			for b.Loop() {
				p.TraceEnded(g, spans, false)
			}
		})
		b.Run("spans="+itoa(n)+"/parallel", func(b *testing.B) {
			p := NewPipeline(WithSpanExporter(nopExporter{}), WithLabels(false), WithStderr(io.Discard))
			defer p.Shutdown(context.Background())
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				g := &meter.Goroutine{TraceID: 1}
				for pb.Next() {
					p.TraceEnded(g, spans, false)
				}
			})
		})
	}
}

// BenchmarkQueue compares the queue written here with xsync/v3's
// MPMCQueueOf for the same job: producers put span records in, one consumer
// takes them out. ns/op is per span. Ours claims a whole trace (8 spans)
// with one CAS; xsync's TryEnqueue takes one per span.
// consume runs one consumer goroutine that polls until told to stop, as the
// exporter drains the queue; the returned function stops it and waits.
func consume(poll func() bool) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if !poll() {
				select {
				case <-quit:
					return
				default:
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}

func BenchmarkQueue(b *testing.B) {
	const trace = 8
	b.Run("meter", func(b *testing.B) {
		q := newQueue(2048, 512)
		defer consume(func() bool { _, n := q.take(512); return n > 0 })()
		b.RunParallel(func(pb *testing.PB) {
			r := record{}
			for {
				for range trace {
					if !pb.Next() {
						return
					}
				}
				pos, k := q.claim(trace)
				for i := range k {
					q.publish(pos+uint64(i), &r)
				}
				if k > 0 {
					q.produced(pos, k)
				}
			}
		})
	})
	b.Run("xsync", func(b *testing.B) {
		q := xsync.NewMPMCQueueOf[record](2048)
		defer consume(func() bool { _, ok := q.TryDequeue(); return ok })()
		b.RunParallel(func(pb *testing.PB) {
			r := record{}
			for pb.Next() {
				q.TryEnqueue(r)
			}
		})
	})
}

// BenchmarkExporterLoop is the exporter goroutine's whole job per span:
// take from the queue, turn into ReadOnlySpans, export (no-op). ns/op is
// per span; the producer fills the queue outside the timer's concern, on
// the same goroutine.
func BenchmarkExporterLoop(b *testing.B) {
	probe := meter.NewProbe("example.com/bench.loop", nil)
	spans := spansOf(probe, 8)
	// A pipeline whose goroutine does not run: this one drives it.
	pp := &Pipeline{cfg: config{exporter: copyingNop{}, exportTimeout: time.Hour, batchSize: 512}, q: newQueue(2048, 512), ctx: context.Background()}
	pp.initViews()
	g := &meter.Goroutine{TraceID: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%512 == 0 {
			for range 64 {
				pp.TraceEnded(g, spans, false)
			}
			pp.exportOnce()
		}
	}
}

// BenchmarkExportBatch is the exporter goroutine's work per span: a batch
// of 512 records, published in the queue, handed as ReadOnlySpans to a
// no-op exporter. ns/op is per span; filling the queue is not
// timed.
func BenchmarkExportBatch(b *testing.B) {
	probe := meter.NewProbe("example.com/bench.export", nil)
	// A pipeline whose goroutine does not run: this one drives it.
	p := &Pipeline{cfg: config{exporter: copyingNop{}, exportTimeout: time.Hour, batchSize: 512}, q: newQueue(2048, 512), ctx: context.Background()}
	p.initViews()
	g := &meter.Goroutine{TraceID: 1}
	spans := spansOf(probe, 8)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%512 == 0 {
			b.StopTimer()
			for range 64 {
				p.TraceEnded(g, spans, false)
			}
			b.StartTimer()
			h, n := p.q.take(512)
			p.cfg.exporter.ExportSpans(context.Background(), p.ro[h&p.q.mask:][:n])
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

// BenchmarkLabels is what pprof labels cost per trace: TraceStarted sets
// them, TraceEnded puts the previous ones back.
func BenchmarkLabels(b *testing.B) {
	probe := meter.NewProbe("example.com/bench.labels", nil)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			p := NewPipeline(WithLabels(on), WithStderr(io.Discard))
			defer p.Shutdown(context.Background())
			g := &meter.Goroutine{TraceID: 1}
			spans := spansOf(probe, 1)
			b.ReportAllocs()
			for b.Loop() {
				p.TraceStarted(g, probe)
				p.TraceEnded(g, spans, false)
			}
		})
	}
}
