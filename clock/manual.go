package clock

import "time"

// Manual is a clock that moves only when told to: ticks are nanoseconds.
type Manual struct{}

// UseManual switches the package to a manual clock starting at zero and
// returns its handle. Tests only; it is not safe to call while other
// goroutines read the clock. Setup switches back.
func UseManual() Manual {
	mode = modeManual
	mult, shift, invMult, invShift = identityMult, identityShift, identityMult, identityShift
	perSec = 1e9
	manual.Store(0)
	wallTick, wallNano = 0, time.Now().UnixNano()
	return Manual{}
}

// Advance moves the manual clock forward by ns nanoseconds. It is safe to
// call while other goroutines read the clock.
func (Manual) Advance(ns int64) { manual.Add(ns) }

// Set sets the manual clock to ns. It is safe to call while other
// goroutines read the clock.
func (Manual) Set(ns int64) { manual.Store(ns) }
