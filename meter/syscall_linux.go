//go:build linux && (amd64 || arm64) && !race

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
// word is first only read: after a system call through the scheduler
// (syscall.Syscall) it must hold an address in syscall.Syscall, where the
// runtime was entered. Only then is it written: cleared, it must stay
// clear across a goroutine switch and a raw system call, and a call must
// set it again.
func findSyscall() {
	if goidOffset < 48 {
		return
	}
	o := goidOffset - 40
	word := func() *uintptr { return (*uintptr)(unsafe.Add(getgp(), o)) }
	inSyscall := func() bool {
		syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
		f := runtime.FuncForPC(*word())
		return f != nil && f.Name() == "syscall.Syscall"
	}
	if !inSyscall() {
		return
	}
	for range 4 {
		*word() = 0
		runtime.Gosched()
		syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
		if *word() != 0 {
			continue // something else wrote it; look again
		}
		if inSyscall() {
			*word() = 0
			syscallOffset = o
		}
		return
	}
}
