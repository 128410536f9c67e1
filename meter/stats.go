package meter

import (
	"math"
	"runtime"
	"sync/atomic"
	_ "unsafe" // for go:linkname
)

// sharedFirings is how many metered firings of a probe go to its shared
// row before it gets one row per P. Most probes are disabled after fewer
// (hotspot's initial balance is 1000 cold firings, but a probe fired by one
// goroutine rarely meets another), so only the probes metered for long pay
// a row per P.
const sharedFirings = 256

// stats are a probe's statistics of metered firings. A row is written by
// one writer at a time: the shared row under a small lock, a P's row by
// the goroutine running on that P, pinned to it (runtime.procPin, as
// sync.Pool does), so that goroutines on different cores never write the
// same cache line. Readers never block writers: each row carries a
// sequence number, odd while a write is in progress (a seqlock).
type stats struct {
	lock   atomic.Uint32
	shared row
	perP   atomic.Pointer[[]row]
}

// row holds the totals of the firings written to it. seq counts writes
// twice; the float sum of squares is kept as its bits. The assembly
// (stats_amd64.s) writes the fields by offset, from go_asm.h. back is
// written apart from the rest, atomically (addBack).
type row struct {
	seq     uint64
	count   int64 // metered firings
	total   int64 // ns, inclusive
	wsum    int64 // firings they stand for: the sum of their weights
	wtotal  int64 // ns, inclusive, each firing's times its weight
	wown    int64 // ns, own, each firing's times its weight
	min     int64 // ns, inclusive
	max     int64 // ns, inclusive
	sqTotal uint64
	back    int64 // ns of own time given back: children that turned out untimed or disabled (judge.go)
	room    int64 // ns: the own time of its unmetered calls in the stretches that bound them (overcharged)
	bounded int64 // those calls, in 1/boundUnit of a call, each priced for its caller (callerRatio)
	bare    int64 // ns of own time in its firings' bare stretches, each times its weight, below 0 where more metering was taken off them than they held (stretch.go); written atomically
	_       [24]byte
}

// totals are what a reader takes from rows.
type totals struct {
	count, total, wsum, wtotal, wown, min, max, back, room, bounded, bare int64
	sqTotal                                                               float64
}

func (s *stats) init() {
	s.shared.min = math.MaxInt64
}

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// record adds one metered firing of incl and own ns and weight w, and
// returns the count of the row it went to. With a row per P it is one
// pinned write of the P's own row: no atomic instruction on amd64.
func (s *stats) record(incl, own int64, w int32) int64 {
	if rs := s.perP.Load(); rs != nil {
		pid := procPin()
		if pid < len(*rs) {
			r := &(*rs)[pid]
			writeRow(r, incl, own, int64(w))
			n := atomic.LoadInt64(&r.count)
			procUnpin()
			return n
		}
		procUnpin() // a P added since the rows were made: the shared row
	}
	for !s.lock.CompareAndSwap(0, 1) {
		runtime.Gosched()
	}
	writeRowShared(&s.shared, incl, own, int64(w))
	n := s.shared.count
	s.lock.Store(0)
	if n == sharedFirings {
		rs := make([]row, runtime.GOMAXPROCS(0))
		for i := range rs {
			rs[i].min = math.MaxInt64
		}
		s.perP.CompareAndSwap(nil, &rs)
	}
	return n
}

// writeRowShared is writeRow for the shared row, in Go with atomics, so
// that the lock's hand-over covers it under -race too.
func writeRowShared(r *row, incl, own, w int64) {
	atomic.AddUint64(&r.seq, 1)
	atomic.AddInt64(&r.count, 1)
	atomic.AddInt64(&r.total, incl)
	atomic.AddInt64(&r.wsum, w)
	atomic.AddInt64(&r.wtotal, incl*w)
	atomic.AddInt64(&r.wown, own*w)
	if incl < atomic.LoadInt64(&r.min) {
		atomic.StoreInt64(&r.min, incl)
	}
	if incl > atomic.LoadInt64(&r.max) {
		atomic.StoreInt64(&r.max, incl)
	}
	fi := float64(incl)
	atomic.StoreUint64(&r.sqTotal, math.Float64bits(math.Float64frombits(atomic.LoadUint64(&r.sqTotal))+fi*fi))
	atomic.AddUint64(&r.seq, 1)
}

// addBack adds ns to the probe's own time: what a child that turned out
// untimed or disabled had been charged with. Rare: an atomic add to the
// shared row.
func (s *stats) addBack(ns int64) { atomic.AddInt64(&s.shared.back, ns) }

// addBare adds ns to the sum of the probe's firings' bare stretches
// (bareFloor), each firing's times its weight: for a firing with bare
// stretches only, which had two metered children at least. An atomic add
// to the row of the running P, which no other P writes, or to the shared
// row before the probe has a row per P.
func (s *stats) addBare(ns int64) { atomic.AddInt64(&s.localRow().bare, ns); procUnpin() }

// boundUnit: the bounded calls are counted in 1/boundUnit of a call.
const boundUnit = 1024

