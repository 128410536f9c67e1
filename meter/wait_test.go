//go:build amd64 && !race

package meter

import (
	"runtime"
	"testing"
	"time"
)

// The wait reason's place in g and the reasons that are waits are found
// by looking: a goroutine that parks on a channel shows a wait, one that
// only yields its P does not.
func TestFindWaits(t *testing.T) {
	findWaits()
	if waitOffset == 0 {
		t.Fatal("the wait reason's place in the runtime's g was not found")
	}
	waitMark()
	if waited() {
		t.Fatal("a wait seen before any")
	}
	// The sender is late, so that the receive parks; on a loaded machine
	// the receiver may arrive later still and find the sender blocked, so
	// one parked receive in a few tries is what the test asks.
	parked := false
	for try := 0; try < 5 && !parked; try++ {
		ch := make(chan int)
		go func() { time.Sleep(time.Millisecond); ch <- 1 }()
		waitMark()
		<-ch
		parked = waited()
	}
	if !parked {
		t.Fatal("a channel receive that parked is not a wait")
	}
	waitMark()
	for range 100 {
		runtimeGosched()
	}
	if waited() {
		t.Fatal("yielding the P is a wait")
	}
}

func runtimeGosched() { runtime.Gosched() }
