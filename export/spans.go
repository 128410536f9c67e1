package export

import (
	"encoding/binary"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/meterio/meter/clock"
)

// Attribute keys on exported spans.
const (
	AttrInherent  = "meter.inherent_ns" // int: the firing's inherent (self) time
	AttrTruncated = "meter.truncated"   // bool, on a root: the trace reached METER_TRACE_MAX
)

// Scope names the instrumentation scope of exported spans and metrics.
var Scope = instrumentation.Scope{Name: "github.com/meterio/meter"}

// spanView presents one queued record to an OpenTelemetry span exporter as a
// sdktrace.ReadOnlySpan. The exporter goroutine owns one view per batch slot
// and refills them for every batch, so turning records into spans allocates
// nothing. sdktrace.ReadOnlySpan has an unexported method to stop other
// packages implementing it; the embedded nil interface provides it and is
// never called (exporters only read spans through the exported methods).
// tracetest.SpanStub.Snapshot would do the same job with several
// allocations per span.
//
// ExportSpans is synchronous and the OTLP exporters copy spans into
// protobuf messages before returning, so reusing the views after it returns
// is safe for them; an exporter that kept spans past ExportSpans would not
// be.
type spanView struct {
	sdktrace.ReadOnlySpan // nil: supplies the unexported method only

	name   string
	sc     trace.SpanContext
	parent trace.SpanContext
	start  time.Time
	end    time.Time
	attrs  [2]attribute.KeyValue
	nattrs int
	res    *resource.Resource
}

// view fills v from r, on the exporter goroutine.
//
// Ids: the trace id is 8 random bytes drawn once per process followed by the
// goroutine's meter trace id (unique in the process), big-endian. A span id
// is 4 random bytes drawn once per process followed by 1 + the span's index
// in its trace, so ids are unique within a trace, never zero, and a parent's
// id follows from its index without a look-up.
func (p *Pipeline) view(v *spanView, r *record, res *resource.Resource) {
	var tid trace.TraceID
	copy(tid[:8], p.trace[:])
	binary.BigEndian.PutUint64(tid[8:], r.trace)
	v.name = r.probe.Name()
	v.sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: p.spanID(r.index), TraceFlags: trace.FlagsSampled})
	v.parent = trace.SpanContext{}
	if r.parent >= 0 {
		v.parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: p.spanID(r.parent), TraceFlags: trace.FlagsSampled})
	}
	start := clock.WallNanos(r.start)
	end := start + clock.Nanos(clock.Elapsed(r.start, r.end))
	if r.end == 0 { // the firing's End was lost (a Begin without a deferred End)
		end = start
	}
	v.start, v.end = time.Unix(0, start), time.Unix(0, end)
	v.attrs[0] = attribute.Int64(AttrInherent, r.inherent)
	v.nattrs = 1
	if r.flags&flagTruncated != 0 {
		v.attrs[1] = attribute.Bool(AttrTruncated, true)
		v.nattrs = 2
	}
	v.res = res
}

func (p *Pipeline) spanID(index int32) trace.SpanID {
	var id trace.SpanID
	binary.BigEndian.PutUint32(id[:4], p.span)
	binary.BigEndian.PutUint32(id[4:], uint32(index)+1)
	return id
}

// TraceID returns the OpenTelemetry trace id under which the pipeline exports
// the meter trace id id.
func (p *Pipeline) TraceID(id uint64) trace.TraceID {
	var tid trace.TraceID
	copy(tid[:8], p.trace[:])
	binary.BigEndian.PutUint64(tid[8:], id)
	return tid
}

// The resource of exported spans: the exporter may carry one (see
// NewOTLPTraceExporter), else the SDK default (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES).
type resourced interface{ resource() *resource.Resource }

func resourceOf(e sdktrace.SpanExporter) *resource.Resource {
	if r, ok := e.(resourced); ok {
		return r.resource()
	}
	return defaultResource
}

var defaultResource = resource.Default()

func (v *spanView) Name() string                     { return v.name }
func (v *spanView) SpanContext() trace.SpanContext   { return v.sc }
func (v *spanView) Parent() trace.SpanContext        { return v.parent }
func (v *spanView) SpanKind() trace.SpanKind         { return trace.SpanKindInternal }
func (v *spanView) StartTime() time.Time             { return v.start }
func (v *spanView) EndTime() time.Time               { return v.end }
func (v *spanView) Attributes() []attribute.KeyValue { return v.attrs[:v.nattrs:v.nattrs] }
func (v *spanView) Links() []sdktrace.Link           { return nil }
func (v *spanView) Events() []sdktrace.Event         { return nil }
func (v *spanView) Status() sdktrace.Status          { return sdktrace.Status{} }
func (v *spanView) InstrumentationScope() instrumentation.Scope {
	return Scope
}

// InstrumentationLibrary is the deprecated form of InstrumentationScope.
func (v *spanView) InstrumentationLibrary() instrumentation.Library { //nolint:staticcheck // part of ReadOnlySpan
	return instrumentation.Library(Scope) //nolint:staticcheck // part of ReadOnlySpan
}
func (v *spanView) Resource() *resource.Resource { return v.res }
func (v *spanView) DroppedAttributes() int       { return 0 }
func (v *spanView) DroppedLinks() int            { return 0 }
func (v *spanView) DroppedEvents() int           { return 0 }
func (v *spanView) ChildSpanCount() int          { return 0 }
