package otlp

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/resource"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/meterio/meter/export"
)

// testSpans covers what the encoder branches on: roots and children,
// truncated spans, zero and negative-looking values, long names.
func testSpans() []export.Span {
	return []export.Span{
		{Trace: 1, Index: 0, Parent: -1, Name: "example.com/app.main", Start: 1_700_000_000_000_000_000, End: 1_700_000_000_000_001_000, Inherent: 400},
		{Trace: 1, Index: 1, Parent: 0, Name: "example.com/app.(*T).m", Start: 1_700_000_000_000_000_100, End: 1_700_000_000_000_000_900, Inherent: 0},
		{Trace: 1 << 62, Index: 99_999, Parent: 12345, Name: strings.Repeat("x", 300), Start: 5, End: 5, Inherent: 1 << 40, Truncated: true},
		{Trace: 2, Index: 0, Parent: -1, Name: "", Start: 0, End: 0, Inherent: 127, Truncated: true},
		// Trace 1<<40 has a request (testRequest): the caller's trace id,
		// its span as the root's parent, and the request's attributes.
		{Trace: 1 << 40, Index: 0, Parent: -1, Name: "example.com/app.serve", Start: 10, End: 20, Inherent: 3},
		{Trace: 1 << 40, Index: 1, Parent: 0, Name: "example.com/app.step", Start: 11, End: 19, Inherent: 8, Truncated: true},
	}
}

// testRequest gives trace 1<<40 of testSpans a request under a remote
// caller's span.
func testRequest() {
	roots.mu.Lock()
	defer roots.mu.Unlock()
	q := roots.take(1 << 40)
	q.view = requestView{
		parentTrace: [16]byte{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		parentSpan:  [8]byte{0xcd, 1, 2, 3, 4, 5, 6, 7},
		hasParent:   true, server: true,
		method: "GET", path: "/items/7", route: "GET /items/{id}", status: 404,
	}
}

// TestSpanBytes: the hand-written encoding is byte for byte what the
// protobuf runtime writes for the same spans as messages.
func TestSpanBytes(t *testing.T) {
	testRequest()
	e := newTraceExporterWith(&marshalClient{}, false, resource.Default())
	spans := testSpans()
	e.messages(spans)
	want, err := proto.Marshal(&tracepb.ScopeSpans{Spans: e.ptrs[:len(spans)]})
	if err != nil {
		t.Fatal(err)
	}
	got := appendSpans(nil, spans, &resolver{table: roots})
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("hand-encoded spans differ from proto.Marshal from byte %d on (of %d and %d):\n got %x\nwant %x", i, len(got), len(want), got[max(i-16, 0):], want[max(i-16, 0):])
	}
	// And the receiving side reads them back.
	var back tracepb.ScopeSpans
	if err := proto.Unmarshal(got, &back); err != nil || len(back.Spans) != len(spans) || back.Spans[2].Name != spans[2].Name {
		t.Fatalf("decoded %d spans: %v", len(back.Spans), err)
	}
	root, step := back.Spans[4], back.Spans[5]
	if root.TraceId[0] != 0xab || string(step.TraceId) != string(root.TraceId) || root.ParentSpanId[0] != 0xcd ||
		string(step.ParentSpanId) != string(root.SpanId) || root.Kind != tracepb.Span_SPAN_KIND_SERVER || step.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Fatalf("request's trace: root %v\nstep %v", root, step)
	}
	attrs := map[string]string{}
	for _, kv := range root.Attributes {
		attrs[kv.Key] = kv.Value.String()
	}
	for k, v := range map[string]string{AttrHTTPMethod: "GET", AttrURLPath: "/items/7", AttrHTTPRoute: "GET /items/{id}", AttrHTTPStatus: "404"} {
		if !strings.Contains(attrs[k], v) {
			t.Errorf("root attribute %s = %s, want %s", k, attrs[k], v)
		}
	}
	if len(step.Attributes) != 2 {
		t.Errorf("the request's attributes on a span that is not its root: %v", step.Attributes)
	}
}

// marshalClient is a transport client that encodes each request as the
// OpenTelemetry clients do, and sends it nowhere.
type marshalClient struct{ n int }

func (c *marshalClient) Start(context.Context) error { return nil }
func (c *marshalClient) Stop(context.Context) error  { return nil }
func (c *marshalClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	c.n += len(b)
	return err
}

// BenchmarkExportSpans is the trace exporter's work per span on the
// exporter goroutine, up to the encoded request: spans encoded by hand
// (grpc, http/protobuf) or built as messages (http/json), then marshalled.
// ns/op is per span, for batches of 512.
func BenchmarkExportSpans(b *testing.B) {
	batch := make([]export.Span, 512)
	for i := range batch {
		batch[i] = export.Span{Trace: uint64(i / 8), Index: int32(i % 8), Parent: int32(i%8 - 1), Name: "example.com/app.(*Server).handle",
			Start: 1_700_000_000_000_000_000 + int64(i), End: 1_700_000_000_000_001_000 + int64(i), Inherent: int64(i)}
	}
	for _, raw := range []bool{true, false} {
		name := "messages"
		if raw {
			name = "raw"
		}
		b.Run(name, func(b *testing.B) {
			e := newTraceExporterWith(&marshalClient{}, raw, resource.Default())
			b.ReportAllocs()
			for i := 0; i < b.N; i += len(batch) {
				e.ExportSpans(context.Background(), batch)
			}
		})
	}
}
