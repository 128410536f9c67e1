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

	keyAnyBool = 2<<3 | schema.WireVarint
	keyAnyInt  = 3<<3 | schema.WireVarint

	spanKindInternal = 1
)

// appendSpans appends spans as the repeated spans field of a ScopeSpans
// message, in the bytes proto.Marshal would write for the messages
// traceExporter builds (fields in number order, zero scalars left out, a
// oneof member written even when zero), with no allocation once buf has
// grown: a span's few fixed fields are appended directly, where the
// protobuf runtime would build a message per span and walk it by
// reflection to marshal it (BenchmarkExportSpans measures the exporter's
// work per span). TestSpanBytes checks the two agree byte for byte.
func appendSpans(buf []byte, spans []export.Span) []byte {
	for i := range spans {
		buf = appendSpan(buf, &spans[i])
	}
	return buf
}

func appendSpan(b []byte, s *export.Span) []byte {
	n := 2 + 16 + 2 + 8 // trace id, span id
	if s.Parent >= 0 {
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
	if s.Truncated {
		n += 1 + 1 + truncatedLen
	}

	b = append(b, keyScopeSpansSpan)
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, keySpanTraceID, 16)
	b = binary.BigEndian.AppendUint64(b, traceSalt)
	b = binary.BigEndian.AppendUint64(b, s.Trace)
	b = append(b, keySpanSpanID, 8)
	b = binary.BigEndian.AppendUint32(b, spanSalt)
	b = binary.BigEndian.AppendUint32(b, uint32(s.Index)+1)
	if s.Parent >= 0 {
		b = append(b, keySpanParentID, 8)
		b = binary.BigEndian.AppendUint32(b, spanSalt)
		b = binary.BigEndian.AppendUint32(b, uint32(s.Parent)+1)
	}
	if s.Name != "" {
		b = append(b, keySpanName)
		b = binary.AppendUvarint(b, uint64(len(s.Name)))
		b = append(b, s.Name...)
	}
	b = append(b, keySpanKind, spanKindInternal)
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
