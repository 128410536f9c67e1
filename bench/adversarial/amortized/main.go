// Command amortized calls a function whose cost is amortized: put appends
// a value to a buffer (a few ns), and every flushEvery-th call flushes the
// buffer, which takes about 250 µs of CPU in the same call. Buffered
// writers, hash maps that grow, caches that refill and batchers pay so: a
// few long calls among many short ones hold most of the function's time.
// Beside it, steady takes about 500 ns at every call, as much in all.
//
// What it tries to break: an estimate of a function's time from a sample
// of its calls that takes its long calls for pauses (the collector, a
// preemption, the host) and cuts them, or a verdict on its first calls
// that finds it short: put's mean own time is about 490 ns, but all but a
// percent of it lies in one call in 512.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all. The two functions
// share the time about equally, so the profile's own error in each share
// is as large as it gets: the run is long enough (about 8 s) for about
// a thousand samples each at 250 a second, a share known within about
// 1.5 points.
//
//	go run ./bench/adversarial/amortized [-n 5000000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const (
	flushEvery  = 512     // calls of put between two flushes
	flushRounds = 180_000 // rounds of busy.Spin a flush (about 250 µs)
	putRounds   = 4       // rounds of busy.Spin every call of put
	steadyRound = 360     // rounds of busy.Spin a call of steady (about 500 ns)
)

var (
	buf     = make([]uint64, 0, flushEvery)
	flushed uint64
	sink    uint64
)

// put appends x to the buffer and flushes it when full: one call in
// flushEvery folds the whole buffer into flushed, slowly.
//
//go:noinline
func put(x uint64) {
	buf = append(buf, busy.Spin(x, putRounds))
	if len(buf) == flushEvery {
		h := flushed
		for _, v := range buf {
			h ^= v
		}
		flushed = busy.Spin(h, flushRounds)
		buf = buf[:0]
	}
}

//go:noinline
func steady(x uint64) uint64 {
	return busy.Spin(x, steadyRound)
}

func main() {
	n := flag.Int("n", 5_000_000, "calls of each function")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	for i := 0; i < *n; i++ {
		put(uint64(i))
		sink ^= steady(uint64(i))
	}
	fmt.Println("amortized:", flushed, sink)
	rec.Add("main.main", 1)
	rec.Add("main.put", int64(*n))
	rec.Add("main.steady", int64(*n))
	rec.Finish()
}
