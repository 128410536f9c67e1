package otlp

import (
	"encoding/binary"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/schema"
)

// Wire keys (field number << 3 | wire type) of the fields of
// opentelemetry/proto/trace/v1/trace.proto and common.proto that
// appendSpan writes.
const (
	keyScopeSpansSpan = 2<<3 | schema.WireBytes // ScopeSpans.spans

	keySpanTraceID  = 1<<3 | schema.WireBytes
	keySpanSpanID   = 2<<3 | schema.WireBytes
	keySpanParentID = 4<<3 | schema.WireBytes
	keySpanName     = 5<<3 | schema.WireBytes
	keySpanKind     = 6<<3 | schema.WireVarint
	keySpanStart    = 7<<3 | schema.WireFixed64
	keySpanEnd      = 8<<3 | schema.WireFixed64
	keySpanAttr     = 9<<3 | schema.WireBytes

	keyKVKey   = 1<<3 | schema.WireBytes
	keyKVValue = 2<<3 | schema.WireBytes

	keyAnyString = 1<<3 | schema.WireBytes
	keyAnyBool   = 2<<3 | schema.WireVarint
	keyAnyInt    = 3<<3 | schema.WireVarint

	spanKindInternal = 1
	spanKindServer   = 2
)

// appendSpans appends spans as the repeated spans field of a ScopeSpans
// message, in the bytes proto.Marshal would write for the messages
// traceExporter builds (fields in number order, zero scalars left out, a
// oneof member written even when zero), with no allocation once buf has
// grown: a span's few fixed fields are appended directly, where the
// protobuf runtime would build a message per span and walk it by
// reflection to marshal it (BenchmarkExportSpans measures the exporter's
// work per span). TestSpanBytes checks the two agree byte for byte. r
// gives each span its ids and, on a root, its request.
func appendSpans(buf []byte, spans []export.Span, r *resolver) []byte {
	for i := range spans {
		x := r.of(&spans[i])
		buf = appendSpan(buf, &spans[i], &x)
	}
	return buf
}

// attr is one attribute of a root span's request.
type attr struct {
	key string
	str string
	num int64
	int bool
}

// requestAttrs appends the attributes of v to a.
func requestAttrs(a []attr, v *requestView) []attr {
	if v.method != "" {
		a = append(a, attr{key: AttrHTTPMethod, str: v.method})
	}
	if v.path != "" {
		a = append(a, attr{key: AttrURLPath, str: v.path})
	}
	if v.route != "" {
		a = append(a, attr{key: AttrHTTPRoute, str: v.route})
	}
	if v.status != 0 {
		a = append(a, attr{key: AttrHTTPStatus, num: int64(v.status), int: true})
	}
	if v.rpcService != "" {
		a = append(a, attr{key: AttrRPCSystem, str: "grpc"}, attr{key: AttrRPCService, str: v.rpcService}, attr{key: AttrRPCMethod, str: v.rpcMethod})
	}
	return a
}

// len returns the length of the KeyValue a.
func (a *attr) len() int {
	anyLen := 1 + schema.VarintLen(uint64(len(a.str))) + len(a.str)
	if a.int {
		anyLen = 1 + schema.VarintLen(uint64(a.num))
	}
	return 1 + schema.VarintLen(uint64(len(a.key))) + len(a.key) + 1 + schema.VarintLen(uint64(anyLen)) + anyLen
}

func appendAttr(b []byte, a *attr) []byte {
	b = append(b, keySpanAttr)
	b = binary.AppendUvarint(b, uint64(a.len()))
	b = append(b, keyKVKey)
	b = binary.AppendUvarint(b, uint64(len(a.key)))
	b = append(b, a.key...)
	b = append(b, keyKVValue)
	if a.int {
		b = binary.AppendUvarint(b, uint64(1+schema.VarintLen(uint64(a.num))))
		b = append(b, keyAnyInt)
		return binary.AppendUvarint(b, uint64(a.num))
	}
	b = binary.AppendUvarint(b, uint64(1+schema.VarintLen(uint64(len(a.str)))+len(a.str)))
	b = append(b, keyAnyString)
	b = binary.AppendUvarint(b, uint64(len(a.str)))
	return append(b, a.str...)
}

func appendSpan(b []byte, s *export.Span, x *ids) []byte {
	var attrBuf [8]attr
	attrs := attrBuf[:0]
	if x.req != nil {
		attrs = requestAttrs(attrs, x.req)
	}
	n := 2 + 16 + 2 + 8 // trace id, span id
	if x.hasParent {
		n += 2 + 8
	}
	if s.Name != "" {
		n += 1 + schema.VarintLen(uint64(len(s.Name))) + len(s.Name)
	}
	n += 2 // kind
	if s.Start != 0 {
		n += 9
	}
	if s.End != 0 {
		n += 9
	}
	inh := inherentLen(s.Inherent)
	n += 1 + schema.VarintLen(uint64(inh)) + inh
	for i := range attrs {
		l := attrs[i].len()
		n += 1 + schema.VarintLen(uint64(l)) + l
	}
	if s.Truncated {
		n += 1 + 1 + truncatedLen
	}

	b = append(b, keyScopeSpansSpan)
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, keySpanTraceID, 16)
	b = append(b, x.trace[:]...)
	b = append(b, keySpanSpanID, 8)
	b = append(b, x.span[:]...)
	if x.hasParent {
		b = append(b, keySpanParentID, 8)
		b = append(b, x.parent[:]...)
	}
	if s.Name != "" {
		b = append(b, keySpanName)
		b = binary.AppendUvarint(b, uint64(len(s.Name)))
		b = append(b, s.Name...)
	}
	b = append(b, keySpanKind, byte(x.kind))
	if s.Start != 0 {
		b = append(b, keySpanStart)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.Start))
	}
	if s.End != 0 {
		b = append(b, keySpanEnd)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.End))
	}
	// meter.inherent_ns = int
	b = append(b, keySpanAttr)
	b = binary.AppendUvarint(b, uint64(inh))
	b = append(b, keyKVKey, byte(len(AttrInherent)))
	b = append(b, AttrInherent...)
	b = append(b, keyKVValue, byte(1+schema.VarintLen(uint64(s.Inherent))), keyAnyInt)
	b = binary.AppendUvarint(b, uint64(s.Inherent))
	for i := range attrs {
		b = appendAttr(b, &attrs[i])
	}
	if s.Truncated {
		// meter.truncated = true
		b = append(b, keySpanAttr, byte(truncatedLen), keyKVKey, byte(len(AttrTruncated)))
		b = append(b, AttrTruncated...)
		b = append(b, keyKVValue, 2, keyAnyBool, 1)
	}
	return b
}

// inherentLen is the length of the KeyValue meter.inherent_ns = v.
func inherentLen(v int64) int {
	any := 1 + schema.VarintLen(uint64(v))
	return 2 + len(AttrInherent) + 2 + any
}

// truncatedLen is the length of the KeyValue meter.truncated = true.
const truncatedLen = 2 + len(AttrTruncated) + 2 + 2
