package flowcheck

import (
	"fmt"
	"math/bits"
)

// Properties and their defaults (METER_FLOWCHECK_*).
const (
	DefaultLower = 0   // METER_FLOWCHECK_LOWER
	DefaultUpper = 100 // METER_FLOWCHECK_UPPER
	MaxGap       = 1<<31 - 1
)

// Rule is flowcheck's configuration.
type Rule struct {
	Lower, Upper int64 // gaps are Lower + a uniform draw in [0, Upper−Lower)
	// Random, when set, replaces the per-goroutine generators: each draw
	// calls it once, from any goroutine. Tests use it to know every
	// countdown in advance.
	Random func() uint64
}

// Default returns the rule at its default properties.
func Default() Rule { return Rule{Lower: DefaultLower, Upper: DefaultUpper} }

// Draw returns a gap in [Lower, Upper) (Lower when Upper ≤ Lower), stepping
// the goroutine's generator state, which Seed set up.
func (r *Rule) Draw(state *uint64) int64 {
	lower := min(max(r.Lower, 0), MaxGap)
	span := min(max(r.Upper, lower), MaxGap) - lower
	if span == 0 {
		return lower
	}
	var x uint64
	if r.Random != nil {
		x = r.Random()
	} else {
		s := *state + 0xa0761d6478bd642f // wyrand
		*state = s
		hi, lo := bits.Mul64(s, s^0xe7037ed1a0b428db)
		x = hi ^ lo
	}
	hi, _ := bits.Mul64(x, uint64(span)) // uniform in [0, span) without a division
	return lower + int64(hi)
}

// Seed returns a goroutine's first generator state, from a process seed and
// the goroutine's number among those seeded: a run with a fixed seed and a
// fixed schedule repeats itself.
func Seed(seed, n uint64) uint64 {
	x := seed + n*0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	x ^= x >> 31
	return x | 1
}

// Settings describes the rule for the model's metadata.
func (r *Rule) Settings() string { return fmt.Sprintf("lower=%d upper=%d", r.Lower, r.Upper) }
