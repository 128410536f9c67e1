package export

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/meterio/meter/meter"
)

// BenchmarkTraceSpans is the producer's side: one trace of 1 or 8 spans
// handed to the pipeline, serially and from parallel goroutines. ns/op is
// per trace. The queue never fills (serially the loop takes what it put,
// every 1,024 spans, a few loads and a store; in parallel it holds all of
// b.N, up to 2^20 spans: use -benchtime of at most 2^20/spans iterations),
// so this is what a hand-over costs the traced goroutine when the exporter
// keeps up; a full queue costs a drop count and a runtime.Gosched instead.
func BenchmarkTraceSpans(b *testing.B) {
	probe := meter.NewProbe("example.com/bench.traceSpans", nil)
	for _, n := range []int{1, 8} {
		spans := spansOf(probe, n)
		b.Run("spans="+itoa(n), func(b *testing.B) {
			p := idlePipeline(nopExporter{}, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%(1024/n) == 0 {
					p.q.take(2048)
				}
				p.TraceSpans(1, spans, true, false)
			}
			b.StopTimer()
			reportDrops(b, p)
		})
		b.Run("spans="+itoa(n)+"/parallel", func(b *testing.B) {
			p := idlePipeline(nopExporter{}, nil)
			p.q = newQueue(min(b.N*n, 1<<20), 512)
			for i := range p.q.slots { // fault the pages in outside the timer
				p.q.slots[i].rec.index = 1
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p.TraceSpans(1, spans, true, false)
				}
			})
			b.StopTimer()
			reportDrops(b, p)
		})
	}
}

func reportDrops(b *testing.B, p *Pipeline) {
	st := p.Stats()
	b.ReportMetric(float64(st.Dropped)/float64(max(st.Dropped+st.Queued, 1)), "dropped/span")
}

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

// BenchmarkQueue is the queue alone: producers put traces of 8 span
// records in, one consumer takes them out. ns/op is per span. A trace is
// one CAS on the tail, where a queue of items (xsync's MPMCQueueOf, say)
// takes one per span.
func BenchmarkQueue(b *testing.B) {
	const trace = 8
	q := newQueue(2048, 512)
	defer consume(func() bool { _, n := q.take(512); return n > 0 })()
	b.ReportAllocs()
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
				q.slots[(pos+uint64(i))&q.mask].rec = r
			}
			if k > 0 {
				q.publish(pos, k)
				q.produced(pos, k)
			}
		}
	})
}

// BenchmarkExportBatch is the exporter goroutine's work per span: a batch
// of 512 records, published in the queue, converted into Spans and handed
// to a no-op exporter, with and without call paths. ns/op is per span;
// filling the queue is not timed.
func BenchmarkExportBatch(b *testing.B) {
	probe := meter.NewProbe("example.com/bench.export", nil)
	for _, withPaths := range []bool{false, true} {
		name := "exporter"
		var paths *CallPaths
		if withPaths {
			name, paths = "exporter+paths", newCallPaths()
		}
		b.Run(name, func(b *testing.B) {
			p := idlePipeline(nopExporter{}, paths)
			spans := spansOf(probe, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%512 == 0 {
					b.StopTimer()
					for j := range 64 {
						p.TraceSpans(uint64(i+j), spans, true, false)
					}
					b.StartTimer()
					p.exportOnce()
				}
			}
		})
	}
}

// BenchmarkProfile is writing a profile of 1,000 paths and the model.
func BenchmarkProfile(b *testing.B) {
	a := newApp(b)
	paths := newCallPaths()
	p := newPipeline(config{paths: paths, delay: time.Hour})
	a.configure(b, p)
	for range 1000 {
		a.request()
	}
	p.Shutdown(context.Background())
	s := meter.Take()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		WriteProfile(io.Discard, s, paths)
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}
