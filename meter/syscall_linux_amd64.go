//go:build linux && amd64 && !race

package meter

import (
	"runtime"
	"syscall"
	"unsafe"
)

// A goroutine in a system call (a read that blocks in the kernel, a cgo
// call, os/exec's wait) does not park: its g stays in the system call
// state while its thread sleeps or runs C code, and the scheduler's count
// of leaving the running state does not move unless the goroutine lost
// its P and had to wait for one. A stretch that holds such a call holds
// its wait in its wall time, which a CPU profile does not charge. So each
// stretch clears, when it opens, the word in which the runtime writes
// where the goroutine entered its last system call (g.syscallpc, which
// the runtime reads only while the goroutine is in a call, after writing
// it), and reads it when it closes: set, the stretch held a call
// (stretch.go). syscall.RawSyscall, which never blocks, and the vDSO's
// clocks do not set it.

// findSyscall sets syscallOffset, after findGoid: syscallpc is the fifth
// word before goid (after syscallsp, before syscallbp, stktopsp, param,
// and the status and stack lock words), as it has been since Go 1.23. The
// candidate is checked by its behaviour: cleared, it stays clear across a
// goroutine switch and a raw system call, and a system call through the
// scheduler sets it to a code address.
func findSyscall() {
	if goidOffset < 48 {
		return
	}
	o := goidOffset - 40
	g := getgp()
	w := (*uintptr)(unsafe.Add(g, o))
	for range 4 {
		*w = 0
		runtime.Gosched()
		syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
		g = getgp() // the same g: a goroutine keeps its g
		w = (*uintptr)(unsafe.Add(g, o))
		if *w != 0 {
			continue // something else writes it: an asynchronous preemption, perhaps; again
		}
		syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
		if pc := *w; pc != 0 && runtime.FuncForPC(pc) != nil {
			*w = 0
			syscallOffset = o
			return
		}
		return
	}
}
