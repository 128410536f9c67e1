// Command allocfree runs allocation-free hot loops: four functions nested
// one in another, of about 3 µs, 300 ns, 30 ns and 2 ns a call (the work
// is sized for the project's 2-core VMs), each with work of its own beside
// its calls, and a second path where main's loop calls the 300 ns one
// directly. Nothing allocates after start, so a clock driven by
// allocation stops for the whole run.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small, so meterinject's default selection leaves
// them out: instrument with -all.
//
//	go run ./bench/adversarial/allocfree [-n 1000000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// Calls of each function into the next one down.
const (
	callsIn3us   = 8
	callsIn300ns = 6
	callsIn30ns  = 6
)

// sink keeps results alive, so that no loop is dropped.
var sink uint64

//go:noinline
func leaf2ns(x uint64) uint64 {
	return x*2862933555777941757 + 3037000493
}

//go:noinline
func step30ns(x uint64) uint64 {
	for i := 0; i < callsIn30ns; i++ {
		x = leaf2ns(x)
	}
	return busy.Spin(x, 14)
}

//go:noinline
func step300ns(x uint64) uint64 {
	for i := 0; i < callsIn300ns; i++ {
		x = step30ns(x)
	}
	return busy.Spin(x, 75)
}

//go:noinline
func step3us(x uint64) uint64 {
	for i := 0; i < callsIn3us; i++ {
		x = step300ns(x)
	}
	return busy.Spin(x, 380)
}

func main() {
	n := flag.Int("n", 1000000, "calls of the 3 µs function (and as many of the 300 ns one from main)")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	x := uint64(1)
	for i := 0; i < *n; i++ {
		x = step3us(x)
		x = step300ns(x)
	}
	sink = x
	fmt.Println("allocfree:", sink)

	n3us := int64(*n)
	n300ns := n3us*callsIn3us + n3us
	n30ns := n300ns * callsIn300ns
	rec.Add("main.main", 1)
	rec.Add("main.step3us", n3us)
	rec.Add("main.step300ns", n300ns)
	rec.Add("main.step30ns", n30ns)
	rec.Add("main.leaf2ns", n30ns*callsIn30ns)
	rec.Finish()
}
