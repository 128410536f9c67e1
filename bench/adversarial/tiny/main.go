// Command tiny calls functions of about 2 ns hundreds of millions of
// times from one loop: an add, a rotate and a clamp, each a real call.
// Metering one of these calls takes longer than the call itself.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/tiny [-n 800000000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"math/bits"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

//go:noinline
func add(x, y uint64) uint64 { return x + y }

//go:noinline
func rotate(x uint64) uint64 { return bits.RotateLeft64(x, 13) ^ 0x5DEECE66D }

//go:noinline
func clamp(x uint64) uint64 {
	if x > 1<<62 {
		return x >> 1
	}
	return x
}

// loop calls add and rotate at every turn and clamp at every fourth.
//
//go:noinline
func loop(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = add(x, uint64(i))
		x = rotate(x)
		if i&3 == 0 {
			x = clamp(x)
		}
	}
	return x
}

func main() {
	n := flag.Int("n", 800_000_000, "turns of the loop")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	sink = loop(*n)
	fmt.Println("tiny:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.loop", 1)
	rec.Add("main.add", int64(*n))
	rec.Add("main.rotate", int64(*n))
	rec.Add("main.clamp", int64((*n+3)/4))
	rec.Finish()
}
