package meter

import (
	"math"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// A goroutine that the scheduler takes off its P without parking it
// (preempted after its time slice, with more goroutines ready to run than
// there are Ps) waits in the run queue, then runs on: its stretch's wall
// time holds that wait, which a CPU profile does not charge. The runtime
// counts, in each g, the times the goroutine left the running state (a
// byte, g.trackingSeq, found at start-up: wait.go), and measures how
// long goroutines stay ready before they run (/sched/latencies:seconds).
//
// A stretch in which the goroutine was taken off its P, and whose content
// its firing's history does not tell (closeStretch), is left out of own
// time, as one in which it parked is, when it is shorter than longStretch:
// it is then mostly the wait, and what it held of CPU time is small (the
// scheduler takes a goroutine off after 10 ms of running, so a stretch
// holds a preemption about as often as its CPU time is a share of 10 ms).
// A longer one (a loop whose calls are untimed, in a process with more
// work than Ps) is charged what the sampler saw it run where the sampler
// runs: a stretch may be long for its wait alone (a call of a few µs
// preempted among busier goroutines on one P waits tens of ms), and the
// mean wait below is that of other goroutines. Without the sampler, it is
// charged its wall time less a mean run-queue wait of the moment for each
// time, and no less than nothing. The mean is that of the
// goroutines that became ready lately, not this one's, which a goroutine
// taken off for its time slice (to the global queue) waits longer than. A
// long stretch may have left the running state 256 times or more, the
// count being a byte: it is taken to have left it as often as its charge
// needs time slices (leftTimes).

// longStretch is the wall time, in ns, from which a stretch the goroutine
// was taken off its P in is charged less its waits rather than left out.
const longStretch = 10_000_000

// maskedGap: a long stretch whose wait reason byte holds the collector's
// assist (the runtime writes it while the goroutine works) may have held a
// wait whose reason was written over. One that is
// longer than maskedGap for each time the goroutine left the running
// state is taken for such a wait and left out: a goroutine that only runs
// is taken off its P every 10 ms or so of its time slices.
const maskedGap = 40_000_000

// maxSlice is the longest a goroutine runs between two times it leaves the
// running state: sysmon takes any goroutine off its P once it has run 10
// ms, and looks at least every 10 ms.
const maxSlice = 20_000_000

// leftTimes returns how many times a goroutine left the running state in
// a long stretch of l ns whose byte count moved by n, modulo 256 (a
// goroutine stopped for the collector's stack scans every few ms leaves it
// 256 times in a second or two): the least n+256k for which the stretch's
// charge, l less a run-queue wait of w for each time, fits in that many
// time slices and one more.
func leftTimes(l int64, n int, w int64) int {
	k := n
	for l-int64(k)*w > int64(k+1)*maxSlice {
		k += 256
	}
	return k
}

// descheduled counts stretches charged their wall time less run-queue
// waits.
var descheduled atomic.Int64

// The run-queue wait: the mean of the scheduler latencies recorded since
// the previous read, read at most every runWaitEvery ns.
const runWaitEvery = 10_000_000

type latencies struct {
	mu     sync.Mutex
	sample []metrics.Sample // the latencies, then the count of ready goroutines
	prev   []uint64
	at     atomic.Int64 // tick of the last read
	mean   atomic.Int64 // ns
	ready  atomic.Int64 // goroutines ready to run and not running at the last read; -1: not known
}

var runQueue latencies

// initRunWait reads the latencies once, so that later reads reuse their
// histogram and allocate nothing.
func initRunWait() {
	s := &runQueue
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sample != nil {
		return
	}
	s.sample = []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		s.sample = nil
		s.ready.Store(-1)
		return
	}
	h := s.sample[0].Value.Float64Histogram()
	s.prev = make([]uint64, len(h.Counts))
	s.meanSince(h)
	s.readyNow()
}

// readyNow sets ready from the sample read (Go 1.26 and later count ready
// goroutines; before, -1). Under mu.
func (s *latencies) readyNow() {
	if v := s.sample[1].Value; v.Kind() == metrics.KindUint64 {
		s.ready.Store(int64(v.Uint64()))
	} else {
		s.ready.Store(-1)
	}
}

// runWait returns the mean run-queue wait in ns, as of tick t: the figure
// a test's chain gives with a manual clock.
func runWait(t int64) int64 {
	if engine.manual != nil {
		return engine.runWait
	}
	return runQueue.read(t)
}

// idle reports, as of tick t, whether no goroutine waited to run at the
// last read of the scheduler's figures: a goroutine taken off its P then
// runs again at once, and a long stretch of its is mostly its own time,
// whatever the stretches around it hold (Frame.descheduled). Not known
// (before Go 1.26), false. A test's chain says it with a manual clock.
func idle(t int64) bool {
	if engine.manual != nil {
		return engine.idle
	}
	runQueue.read(t)
	return runQueue.ready.Load() == 0
}

// read returns the mean wait, read again if the last read is older than
// runWaitEvery and no other goroutine is reading it.
func (s *latencies) read(t int64) int64 {
	if nanos(s.at.Load(), t) >= runWaitEvery && s.mu.TryLock() {
		if s.sample != nil {
			metrics.Read(s.sample)
			s.meanSince(s.sample[0].Value.Float64Histogram())
			s.readyNow()
		}
		s.at.Store(t)
		s.mu.Unlock()
	}
	return s.mean.Load()
}

// meanSince sets mean from the latencies h recorded since prev, and
// prev to h's counts; with none recorded since, mean stays. Under mu.
func (s *latencies) meanSince(h *metrics.Float64Histogram) {
	var n, sum float64
	for i, c := range h.Counts {
		if i >= len(s.prev) {
			break
		}
		d := float64(c - s.prev[i])
		s.prev[i] = c
		if d == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		mid := (lo + hi) / 2
		switch {
		case math.IsInf(lo, -1):
			mid = hi
		case math.IsInf(hi, 1):
			mid = lo
		}
		n += d
		sum += d * mid
	}
	if n > 0 {
		s.mean.Store(int64(sum / n * 1e9))
	}
}
