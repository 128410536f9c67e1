package export

import "encoding/binary"

// protobuf appends protocol buffer fields, enough of the wire format for
// profile.proto: varints, and length-delimited strings, packed repeated
// integers and sub-messages. It stands in for a protobuf library so that
// the runtime links the standard library only. Zero scalars are omitted,
// as proto3 does.
type protobuf struct {
	b []byte
}

const (
	wireVarint = 0
	wireBytes  = 2
)

func (p *protobuf) varint(x uint64) { p.b = binary.AppendUvarint(p.b, x) }

func (p *protobuf) key(field, wire int) { p.varint(uint64(field)<<3 | uint64(wire)) }

// uint64 writes a varint field; int64 values are written as their two's
// complement, as protobuf's int64 type is.
func (p *protobuf) uint64(field int, x uint64) {
	if x == 0 {
		return
	}
	p.key(field, wireVarint)
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
	p.key(field, wireBytes)
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
		n += varintLen(x)
	}
	p.key(field, wireBytes)
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
		n += varintLen(uint64(x))
	}
	p.key(field, wireBytes)
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
	p.key(field, wireBytes)
	p.varint(uint64(len(scratch.b)))
	p.b = append(p.b, scratch.b...)
}

func varintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
