package schema

// Wire types of the protocol buffer encoding, the low three bits of a
// field's key (field number << 3 | wire type).
const (
	WireVarint  = 0
	WireFixed64 = 1
	WireBytes   = 2
	WireFixed32 = 5
)

// VarintLen returns how many bytes x takes as a protocol buffer varint
// (binary.AppendUvarint's encoding): 1 to 10.
func VarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
