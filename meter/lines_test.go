package meter

import (
	"testing"
	"unsafe"
)

// TestWholeCacheLines: the structures that firings write, one per goroutine
// (Goroutine), per metered firing on its stack (Frame) and per probe
// (Probe), each fill whole 64-byte cache lines, in a size class of the Go
// allocator whose objects start on a line. Two goroutines' states, or two
// probes, allocated side by side then never share a line, so that firings
// on different cores never contend for one they do not share: two
// goroutines each firing its own probe would otherwise write one line
// from two cores (bench/scaling.sh measures how firings scale).
func TestWholeCacheLines(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are laid out for 64-bit platforms")
	}
	// Go's size classes that are multiples of 64 bytes, up to 1 KiB.
	lined := map[uintptr]bool{64: true, 128: true, 192: true, 256: true, 320: true, 384: true, 448: true,
		512: true, 576: true, 640: true, 704: true, 768: true, 896: true, 1024: true}
	for name, size := range map[string]uintptr{
		"Goroutine": unsafe.Sizeof(Goroutine{}),
		"Frame":     unsafe.Sizeof(Frame{}),
		"Probe":     unsafe.Sizeof(Probe{}),
		"row":       unsafe.Sizeof(row{}),
		"leaseSet":  unsafe.Sizeof(leaseSet{}),
	} {
		if !lined[size] {
			t.Errorf("%s is %d bytes: not a size class of whole cache lines; change its padding", name, size)
		}
	}
}
