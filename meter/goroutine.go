package meter

import (
	"sync"
	"sync/atomic"
)

// Goroutine is the metering state of one runtime g. Only the goroutine
// running on that g touches it, so its fields need no atomics; a later
// goroutine that reuses the g inherits it with an empty stack, because every
// metered firing ends in a deferred End that runs on return, panic and
// runtime.Goexit alike.
type Goroutine struct {
	frames []Frame // metered firings, outermost first
	depth  int32   // frames in use

	trace     int32  // 1 + depth of the firing that started the current trace; 0 outside traces
	traced    int32  // firings metered in the current trace, its root included
	truncated bool   // the current trace reached the trace maximum
	TraceID   uint64 // id of the current or last trace, unique in the process
	spans     []Span // spans of the current trace, when a sink wants them

	// reenter is the probe whose metered twin is calling its function
	// again (Firing.Reenter); that call's Begin is not a firing of its own.
	reenter int // its Probe.key; 0 for none

	// Ext holds per-goroutine state for extensions (flowcheck's countdown).
	// Each extension claims its words with NewGoroutineWord.
	Ext [GoroutineWords]int64

	//lint:ignore U1000 used under -race (race.go)
	handoff atomic.Uint32
}

// Frame is one metered firing on a goroutine's stack.
type Frame struct {
	probe  *Probe
	start  int64 // ticks at Begin
	child  int64 // inclusive ns of metered firings directly nested in this one
	budget int64 // units this firing was given, B(f); Unlimited if none
	pool   int64 // units it has left
	span   int32 // index in the goroutine's spans, or -1
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

var (
	gtab atomic.Pointer[gtable]
	gmu  sync.Mutex
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
		gtab.Store(n)
		t = n
	}
	v := &Goroutine{}
	t.put(g, v)
	t.count++
	return v
}

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

// Goroutines reports how many goroutine states exist: at most the peak
// number of goroutines that were alive at once and fired a probe.
func Goroutines() int {
	gmu.Lock()
	defer gmu.Unlock()
	return gtab.Load().count
}
