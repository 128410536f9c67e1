//go:build (amd64 || arm64) && !race

package meter

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/meterio/meter/clock"
)

// A goroutine that waits (on a channel, a lock, a timer, the network)
// parks, and the runtime writes why in its g: the wait reason, one byte.
// A stretch in which the goroutine left its P is left out of its firing's
// own time only if the goroutine parked to wait (stretch.go): one that the
// scheduler or the collector took off its P for a moment (preempted, or
// assisting the collector) was on the CPU for the rest. So each stretch
// clears the byte when it opens, and reads it when it closes.
//
// Neither the byte's place in g nor the values of the reasons are fixed
// from one Go release to the next; findWaits finds both, once, by looking:
// goroutines parked on purpose, each in one kind of wait, show which byte
// of their g differs by the way they wait, and its values there are the
// waits. runtime.Stack, which prints each goroutine's wait reason, confirms
// each value. Not found, every stretch that left its P counts (wall time).

var (
	waitOffset   uintptr   // of the wait reason in g; 0: not found
	isWait       [256]bool // the reasons that are waits
	assistReason uint8     // the collector's assist's reason; 0: not known
	isWorking    [256]bool // the reasons the runtime writes while the goroutine works on its system stack
	waitsOnce    sync.Once
)

// waitsSeen reports whether findWaits found the wait reason.
func waitsSeen() bool { return waitOffset != 0 }

// findWaits sets waitOffset and isWait. On a loaded machine the parked
// goroutines may not all show as parked before the sleeper wakes: then it
// looks again, the sleep twice as long, a few times. The first sleep is
// short: the sleeper outlives the look, and a program sees it among its
// goroutines (runtime.NumGoroutine) until it wakes.
func findWaits() {
	waitsOnce.Do(func() {
		findGoid()
		if goidOffset == 0 {
			return
		}
		findLeft()
		findSyscall()
		initRunWait()
		for sleep := 10 * time.Millisecond; sleep <= 1280*time.Millisecond; sleep *= 2 {
			if !lookForWaits(sleep) {
				return
			}
		}
	})
}

