//go:build linux && (amd64 || arm64) && !race

package meter

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The sampler. A stretch in which the goroutine parked (or made a system
// call and lost its P) is left out of its firing's own time: its wall time
// holds the wait. But it also holds CPU time: a call into code without
// probes (an HTTP client's Do, a file read and its parse) computes, parks,
// and computes again in one stretch. The sampler looks, at random times,
// at which goroutines run, and a goroutine seen running adds the time
// since the last look to its state (Goroutine.ran): over many
// stretches that is the CPU time they held, and a stretch left out keeps
// it as own time (stretch.go, leaveOut).
//
// The sampler runs on a thread of its own, which the Go runtime does not
// know of: a goroutine that sleeps and wakes on a timer runs only when its
// P next schedules, and takes that P from the goroutine it would have seen
// running, which would bias every look; and a goroutine or a thread of the
// runtime's that never ends changes what a program sees of its own
// (runtime.NumGoroutine, goroutine dumps, leak checks in tests) and keeps
// the runtime from finding a program deadlocked ("all goroutines are
// asleep"), which counts the threads in system calls as running. So the
// thread is made by clone(2), as the runtime makes its own, on a stack of
// its own (samplerStack), with every signal blocked: the runtime's
// signals go to its threads. It runs only assembly (sampler_amd64.s, sampler_arm64.s) that
// sleeps in nanosleep(2) for a random time, uniform between half and one
// and a half of the mean, and reads the goroutine table: a goroutine with
// a metered firing open whose g's status is running is seen running, and
// so is one whose status is waiting for a reason the runtime writes while
// the goroutine works on its system stack (an assist of the collector's
// marking, a scan of its own stack: isWorking, wait.go), which a CPU
// profile charges to the function it works in. It writes only the states'
// counters, and reads only memory that is never freed: g structs, the
// states, and the tables (the retired ones are kept alive). It ends with
// the process, or where the process's credentials change (sampleLoop).
//
// The mean interval is METER_SAMPLER_INTERVAL (5 ms), or 500 times what
// the last look took, if longer: a look reads every entry of the table,
// and a live one costs a cache miss or two, so that at ten thousand
// goroutines looking takes at most a fifth of a percent of a core. A
// wake-up itself costs tens of µs of CPU time on a VM.
// A goroutine whose thread waits for a core while its g runs is seen
// running: the estimate is wall time spent running, as the rest of own
// time is.

// sampleDumpable is the process's dumpable flag (prctl(2)) as the
// sampler's thread is made: where it changes, credentials changed, and
// the thread ends (sampleLoop).
//
//lint:ignore U1000 used by sampler_amd64.s and sampler_arm64.s
var sampleDumpable uint64

// samplerTid is the sampler thread's id, once it runs: top -H shows its
// CPU time, the sampler's cost.
var samplerTid int64

// statusOffset is the place in g of its status word; 0: not found.
var statusOffset uintptr

// sampleSeed seeds the sampler's generator of intervals.
//
//lint:ignore U1000 used by sampler_amd64.s and sampler_arm64.s
var sampleSeed uint64

// samplerStack is the sampler thread's stack; samplerTLS its thread-local
// storage, zero, so that anything that read the running goroutine there
// would read none.
var (
	samplerStack [16 << 10]byte
	samplerTLS   [4]uint64
)

// cloneSampler starts the sampler's thread, with every signal blocked,
// on the stack whose top is stack, where the thread finds us, and with its
// thread pointer at tls; it returns the thread's id, or minus the error
// number (sampler_amd64.s, sampler_arm64.s).
func cloneSampler(stack, tls uintptr, us int64) int64

// sampleLoop sleeps and looks at a mean interval of us µs at the
// smallest table, until the process's credentials change: the sampler
// thread's body (sampler_amd64.s, sampler_arm64.s).
//
//lint:ignore U1000 called by cloneSampler
func sampleLoop(us int64)

// sampleOnce looks once: every goroutine with a metered firing open whose
// g runs gets weight ns (sampler_amd64.s, sampler_arm64.s).
func sampleOnce(weight uint64)

// StartSampler starts the sampler with the mean interval d, once; it
// reports whether the sampler runs. It does not where g's status was not
// found where this runtime keeps it.
func StartSampler(d time.Duration) bool {
	if d < time.Microsecond || !findStatus() {
		return false
	}
	findWaits()
	if !samplerInterval.CompareAndSwap(0, int64(d/time.Microsecond*time.Microsecond)) {
		return true
	}
	sampleSeed = uint64(time.Now().UnixNano()) | 1
	d0, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	sampleDumpable = uint64(d0)
	top := (uintptr(unsafe.Pointer(&samplerStack[len(samplerStack)-1])) &^ 15) - 16
	tls := uintptr(unsafe.Pointer(&samplerTLS[len(samplerTLS)-1])) // amd64: -8(FS) is 0
	samplerTid = cloneSampler(top, tls, int64(d/time.Microsecond))
	if samplerTid < 0 {
		samplerInterval.Store(0)
		return false
	}
	return true
}

// findStatus sets statusOffset: the 32-bit word before the stack lock
// that precedes goid, as it has been since Go 1.18; it must read 2
// (running) on the running goroutine, and 4 (waiting) on one parked.
func findStatus() bool {
	if statusOffset != 0 {
		return true
	}
	findGoid()
	if goidOffset < 16 {
		return false
	}
	o := goidOffset - 8
	status := func(g unsafe.Pointer) uint32 { return atomic.LoadUint32((*uint32)(unsafe.Add(g, o))) }
	if status(getgp()) != 2 {
		return false
	}
	gp, release := make(chan unsafe.Pointer), make(chan struct{})
	go func() {
		gp <- getgp()
		<-release
	}()
	g := <-gp
	seen := false
	for range 1000 {
		if status(g) == 4 {
			seen = true
			break
		}
		runtime.Gosched()
	}
	close(release)
	if seen {
		statusOffset = o
	}
	return seen
}
