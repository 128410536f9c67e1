//go:build (amd64 || arm64) && !race

package meter

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/meterio/meter/clock"
)

// The wait reason's place in g and the reasons that are waits are found
// by looking: a goroutine that parks on a channel shows a wait, one that
// only yields its P does not.
func TestFindWaits(t *testing.T) {
	findWaits()
	if waitOffset == 0 {
		t.Fatal("the wait reason's place in the runtime's g was not found")
	}
	marks()
	if _, r, _ := marks(); isWaitReason(r) {
		t.Fatal("a wait seen before any")
	}
	if !receiveParks(func() uint8 { _, r, _ := marks(); return r }) {
		t.Fatal("a channel receive that parked is not a wait")
	}
	marks()
	for range 100 {
		runtimeGosched()
	}
	if _, r, _ := marks(); isWaitReason(r) {
		t.Fatal("yielding the P is a wait")
	}
}

func runtimeGosched() { runtime.Gosched() }

// The count of leaving the running state is found, and goes up by one at
// each yield of the P.
func TestFindLeft(t *testing.T) {
	findWaits()
	if leftOffset == 0 {
		t.Fatal("the runtime's count of a goroutine leaving the running state was not found")
	}
	before, _, _ := marks()
	runtime.Gosched()
	runtime.Gosched()
	if now, _, _ := marks(); now-before < 2 {
		t.Fatalf("two yields counted %d times", now-before)
	}
}

// The run-queue wait is read from the runtime's scheduler latencies
// without allocating, and is a mean of those recorded since; the count of
// goroutines ready to run with it.
func TestRunWaitRead(t *testing.T) {
	initRunWait()
	if runQueue.sample == nil {
		t.Fatal("no /sched/latencies:seconds histogram")
	}
	// Goroutines that become ready and wait to run, by the hundred.
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() { defer wg.Done(); runtime.Gosched() }()
	}
	wg.Wait()
	var mean int64
	if n := testing.AllocsPerRun(10, func() {
		runQueue.at.Store(0)
		mean = runQueue.read(runWaitEvery + 1)
	}); n != 0 {
		t.Errorf("reading the run-queue wait: %v allocations", n)
	}
	if mean <= 0 || mean > int64(time.Second) {
		t.Errorf("mean run-queue wait %d ns", mean)
	}
	// The count of ready goroutines is read with it: none now, but for
	// those other tests left.
	if r := runQueue.ready.Load(); r < 0 || r > 1000 {
		t.Errorf("ready goroutines %d", r)
	}
}

// stamp reads the tick and the marks that marks reads, with the TSC (in
// one assembly function) and without: the count of leaving the running
// state as of the tick, the wait reason, cleared once read, and a tick
// between two clock reads around it.
func TestStampReadsTheTickAndTheMarks(t *testing.T) {
	findWaits()
	if leftOffset == 0 || waitOffset == 0 {
		t.Skip("the runtime's g was not read here")
	}
	for _, src := range []string{clock.SourceTSC, clock.SourceMono} {
		t.Run(src, func(t *testing.T) {
			if err := clock.Setup(src); err != nil {
				t.Skip(err)
			}
			defer clock.Setup("mono")
			Configure(Chain{Enabled: true})
			defer Configure(Chain{Enabled: true, Clock: clock.NewManual()})
			if stampTSC != (src == clock.SourceTSC) {
				t.Fatalf("stampTSC %v with the %s clock", stampTSC, src)
			}
			stamp()
			before := clock.Now()
			tick, left, reason, sys := stamp()
			after := clock.Now()
			if tick < before || tick > after {
				t.Errorf("tick %d not between the reads around it, %d and %d", tick, before, after)
			}
			if reason != 0 || sys {
				t.Errorf("reason %d, system call %v, with nothing since the last stamp", reason, sys)
			}
			runtime.Gosched()
			runtime.Gosched()
			if _, now, _, _ := stamp(); now-left < 2 {
				t.Errorf("two yields counted %d times", now-left)
			}
			if !receiveParks(func() uint8 { _, _, r, _ := stamp(); return r }) {
				t.Fatal("a channel receive that parked: no wait read")
			}
			if _, _, r, _ := stamp(); r != 0 {
				t.Errorf("reason %d read again: stamp did not clear it", r)
			}
		})
	}
}

// receiveParks reports whether read, called before and after a channel
// receive, reads a wait reason after it. The sender is late, so that the
// receive parks; on a loaded machine the receiver may arrive later still
// and find the sender blocked, so one parked receive in a few tries is
// what it asks.
func receiveParks(read func() uint8) bool {
	for try := 0; try < 5; try++ {
		ch := make(chan int)
		go func() { time.Sleep(time.Millisecond); ch <- 1 }()
		read()
		<-ch
		if isWaitReason(read()) {
			return true
		}
	}
	return false
}
