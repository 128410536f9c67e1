//go:build (amd64 || arm64) && !race

package meter

import (
	"math/bits"
	"testing"
)

// deeper recurses until the running goroutine's stack is at least size
// bytes: each copy to a larger stack doubles it.
//
//go:noinline
func deeper(size uintptr) byte {
	var pad [256]byte
	if stackSize() < size {
		pad[0] = deeper(size)
	}
	return pad[0]
}

// atRoom recurses until fewer than room bytes of the stack lie below its
// frame, then runs f.
//
//go:noinline
func atRoom(room uintptr, f func()) {
	if stackRoom() < room {
		f()
		return
	}
	atRoom(room, f)
}

// A stretch in which the goroutine's stack was copied to a larger one,
// which the runtime counts as leaving the running state, is own time: each
// doubling of the stack since the engine last looked is a copy, not a time
// the goroutine was taken off its P. A stretch in which it left the
// running state more times than its stack doubled is taken off its P, by
// the rules (left out, when short).
func TestStackGrowthIsNotADeschedule(t *testing.T) {
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	var copies, more int
	done := make(chan struct{})
	go func() { // a young goroutine, on a small stack
		defer close(done)
		fire(outer, 2*us, func() {
			clk.Advance(8 * us)
			s := stackSize()
			deeper(4 * s)
			copies = bits.Len(uint(stackSize())) - bits.Len(uint(s))
			left = copies // the runtime's count: the copies alone
			fire(inner, 3*us, nil)
			clk.Advance(6 * us)
			s = stackSize()
			deeper(2 * s)
			more = bits.Len(uint(stackSize())) - bits.Len(uint(s))
			left = more + 1 // and once taken off its P: short, left out
		})
	}()
	<-done
	if copies < 2 || more < 1 {
		t.Fatalf("the stack doubled %d and %d times, want at least 2 and 1", copies, more)
	}
	checkRow(t, outer, 1, 2*us+8*us+3*us+6*us, 2*us+8*us)
	checkRow(t, inner, 1, 3*us, 3*us)
}
