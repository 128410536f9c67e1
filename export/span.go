package export

import (
	"context"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/meter"
)

// Span is one metered firing of a trace, as a SpanExporter receives it.
// Times are wall-clock Unix nanoseconds, converted from the tick clock on
// the exporter goroutine.
type Span struct {
	Trace     uint64 // the meter trace id, unique in the process
	Index     int32  // the span's index in its trace, in the order firings began; the root's is 0
	Parent    int32  // Index of the nearest metered ancestor's span; -1 for the root
	Name      string // the probe's name, as the Go toolchain names the function
	Start     int64  // Unix ns
	End       int64  // Unix ns; equal to Start for a firing cut off before it ended
	Inherent  int64  // ns: the firing's time minus that of the metered firings nested in it
	Truncated bool   // handed over in a truncated part of its trace (METER_TRACE_MAX, or exported before its root ended)
}

// SpanExporter sends batches of spans somewhere: the otlp module's exporter,
// or a test's.
//
// ExportSpans is called from one goroutine at a time (the pipeline's
// exporter goroutine). The slice and the spans in it belong to the
// pipeline and are overwritten by the next batch: an exporter copies what
// it needs before it returns, and does not keep ctx either. A parent
// index may name a span of an earlier batch, or of a later one when a
// trace is handed over in parts.
type SpanExporter interface {
	ExportSpans(ctx context.Context, spans []Span) error
	Shutdown(ctx context.Context) error
}

// probeNames finds probes' names by id, from a copy of the registered
// probes that it renews when it meets a probe registered since.
type probeNames struct{ probes []*meter.Probe }

func (n *probeNames) name(id int32) string {
	if int(id) >= len(n.probes) {
		n.probes = meter.Probes()
		if int(id) >= len(n.probes) {
			return ""
		}
	}
	return n.probes[id].Name()
}

// fill converts queued records into spans, in place in dst (len(dst) ==
// len(a)+len(b)).
func (n *probeNames) fill(dst []Span, a, b []slot) {
	for i := range a {
		n.toSpan(&dst[i], &a[i].rec)
	}
	dst = dst[len(a):]
	for i := range b {
		n.toSpan(&dst[i], &b[i].rec)
	}
}

func (n *probeNames) toSpan(s *Span, r *record) {
	start := clock.WallNanos(r.start)
	end := start
	if r.end != 0 {
		end += clock.Nanos(clock.Elapsed(r.start, r.end))
	}
	*s = Span{
		Trace:     r.trace,
		Index:     r.index,
		Parent:    r.parent,
		Name:      n.name(r.probe),
		Start:     start,
		End:       end,
		Inherent:  r.inherent,
		Truncated: r.flags&flagTruncated != 0,
	}
}
