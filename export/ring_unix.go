//go:build unix && !race

package export

import (
	"runtime"
	"syscall"
	"unsafe"
)

// newRing returns n zeroed slots outside the Go heap, in memory mapped
// for q and unmapped once q is unreachable. A slot holds no pointer, so
// the collector has nothing to find there; on the heap, the ring (1 MiB at
// the default METER_TRACE_MAX) would count as live heap, and a program
// whose heap is a few MiB would collect garbage up to twice as often for
// it. The pages are the kernel's until written: a ring that is mostly
// empty costs the memory of the slots it used. Where the mapping fails,
// the heap.
func newRing(q *queue, n int) []slot {
	size := n * int(unsafe.Sizeof(slot{}))
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]slot, n)
	}
	runtime.SetFinalizer(q, func(*queue) { syscall.Munmap(b) })
	return unsafe.Slice((*slot)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
