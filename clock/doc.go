// Package clock is the metering runtime's tick source: the clock read at
// the start and the end of every metered firing.
//
// # What it decides
//
// Which counter to read. On amd64 it is the time-stamp counter (TSC), read
// with RDTSCP, when three things hold:
//   - the CPU has RDTSCP (CPUID 0x80000001 EDX bit 27);
//   - the CPU says the TSC is invariant, ticking at one rate in every P-, C-
//     and T-state (CPUID 0x80000007 EDX bit 8);
//   - the kernel's clocksource
//     (/sys/devices/system/clocksource/clocksource0/current_clocksource) is
//     "tsc". The kernel drops the TSC when it finds it unsynchronised
//     between cores or unstable, which CPUID cannot tell; where the file is
//     missing, CPUID decides alone.
//
// Otherwise, on other architectures, or when METER_CLOCK=mono, it reads the
// runtime's monotonic clock (the one behind CLOCK_MONOTONIC) through
// time.Since on a fixed base Time, which calls the runtime's nanotime
// directly; no linkname is needed. Setup("auto") makes that choice,
// Setup("tsc") insists on the TSC and returns an error when it cannot have
// it, and Setup("mono") never tries. Invariant reports the checks alone.
//
// How ticks become nanoseconds. Setup calibrates the TSC against
// CLOCK_MONOTONIC for at most 20 ms: 20 points spread over the budget, each
// a monotonic reading bracketed by two TSC reads, the narrowest of 8 tries
// (a VM's steal time can stall any read). Points wider than twice the
// narrowest are dropped, and the rate is the median of the slopes between
// pairs of points at least half the window apart. The loop checks the
// budget before every read, so it never runs more than one read past it.
// On a busy host the OS may preempt the calibrating thread for longer than
// the whole budget (a parallel compile can do it). The stall costs no
// accuracy, only the points matter, so instead of giving up
// the TSC the loop then takes one closing point (a few reads, at most
// 100 µs) and so gains a wider window. Calibration fails, and "auto" keeps
// the mono source, only when fewer than two narrow points span a quarter
// of the budget, or when the pair estimates disagree by more than 0.1%.
// The rate becomes a multiplier and a shift: Nanos is a 64×64→128-bit
// multiply (math/bits.Mul64) and a shift, with the multiplier kept in
// [2^31, 2^32), a relative error under 5e-10, and no division. Ticks is the
// inverse, for comparing raw tick differences with thresholds in time.
//
// RDTSCP or LFENCE;RDTSC. Both keep the read from running ahead of the
// code it measures; a bare RDTSC does not, though it costs less. The two
// serialising reads cost about the same (BenchmarkInterleaved alternates
// them in blocks, so that a neighbour's load falls on both alike), so Now
// uses RDTSCP, the one instruction that serialises by itself.
//
// # Costs
//
// What each call does (BenchmarkInterleaved measures them against each
// other within one run):
//   - Now with the TSC: one load, one branch, a call to a 5-instruction
//     assembly function; nearly all of its cost is RDTSCP;
//   - Now with the mono source: time.Since on a fixed base, dearer than
//     the TSC and cheaper than time.Now;
//   - Nanos: MULQ and SHRQ on two package variables;
//   - Elapsed: a subtraction and a branch; an atomic add only when it
//     clamps.
//
// Two reads, Elapsed and Nanos are what a metered firing pays for its
// times.
//
// Now cannot be inlined: it calls both the assembly read and time.Since,
// and two calls exceed the inliner's budget.
//
// # What it must never do
//
// Now, Nanos, Ticks, Elapsed and WallNanos run on the hot path: they never
// allocate, block or take a lock, and read package variables that only
// Setup writes. Setup is therefore not safe while other goroutines read
// the clock; the runtime calls Setup once,
// before the first probe fires. Setup itself may spin for 20 ms.
//
// # Negative durations
//
// A goroutine may start a firing on one core and end it on another. If
// the two cores' TSCs are not synchronised (a firmware that writes the
// TSC, a hypervisor that migrates a vCPU between hosts, an older
// multi-socket machine), the end can read earlier than the start. The
// kernel check makes that rare but cannot rule it out. Elapsed clamps such
// a difference to zero instead of letting it become a huge unsigned time
// or a negative inherent time, and counts it: Clamped reports the count,
// and the performance model carries it.
//
// # Accuracy
//
// A TSC duration over 1 s agrees with CLOCK_MONOTONIC within 0.01%
// (TestAccuracyOneSecond checks it). CLOCK_MONOTONIC follows NTP's frequency correction; the
// calibration takes the correction in force at start-up, and a later
// change in it shows up as a difference of the same size.
//
// WallNanos places a tick reading in Unix time from one pairing of the
// tick source with the wall clock, taken by Setup; it does not follow
// later steps of the wall clock.
//
// # Tests
//
// Manual is a clock that moves only when told to (ticks are
// nanoseconds). Tests hand one to the engine (meter.Chain.Clock) so that
// they can count exactly; the package's own clock is never replaced.
package clock
