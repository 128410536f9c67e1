// Command young serves each request on a goroutine of its own, one at a
// time, that grows its stack: handle walks a request's tree of nested
// sections with nest, a recursion whose frames hold a few hundred bytes,
// some 40 levels deep, so that the goroutine's stack, 2 KiB at its start,
// is copied to a larger one four or five times in every request. Each level does some work of
// its own (about a µs), and the leaf at the bottom some more.
//
// What it tries to break: the runtime counts a copy of the stack as the
// goroutine leaving the running state, which is what tells a stretch in
// which it was taken off its P; a stretch that held a copy would then be
// left out or estimated, and the function that grew the stack lose that
// stretch's time. The engine's own paths, below a function near the
// stack's end, grow it too, where the program would not have. A CPU
// profile charges each copy to the function whose call grew the stack.
//
// Calls are known from the loop bounds: each request is one call of handle,
// depth+1 of nest and one of leaf. The functions are marked
// //go:noinline: instrument with -all.
//
//	go run ./bench/adversarial/young [-n 40000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const depth = 40

var sink uint64

// nest is one section of the request's tree: its frame holds a buffer of
// 48 words, so that 40 of them fill 16 KiB of stack.
//
//go:noinline
func nest(d int, seed uint64) uint64 {
	var buf [48]uint64
	for i := range buf {
		buf[i] = seed + uint64(i)*uint64(d+1)
	}
	x := busy.Spin(buf[d%len(buf)], 250)
	if d == 0 {
		return x ^ leaf(seed)
	}
	return x ^ nest(d-1, buf[(d*7)%len(buf)])
}

//go:noinline
func leaf(seed uint64) uint64 {
	return busy.Spin(seed, 600)
}

// handle serves one request, on a goroutine of its own.
//
//go:noinline
func handle(r int) uint64 {
	return nest(depth, uint64(r))
}

func main() {
	n := flag.Int("n", 40000, "requests")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	// One request at a time, each on a new goroutine: the program's CPU
	// time stays on one core, and the runtime's threads that look for work
	// as goroutines come and go have the other.
	for r := 0; r < *n; r++ {
		done := make(chan uint64)
		go func(k int) { done <- handle(k) }(r)
		sink ^= <-done
	}
	fmt.Println("young:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.main.func1", int64(*n))
	rec.Add("main.handle", int64(*n))
	rec.Add("main.nest", int64(*n)*(depth+1))
	rec.Add("main.leaf", int64(*n))
	rec.Finish()
}
