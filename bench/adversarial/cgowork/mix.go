package main

// The C half of hash: meterinject leaves files that import "C" alone, so
// the cgo call is made here, in a function without a probe, which hash
// calls.

/*
#include <stdint.h>

static uint64_t mixc(uint64_t x, int rounds) {
	for (int i = 0; i < rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		x *= 0x9E3779B97F4A7C15ull;
	}
	return x;
}
*/
import "C"

// mixC runs rounds of a xorshift and multiply in C.
func mixC(x uint64, rounds int) uint64 {
	return uint64(C.mixc(C.uint64_t(x), C.int(rounds)))
}
