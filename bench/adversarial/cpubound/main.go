// Command cpubound runs one CPU-bound goroutine, which allocates nothing,
// beside three goroutines that allocate as they work. An estimate driven
// by the program's allocation sees the allocating goroutines' pace, not
// the CPU-bound one's.
//
// Each goroutine runs a fixed number of iterations, so calls are known
// from the loop bounds. main waits for them (wg.Wait), so the work runs on
// four goroutines at once: its inherent times, which are wall time, may
// add up to more than the process's CPU time, and the truth file does not
// claim that they cannot. The functions are marked //go:noinline and are
// small: instrument with -all (the goroutines' functions are kept by the
// default selection too).
//
//	go run ./bench/adversarial/cpubound [-scale 1] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"strings"
	"sync"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// Work at -scale 1.
const (
	spins      = 50_000_000 // calls of spin on the CPU-bound goroutine
	allocators = 3
	words      = 10_000_000 // calls of join on each allocating goroutine
	partsPer   = 4          // calls of part in each join
)

var sinks [allocators + 1]uint64

//go:noinline
func spin(x uint64) uint64 {
	for i := 0; i < 20; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func burn(n int) {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x = spin(x)
	}
	sinks[0] = x
}

//go:noinline
func part(i, j int) string {
	return strings.Repeat("ab", 1+(i+j)%5)
}

//go:noinline
func join(i int) string {
	ps := make([]string, 0, partsPer)
	for j := 0; j < partsPer; j++ {
		ps = append(ps, part(i, j))
	}
	return strings.Join(ps, "-")
}

//go:noinline
func churn(id, n int) {
	var total uint64
	for i := 0; i < n; i++ {
		total += uint64(len(join(i)))
	}
	sinks[id] = total
}

// scaled is n times scale, at least 1.
//
//meter:ignore
func scaled(n int, scale float64) int { return max(1, int(float64(n)*scale)) }

func main() {
	scale := flag.Float64("scale", 1, "scale of every goroutine's work")
	flag.Parse()
	rec := truth.Start()
	nSpins, nWords := scaled(spins, *scale), scaled(words, *scale)

	var wg sync.WaitGroup
	wg.Add(1 + allocators)
	go func() {
		defer wg.Done()
		burn(nSpins)
	}()
	for id := 1; id <= allocators; id++ {
		go func(id int) {
			defer wg.Done()
			churn(id, nWords)
		}(id)
	}
	wg.Wait()
	fmt.Println("cpubound:", sinks)

	rec.Add("main.main", 1)
	rec.Add("main.main.func1", 1)
	rec.Add("main.main.func2", allocators)
	rec.Add("main.burn", 1)
	rec.Add("main.spin", int64(nSpins))
	rec.Add("main.churn", allocators)
	rec.Add("main.join", int64(allocators*nWords))
	rec.Add("main.part", int64(allocators*nWords*partsPer))
	rec.Finish()
}
