package meter

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Counting. Every firing of a probe that is not disabled is counted,
// whatever the chain decides to meter, so a row's count is its number of
// calls. A count is a plain add to a slot of the probe's own that only the
// running P writes: no atomic instruction and no line shared between
// cores. On amd64 the add is made inside begin's assembly leaf, where the
// runtime never preempts a goroutine (asynchronous preemption stops only at
// Go code's safe points, and a NOSPLIT leaf has no stack check), so the P
// read at the top of the leaf is the P the add lands on. Elsewhere, and
// under -race, Go pins the goroutine to its P (runtime.procPin, as
// sync.Pool does) around an atomic add.
//
// Slots are kept in chunks of chunkProbes probes: a chunk holds, for each
// P, one slot per probe, so the slots one P writes lie together and apart
// from every other P's, and a probe's slot on P k sits k<<procShift bytes
// after its slot on P 0. A P whose number is countProcs or more (a
// program that raised GOMAXPROCS past what was there at the first
// registration) counts in the probe's spill word, atomically.

const (
	chunkProbes = 1 << 10                                     // probes per chunk
	slotShift   = 4                                           // a slot is 16 bytes
	procShift   = 10 + slotShift                              // bytes between a probe's slots on two Ps: log2(chunkProbes × slot size)
	maxProcs    = 256                                         // Ps that get slots, at most
	chunkBytes  = maxProcs << procShift                       // a chunk's size when every P has slots
	_           = uint(1<<procShift - chunkProbes<<slotShift) // chunkProbes and procShift agree
)

// slot is one probe's count on one P, and, for a sampled probe, the
// countdown to its next selected firing on that P (sample.go). Only the
// goroutine running on that P writes it.
type slot struct {
	calls int64 // firings counted on this P
	left  int32 // firings left before the next selected one (sampled probes)
	gap   int32 // the gap left was drawn as: the weight of the firing that ends it
}

var _ = [1]struct{}{}[unsafe.Sizeof(slot{})-1<<slotShift] // a slot is 1<<slotShift bytes

// countProcs is how many Ps have slots; the leaf compares the P's number
// with it. mpOffset is the offset of the P in the runtime's m (count_amd64.go);
// with mpOffset 0 the leaf never finds its P and counts through Go.
var (
	countProcs uintptr
	mpOffset   uintptr
)

var slots struct {
	sync.Mutex
	chunks [][]slot
	next   int // slot index of the next probe
}

// giveSlots gives p its slots. Every probe, the engine's own included,
// has one index in the chunks.
func (p *Probe) giveSlots() {
	slots.Lock()
	defer slots.Unlock()
	if countProcs == 0 {
		countProcs = uintptr(min(max(runtime.GOMAXPROCS(0), runtime.NumCPU(), 1), maxProcs))
		findMP()
	}
	i := slots.next
	slots.next++
	if i/chunkProbes == len(slots.chunks) {
		slots.chunks = append(slots.chunks, make([]slot, int(countProcs)*chunkProbes))
	}
	p.slots = &slots.chunks[i/chunkProbes][i%chunkProbes]
}

// slotOn returns p's slot on P pid, which must be below countProcs.
func (p *Probe) slotOn(pid uintptr) *slot {
	return (*slot)(unsafe.Add(unsafe.Pointer(p.slots), pid<<procShift))
}

// Calls returns how many firings of p have been counted: every call since
// it was registered, but those made while it was disabled. A count read
// while firings go on may miss the last few on other Ps.
func (p *Probe) Calls() int64 {
	if p.slots == nil {
		return 0
	}
	n := p.spill.Load()
	for pid := uintptr(0); pid < countProcs; pid++ {
		n += atomic.LoadInt64(&p.slotOn(pid).calls)
	}
	return n
}

// countGo counts a firing of p in Go: pinned to its P, an atomic add to
// that P's slot, or to the spill word past countProcs. For an untimed
// probe it counts down to the next checkpoint on that P, and returns 1 for
// the firing that reaches it.
func (p *Probe) countGo() int32 {
	pid := uintptr(procPin())
	if pid >= countProcs {
		procUnpin()
		p.spill.Add(1)
		return 0
	}
	s := p.slotOn(pid)
	atomic.AddInt64(&s.calls, 1)
	var w int32
	if p.class.Load() == classCount && atomic.AddInt32(&s.left, -1) <= 0 {
		atomic.StoreInt32(&s.left, p.nextCheckpoint())
		w = 1
	}
	procUnpin()
	return w
}

// countDown runs down p's countdown on the running P, a sampled probe's,
// and returns -1 for the firing that runs it out (selected draws the next
// gap, as the leaf's path does: reloadHere), the weight of a firing
// selected in the spill word, and 0 for any other firing.
func (p *Probe) countDown() int32 {
	pid := uintptr(procPin())
	if pid >= countProcs {
		procUnpin()
		return p.drawSpill()
	}
	s := p.slotOn(pid)
	var w int32
	if atomic.AddInt32(&s.left, -1) <= 0 {
		w = -1
	}
	procUnpin()
	return w
}

// countOut is the leaf's path for a firing that found no slot for its P:
// counted in Go, then decided as beginGo decides a counted firing.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func countOut(p *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	return counted(p, pos, pc)
}
