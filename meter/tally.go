package meter

import (
	"sync/atomic"
	"unsafe"
)

// Tallies. An untimed probe's firing is counted and nothing else, and the
// generated code can count it without calling the engine: its on-word
// (probe.Probe.On) then holds the number of the probe's tally, 2 or more,
// where it holds 1 for a probe whose firings go to Begin, and On adds one
// to the tally itself (Tally). The add is atomic, so a tally is exact
// whatever runs at once; a tally has tallyShards counters, each on a cache
// line of its own, and a firing adds to the one that the address of its
// function's frame picks: goroutines run on stacks of their own, 8 KB or
// more, so the firings of goroutines running on different cores at once
// mostly land on different lines (two goroutines share one with chance
// 1/tallyShards; then their adds contend, and stay exact).
//
// Tallies lie in one region mapped at start-up outside the Go heap
// (tally_linux.go), so that giving a probe its tally, when hotspot turns it
// untimed inside some firing, allocates nothing; its pages are touched only
// as probes get tallies. Where there is no region (not Linux, or the map
// failed), or every tally is taken, an untimed probe's on-word stays 1 and
// its firings are counted by Begin, on the running P's slot (count.go).
//
// A tally also stands for the P's countdown to a checkpoint (stretch.go):
// the firing that brings one of its counters to a multiple of
// checkpointEvery makes On report true, and Begin, finding the probe
// untimed with a tally, makes the checkpoint without counting the firing
// again.
const (
	tallyShards  = 16      // counters in a tally
	tallyLine    = 6       // log2 of the bytes between two counters: a cache line
	tallyShift   = 10      // log2 of a tally's bytes: tallyShards << tallyLine
	tallyStack   = 13      // log2 of the stack bytes that pick one counter: a goroutine's smallest stack
	maxTallies   = 1 << 16 // tallies in the region, the first two unused (on-words 0 and 1)
	tallyRegion  = maxTallies << tallyShift
	tallyPick    = (tallyShards - 1) << tallyLine
	_            = uint(1<<tallyShift - tallyShards<<tallyLine) // the sizes agree
	_            = uint(tallyShards<<tallyLine - 1<<tallyShift)
	firstTallyOn = 2
)

// tallyBase is the region's start; nil where there is none.
var tallyBase unsafe.Pointer

// tallyNext is the number the next tally given out gets.
var tallyNext atomic.Uint32

func init() { tallyNext.Store(firstTallyOn) }

// Tally counts a firing of the untimed probe whose on-word is w (2 or
// more, as the engine set it), and reports whether the firing is due for a
// checkpoint: then the generated code calls Begin, which makes it
// (probe.Probe.On). Inlined into the instrumented function, it picks the
// counter by the address of a variable of its own in that function's
// frame.
func Tally(w uint32) bool {
	var at byte
	c := (*atomic.Uint64)(unsafe.Add(tallyBase, uintptr(w)<<tallyShift|(uintptr(unsafe.Pointer(&at))>>(tallyStack-tallyLine))&tallyPick))
	return c.Add(1)%checkpointEvery == 0
}

// giveTally gives p a tally, if it has none, it has an on-word and one is
// left. Two goroutines may give p one at once: one of the two is kept.
func (p *Probe) giveTally() {
	if tallyBase == nil || p.gate == nil || p.tally.Load() != 0 {
		return
	}
	n := tallyNext.Add(1) - 1
	if n >= maxTallies {
		return
	}
	p.tally.CompareAndSwap(0, n)
}

// tallied returns the firings p's tally holds.
func (p *Probe) tallied() int64 {
	w := p.tally.Load()
	if w == 0 {
		return 0
	}
	var n uint64
	for i := uintptr(0); i < tallyShards; i++ {
		n += (*atomic.Uint64)(unsafe.Add(tallyBase, uintptr(w)<<tallyShift|i<<tallyLine)).Load()
	}
	return int64(n)
}

// onWord returns the on-word for class c: 0 for a probe that is off, its
// tally for an untimed probe that has one, else 1.
func (p *Probe) onWord(c uint32) uint32 {
	switch {
	case c == classOff:
		return 0
	case c == classCount:
		if w := p.tally.Load(); w != 0 {
			return w
		}
	}
	return 1
}

// tallyOut is the leaf's path for a firing of an untimed probe with a
// tally: On counted it, and Begin is called for its checkpoint.
//
//lint:ignore U1000 jumped to from begin_amd64.s
func tallyOut(_ *Probe, _ *Goroutine, pos, pc uintptr) *Frame {
	checkpoint(pos, pc)
	return nil
}
