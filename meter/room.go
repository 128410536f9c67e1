package meter

import (
	"math/bits"
	"unsafe"
)

// Stack growth. A goroutine starts on a stack of 2 KiB, and the runtime
// copies its stack to one twice as large when a function's frame would
// not fit (newstack). The copy takes microseconds, and the runtime counts
// it as the goroutine leaving the running state (the g's status moves to
// copying the stack and back), which is the count the engine reads to
// tell a stretch in which the goroutine was taken off its P (sched.go).
// So a stretch in which the stack grew would be taken for one whose
// goroutine waited in the run queue, and left out or estimated.
//
// Two things keep growth from passing for a wait:
//
//   - The engine's paths run on the goroutine's stack, below the frame of
//     the function that fires. Where they would grow a young goroutine's
//     stack (no larger than when the engine first saw the goroutine,
//     Goroutine.first), the program may never have: the copy is the
//     engine's cost, and must stay out of the stretch it falls in. So
//     begin's leaf, before it goes to Go, checks that the stack has
//     roomBytes below it, and where it has not and the stack is young,
//     grows it there (roomOut), before any clock read of the firing: the
//     time the copy took is taken off the current stretch of the innermost
//     metered firing (Frame.child) and out of its inclusive time. A stack
//     that has grown since is one the program runs deep in, and would grow
//     again a call or two further. On the paths of a sampled probe's
//     firing that may be selected or forced, the leaf grows it too
//     (roomGive): where fewer than stackGuard and the firing function's
//     own frame lie below that frame, the function's next call would have
//     grown it, and the copy is the firing's own time (Goroutine.copied);
//     further up, a deeper call would have, and the copy is left out. So a
//     sampled probe's selected calls hold copies as often as its other
//     calls, whose copies fall in their callers' stretches and come back
//     to them through its mean (bench/adversarial/young). On the other
//     paths the engine's Go code grows such a stack where it does. The
//     paths a firing's End takes run from the same frame as its Begin, in
//     the room Begin made; the rarer and deeper ones (a verdict, a
//     calibration) may still grow the stack.
//   - Wherever the stack grows (in the program's own code too: a recursion
//     on a young goroutine, which a CPU profile charges to the function
//     that grew), a stretch that saw the goroutine leave the running state
//     compares the stack's size with the size its goroutine's state last
//     saw (Goroutine.stack): each doubling since is a copy, not a time the
//     goroutine left its P (Goroutine.grew). A doubling that came while no
//     stretch was open is taken off the next stretch that left the running
//     state all the same: a wait then counts as run, once for each of the
//     few doublings in a goroutine's life.

// engineStack is the stack, in bytes, that the engine's paths of a
// firing take below the frame of the function that fires: its Begin's
// and its End's common paths (TestBeginMakesRoomOnYoungStacks).
const engineStack = 1024

// stackGuard is the runtime's guard on linux/amd64 without the race
// detector (StackGuard): a function grows the stack where its frame would
// reach within stackGuard of the stack's bottom.
const stackGuard = 928

// roomBytes is the room below the firing function's frame that begin's
// leaf makes sure of before it goes to Go.
const roomBytes = engineStack + stackGuard

// stackSize returns the size of the running goroutine's stack, in bytes
// (its hi less its lo, the g's first two words), or 0 where the g cannot
// be read.
//
//go:nosplit
func stackSize() uintptr {
	gp := getgp()
	if gp == nil {
		return 0
	}
	return *(*uintptr)(unsafe.Add(gp, unsafe.Sizeof(uintptr(0)))) - *(*uintptr)(gp)
}

// stackLo returns the lowest address of the running goroutine's stack
// (the g's first word).
//
//go:nosplit
func stackLo() uintptr { return *(*uintptr)(getgp()) }

// stackRoom returns how many bytes of the running goroutine's stack lie
// below its caller's frame, roughly (the address of a local).
//
//go:nosplit
func stackRoom() uintptr {
	gp := getgp()
	if gp == nil {
		return roomBytes
	}
	var x byte
	return uintptr(unsafe.Pointer(&x)) - stackLo()
}

// grew returns how many times the running goroutine's stack was copied to
// a larger one since g last looked (each copy doubles it), and notes its
// size now. A smaller stack (the collector shrinks the stacks of
// goroutines that use little of them, while they are stopped) counts
// nothing.
func (g *Goroutine) grew() int {
	s := uint32(stackSize())
	old := g.stack
	g.stack = s
	if old == 0 || s <= old {
		return 0
	}
	return bits.Len(uint(s)) - bits.Len(uint(old))
}

// makeRoom grows the running goroutine's stack where its callers' frames
// and engineStack bytes below them would reach within stackGuard of its
// bottom, and returns the ns the copy took, timed by two clock reads (0
// where it did not grow). It must not grow the stack itself before its
// first read: it splits no stack, and neither do the reads.
//
//go:nosplit
func makeRoom() int64 {
	s := stackSize()
	t0, _, _, _ := stamp()
	roomy(0)
	if stackSize() == s {
		return 0
	}
	if engine.grown != nil {
		engine.grown()
	}
	t1, _, _, _ := stamp()
	return nanos(t0, t1)
}

// leaveOutNested takes d ns of the engine's work, done in f's current
// stretch (a copy of the stack, the ends of unwound firings), off that
// stretch and off f's inclusive time, as metering nested in it.
func (f *Frame) leaveOutNested(d int64) {
	f.child += d
	f.over += d
}

// young reports whether g, the running goroutine's state, says that its
// stack has not grown since the engine first saw the goroutine
// (Goroutine.first); a goroutine the engine has not seen yet, or whose
// state is another's, is young. It splits no stack.
//
//go:nosplit
func young(g *Goroutine) bool {
	return g == nil || g.goid != identity() || stackSize() <= uintptr(g.first)
}

// roomy takes a frame of engineStack bytes: its entry grows the stack
// where that frame would not fit.
//
//go:noinline
func roomy(i int) byte {
	var pad [engineStack]byte
	return pad[i&(engineStack-1)]
}
