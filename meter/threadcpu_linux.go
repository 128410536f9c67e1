//go:build linux && (amd64 || arm64) && !race

package meter

import (
	"syscall"
	"unsafe"
)

// threadCPU returns the CPU time, user and system, of the thread that
// runs the calling goroutine, in ns: clock_gettime(CLOCK_THREAD_CPUTIME_ID)
// through a raw system call, which neither blocks nor passes through the
// scheduler (nor sets the word that marks a system call). It costs a
// system call, tenths of a microsecond; a CPU profile samples the same
// clock.
func threadCPU() int64 {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0
	}
	return ts.Nano()
}

const threadCPUOK = true
