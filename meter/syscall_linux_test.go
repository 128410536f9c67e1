//go:build linux && (amd64 || arm64) && !race

package meter

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// The word that marks a system call is found, and a stretch that holds a
// call through the scheduler shows one; a raw call, a clock read and a
// yield of the P do not.
func TestFindSyscall(t *testing.T) {
	findWaits()
	if syscallOffset == 0 {
		t.Fatal("the runtime's g.syscallpc was not found")
	}
	marks()
	syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
	_ = time.Now()
	runtime.Gosched()
	if _, _, sys := marks(); sys {
		t.Fatal("a raw call, a clock read or a yield seen as a system call")
	}
	syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
	if _, _, sys := marks(); !sys {
		t.Fatal("getpid through the scheduler not seen as a system call")
	}
	if _, _, sys := marks(); sys {
		t.Fatal("a call seen twice: marks does not clear it")
	}
	if threadCPUOK {
		a := threadCPU()
		for x := 0; x < 1_000_000; x++ {
			sinkWord += uint64(x)
		}
		if b := threadCPU(); a <= 0 || b <= a {
			t.Fatalf("the thread's CPU clock went from %d to %d over a loop", a, b)
		}
		if _, _, sys := marks(); sys {
			t.Fatal("reading the thread's CPU clock seen as a system call")
		}
	}
}

var sinkWord uint64
