package export

import (
	"encoding/binary"

	"github.com/meterio/meter/schema"
)

// protobuf appends protocol buffer fields, enough of the wire format for
// profile.proto: varints, and length-delimited strings, packed repeated
// integers and sub-messages. It stands in for a protobuf library so that
// the runtime links the standard library only. Zero scalars are omitted,
// as proto3 does.
type protobuf struct {
	b []byte
}

func (p *protobuf) varint(x uint64) { p.b = binary.AppendUvarint(p.b, x) }

func (p *protobuf) key(field, wire int) { p.varint(uint64(field)<<3 | uint64(wire)) }

// uint64 writes a varint field; int64 values are written as their two's
// complement, as protobuf's int64 type is.
func (p *protobuf) uint64(field int, x uint64) {
	if x == 0 {
		return
	}
	p.key(field, schema.WireVarint)
	p.varint(x)
}

func (p *protobuf) int64(field int, x int64) { p.uint64(field, uint64(x)) }

func (p *protobuf) bool(field int, x bool) {
	if x {
		p.uint64(field, 1)
	}
}

// string writes a length-delimited field, even when empty: profile.proto's
// string table must start with "".
func (p *protobuf) string(field int, s string) {
	p.key(field, schema.WireBytes)
	p.varint(uint64(len(s)))
	p.b = append(p.b, s...)
}

// packedUint64 writes a packed repeated field.
func (p *protobuf) packedUint64(field int, xs []uint64) {
	if len(xs) == 0 {
		return
	}
	n := 0
	for _, x := range xs {
		n += schema.VarintLen(x)
	}
	p.key(field, schema.WireBytes)
	p.varint(uint64(n))
	for _, x := range xs {
		p.varint(x)
	}
}

func (p *protobuf) packedInt64(field int, xs []int64) {
	if len(xs) == 0 {
		return
	}
	n := 0
	for _, x := range xs {
		n += schema.VarintLen(uint64(x))
	}
	p.key(field, schema.WireBytes)
	p.varint(uint64(n))
	for _, x := range xs {
		p.varint(uint64(x))
	}
}

// message writes a sub-message that body encodes into scratch, which it
// returns for reuse.
func (p *protobuf) message(field int, scratch *protobuf, body func(m *protobuf)) {
	scratch.b = scratch.b[:0]
	body(scratch)
	p.key(field, schema.WireBytes)
	p.varint(uint64(len(scratch.b)))
	p.b = append(p.b, scratch.b...)
}