// lookForWaits parks a goroutine in each kind of wait, the sleeper for
// sleep, and sets waitOffset and isWait from their g's. It reports whether
// to look again: not every goroutine showed as parked in time, or their
// bytes did not single out one place.
func lookForWaits(sleep time.Duration) (again bool) {
	var mu sync.Mutex
	var rw sync.RWMutex
	var wg sync.WaitGroup
	cond := sync.NewCond(&sync.Mutex{})
	condDone := false
	recv, send, sel := make(chan int), make(chan int), make(chan int)
	pr, pw, err := os.Pipe()
	if err != nil {
		return
	}
	defer pr.Close()
	mu.Lock()
	rw.Lock()
	wg.Add(1)
	kinds := []struct {
		name string
		wait func()
	}{
		{"chan receive", func() { <-recv }},
		{"chan receive", func() { <-recv }}, // twice: its byte, and no other, is the same in both
		{"chan send", func() { send <- 1 }},
		{"select", func() {
			select {
			case <-sel:
			case <-recv:
			}
		}},
		{"sleep", func() { time.Sleep(sleep) }},
		{"sync.Mutex.Lock", func() { mu.Lock() }},
		{"sync.RWMutex.RLock", func() { rw.RLock() }},
		{"sync.WaitGroup.Wait", func() { wg.Wait() }},
		{"sync.Cond.Wait", func() {
			cond.L.Lock()
			for !condDone {
				cond.Wait()
			}
			cond.L.Unlock()
		}},
		{"IO wait", func() {
			var b [1]byte
			pr.Read(b[:])
		}},
	}
	gs := make([]unsafe.Pointer, len(kinds))
	ids := make([]uint64, len(kinds))
	var started, ended sync.WaitGroup
	for i, k := range kinds {
		started.Add(1)
		sleeper := k.name == "sleep"
		if !sleeper {
			ended.Add(1)
		}
		go func() {
			if !sleeper {
				defer ended.Done()
			}
			gs[i], ids[i] = getgp(), goid()
			started.Done()
			k.wait()
		}()
	}
	started.Wait()
	defer func() {
		// Every wait ends, and every goroutine with it but the
		// sleeper, which wakes by itself.
		mu.Unlock()
		rw.Unlock()
		wg.Done()
		cond.L.Lock()
		condDone = true
		cond.Broadcast()
		cond.L.Unlock()
		close(recv)
		close(sel)
		<-send
		// The pipe's reader ends as its read end closes, not as its write
		// end does: that way the runtime's count of goroutines waiting in
		// the network poller drops inside Close, before the reader runs.
		// An event on the pipe would be taken by whichever thread polls
		// first, and the count dropped only after the reader is readied;
		// a thread that finds the count up meanwhile blocks in the poller
		// with no end in sight, the runtime counts it running, and never
		// finds the program deadlocked when every goroutine blocks, as it
		// does the plain program. Timers then wake any thread that blocked
		// in the poller while the reader waited: the second catches one
		// that was on its way in as the first was set.
		pr.Close()
		pw.Close()
		ended.Wait()
		time.Sleep(time.Nanosecond)
		time.Sleep(time.Nanosecond)
	}()
	// Wait until runtime.Stack shows each parked as named, while the
	// sleeper sleeps.
	var names map[uint64]string
	for deadline := time.Now().Add(sleep / 2); time.Now().Before(deadline); {
		names = waitNames()
		all := true
		for i, k := range kinds {
			if names[ids[i]] != k.name {
				all = false
			}
		}
		if all {
			break
		}
		runtime.Gosched()
	}
	for i, k := range kinds {
		if names[ids[i]] != k.name || gs[i] == nil {
			return true
		}
	}
	// The byte whose values are nonzero, differ between every two
	// kinds, and are the same for two goroutines of one kind. Its values
	// are kept as they were read: a goroutine that wakes later (the
	// sleeper, on a slow machine) has its byte cleared.
	const span = 512
	found := uintptr(0)
	vals := make([]byte, len(kinds))
	cur := make([]byte, len(kinds))
	for o := uintptr(8); o < span; o++ {
		seen := map[byte]string{}
		ok := true
		for i, k := range kinds {
			b := *(*byte)(unsafe.Add(gs[i], o))
			if name, dup := seen[b]; b == 0 || dup && name != k.name {
				ok = false
				break
			}
			seen[b] = k.name
			cur[i] = b
		}
		if ok && len(seen) != len(kinds)-1 {
			ok = false
		}
		if ok {
			if found != 0 {
				return true // two candidates: trust neither, and look again
			}
			found = o
			copy(vals, cur)
		}
	}
	if found == 0 {
		// None: a goroutine moved on between the names and the bytes (the
		// sleeper woke, on a slow machine). Look again, for longer.
		return true
	}
	// The bytes were read while every goroutine was parked as named only
	// if each is parked so still: one that woke in between (the sleeper)
	// had its byte cleared, and the place found may be another byte that
	// happened to tell the rest apart.
	names = waitNames()
	for i, k := range kinds {
		if names[ids[i]] != k.name {
			return true
		}
	}
	waitOffset = found
	for _, v := range vals {
		isWait[v] = true
	}
	// The waits of the same families, which no goroutine here parks in:
	// the write half of an RWMutex sits between its read half and a
	// WaitGroup's; a semaphore, a send or receive on a nil channel and
	// an empty select wait too.
	r, w := reasonOf(vals, kinds, "sync.RWMutex.RLock"), reasonOf(vals, kinds, "sync.WaitGroup.Wait")
	if w == r+2 {
		isWait[r+1] = true
	}
	isWait[0] = false // no reason: the stretch's byte as it opened
	// The runtime's list of reasons starts with the one it writes while a
	// goroutine assists the collector, working (1), then "IO wait" (2),
	// and has "preempted" (a stop for a stack scan, a moment off the CPU,
	// as at the end of a time slice) five after "sync.WaitGroup.Wait".
	// Where the values found place the list so, every other reason is a
	// goroutine off the CPU (waiting for the collector's credit, the
	// world's stop, switched out of a coroutine), and is taken as a wait,
	// but for those the runtime writes while the goroutine goes on working
	// on its system stack, its own stack held still for the collector: an
	// assist (1), the collector's mark termination, which the goroutine
	// that ends the mark phase runs (4, "garbage collection"), and a scan
	// of its own stack (5).
	if reasonOf(vals, kinds, "IO wait") == 2 && w == 25 {
		for v := 2; v < len(isWait); v++ {
			isWait[v] = true
		}
		isWait[w+5] = false
		assistReason = 1
		for _, v := range []int{1, 4, 5} {
			isWait[v], isWorking[v] = false, true
		}
	}
	return false
}

