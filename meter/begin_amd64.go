//go:build amd64 && !race

package meter

import "unsafe"

// begin is Begin. It is an assembly leaf (begin_amd64.s) that the inlined
// Begin calls directly, with no Go frame on the way: it mirrors beginGo,
// answers the quiet cases itself (a firing outside a trace whose counts do
// not run out, a counted firing of a disabled probe that is not due) and
// jumps, with its own frame, to the Go function beginGo would
// call for every other case, having stored the goroutine's state and the
// firing's place in st, pos and pc; on the way to measure it also checks,
// as beginGo does, that the state's frames are the running goroutine's.
// Before it goes to Go, it makes room on the goroutine's stack for the
// engine's paths (roomOut, room.go): the one call it makes, from no frame
// of its own (NOFRAME). Callers pass nil, 0, 0.
func begin(p *Probe, st *Goroutine, pos, pc uintptr) *Frame

// cached returns the running goroutine's state when it sits in its home
// slot of the goroutine table, and nil otherwise (not there yet, or moved
// along by a collision): begin's look-up, as a leaf of its own.
func cached() *Goroutine

// roomOut is begin's leaf's call where the goroutine's stack has fewer
// than roomBytes below the firing function's frame (room.go): where the
// stack is young, it grows it, and takes the time the copy took off the
// current stretch and the inclusive time of the innermost metered firing,
// if any, as metering nested in it. It splits no stack before makeRoom
// has grown it.
//
//lint:ignore U1000 called from begin_amd64.s
//go:nosplit
func roomOut() {
	if g := roomState(); young(g) {
		growYoung(g)
	} // else grown by the program: it grows where the engine's path grows it
}

// roomState returns the running goroutine's state, if it has one, for
// roomOut and roomGive. It splits no stack.
//
//go:nosplit
func roomState() *Goroutine {
	if g := cached(); g != nil {
		return g
	}
	return gtab.Load().find(getg()) // not in its home slot: no new state
}

// growYoung grows a young stack, g's if it has a state (roomOut).
//
//go:nosplit
func growYoung(g *Goroutine) {
	d := makeRoom()
	if d <= 0 {
		return
	}
	if g != nil && g.goid == identity() && g.depth > 0 {
		g.frames[g.depth-1].leaveOutNested(d)
	}
}

// roomGive is roomOut on the paths of a sampled probe's firing that may be
// selected or forced (room.go). On a stack the program has grown, where
// the firing function's own calls would have grown it (fewer than
// stackGuard and the function's frame below that frame), the copy is the
// firing's: it grows the stack, takes the copy's time off the current
// stretch of the innermost metered firing, and leaves it in
// Goroutine.copied for the firing begun (takeCopy; not the engine's empty
// firing that a selected one runs first). Elsewhere it grows the stack
// too, and leaves the copy out of every firing's time: a deeper call would
// have made it, one that the firing begun does not stand for.
//
//lint:ignore U1000 called from begin_amd64.s
//go:nosplit
func roomGive() {
	g := roomState()
	if young(g) {
		growYoung(g)
		return
	}
	// This frame's pointer: under it, the leaf's return address (the leaf
	// has no frame) and the firing function's stack pointer; at it, the
	// firing function's frame pointer, saved.
	fp := framePointer()
	sp := uintptr(fp) + 3*ptrSize
	frame := *(*uintptr)(fp) - sp
	room := sp - stackLo()
	d := makeRoom()
	if d <= 0 || g == nil || g.goid != identity() {
		return
	}
	if room < stackGuard+frame {
		if g.depth > 0 {
			g.frames[g.depth-1].child += d
		}
		g.copied = d
		return
	}
	if g.depth > 0 {
		g.frames[g.depth-1].leaveOutNested(d)
	}
}

// framePointer returns its caller's frame pointer.
func framePointer() unsafe.Pointer

const ptrSize = unsafe.Sizeof(uintptr(0))
