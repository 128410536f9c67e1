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

// SpanCopier is implemented by span exporters that copy what they need from
// the spans before ExportSpans returns and keep nothing that the spans or
// their methods returned. The pipeline then reuses span memory across
// batches. NewOTLPTraceExporter's exporters are SpanCopiers.
type SpanCopier interface {
	sdktrace.SpanExporter
	CopiesSpans()
}

// Scope names the instrumentation scope of exported spans and metrics.
var Scope = instrumentation.Scope{Name: "github.com/meterio/meter"}

// spanView presents one queued record to an OpenTelemetry span exporter as a
// sdktrace.ReadOnlySpan. sdktrace.ReadOnlySpan has an unexported method to
// stop other packages implementing it; the embedded nil interface provides
// it and is never called (exporters only read spans through the exported
// methods). tracetest.SpanStub.Snapshot would do the same job with several
// allocations per span.
//
// For an exporter that copies what it needs before ExportSpans returns (a
// SpanCopier, as the OTLP exporters are: they build protobuf), the exporter
// goroutine owns one view and one record per batch slot and reuses them for
// every batch, so turning records into spans allocates nothing. Any other
// exporter may keep the spans, or the slices they return: it gets fresh
// views, records and attributes for each batch (three allocations per
// batch).
type spanView struct {
	sdktrace.ReadOnlySpan // nil: supplies the unexported method only

	r     *record // in the exporter goroutine's batch buffer
	p     *Pipeline
	res   *resource.Resource
	attrs [1]attribute.KeyValue
}

// view points v at r, on the exporter goroutine. The methods compute what
// the exporter asks for from the record when it asks (each once, in
// practice): the views stay small, and a batch touches little memory.
//
// Ids: the trace id is 8 random bytes drawn once per process followed by the
// goroutine's meter trace id (unique in the process), big-endian. A span id
// is 4 random bytes drawn once per process followed by 1 + the span's index
// in its trace, so ids are unique within a trace, never zero, and a parent's
// id follows from its index without a look-up.
func (p *Pipeline) view(v *spanView, r *record, res *resource.Resource) {
	v.r, v.p, v.res = r, p, res
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

func (v *spanView) Name() string { return v.r.probe.Name() }

func (v *spanView) SpanContext() trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: v.p.TraceID(v.r.trace), SpanID: v.p.spanID(v.r.index), TraceFlags: trace.FlagsSampled})
}

func (v *spanView) Parent() trace.SpanContext {
	if v.r.parent < 0 {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: v.p.TraceID(v.r.trace), SpanID: v.p.spanID(v.r.parent), TraceFlags: trace.FlagsSampled})
}

func (v *spanView) SpanKind() trace.SpanKind { return trace.SpanKindInternal }

func (v *spanView) StartTime() time.Time { return time.Unix(0, clock.WallNanos(v.r.start)) }

func (v *spanView) EndTime() time.Time {
	start := clock.WallNanos(v.r.start)
	if v.r.end == 0 { // the firing's End was lost (a Begin without a deferred End)
		return time.Unix(0, start)
	}
	return time.Unix(0, start+clock.Nanos(clock.Elapsed(v.r.start, v.r.end)))
}

// Attributes returns the inherent time, and on a truncated root the
// truncation mark (that one allocates: once per truncated trace).
func (v *spanView) Attributes() []attribute.KeyValue {
	inh := attribute.Int64(AttrInherent, v.r.inherent)
	if v.r.flags&flagTruncated != 0 {
		return []attribute.KeyValue{inh, attribute.Bool(AttrTruncated, true)}
	}
	v.attrs[0] = inh
	return v.attrs[:]
}

func (v *spanView) Links() []sdktrace.Link   { return nil }
func (v *spanView) Events() []sdktrace.Event { return nil }
func (v *spanView) Status() sdktrace.Status  { return sdktrace.Status{} }
func (v *spanView) InstrumentationScope() instrumentation.Scope {
	return Scope
}

// InstrumentationLibrary is the deprecated form of InstrumentationScope,
// still part of ReadOnlySpan.
//
//lint:ignore SA1019 ReadOnlySpan still has the method; an exporter may call it.
func (v *spanView) InstrumentationLibrary() instrumentation.Library { return Scope }
func (v *spanView) Resource() *resource.Resource                    { return v.res }
func (v *spanView) DroppedAttributes() int                          { return 0 }
func (v *spanView) DroppedLinks() int                               { return 0 }
func (v *spanView) DroppedEvents() int                              { return 0 }
func (v *spanView) ChildSpanCount() int                             { return 0 }
