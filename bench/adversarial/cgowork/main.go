// Command cgowork calls C: a loop parses records in Go (parse, about
// 4.5 µs on the project's VMs) and hashes each through a C function
// (hash, a cgo call of about 13 µs of CPU), then folds the result in Go
// (fold, about 1.4 µs). A goroutine in a cgo
// call is in the system call state, as one blocked in read(2) is, but
// this one runs on its CPU throughout: a CPU profile charges the call
// (runtime.cgocall) to hash, its caller. A model that takes every
// system call for a wait loses hash's time.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/cgowork [-n 100000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

//go:noinline
func parse(i int) uint64 {
	return busy.Spin(uint64(i), 2000)
}

//go:noinline
func hash(x uint64) uint64 {
	return mixC(x, 4000)
}

//go:noinline
func fold(x uint64) uint64 {
	return busy.Spin(x, 600)
}

func main() {
	n := flag.Int("n", 100_000, "records")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	for i := 0; i < *n; i++ {
		sink += fold(hash(parse(i)))
	}
	fmt.Println("cgowork:", sink)
	rec.Add("main.main", 1)
	rec.Add("main.parse", int64(*n))
	rec.Add("main.hash", int64(*n))
	rec.Add("main.fold", int64(*n))
	rec.Finish()
}
