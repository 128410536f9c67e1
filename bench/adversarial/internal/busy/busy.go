// Package busy is the CPU work of the adversarial programs' functions,
// and the draws that make their inputs.
//
// It is not instrumented (bench/adversarial/run.sh instruments only the
// program's own package): Spin has no probe, so its time is its callers'
// own time, as an inlined helper's is.
package busy

// Spin mixes x for rounds rounds of a multiply-add and a shift, a few
// cycles each (about 1.4 ns a round on the project's VMs), and returns
// it, so that no round can be dropped.
func Spin(x uint64, rounds int) uint64 {
	for i := 0; i < rounds; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

// Draw advances the xorshift generator whose state is *r and returns its
// next value modulo n: the same inputs every run, from the same seed.
func Draw(r *uint64, n uint64) uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return *r % n
}
