package meter

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Timed parents. A probe's inherent time is its inclusive time less that
// of its timed children: the firings of timed probes (metered at every
// call, or sampled) whose nearest timed ancestor on the goroutine is one of
// its firings. Untimed and disabled probes are not timed: their time stays
// in their nearest timed ancestor's, as an uninstrumented callee's does.
//
// Each metered firing, when it ends, charges its inclusive time times its
// weight to its timed parent's probe, and the model gives each probe its
// inclusive total less what it was charged (snapshot.go). Where no probe is
// sampled, the timed parent is the nearest metered firing below on the
// goroutine's stack. A sampled probe's firing that was not selected is on
// the stack but not metered, so where probes are sampled the engine looks
// at the stack itself: the frame pointers from the ending firing's
// function out to the nearest metered firing's, and at each return address
// the functions there (inlined calls included). The first that is a
// sampled probe is the timed parent; if none is, the metered firing is.
// Only metered firings look, and only as far as their nearest metered
// ancestor, a few frames; the callers' probes are cached per return
// address, so after a first look the walk reads no symbol table and
// allocates nothing.

// sampledProbes counts the probes in state Sampled: while it is zero, no
// timed probe can be on the stack unmetered.
var sampledProbes atomic.Int32

// walkMax bounds the callers one walk reads.
const walkMax = 32

// stackCaller is one caller read off the stack: the return address into
// it, and its frame's depth (stack top − its frame pointer).
type stackCaller struct {
	pc, pos uintptr
}

// parentOf returns the timed parent of the metered firing fr, whose
// nearest metered ancestor on its goroutine is pf (nil for none): pf's
// probe, with direct true, or an unmetered sampled probe between them, or
// nil when there is none.
func parentOf(fr, pf *Frame) (parent *Probe, direct bool) {
	if sampledProbes.Load() == 0 {
		if pf == nil {
			return nil, false
		}
		return pf.probe, true
	}
	// Callers of fr's function inlined into its own frame first.
	if q, d, done := scan(probesAt(fr.pc), fr.probe, fr.pos, pf); done {
		return q, d
	}
	stop := uintptr(0)
	if pf != nil {
		stop = pf.pos
	}
	var buf [walkMax]stackCaller
	n := callers(fr.pos, stop, &buf)
	for _, c := range buf[:n] {
		if q, d, done := scan(probesAt(c.pc), nil, c.pos, pf); done {
			return q, d
		}
	}
	if pf == nil {
		return nil, false
	}
	return pf.probe, true
}

// scan looks through the probes of the functions at one return address,
// innermost first, in a frame at depth pos: when self is not nil, past
// self's own function first. A sampled probe there is the timed parent;
// pf's probe in pf's frame, or a frame at or past pf's, ends the look at
// pf. It reports whether the look ended.
func scan(ps []*Probe, self *Probe, pos uintptr, pf *Frame) (*Probe, bool, bool) {
	if self != nil {
		for i, q := range ps {
			if q == self {
				ps = ps[i+1:]
				break
			}
		}
	}
	for _, q := range ps {
		if q == self {
			continue
		}
		if pf != nil && pos == pf.pos && q == pf.probe {
			return pf.probe, true, true
		}
		if q.State() == Sampled {
			return q, false, true
		}
	}
	if pf != nil && pos <= pf.pos && self == nil {
		return pf.probe, true, true
	}
	return nil, false, false
}

// pcProbes caches, per return address, the registered probes of the
// functions there, innermost first. Look-ups are lock-free: open
// addressing over entries whose key, once set, never changes; a miss
// resolves the address (runtime.CallersFrames, which allocates) and
// inserts under pcMu. The table grows by copying.
type pcTable struct {
	mask    uintptr
	entries []pcEntry
	count   int // under pcMu
}

type pcEntry struct {
	key atomic.Uintptr
	val atomic.Pointer[[]*Probe]
}

var (
	pcTab atomic.Pointer[pcTable]
	pcMu  sync.Mutex
)

func init() { pcTab.Store(&pcTable{mask: 1023, entries: make([]pcEntry, 1024)}) }

// probesAt returns the registered probes of the functions at return
// address pc, innermost first.
func probesAt(pc uintptr) []*Probe {
	t := pcTab.Load()
	for i := ghash(pc); ; i++ {
		e := &t.entries[i&t.mask]
		switch e.key.Load() {
		case pc:
			return *e.val.Load()
		case 0:
			return resolve(pc)
		}
	}
}

// resolve finds the probes at pc and caches them.
func resolve(pc uintptr) []*Probe {
	var ps []*Probe
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := frames.Next()
		if q := byName(f.Function); q != nil {
			ps = append(ps, q)
		}
		if !more {
			break
		}
	}
	pcMu.Lock()
	defer pcMu.Unlock()
	t := pcTab.Load()
	if 2*(t.count+1) > len(t.entries) {
		n := &pcTable{mask: uintptr(2*len(t.entries) - 1), entries: make([]pcEntry, 2*len(t.entries)), count: t.count}
		for i := range t.entries {
			if k := t.entries[i].key.Load(); k != 0 {
				n.put(k, t.entries[i].val.Load())
			}
		}
		pcTab.Store(n)
		t = n
	}
	for i := ghash(pc); ; i++ {
		e := &t.entries[i&t.mask]
		switch e.key.Load() {
		case pc:
			return *e.val.Load()
		case 0:
			e.val.Store(&ps)
			e.key.Store(pc)
			t.count++
			return ps
		}
	}
}

func (t *pcTable) put(pc uintptr, v *[]*Probe) {
	for i := ghash(pc); ; i++ {
		e := &t.entries[i&t.mask]
		if e.key.Load() == 0 {
			e.val.Store(v)
			e.key.Store(pc)
			return
		}
	}
}

// stackTop returns the top of the running goroutine's stack (g.stack.hi).
func stackTop() uintptr { return *(*uintptr)(unsafe.Add(getgp(), 8)) }
