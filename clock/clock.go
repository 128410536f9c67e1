package clock

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// Source names the tick source in use.
const (
	SourceMono = "mono"
	SourceTSC  = "tsc"
)

const (
	modeMono = iota
	modeTSC
)

// clocksourcePath is where Linux names the clocksource it trusts; a
// variable so that tests can stand in for a kernel that distrusts the TSC.
var clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// Identity scale: ticks are nanoseconds (the mono source).
const (
	identityMult  = 1 << 31
	identityShift = 31
)

var (
	mode     int    // read on every Now; written only by Setup
	mult     uint64 // ticks → ns: ns = ticks*mult >> shift, 128-bit product
	shift    uint   // in [1, 63]
	invMult  uint64 // ns → ticks, same form
	invShift uint
	perSec   int64 // ticks per second, rounded

	base     = time.Now() // monotonic anchor for the mono source
	clamped  atomic.Uint64
	wallTick int64 // tick reading at wallNano
	wallNano int64 // Unix ns at wallTick

	lastCalibration calibration // the most recent TSC calibration, for tests and reports
	fallback        string      // why "auto" chose mono: the TSC's error
)

func init() { useMono() }

// Now returns the current tick reading. Ticks only have meaning as
// differences; Nanos converts one to nanoseconds.
//
// Cost: one load and a branch, then the read itself: RDTSCP with the TSC,
// the runtime's monotonic clock otherwise. It never allocates, blocks or
// locks. The engine calls it twice per metered firing.
func Now() int64 {
	switch mode {
	case modeTSC:
		return rdtscp()
	}
	// time.Since on a Time with a monotonic reading calls the runtime's
	// nanotime directly: no wall-clock read, no linkname.
	return int64(time.Since(base))
}

// TSC reports whether ticks are the TSC's, read by RDTSCP: a caller that
// reads it with other state in one assembly function (which nothing
// preempts) gets a reading Now would have given.
func TSC() bool { return mode == modeTSC }

// Nanos converts a tick difference to nanoseconds with a 64×64→128-bit
// multiply and a shift: no division. A difference ≤ 0 gives 0.
func Nanos(ticks int64) int64 {
	if ticks <= 0 {
		return 0
	}
	return int64(scale(uint64(ticks), mult, shift))
}

// Ticks converts nanoseconds to a tick difference, the inverse of Nanos
// (to within a tick). It lets a caller compare raw tick differences with a
// threshold given in time. A value ≤ 0 gives 0.
func Ticks(ns int64) int64 {
	if ns <= 0 {
		return 0
	}
	return int64(scale(uint64(ns), invMult, invShift))
}

// TicksPerSecond reports the rate of the tick source in use, as calibrated:
// 1e9 for the mono source.
func TicksPerSecond() int64 { return perSec }

// scale returns v·m >> s with a 128-bit intermediate product, for s in
// [1, 63]. The result is exact (truncated) as long as it fits 64 bits.
func scale(v, m uint64, s uint) uint64 {
	hi, lo := bits.Mul64(v, m)
	return hi<<((64-s)&63) | lo>>(s&63)
}