// addRoom adds, for a stretch that bounds the probe's unmetered calls
// (overcharged), the calls' own time in it, at most, and how many they
// were, priced for the stretch's caller. An atomic add to the row of the
// running P, as addBare's.
func (s *stats) addRoom(ns int64, calls float64) {
	r := s.localRow()
	atomic.AddInt64(&r.room, ns)
	atomic.AddInt64(&r.bounded, int64(calls*boundUnit))
	procUnpin()
}

// localRow pins the caller to its P and returns the P's row, or the
// shared row before the probe has a row per P. The caller unpins.
func (s *stats) localRow() *row {
	pid := procPin()
	if rs := s.perP.Load(); rs != nil && pid < len(*rs) {
		return &(*rs)[pid]
	}
	return &s.shared
}

// read returns a consistent copy of r: the totals of whole writes only.
func (r *row) read() totals {
	for spins := 0; ; spins++ {
		s := atomic.LoadUint64(&r.seq)
		if s&1 == 0 {
			t := totals{
				count:   atomic.LoadInt64(&r.count),
				total:   atomic.LoadInt64(&r.total),
				wsum:    atomic.LoadInt64(&r.wsum),
				wtotal:  atomic.LoadInt64(&r.wtotal),
				wown:    atomic.LoadInt64(&r.wown),
				min:     atomic.LoadInt64(&r.min),
				max:     atomic.LoadInt64(&r.max),
				sqTotal: math.Float64frombits(atomic.LoadUint64(&r.sqTotal)),
				back:    atomic.LoadInt64(&r.back),
				room:    atomic.LoadInt64(&r.room),
				bounded: atomic.LoadInt64(&r.bounded),
				bare:    atomic.LoadInt64(&r.bare),
			}
			if atomic.LoadUint64(&r.seq) == s {
				return t
			}
		}
		if spins > 8 {
			runtime.Gosched() // a writer lost its thread inside a write
		}
	}
}

// sum returns the totals of every row of s.
func (s *stats) sum() totals {
	t := s.shared.read()
	if rs := s.perP.Load(); rs != nil {
		for i := range *rs {
			u := (*rs)[i].read()
			t.count += u.count
			t.total += u.total
			t.wsum += u.wsum
			t.wtotal += u.wtotal
			t.wown += u.wown
			t.min = min(t.min, u.min)
			t.max = max(t.max, u.max)
			t.sqTotal += u.sqTotal
			t.back += u.back
			t.room += u.room
			t.bounded += u.bounded
			t.bare += u.bare
		}
	}
	if t.count == 0 {
		t.min = 0
	}
	t.back += bareFloor(t.bare)
	return t
}

// bareFloor returns what is given back to a probe's own time whose
// firings' bare stretches hold bare ns in all (each times its weight):
// where the sum is below zero, more metering was taken off them than they
// held, and the difference is given back; a sum above zero stands. The
// floor applies to the probe's whole sum, not to each firing's, so that a
// firing's noise on either side of a right overhead cancels another's,
// where a floor on each would keep the side above zero as own time.
func bareFloor(bare int64) int64 { return max(-bare, 0) }

// over returns, in ns, what the probe's estimate before any correction
// (its metered firings' mean own time, Probe.rawMean) exceeds the own
// time of its unmetered calls in the stretches that bound them by, in
// all, or 0 where it does not exceed it (overcharged). The estimate is
// the one of the moment, not the one each stretch was charged at: the
// first selected firings of a probe may read longer than the rest, and
// an excess summed at their estimate would stay when it has gone.
func (t totals) over() float64 {
	if t.bounded == 0 || t.wsum <= 0 {
		return 0
	}
	raw := max(float64(t.wown+t.back), 0) / float64(t.wsum)
	return max(raw*float64(t.bounded)/boundUnit-float64(t.room), 0)
}

// trimmed returns wtotal and wown less what the estimates of a probe of
// calls calls were found to exceed (over, in ns of all its calls), in the
// weighted units of the two: both times lose it, and their difference, its
// timed children's part, stays as measured.
func (t totals) trimmed(calls int64) (wtotal, wown float64) {
	o := 0.0
	if over := t.over(); over != 0 && calls > 0 {
		o = over * float64(t.wsum) / float64(calls)
	}
	return float64(t.wtotal) - o, float64(t.wown) - o
}

// typical returns the mean inclusive time of the metered firings in t but
// the longest. The verdicts on whether a probe's calls are hot, or too
// short to time, read it: one firing that held what the function does not
// do (its code's first page faulted in, the host took the core, the
// collector stopped the world) would otherwise weigh as much as a
// thousand calls of a short function, and a 2 ns function judged on its
// first 1,000 calls could come out timed for a stall of 200 µs.
func (t totals) typical() int64 {
	if t.count < 2 {
		return t.total / max(t.count, 1)
	}
	return (t.total - t.max) / (t.count - 1)
}

// Metered returns how many of p's firings were metered and have ended
// (Calls counts every call).
func (p *Probe) Metered() int64 { return p.stats.sum().count }
