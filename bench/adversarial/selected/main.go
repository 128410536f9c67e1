// Command selected calls four short functions, 200 to 450 ns each, six
// million times each, one after another on one goroutine: build allocates
// (a slice and a string) and calls part, a short allocating helper, four
// times (cpubound's join and part); assemble does the same work with no
// instrumented callee; mix computes, and calls fold four times; spin only
// computes. All four are sampled, their helpers untimed: their own time
// comes from the few calls the engine selects and meters, one in a
// hundred, timed between two clock reads that wait for the work before
// them, where their other calls overlap their work with the loop's. A
// model that trusts the selected calls shows the functions that move
// memory longer than a CPU profile does, and charges their loop more than
// it ran.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/selected [-n 6000000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const partsPer = 4 // calls of part in build and of fold in mix

var sink uint64

//go:noinline
func part(i, j int) string {
	return strings.Repeat("ab", 1+(i+j)%5)
}

//go:noinline
func build(i int) string {
	ps := make([]string, 0, partsPer)
	for j := 0; j < partsPer; j++ {
		ps = append(ps, part(i, j))
	}
	return strings.Join(ps, "-")
}

//go:noinline
func assemble(i int) string {
	ps := make([]string, 0, partsPer)
	for j := 0; j < partsPer; j++ {
		ps = append(ps, strings.Repeat("ab", 1+(i+j)%5))
	}
	return strings.Join(ps, "-")
}

//go:noinline
func fold(x uint64) uint64 {
	for i := 0; i < 8; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func mix(x uint64) uint64 {
	for j := 0; j < partsPer; j++ {
		x = fold(x + uint64(j))
	}
	for i := 0; i < 250; i++ {
		x = x*0xBF58476D1CE4E5B9 ^ x>>27
	}
	return x
}

//go:noinline
func spin(x uint64) uint64 {
	for i := 0; i < 100; i++ {
		x = x*0x9E3779B97F4A7C15 + uint64(i)
		x ^= x >> 31
	}
	return x
}

func main() {
	n := flag.Int("n", 6_000_000, "calls of each of build, assemble, mix and spin")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	var total int
	for i := 0; i < *n; i++ {
		total += len(build(i))
	}
	for i := 0; i < *n; i++ {
		total += len(assemble(i))
	}
	x := uint64(total)
	for i := 0; i < *n; i++ {
		x = mix(x)
	}
	for i := 0; i < *n; i++ {
		x = spin(x)
	}
	sink = x
	fmt.Println("selected:", total, sink)
	rec.Add("main.main", 1)
	rec.Add("main.build", int64(*n))
	rec.Add("main.part", int64(*n*partsPer))
	rec.Add("main.assemble", int64(*n))
	rec.Add("main.mix", int64(*n))
	rec.Add("main.fold", int64(*n*partsPer))
	rec.Add("main.spin", int64(*n))
	rec.Finish()
}