// multShift picks m and s so that v·m >> s ≈ v·ratio, with m in
// [2^31, 2^32): 31 significant bits, a relative error under 5e-10, and a
// product that never overflows 128 bits.
func multShift(ratio float64) (uint64, uint) {
	s := uint(63)
	for s > 1 && ratio*math.Ldexp(1, int(s)) >= 1<<32 {
		s--
	}
	return uint64(math.Round(ratio * math.Ldexp(1, int(s)))), s
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

// Clamped reports how many negative durations Elapsed has clamped since
// the process started.
func Clamped() uint64 { return clamped.Load() }

// Source reports the tick source in use: SourceTSC or SourceMono.
func Source() string {
	if mode == modeTSC {
		return SourceTSC
	}
	return SourceMono
}

// Setup selects the tick source:
//   - "mono": the runtime's monotonic clock;
//   - "tsc": the TSC, calibrated against CLOCK_MONOTONIC in at most 5 ms;
//     an error when it is not usable (not amd64, no RDTSCP, not invariant,
//     the kernel does not use it, or the calibration failed);
//   - "auto": the TSC where "tsc" would succeed, mono otherwise.
//
// After an error the source is mono (for "tsc") or unchanged (for an
// unknown kind). Call Setup before the first Now whose result matters and
// while no other goroutine reads the clock.
func Setup(kind string) error {
	switch kind {
	case "mono", "auto", "tsc":
	default:
		return fmt.Errorf("clock: unknown source %q (want auto, tsc or mono)", kind)
	}
	useMono()
	fallback = ""
	if kind == "mono" {
		return nil
	}
	err := tscUsable()
	if err == nil {
		var c calibration
		c, err = calibrateTSC(rdtscp, sinceNow(), calibrationBudget)
		lastCalibration = c
		if err == nil {
			useTSC(c.ticksPerNano)
		}
	}
	if kind == "auto" {
		if err != nil {
			fallback = err.Error()
		}
		return nil
	}
	return err
}

// Fallback reports why the last Setup("auto") chose the monotonic clock:
// what made the TSC unusable (not invariant, not the kernel's clocksource,
// a calibration that failed twice). It is "" when the source is the TSC,
// or mono was asked for.
func Fallback() string { return fallback }

// Invariant reports whether the TSC can serve as the tick source: the CPU
// has RDTSCP and says its TSC is invariant (CPUID 0x80000007 EDX bit 8),
// and the kernel's clocksource is "tsc" (or the kernel does not say).
func Invariant() bool { return tscUsable() == nil }

func tscUsable() error {
	if runtime.GOARCH != "amd64" {
		return errors.New("clock: no TSC on " + runtime.GOARCH)
	}
	hasRDTSCP, invariant := cpuTSC()
	if !hasRDTSCP {
		return errors.New("clock: the CPU lacks RDTSCP")
	}
	if !invariant {
		return errors.New("clock: the TSC is not invariant (CPUID 0x80000007 EDX bit 8 is clear)")
	}
	return kernelTrustsTSC(clocksourcePath)
}

// kernelTrustsTSC reads the kernel's current clocksource. The kernel
// switches away from the TSC when it finds it unstable or unsynchronised
// between cores, which CPUID cannot tell. A missing file leaves the
// decision to CPUID.
func kernelTrustsTSC(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if cs := strings.TrimSpace(string(b)); cs != "tsc" {
		return fmt.Errorf("clock: the kernel's clocksource is %q, not tsc", cs)
	}
	return nil
}

func useMono() {
	mode = modeMono
	mult, shift, invMult, invShift = identityMult, identityShift, identityMult, identityShift
	perSec = 1e9
	anchorWall()
}

func useTSC(ticksPerNano float64) {
	mode = modeTSC
	mult, shift = multShift(1 / ticksPerNano)
	invMult, invShift = multShift(ticksPerNano)
	perSec = int64(math.Round(ticksPerNano * 1e9))
	anchorWall()
}

// anchorWall pairs a tick reading with the wall clock, taking the
// narrowest of a few brackets, so that WallNanos can place ticks in time.
func anchorWall() {
	best := int64(math.MaxInt64)
	for range 5 {
		t0 := Now()
		w := time.Now().UnixNano()
		t1 := Now()
		if d := t1 - t0; d >= 0 && d < best {
			best, wallTick, wallNano = d, t0+d/2, w
		}
	}
}

// WallNanos converts a tick reading to Unix nanoseconds, for timestamps on
// spans. It follows the tick source from the moment Setup chose it, so it
// does not see later steps of the wall clock.
func WallNanos(ticks int64) int64 {
	d := ticks - wallTick
	if d < 0 {
		return wallNano - Nanos(-d)
	}
	return wallNano + Nanos(d)
}
