package otlp

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/meterio/meter/export"
)

// Attribute keys on exported spans.
const (
	AttrInherent  = "meter.inherent_ns" // int: the firing's inherent (self) time
	AttrTruncated = "meter.truncated"   // bool: the span came in a truncated part of its trace
)

// traceExporter turns batches of export.Span into one OTLP request each,
// and sends it through an OpenTelemetry transport client.
//
// For the protobuf protocols, the spans are encoded by hand (appendSpans)
// and handed to the client as the unknown fields of the request's one
// ScopeSpans message: the protobuf runtime copies unknown fields as they
// are, so the bytes on the wire are those of a ScopeSpans holding the
// spans, and the client still does everything else (endpoint, headers,
// TLS, compression, timeout, from the standard variables). For
// http/json, which has no place for raw protobuf, the spans are built as
// messages. Either way, what a batch needs is kept from batch to batch:
// the client has encoded it by the time UploadTraces returns.
type traceExporter struct {
	client otlptrace.Client
	raw    bool                     // encode spans by hand
	req    []*tracepb.ResourceSpans // one: the process
	scope  *tracepb.ScopeSpans
	buf    []byte     // the spans, encoded, when raw
	spans  []*spanMsg // one per span of the largest batch so far, when not raw
	ptrs   []*tracepb.Span
	trunc  *commonpb.KeyValue // meter.truncated = true, shared by every span that carries it
	ids    resolver           // each span's ids, and a root's request (root.go)
}

// spanMsg is one span's message and what it points into.
type spanMsg struct {
	span  tracepb.Span
	ids   [16 + 8 + 8]byte // trace id, span id, parent span id
	inh   commonpb.AnyValue_IntValue
	val   commonpb.AnyValue
	kv    commonpb.KeyValue
	attrs []*commonpb.KeyValue // meter.inherent_ns, a root's request, meter.truncated
}

var _ export.SpanExporter = (*traceExporter)(nil)

func newTraceExporter(ctx context.Context, proto string, res *resource.Resource) (*traceExporter, error) {
	var c otlptrace.Client
	if proto == ProtocolGRPC {
		c = otlptracegrpc.NewClient(otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	} else {
		c = otlptracehttp.NewClient(otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return newTraceExporterWith(c, proto != ProtocolHTTPJSON, res), nil
}

func newTraceExporterWith(c otlptrace.Client, raw bool, res *resource.Resource) *traceExporter {
	e := &traceExporter{
		client: c,
		raw:    raw,
		scope:  &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: ScopeName}},
		ids:    resolver{table: roots},
	}
	e.trunc = e.truncated()
	e.req = []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: keyValues(res.Attributes())},
		ScopeSpans: []*tracepb.ScopeSpans{e.scope},
		SchemaUrl:  res.SchemaURL(),
	}}
	return e
}

// truncated returns the attribute meter.truncated = true.
func (*traceExporter) truncated() *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: AttrTruncated, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}}
}

// ExportSpans sends one batch as one request.
func (e *traceExporter) ExportSpans(ctx context.Context, spans []export.Span) error {
	e.ids.have = false // the table may have changed since the last batch
	if e.raw {
		e.buf = appendSpans(e.buf[:0], spans, &e.ids)
		e.scope.ProtoReflect().SetUnknown(protoreflect.RawFields(e.buf))
	} else {
		e.messages(spans)
	}
	return e.client.UploadTraces(ctx, e.req)
}

// messages builds the batch as OTLP messages in e.scope.
func (e *traceExporter) messages(spans []export.Span) {
	for len(e.spans) < len(spans) {
		m := &spanMsg{}
		m.val.Value = &m.inh
		m.kv.Key, m.kv.Value = AttrInherent, &m.val
		e.spans = append(e.spans, m)
		e.ptrs = append(e.ptrs, &m.span)
	}
	var attrBuf [8]attr
	for i := range spans {
		s, m := &spans[i], e.spans[i]
		x := e.ids.of(s)
		copy(m.ids[0:16], x.trace[:])
		copy(m.ids[16:24], x.span[:])
		sp := &m.span
		sp.TraceId, sp.SpanId = m.ids[0:16], m.ids[16:24]
		sp.ParentSpanId = nil
		if x.hasParent {
			copy(m.ids[24:32], x.parent[:])
			sp.ParentSpanId = m.ids[24:32]
		}
		sp.Kind = tracepb.Span_SpanKind(x.kind)
		sp.Name = s.Name
		sp.StartTimeUnixNano, sp.EndTimeUnixNano = uint64(s.Start), uint64(s.End)
		m.inh.IntValue = s.Inherent
		m.attrs = append(m.attrs[:0], &m.kv)
		if x.req != nil {
			for _, a := range requestAttrs(attrBuf[:0], x.req) {
				v := &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: a.str}}
				if a.int {
					v = &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: a.num}}
				}
				m.attrs = append(m.attrs, &commonpb.KeyValue{Key: a.key, Value: v})
			}
		}
		if s.Truncated {
			m.attrs = append(m.attrs, e.trunc)
		}
		sp.Attributes = m.attrs
	}
	e.scope.Spans = e.ptrs[:len(spans)]
}

// Shutdown closes the client's connections.
func (e *traceExporter) Shutdown(ctx context.Context) error { return e.client.Stop(ctx) }

// keyValues converts resource attributes into OTLP's form.
func keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	}
	// Slices: as the OpenTelemetry exporters send them.
	var vals []*commonpb.AnyValue
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, x := range v.AsBoolSlice() {
			vals = append(vals, anyValue(attribute.BoolValue(x)))
		}
	case attribute.INT64SLICE:
		for _, x := range v.AsInt64Slice() {
			vals = append(vals, anyValue(attribute.Int64Value(x)))
		}
	case attribute.FLOAT64SLICE:
		for _, x := range v.AsFloat64Slice() {
			vals = append(vals, anyValue(attribute.Float64Value(x)))
		}
	case attribute.STRINGSLICE:
		for _, x := range v.AsStringSlice() {
			vals = append(vals, anyValue(attribute.StringValue(x)))
		}
	default:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.Emit()}}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
}

// NewSpanExporter returns the OTLP span exporter the standard variables
// ask for, for a program that builds its own export.Pipeline; the blank
// import needs none of this. It does not connect until the first export.
func NewSpanExporter(ctx context.Context) (export.SpanExporter, error) {
	return newTraceExporter(ctx, protocol("TRACES", os.Stderr), processResource(ctx))
}
