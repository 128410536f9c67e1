// Package meter is the engine: per-goroutine stacks of metered firings,
// per-probe statistics, the chain of extensions that decides which firings
// are metered, and snapshots of the performance model.
//
// # Firings
//
// (*Probe).Begin asks the chain, in the order DESIGN.md fixes: is the probe
// disabled (hotspot, budget)? does a trace gate let the firing through
// (tracepoint, flowcheck; with no gate, every firing passes)? does the
// budget of the nearest metered ancestor have a unit left? A metered firing
// reads the clock and pushes a Frame on its goroutine's stack; Firing.End
// pops it, so inherent time (inclusive time less that of the metered
// firings directly inside) is exact. A firing that is not metered is not a
// frame: its metered children charge their time to the nearest metered
// ancestor.
//
// # Per-goroutine state
//
// The state of a goroutine is found from the address of its runtime g,
// read by a two-instruction assembly getg (amd64, arm64), in a lock-free
// open-addressed table. No stack parsing, no linkname. The runtime never
// frees a g and reuses it for later goroutines, so the table holds at most
// as many states as there were goroutines alive at once: a program that
// starts millions of short goroutines keeps a bounded table. Every metered
// firing ends in a deferred End, which runs on return, on a panic (recovered
// or not) and on runtime.Goexit, so a reused g starts with an empty stack. A
// manual caller that loses an End is repaired at its parent's End. On other
// architectures every firing is left unmetered (Supported is false).
//
// Under -race, each visit to a goroutine's state is bracketed by an acquire
// and a release on the state itself, so that the detector sees the hand-over
// of a g from a dead goroutine to a new one; without -race those calls are
// empty.
//
// # Begin on amd64
//
// Begin is inlined into the instrumented function and calls begin, an
// assembly leaf (cached_amd64.s) that the generated code reaches with no Go
// frame in between. The leaf does the common cases whole: a firing outside
// a trace counts down the gate words (Countdown) and returns; a disabled
// probe's firing counts down the spotter's word (Spotter) and returns; the
// twin's call back returns. Everything else, including every firing that
// is metered, it hands on by a tail jump to a Go function with begin's
// frame (measure, expired, spotted, beginSlow), so the Go code decides
// exactly as it does where the leaf is not built: under -race, and on
// other architectures. The leaf reads struct fields through go_asm.h's
// offsets and the chain's word offsets from one table that Configure
// fills. make unit runs the engine's and the extensions' tests once more
// without -race, so that they go through the leaf.
//
// # Statistics and snapshots
//
// Each probe keeps count, inclusive total, inherent total, min and max in two
// banks. A metered firing adds to the bank that the global epoch's parity
// selects, bracketed by started and finished counters: four uncontended
// atomic adds, and a compare-and-swap only when min or max moves. Take moves
// the epoch on, waits for the writers still in the old bank (nanoseconds,
// unless one was preempted inside) and folds it into the probe's base. The
// snapshot is a consistent cut taken without stopping the program: each row
// counts exactly the firings whose totals it holds.
//
// # What it must never do
//
// Begin and End allocate nothing once a goroutine's stack has reached its
// depth (and, in a trace, its span buffer its size), take no lock after a
// goroutine's first firing, never block, and never look anything up by name.
// Extensions hook in through small interfaces (Gate, Allowance, Judge,
// Spotter, Sink) held in a configuration written once, before probes are
// switched on; an extension that is off costs a nil or length check.
package meter
