package meter

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Goroutine is the metering state of one runtime g. Only the goroutine
// running on that g touches it, so its fields need no atomics. The runtime
// reuses a g for later goroutines, and a firing that a panic or
// runtime.Goexit unwinds never reaches its End; so the state remembers
// which goroutine it belongs to (goid) and where on the stack each metered
// firing began (Frame.pos), and settle drops what a later goroutine, or a
// firing further out on the same stack, shows to be gone.
type Goroutine struct {
	frames []*Frame // metered firings, outermost first; allocated once each
	depth  int32    // frames in use
	// nextSpan is the index of the next span in the current trace.
	nextSpan int32
	goid     uint64 // the goroutine these frames belong to (its identity word, see identity)

	trace  int32 // 1 + index of the trace's root frame; 0 outside traces
	traced int32 // firings metered in the current trace, its root included
	full   bool  // the current trace reached the trace maximum
	cut    bool  // the current trace was handed over in parts, or lost its root
	//lint:ignore U1000 used under -race (race.go)
	handoff atomic.Uint32
	TraceID uint64 // id of the current or last trace, unique in the process
	ids     uint64 // trace ids left in the block this goroutine took from traceIDs, the next at TraceID+1
	spans   []Span // spans of the current trace not handed over yet
	open    []Span // scratch for a hand-over: the spans still open
	handed  int64  // ticks when spans were last handed over, or the trace started

	flowLeft  int64  // flowcheck: offered firings left to the next trace; ≤ 0: none drawn
	flowState uint64 // flowcheck: the generator's state; 0: not seeded

	calibLeft int32 // metered firings left before the next measurement of the overheads

	// forcing is 1 while the innermost metered firing forces its timed
	// children (Frame.forces): begin's leaf reads it for every firing of a
	// sampled probe that its countdown did not select.
	forcing uint32

	// stripe is the stripe of the probes' counts that this goroutine's
	// firings take their units from: its P's, as of its last refill (see
	// leaseOut), so that goroutines running at once on different Ps count
	// on different cache lines.
	stripe uint64

	// stack is the size of the goroutine's stack, in bytes, when the
	// engine last looked (room.go): a stretch that saw the goroutine leave
	// the running state compares it with the size now. first is its size
	// when the engine first saw the goroutine (sameGoroutine): a stack no
	// larger is young (room.go). The runtime's stacks stay under 4 GiB.
	stack, first uint32

	join *joinState // its side of the trace it is in, across goroutines (join.go); nil before its first trace

	// ran is the CPU time, in ns, that the sampler (sampler_linux.go) has seen
	// the goroutine run since its innermost metered firing's current
	// stretch began, which clears it. The sampler adds to it with a
	// locked add; the goroutine reads and clears it with plain accesses.
	ran uint64

	// copied is the time, in ns, of a copy of the stack that begin's leaf
	// made for the selected or forced firing it begins, the firing's own
	// (roomGive); 0: none.
	copied int64
}

// Frame is one metered firing on a goroutine's stack.
type Frame struct {
	g     *Goroutine // the state it belongs to
	index int32      // its index in g.frames
	shown uint32     // units of its own time shown while it is open (open.go)
	probe *Probe
	start int64 // ticks at Begin
	// entry, for a selected or forced firing with a metered parent, is
	// the tick at which the engine took up the firing, before any of its
	// work: its parent's stretch ends there and begins again when its End
	// is done (entryRead). noEntry: the parent is charged the overheads
	// measured at calibration instead.
	entry int64
	taken int64 // ns, once it ended with a parent and an entry: what its parent's stretches left out around it, timed (entryRead)
	own   int64 // ns of its own time in the stretches that ended, those on the CPU (stretch.go)
	mark  int64 // ticks when its current stretch began
	child int64 // ns to take off its current stretch: what metering its children cost there, and the mean own times of its unmetered sampled children (parent.go)
	// charger is the sampled probe (its address) whose unmetered
	// firings added their mean own time to child in the current stretch,
	// while only one did; 0 while none did, 1 once two did (overcharged).
	charger uintptr
	over    int64   // ns of metering overhead nested in it: the outer overheads of the metered firings under it
	bare    int64   // ns of own time in its bare stretches (stretch.go), below 0 where more metering was taken off them than they held
	base    int64   // ns of child that is what metering the child before its current stretch cost it, the rest its unmetered sampled children's; -1: the stretch began neither at a metered child's end nor at a checkpoint
	hist    history // what its stretches between children that ran whole held (stretch.go)
	budget  int64   // units this firing was given, B(f); Unlimited if none
	pool    int64   // units it has left
	pos     uintptr // how deep in the goroutine's stack its function's frame is (stack top − frame pointer)
	pc      uintptr // where its function called Begin
	span    int32   // index in the goroutine's spans, or -1
	weight  int32   // how many firings of its probe it stands for: 1 (a forced firing too), a sampled probe's gap (sample.go), 0 for a spot check
	forces  int32   // while above 0, the timed firings directly inside it are metered (forced), this many more at most
	how     uint8   // why it is metered (meterAlways …)
	left    uint8   // the goroutine's count of leaving the running state when its current stretch began (sched.go)
	// worked, above 0, says a stretch of it saw the goroutine leave its P
	// to work for the collector on its system stack (an assist, a scan of
	// its own stack): CPU time that a CPU profile charges to the function,
	// however long, so the firing is not taken as interrupted (end.go).
	worked uint8
	// cut, while endUnwound ends it, says a panic or runtime.Goexit
	// unwound it (end.go). A field, not an argument of end, so that End's
	// path neither passes it nor keeps it across its clock read.
	cut    bool
	label  *mark // inside a trace, what goroutines started while it is innermost inherit (join.go)
	waited int64 // ns of its stretches left out because its goroutine parked in them (stretch.go)
	// kept is the own time of the firings of its own probe directly inside
	// it (recursion), theirs and their own recursion's, that its own time
	// left out while the probe was not judged yet: should the verdict make
	// the probe untimed or disabled, that time is this firing's own, and
	// with it its parent's (keepCharge).
	kept int64
	// cpu, for a firing whose stretches are timed by the thread's CPU
	// clock (its probe's stretches hold system calls: stretch.go), is
	// that clock, in ns, when its current stretch began; 0: the stretches
	// are timed by the wall clock.
	cpu int64
	// cpuStart is the thread's CPU clock, in ns, read just before a
	// selected firing of a probe in cpuPauses began (end.go, interrupted);
	// 0: not read. Its End, or its unwinding, clears it.
	cpuStart int64
	// waitAt is the tick at which its function, innermost, was about to
	// block in its own body (Probe.Wait); 0: not since its current stretch
	// began.
	// blind is the wall time of its stretches left out whole, a wait
	// inside a call and the work around it (not a bracketed wait of its
	// own body, whose work is timed apart): what only the sampler sees.
	blind   int64
	waitAt  int64
	waitRan uint64 // the goroutine's ran (sampler_linux.go) at waitAt
	// waitLeft is the goroutine's count of leaving the running state at
	// waitAt.
	waitLeft uint8
	// recheckP, for a recheck of a recursive probe (judge.go), is 1 + the
	// P it began on, and recheckN the low bits of the probe's count on
	// that P then: its End counts the calls nested in it from them.
	recheckP uint8
	// caught says that a panic reached a function that recovers while
	// this firing was the innermost metered one (Panicking): its current
	// stretch began there.
	caught   bool
	recheckN uint32 // the last field: the frame fills whole cache lines (lines_test.go)
}

