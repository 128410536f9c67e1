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

	// Ext holds per-goroutine state for extensions (flowcheck's countdown).
	// Each extension claims its words with NewGoroutineWord.
	Ext [GoroutineWords]int64

	handoff atomic.Uint32 // see race.go
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

// goroutines maps a runtime g's address to its state. Look-ups are
// lock-free: linear probing over an array of keys that, once set, never
// change. Only the first firing ever seen on a g inserts, under a mutex; the
// table grows by copying, so its size follows the peak number of live
// goroutines, not how many were ever started.
type gtable struct {
	mask  uintptr
	keys  []atomic.Uintptr
	vals  []atomic.Pointer[Goroutine]
	count int // under gmu
}

var (
	gtab atomic.Pointer[gtable]
	gmu  sync.Mutex
)

func init() { gtab.Store(newGTable(1024)) }

func newGTable(n int) *gtable {
	return &gtable{mask: uintptr(n - 1), keys: make([]atomic.Uintptr, n), vals: make([]atomic.Pointer[Goroutine], n)}
}

func ghash(g uintptr) uintptr {
	// g structs are 8-byte aligned and a few hundred bytes apart.
	return (g >> 3) * 0x9E3779B97F4A7C15 >> 20
}

// current returns the running goroutine's state, creating it on first use.
func current() *Goroutine {
	g := getg()
	t := gtab.Load()
	for i := ghash(g); ; i++ {
		k := t.keys[i&t.mask].Load()
		if k == g {
			if v := t.vals[i&t.mask].Load(); v != nil {
				return v
			}
			break
		}
		if k == 0 {
			break
		}
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
	if 2*(t.count+1) > len(t.keys) {
		n := newGTable(2 * len(t.keys))
		for i := range t.keys {
			if k := t.keys[i].Load(); k != 0 {
				n.put(k, t.vals[i].Load())
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
		switch t.keys[i&t.mask].Load() {
		case g:
			return t.vals[i&t.mask].Load()
		case 0:
			return nil
		}
	}
}

func (t *gtable) put(g uintptr, v *Goroutine) {
	for i := ghash(g); ; i++ {
		if t.keys[i&t.mask].Load() == 0 {
			t.vals[i&t.mask].Store(v)
			t.keys[i&t.mask].Store(g)
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
