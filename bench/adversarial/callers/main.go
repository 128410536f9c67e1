// Command callers calls one function, digest, from two callers that hand
// it work of very different sizes: small calls it four times a call with
// a short block (about 500 ns), large once a call with a long one (about
// 100 µs), a hundred times less often. Each caller does work of its own
// beside its calls. digest's time is shared about equally between its two
// callers, but nearly all of its calls are small's.
//
// What it tries to break: an estimate of a function's time that takes one
// mean own time for all its calls, whoever makes them. The mean (about
// 1 µs) is twice a small call and a hundredth of a large one, so a caller
// whose unmeasured calls of digest are charged at it keeps, as its own
// time, what it did not charge: large's share of own time doubles, and
// small's vanishes. A gprof-style profile, which splits a function's time
// among its callers by their calls, fails the same way.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/callers [-n 400000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const (
	smallCalls = 4      // calls of digest in a call of small
	smallBlock = 300    // rounds of busy.Spin in those calls (about 500 ns)
	smallOwn   = 300    // rounds of small's own work a call
	largeEvery = 100    // calls of small for each call of large
	largeBlock = 60_000 // rounds in large's call of digest (about 100 µs)
	largeOwn   = 30_000 // rounds of large's own work a call
)

var sink uint64

// digest folds a block of the given number of rounds into x.
//
//go:noinline
func digest(x uint64, rounds int) uint64 {
	return busy.Spin(x, rounds)
}

//go:noinline
func small(x uint64) uint64 {
	for i := 0; i < smallCalls; i++ {
		x = digest(x, smallBlock)
	}
	return busy.Spin(x, smallOwn)
}

//go:noinline
func large(x uint64) uint64 {
	x = digest(x, largeBlock)
	return busy.Spin(x, largeOwn)
}

func main() {
	n := flag.Int("n", 400_000, "calls of small (and a hundredth as many of large)")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	x := uint64(1)
	nLarge := 0
	for i := 0; i < *n; i++ {
		x = small(x)
		if i%largeEvery == largeEvery-1 {
			x = large(x)
			nLarge++
		}
	}
	sink = x
	fmt.Println("callers:", sink)
	rec.Add("main.main", 1)
	rec.Add("main.small", int64(*n))
	rec.Add("main.large", int64(nLarge))
	rec.Add("main.digest", int64(*n)*smallCalls+int64(nLarge))
	rec.Finish()
}
