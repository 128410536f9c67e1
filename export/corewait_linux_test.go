//go:build linux

package export

import (
	"bytes"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meterio/meter/meter"
)

// The .meta file says how long the process's threads waited for a core:
// with twice as many threads busy as there are cores, the kernel keeps
// half of them waiting at any time, and the figure grows by that much, a
// core's worth of waiting per core: 50 ms of it must show within 10 s.
func TestMetaSaysHowLongThreadsWaitedForACore(t *testing.T) {
	if _, ok := coreWait(); !ok {
		t.Skip("no schedstat here")
	}
	read := func() int64 {
		var meta bytes.Buffer
		if err := writeMeta(&meta, meter.Snapshot{Taken: time.Now(), Clock: "mono"}); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^core_wait_ns: (\d+)$`).FindStringSubmatch(meta.String())
		if m == nil {
			t.Fatalf("meta has no core_wait_ns line:\n%s", meta.String())
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := read()
	busy := 2 * runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(busy))
	var wg sync.WaitGroup
	var stop atomic.Bool
	for range busy {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a thread each, for the kernel to share out
			defer runtime.UnlockOSThread()
			for !stop.Load() {
			}
		}()
	}
	// Oversubscribed until the threads have waited: the figure is the
	// kernel's, and only moves when a waiting thread gets a core.
	const want = int64(50 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	after := read()
	for after-before < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		after = read()
	}
	stop.Store(true)
	wg.Wait()
	if after-before < want {
		t.Fatalf("core_wait_ns %d, then %d with %d threads busy on %d cores for 10 s: want %d more", before, after, busy, runtime.NumCPU(), want)
	}
}
