//go:build !unix || race

package export

// newRing returns n zeroed slots, on the heap: ring_unix.go maps them
// outside it, except under the race detector, which watches only the heap
// and the program's data.
func newRing(_ *queue, n int) []slot { return make([]slot, n) }