// gtable maps a runtime g's address to its state. Look-ups are lock-free:
// linear probing over entries whose key, once set, never changes. Only the
// first firing ever seen on a g inserts, under a mutex; the table grows by
// copying, so its size follows the peak number of live goroutines, not how
// many were ever started.
type gtable struct {
	mask    uintptr
	entries []gentry
	count   int // under gmu
}

type gentry struct {
	key atomic.Uintptr
	val atomic.Pointer[Goroutine]
}

// gentrySize is a gentry's size, for the assembly that walks the table.
//
//lint:ignore U1000 used by sampler_amd64.s
const gentrySize = unsafe.Sizeof(gentry{})

var (
	gtab atomic.Pointer[gtable]
	gmu  sync.Mutex
	// retired keeps the tables that grew into the next alive: the sampler
	// reads the table on a thread the collector does not see.
	retired []*gtable
)

func init() { gtab.Store(newGTable(1024)) }

func newGTable(n int) *gtable {
	return &gtable{mask: uintptr(n - 1), entries: make([]gentry, n)}
}

func ghash(g uintptr) uintptr {
	// g structs are a few hundred bytes apart: a Fibonacci hash spreads them.
	return uintptr(uint64(g) * 0x9E3779B97F4A7C15 >> 40)
}

// current returns the running goroutine's state, creating it on first use.
// The common case, the g in its home slot, is cached: on amd64 an assembly
// leaf of a dozen instructions, which Begin calls directly.
func current() *Goroutine {
	if g := cached(); g != nil {
		return g
	}
	return lookup(getg())
}

// lookup is current's slow path: probe on, or insert.
func lookup(g uintptr) *Goroutine {
	if v := gtab.Load().find(g); v != nil {
		return v
	}
	return insert(g)
}

func insert(g uintptr) *Goroutine {
	if g == 0 {
		return nil
	}
	gmu.Lock()
	defer gmu.Unlock()
	t := gtab.Load()
	if v := t.find(g); v != nil {
		return v
	}
	if 2*(t.count+1) > len(t.entries) {
		n := newGTable(2 * len(t.entries))
		for i := range t.entries {
			if k := t.entries[i].key.Load(); k != 0 {
				n.put(k, t.entries[i].val.Load())
			}
		}
		n.count = t.count
		retired = append(retired, t) // the sampler may still be reading it (sampler_linux.go)
		gtab.Store(n)
		t = n
	}
	v := &Goroutine{stripe: procStripe()}
	t.put(g, v)
	t.count++
	return v
}

// find returns g's state in t, or nil. It splits no stack: begin's leaf
// calls it before it makes room (roomOut).
//
//go:nosplit
func (t *gtable) find(g uintptr) *Goroutine {
	for i := ghash(g); ; i++ {
		e := &t.entries[i&t.mask]
		switch e.key.Load() {
		case g:
			return e.val.Load()
		case 0:
			return nil
		}
	}
}

func (t *gtable) put(g uintptr, v *Goroutine) {
	for i := ghash(g); ; i++ {
		e := &t.entries[i&t.mask]
		if e.key.Load() == 0 {
			e.val.Store(v)
			e.key.Store(g)
			return
		}
	}
}

// goroutineStates reports how many goroutine states exist: at most the peak
// number of goroutines that were alive at once and fired a probe.
func goroutineStates() int {
	gmu.Lock()
	defer gmu.Unlock()
	return gtab.Load().count
}
