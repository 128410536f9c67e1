// Command noalloc hardly allocates: it sieves primes in one buffer over
// and over, and hashes fixed blocks of bytes, after allocating both
// buffers once at start.
//
// The sieve counts its calls of strike in a local variable (strike is
// called once per prime up to the square root, which the sieve finds as
// it goes); every other count follows from the loop bounds. The functions
// are marked //go:noinline and are small: instrument with -all.
//
//	go run ./bench/adversarial/noalloc [-scale 1] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// Work at -scale 1.
const (
	sieves    = 1200
	limit     = 1 << 20 // numbers sieved each time
	hashes    = 1_000_000
	blockSize = 1024 // bytes hashed by each hashBlock
	lane      = 64   // bytes per mixLane call
)

var sink uint64

//go:noinline
func strike(composite []bool, p int) {
	for m := p * p; m < len(composite); m += p {
		composite[m] = true
	}
}

//go:noinline
func countPrimes(composite []bool) int {
	n := 0
	for i := 2; i < len(composite); i++ {
		if !composite[i] {
			n++
		}
	}
	return n
}

// sieve returns how many primes are below len(composite) and how often it
// called strike.
//
//go:noinline
func sieve(composite []bool) (primes, strikes int) {
	clear(composite)
	for p := 2; p*p < len(composite); p++ {
		if !composite[p] {
			strike(composite, p)
			strikes++
		}
	}
	return countPrimes(composite), strikes
}

//go:noinline
func mixLane(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

//go:noinline
func hashBlock(b []byte, seed uint64) uint64 {
	h := 14695981039346656037 ^ seed
	for i := 0; i+lane <= len(b); i += lane {
		h = mixLane(h, b[i:i+lane])
	}
	return h
}

// scaled is n times scale, at least 1.
//
//meter:ignore
func scaled(n int, scale float64) int { return max(1, int(float64(n)*scale)) }

func main() {
	scale := flag.Float64("scale", 1, "scale of the work")
	flag.Parse()
	rec := truth.Start()
	nSieves, nHashes := scaled(sieves, *scale), scaled(hashes, *scale)
	rec.CPUBound()

	composite := make([]bool, limit)
	var strikes int64
	for i := 0; i < nSieves; i++ {
		p, s := sieve(composite)
		sink += uint64(p)
		strikes += int64(s)
	}
	block := make([]byte, blockSize)
	for i := range block {
		block[i] = byte(i * 7)
	}
	for i := 0; i < nHashes; i++ {
		sink ^= hashBlock(block, uint64(i))
	}
	fmt.Println("noalloc:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.sieve", int64(nSieves))
	rec.Add("main.countPrimes", int64(nSieves))
	rec.Add("main.strike", strikes)
	rec.Add("main.hashBlock", int64(nHashes))
	rec.Add("main.mixLane", int64(nHashes)*blockSize/lane)
	rec.Finish()
}
