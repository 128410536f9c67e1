// Command blocking runs a consumer that blocks on a channel beside the
// CPU work that feeds it. A producer goroutine computes each value
// (produce, about 40 µs of CPU) and sends it; the consumer waits for it in
// receive, which blocks on the channel and uses no CPU while it waits,
// then digests it (about 20 µs). So receive is long in wall time and
// nearly nothing in CPU time: a CPU profile shows almost none of it.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all (the goroutines'
// functions are kept by the default selection too).
//
//	go run ./bench/adversarial/blocking [-n 60000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

//go:noinline
func produce(i int) uint64 {
	return busy.Spin(uint64(i), 16000)
}

//go:noinline
func receive(ch <-chan uint64) uint64 {
	return <-ch
}

//go:noinline
func digest(v uint64) uint64 {
	return busy.Spin(v, 8000)
}

//go:noinline
func producer(ch chan<- uint64, n int) {
	for i := 0; i < n; i++ {
		ch <- produce(i)
	}
	close(ch)
}

//go:noinline
func consumer(ch <-chan uint64, n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x ^= digest(receive(ch))
	}
	return x
}

func main() {
	n := flag.Int("n", 60000, "values produced and consumed")
	flag.Parse()
	rec := truth.Start()

	ch := make(chan uint64)
	go producer(ch, *n)
	sink = consumer(ch, *n)
	fmt.Println("blocking:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.producer", 1)
	rec.Add("main.consumer", 1)
	rec.Add("main.produce", int64(*n))
	rec.Add("main.receive", int64(*n))
	rec.Add("main.digest", int64(*n))
	rec.Finish()
}
