package meter

import "unsafe"

// callersGo reads the callers of the function whose frame is at depth pos
// (stack top − frame pointer) off the frame-pointer chain, outward, into
// buf: for each, the return address into it and its frame's depth. It
// stops after the first caller at depth stop or less, at the stack's top,
// or after walkMax callers, and returns how many it read. It calls
// nothing, so the stack cannot move under it. The reference of the amd64
// leaf, and callers itself under -race.
//
//go:nosplit
//go:nocheckptr
func callersGo(pos, stop uintptr, buf *[walkMax]stackCaller) int {
	top := stackTop()
	fp := top - pos
	n := 0
	for n < walkMax {
		next := peek(fp)
		if next <= fp || next >= top {
			break
		}
		d := top - next
		buf[n] = stackCaller{pc: peek(fp + 8), pos: d}
		n++
		if d <= stop {
			break
		}
		fp = next
	}
	return n
}

// peek reads the word at addr, a place on the running goroutine's stack.
//
//go:nosplit
//go:nocheckptr
func peek(addr uintptr) uintptr { return *(*uintptr)(unsafe.Add(nil, addr)) }
