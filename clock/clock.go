package clock

import (
	"errors"
	"math/bits"
	"sync/atomic"
	"time"
)

// Source names the tick source in use.
const (
	SourceMono   = "mono"
	SourceTSC    = "tsc"
	SourceManual = "manual"
)

const (
	modeMono = iota
	modeTSC
	modeManual
)

var (
	mode     int    // read on every Now; written only by Setup and UseManual
	mult     uint64 // ticks → ns: ns = ticks*mult >> shift
	shift    uint
	base     = time.Now() // monotonic anchor for the mono source
	manual   atomic.Int64
	clamped  atomic.Uint64
	wallTick int64 // tick reading at wallNano
	wallNano int64 // Unix ns at wallTick
)

func init() {
	mult, shift = 1, 0
	wallTick, wallNano = Now(), time.Now().UnixNano()
}

// Now returns the current tick reading. Ticks only have meaning as
// differences; Nanos converts one to nanoseconds.
func Now() int64 {
	switch mode {
	case modeTSC:
		return rdtscp()
	case modeManual:
		return manual.Load()
	}
	return int64(time.Since(base))
}

// Nanos converts a tick difference to nanoseconds with a multiply and a
// shift: no division on the hot path.
func Nanos(ticks int64) int64 {
	if ticks <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(ticks), mult)
	if shift == 0 {
		return int64(lo)
	}
	return int64(hi<<(64-shift) | lo>>shift)
}

// Elapsed returns end − start in ticks. A negative difference (a goroutine
// that moved to a core whose counter lags) is clamped to zero and counted.
func Elapsed(start, end int64) int64 {
	if d := end - start; d >= 0 {
		return d
	}
	clamped.Add(1)
	return 0
}

// Clamped reports how many negative durations Elapsed has clamped.
func Clamped() uint64 { return clamped.Load() }

// Source reports the tick source in use.
func Source() string {
	switch mode {
	case modeTSC:
		return SourceTSC
	case modeManual:
		return SourceManual
	}
	return SourceMono
}

// Setup selects the tick source: "auto", "tsc" or "mono". Call it once,
// before the first Now whose result matters.
func Setup(kind string) error {
	switch kind {
	case "mono":
		mode, mult, shift = modeMono, 1, 0
	case "auto", "tsc":
		// TSC support comes with calibration; until then the monotonic
		// clock serves.
		mode, mult, shift = modeMono, 1, 0
		if kind == "tsc" {
			return errors.New("clock: tsc source not available")
		}
	default:
		return errors.New("clock: unknown source " + kind)
	}
	wallTick, wallNano = Now(), time.Now().UnixNano()
	return nil
}

// WallNanos converts a tick reading to Unix nanoseconds.
func WallNanos(ticks int64) int64 {
	d := ticks - wallTick
	if d < 0 {
		return wallNano - Nanos(-d)
	}
	return wallNano + Nanos(d)
}

// Manual is a clock that moves only when told to: ticks are nanoseconds.
type Manual struct{}

// UseManual switches the package to a manual clock starting at zero and
// returns its handle. Tests only; it is not safe to call while other
// goroutines read the clock.
func UseManual() Manual {
	mode, mult, shift = modeManual, 1, 0
	manual.Store(0)
	wallTick, wallNano = 0, time.Now().UnixNano()
	return Manual{}
}

// Advance moves the manual clock forward by ns nanoseconds.
func (Manual) Advance(ns int64) { manual.Add(ns) }

// Set sets the manual clock to ns.
func (Manual) Set(ns int64) { manual.Store(ns) }

func rdtscp() int64 { return int64(time.Since(base)) }
