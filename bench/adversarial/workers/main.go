// Command workers runs a pool of workers that never return, as a service's
// workers do: each loops over a channel of jobs, unpacks each job in its
// own body (about 10 µs of CPU) and hands it to handle (about 20 µs). The
// program ends with the workers parked on the channel, their calls still
// running: a model that only counts calls that returned shows nothing of
// their own time, a third of the profile.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline; the default selection keeps them all too.
//
//	go run ./bench/adversarial/workers [-n 60000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const workers = 2

var sink uint64

//go:noinline
func handle(x uint64) uint64 {
	return busy.Spin(x, 8000)
}

// worker never returns: nothing closes jobs.
//
//go:noinline
func worker(jobs <-chan uint64, results chan<- uint64) {
	for j := range jobs {
		x := busy.Spin(j, 4000)
		results <- handle(x)
	}
}

//go:noinline
func feed(jobs chan<- uint64, n int) {
	for i := 0; i < n; i++ {
		jobs <- uint64(i)
	}
}

func main() {
	n := flag.Int("n", 60000, "jobs")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	jobs, results := make(chan uint64, workers), make(chan uint64, workers)
	for w := 0; w < workers; w++ {
		go worker(jobs, results)
	}
	go feed(jobs, *n)
	for i := 0; i < *n; i++ {
		sink ^= <-results
	}
	fmt.Println("workers:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.worker", workers)
	rec.Add("main.feed", 1)
	rec.Add("main.handle", int64(*n))
	rec.Finish()
}
