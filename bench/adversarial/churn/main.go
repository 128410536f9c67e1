// Command churn starts a goroutine for every item of work, as a server
// does for each connection or a fan-out for each task: 600,000
// goroutines that live a few µs each, at most eight at a time. Each parses
// its item (about 2 µs), scores it ten times (about 150 ns a call) and
// sends the result to a collector goroutine, which folds it in.
//
// What it tries to break: per-goroutine state made and dropped hundreds of
// thousands of times (a state table that fills, a new goroutine on the g
// of a finished one taken for it), a first-firing verdict made on
// goroutines that end before it comes, and counts of calls spread over as
// many goroutines as there are calls.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/churn [-n 600000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"sync"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const (
	parseRounds = 1200 // rounds of busy.Spin a parse (about 2 µs)
	scoreRounds = 90   // a score (about 150 ns)
	scores      = 10   // scores an item
	inFlight    = 8    // goroutines at work at most
)

//go:noinline
func parseItem(i int) uint64 {
	return busy.Spin(uint64(i), parseRounds)
}

//go:noinline
func score(x uint64) uint64 {
	return busy.Spin(x, scoreRounds)
}

// worker handles one item on a goroutine of its own.
//
//go:noinline
func worker(i int, out chan<- uint64, slots <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	x := parseItem(i)
	for j := 0; j < scores; j++ {
		x = score(x)
	}
	out <- x
	<-slots
}

// collect folds the results until out is closed.
//
//go:noinline
func collect(out <-chan uint64, done chan<- uint64) {
	var h uint64
	for x := range out {
		h = h*31 + x
	}
	done <- h
}

func main() {
	n := flag.Int("n", 600_000, "items, one goroutine each")
	flag.Parse()
	rec := truth.Start()
	out := make(chan uint64, inFlight)
	done := make(chan uint64)
	go collect(out, done)
	slots := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i := 0; i < *n; i++ {
		slots <- struct{}{}
		wg.Add(1)
		go worker(i, out, slots, &wg)
	}
	wg.Wait()
	close(out)
	fmt.Println("churn:", <-done)
	rec.Add("main.main", 1)
	rec.Add("main.collect", 1)
	rec.Add("main.worker", int64(*n))
	rec.Add("main.parseItem", int64(*n))
	rec.Add("main.score", int64(*n)*scores)
	rec.Finish()
}