// reasonOf returns the reason byte, of vals, of the goroutine parked as
// name.
func reasonOf(vals []byte, kinds []struct {
	name string
	wait func()
}, name string) byte {
	for i, k := range kinds {
		if k.name == name {
			return vals[i]
		}
	}
	return 0
}

// waitNames returns what runtime.Stack says each goroutine is doing, by
// goroutine id: "goroutine 7 [chan receive]:" gives "chan receive".
func waitNames() map[uint64]string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	names := map[uint64]string{}
	for _, line := range bytes.Split(buf, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("goroutine "))
		if !ok {
			continue
		}
		id, rest, ok := bytes.Cut(rest, []byte(" ["))
		if !ok {
			continue
		}
		reason, _, _ := bytes.Cut(rest, []byte("]"))
		reason, _, _ = bytes.Cut(reason, []byte(", ")) // "chan receive, 5 minutes"
		n, err := strconv.ParseUint(string(id), 10, 64)
		if err == nil {
			names[n] = string(reason)
		}
	}
	return names
}

// marks returns what a stretch closes with and the next opens with, in
// one look at the running goroutine's g: its count of leaving the running
// state (g.trackingSeq, modulo 256), its wait reason byte, and whether it
// entered a system call (syscall_linux.go), the last two of which it
// clears, so that a wait or a call from now on shows (marks_amd64.s).
func marks() (left, reason uint8, sys bool)

// stampOther is stamp without the TSC, or with a manual clock.
//
//lint:ignore U1000 jumped to from marks_amd64.s
func stampOther() (t int64, left, reason uint8, sys bool) {
	if m := engine.manual; m != nil {
		t = m.Now()
		left, reason, sys = engine.manualMarks()
		return
	}
	t = clock.Now()
	left, reason, sys = marks()
	return
}

// isWaitReason reports whether reason is a wait (findWaits).
func isWaitReason(reason uint8) bool { return isWait[reason] }

// isWorkReason reports whether reason is one the runtime writes while the
// goroutine works on its system stack (findWaits).
func isWorkReason(reason uint8) bool { return isWorking[reason] }

// peekMarks returns what marks returns, and clears nothing.
func peekMarks() (left, reason uint8, sys bool) {
	g := getgp()
	if leftOffset != 0 {
		left = *(*uint8)(unsafe.Add(g, leftOffset))
	}
	if waitOffset != 0 {
		reason = *(*uint8)(unsafe.Add(g, waitOffset))
	}
	if syscallOffset != 0 {
		sys = *(*uintptr)(unsafe.Add(g, syscallOffset)) != 0
	}
	return left, reason, sys
}

// syscallOffset is the place in g of syscallpc, which marks a system call
// (syscall_linux.go); 0: not found, or not Linux, and no stretch is
// seen to hold a system call.
var syscallOffset uintptr

// leftOffset is the place in g of the byte the runtime adds one to each
// time the goroutine leaves the running state (parks, or is preempted or
// yields); 0: not found, and no stretch is seen descheduled.
var leftOffset uintptr

// findLeft sets leftOffset: the one byte of the running g that goes up by
// exactly one at each runtime.Gosched. An asynchronous preemption among
// them spoils a try; it tries again.
func findLeft() {
	const span, yields = 512, 5
	g := getgp()
	var before, after [span]byte
	for range 8 {
		copy(before[:], unsafe.Slice((*byte)(g), span))
		for range yields {
			runtime.Gosched()
		}
		copy(after[:], unsafe.Slice((*byte)(g), span))
		found := uintptr(0)
		for o := uintptr(8); o < span; o++ {
			if after[o]-before[o] == yields {
				if found != 0 {
					found = 0
					break
				}
				found = o
			}
		}
		if found == 0 {
			continue
		}
		// The same byte goes up by one at one more.
		b := *(*byte)(unsafe.Add(g, found))
		runtime.Gosched()
		if *(*byte)(unsafe.Add(g, found)) == b+1 {
			leftOffset = found
			return
		}
	}
}
