//go:build amd64 && !race

package meter

import (
	"runtime/debug"
	"unsafe"
)

// gM is the offset of m in the runtime's g: after stack (two words),
// stackguard0, stackguard1, _panic and _defer, unchanged since the
// register ABI. findMP checks it: the m it leads to must run the g.
const gM = 6 * 8

// findMP sets mpOffset: where the runtime's m keeps its P, found by
// looking, as identity.go finds the goroutine id. The P's word is one of
// the few after m.curg (the running g); the P it points to has this P's
// number first, its status _Prunning (1) second, and a word pointing back
// to the m. Reads of words that turn out not to be pointers are guarded:
// a fault there is recovered (debug.SetPanicOnFault). Not found, mpOffset
// stays 0 and every count goes through Go.
func findMP() {
	pid := procPin()
	defer procUnpin()
	g := getgp()
	m := *(*unsafe.Pointer)(unsafe.Add(g, gM))
	if m == nil {
		return
	}
	for o := uintptr(8); o < 4096; o += 8 {
		if *(*unsafe.Pointer)(unsafe.Add(m, o)) != g {
			continue
		}
		for k := o + 8; k <= o+32; k += 8 {
			if w := *(*uintptr)(unsafe.Add(m, k)); w >= 1<<12 && w%8 == 0 && isP(w, pid, uintptr(m)) {
				mpOffset = k
				if procID() != uintptr(pid) {
					mpOffset = 0
					return
				}
				return
			}
		}
	}
}

// isP reports whether the word w points to the P numbered pid, run by the
// m at m.
func isP(w uintptr, pid int, m uintptr) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	p := *(*unsafe.Pointer)(unsafe.Pointer(&w))
	if *(*int32)(p) != int32(pid) || *(*uint32)(unsafe.Add(p, 4)) != 1 {
		return false
	}
	for j := uintptr(8); j < 128; j += 8 {
		if *(*uintptr)(unsafe.Add(p, j)) == m {
			return true
		}
	}
	return false
}

// procID returns the number of the running P as the leaf reads it: g.m,
// then the m's P, then its first word. The caller must be pinned.
func procID() uintptr {
	m := *(*unsafe.Pointer)(unsafe.Add(getgp(), gM))
	p := *(*unsafe.Pointer)(unsafe.Add(m, mpOffset))
	return uintptr(*(*int32)(p))
}
