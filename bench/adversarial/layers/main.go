// Command layers calls sampled functions through a layer too short to
// time: outer (about 300 ns of its own) calls middle (about 40 ns) twice,
// and middle calls inner (about 300 ns) once; main also calls inner
// directly, between calls of outer, and each level allocates a little.
// outer and inner are sampled and middle is untimed, so an unmetered call
// of inner charges the innermost metered firing on the goroutine, which is
// outer's only where outer was selected, and main's otherwise; a selected
// call of inner cuts main's stretch in the middle of an unmetered call of
// outer.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/layers [-n 3000000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

// mixIn is the work of inner and outer, theirs: no probe.
//
//meter:ignore
//go:noinline
func mixIn(x uint64, rounds int) uint64 {
	for i := 0; i < rounds; i++ {
		x = x*0x9E3779B97F4A7C15 + uint64(i)
		x ^= x >> 29
	}
	return x
}

//go:noinline
func inner(x uint64) uint64 {
	s := strconv.FormatUint(x, 16)
	return mixIn(x+uint64(len(s)), 120)
}

//go:noinline
func middle(x uint64) uint64 {
	x ^= x >> 7
	return inner(x)
}

//go:noinline
func outer(x uint64) uint64 {
	b := make([]byte, 0, 24)
	b = strconv.AppendUint(b, x, 10)
	x = mixIn(x+uint64(len(b)), 100)
	x = middle(x)
	return middle(x + 1)
}

func main() {
	n := flag.Int("n", 3_000_000, "calls of outer, and of inner from main")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	x := uint64(1)
	for i := 0; i < *n; i++ {
		x = outer(x)
		x = inner(x)
	}
	sink = x
	fmt.Println("layers:", sink)
	rec.Add("main.main", 1)
	rec.Add("main.outer", int64(*n))
	rec.Add("main.middle", int64(2**n))
	rec.Add("main.inner", int64(3**n))
	rec.Finish()
}
