// Package meter is the engine: it counts every firing of a probe that is
// not disabled, decides which firings to meter, keeps per-goroutine stacks
// of metered firings and per-probe statistics, and takes snapshots of the
// performance model.
//
// # The decision
//
// The chain is closed: Chain has one field per extension (hotspot,
// tracepoint, flowcheck, budget, spotcheck), each a rule from its package
// under extensions/, and the engine calls the rules directly. Each probe has
// a class (decide.go's table: off, spot, count, sample, meter), one word set
// from its state and the chain, and beginGo switches on it. On amd64 an
// assembly leaf (begin_amd64.s) switches on the same word in the same order:
// it counts, answers the quiet cases itself and jumps, keeping its frame, to
// the same Go functions beginGo calls for everything else. Its offsets and
// constants come from go_asm.h, which the toolchain writes from the Go
// declarations, and TestAssemblyMirrorsGo runs both on the same scripts of
// firings and compares every decision.
//
// # Counts
//
// A count is a plain add to the probe's slot on the running P (count.go):
// exact, with no atomic instruction and no line shared between cores.
//
// # Firings, frames and own time
//
// A metered firing reads the clock and pushes a Frame on its goroutine's
// stack; Begin returns the frame itself (a Firing), so End needs no
// look-up. A firing's own time is measured in stretches between its
// metered children (stretch.go), less what the unmetered firings of sampled
// probes inside them take (parent.go), and less the stretches in which the
// goroutine parked to wait (wait.go). The model's figures for a probe
// are its exact count times the weighted means of its metered firings.
//
// Generated code calls End before each return, with no defer and no extra
// frame, so a firing that a panic or runtime.Goexit unwinds never reaches
// its End; and the runtime gives a finished goroutine's g to the next one.
// So each frame records where its function runs (its depth on the stack,
// from the frame pointer, and the address of its Begin call), each
// goroutine state the goroutine it belongs to, and before every push
// settle drops the frames that are gone: all of them when the g runs
// another goroutine, else those deeper than the pushing function. A dropped
// firing was counted but is not timed; its time stays in its parent's own
// time, and the model counts it as unwound.
//
// # Per-goroutine state
//
// The state of a goroutine is found from the address of its runtime g, read
// by a two-instruction assembly getg (amd64, arm64), in a lock-free
// open-addressed table. The runtime never frees a g and reuses it, so the
// table holds at most as many states as there were goroutines alive at
// once. The goroutine id, which tells goroutines apart, is read from g at
// an offset found once at start by looking for the ids runtime.Stack
// prints. On other architectures every firing is left unmetered
// (Supported is false). Under -race, each visit to a goroutine's state is
// bracketed by an acquire and a release on the state itself, so that the
// detector sees the hand-over of a g from a dead goroutine to a new one.
//
// # Traces across goroutines
//
// A goroutine started while a trace is open on its creator joins that
// trace (join.go): its first metered firing is a span of the trace, whose
// parent is the span open in the creator at the go statement, and its part
// of the trace ends with that firing. The runtime hands the child what it
// needs with no change to the go statement: a new goroutine inherits its
// creator's profiler labels, and inside a trace those point at a mark that
// begins with the goroutine's own label set (what the profiler reads) and
// names the trace and the span open. The engine looks at a goroutine's
// labels once, when it first meets the goroutine: begin's leaf sends a
// goroutine that is new on its g to Go (sameGoroutine). Marks come in
// blocks that the collector gives back once no goroutine's labels point
// into them. METER_TRACE_MAX counts the whole trace; a joined part that
// outlives the trace's root ends at its next hand-over. Worker pools fed
// by channels are not followed: their goroutines were started outside the
// trace. With -otlp, the otlp module's RootHook makes a trace started by a
// root with a context or a request a child of the caller's span.
//
// # Statistics
//
// A probe's statistics go to a shared row, under a small lock, for its first
// 256 metered firings, then to one row per P: the goroutine pins itself to
// its P (runtime.procPin, as sync.Pool does) and writes that P's row, alone,
// with plain stores on amd64 (stats_amd64.s). Each row carries a sequence
// number, odd while a write is in progress, so Take reads whole writes
// without stopping a writer.
//
// Tracepoint's count and spotcheck's are a Countdown each probe keeps:
// split across eight stripes, with exactly one firing in N due over whole
// rounds (see Countdown).
//
// # What it must never do
//
// Begin and End allocate nothing once a goroutine's stack has reached its
// depth (and, in a trace, its span buffer its size, and the pool of marks
// the blocks the collector gave back: join.go), take no lock after a
// probe's first 256 metered firings and a goroutine's first firing, never
// block, and never look anything up by name. Configure writes the chain
// while no firing reads it.
package meter
