package meter

import "sync/atomic"

// Counting windows. Sampling windows are of two kinds. In a metered window
// every sampled firing that begins is metered (sampler.go); in a counting
// window every sampled firing that begins is only counted, by one atomic
// add on its goroutine's stripe of its probe's count (a cache line each;
// begin_amd64.s does it in the leaf), and nothing is metered. A sampled
// probe's count is estimated from the counting windows: what they counted,
// divided by their share of the program's work; its inclusive and
// inherent times are that count times the means per firing that the
// metered windows measured.
//
// The reason is how much each kind slows the program. A metered window
// runs it slower where sampled firings are dense (a loop of 30 ns calls,
// each metered at 100 ns or more, gets through a fraction of the calls it
// would), so the firings a metered window holds fall short of its share
// of the work by as much as metering slows them, and that slowdown is
// known only to within what the calibrated overhead misses: sampled counts
// came out at 0.5 to 0.9 of the true ones. A counted firing costs a few
// ns; the program runs nearly as fast in a counting window as outside,
// and the counts came out at 0.95 to 1.14 of the true ones on goldmark
// (eight runs of 4000 rounds; what is left is which phases of the program
// a run's windows happened to land in; design.md, "Sampling windows").
//
// The share of the work is the counting windows' share of the bytes the
// program allocated, where they saw at least minWindowAlloc of them; else
// their share of the time, less what counting cost in them (countOverhead,
// measured as the metering overheads are).

// countingShare is how many counting windows open for each metered one,
// both of WindowLength at least: counting windows hold countingShare/Sample
// of the time, metered ones 1/Sample. A counted firing costs a few ns
// more than one outside windows, a metered one a hundred or more, so
// counting windows can be many. Eight runs of goldmark's example (4000
// rounds) of each build, one after the other: with as many windows of each
// kind, the sampled counts of the profile's top 10 came out at 0.84 to
// 1.26 of the true ones (standard deviation of their logarithm 0.081);
// with four counting windows for each metered one, at 0.95 to 1.14
// (0.034). Eight runs of make example (2000 rounds) of each of three
// builds, against the true counts of the top 10: two counting windows
// for each metered one, 0.80 to 1.35 (0.111); three, 0.92 to 1.21
// (0.078); four, 0.83 to 1.21 (0.071). Counting is most of what windows
// cost where instrumented functions are called densely (yaml.v3, a call
// every 362 instructions: 0.41 point of its instructions at four, 0.2 at
// two), but with three, bench/agreement.sh missed goldmark in one run of
// eight (parseBlock 5.3 points under the CPU profile), where four passed
// sixteen of sixteen the same day: four.
const countingShare = 4

// Shorter counting windows were tried (4 of 62 µs for each metered one): on
// a service whose Ps are busy, windows open when a request ends (timers run
// at scheduling points), and a short window held little more than the next
// request's decoding; its searches' counts came out at 0.4 to 0.8 of the
// true ones.

// countRow is one stripe of a probe's count of firings in counting windows.
type countRow struct {
	n atomic.Int64
	_ [56]byte // a line of its own
}

// ensureCounts gives p its rows, one per stripe, when it starts being
// sampled.
func (p *Probe) ensureCounts() {
	if p.counts.Load() == nil {
		rs := make([]countRow, Stripes)
		p.counts.CompareAndSwap(nil, &rs)
	}
}

// countEvery is how many counts a row takes between two looks at the
// clock: a counting window whose timer runs late (its goroutine waits for
// a P, which the collector may hold) is closed by the count that finds it
// overdue; one in countEvery*countCalibrate measures what a count costs.
// A power of two (begin_amd64.s tests its low bits).
const (
	countEvery     = 64
	countCalibrate = 64
)

// countFiring counts a firing of p that began in a counting window, on the
// stripe of the running goroutine (begin_amd64.s does the same).
func (p *Probe) countFiring() {
	rs := p.counts.Load()
	if rs == nil {
		return
	}
	if n := (*rs)[stripe(getg())].n.Add(1); n%countEvery == 0 {
		countDue(p, nil, 0, 0)
	}
}

// countDue follows every countEvery-th count of a row: it closes the
// counting window if it is overdue, and now and then measures what a
// count costs. It returns nil: a counted firing is not metered.
func countDue(p *Probe, _ *Goroutine, _, _ uintptr) Firing {
	if sampler.manual || p.internal {
		return nil
	}
	if countingOverdue(now()) {
		closeWindow()
		return nil
	}
	if countTick.Add(1)%countCalibrate == 0 {
		measureCount()
	}
	return nil
}

// countTick counts countDue's calls, to spread the measurements.
var countTick atomic.Uint32

// counted returns the firings of p counted so far.
func (p *Probe) counted() int64 {
	rs := p.counts.Load()
	if rs == nil {
		return 0
	}
	var n int64
	for i := range *rs {
		n += (*rs)[i].n.Load()
	}
	return n
}

// countedAll returns the firings counted so far, over every sampled probe.
func countedAll() int64 {
	sampler.mu.Lock()
	ps := sampler.probes
	sampler.mu.Unlock()
	var n int64
	for _, p := range ps {
		n += p.counted()
	}
	return n
}

// openCounting opens a counting window. Under sampler.mu.
func openCounting() {
	sampler.countOpenAt.Store(now())
	sampler.countAllocOpen = allocated()
	sampler.counting.Store(true)
	openGates(sampler.window)
}

// countingOverdue reports whether a counting window has been open for
// overdueWindows times its length, as of tick t.
func countingOverdue(t int64) bool {
	return sampler.counting.Load() && t-sampler.countOpenAt.Load() >= sampler.overdue
}

// closeCounting closes the open counting window, and returns the ns it
// was open. Under sampler.mu.
func closeCounting() int64 {
	closeGates()
	open := nanos(sampler.countOpenAt.Load(), now())
	sampler.countNanos.Add(open)
	if a := allocated(); a >= 0 && sampler.countAllocOpen >= 0 {
		sampler.countAlloc.Add(a - sampler.countAllocOpen)
	}
	sampler.countWindows.Add(1)
	sampler.counting.Store(false)
	return open
}

// countingNanos returns the ns counting windows have been open, as of
// tick t.
func countingNanos(t int64) int64 {
	w := sampler.countNanos.Load()
	if sampler.counting.Load() {
		w += nanos(sampler.countOpenAt.Load(), t)
	}
	return w
}

// countingAlloc returns the bytes allocated in counting windows so far, a
// being the bytes allocated in all.
func countingAlloc(a int64) int64 {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	w := sampler.countAlloc.Load()
	if sampler.counting.Load() && a >= sampler.countAllocOpen && sampler.countAllocOpen >= 0 {
		w += a - sampler.countAllocOpen
	}
	return w
}

// countEstimate returns the estimated count of p's firings over its
// current stretch, as of tick t: what the counting windows counted over
// their share of the work. False before they have counted any.
func (p *Probe) countEstimate(t int64) (float64, bool) {
	s := &p.sampling
	n := p.counted() - s.c0
	win := countingNanos(t) - s.cw0
	span := nanos(s.t0, t)
	if n <= 0 || win <= 0 || span <= 0 {
		return 0, false
	}
	if a := allocated(); a >= 0 && s.a0 >= 0 && sampler.allocClock.Load() {
		if all, in := a-s.a0, countingAlloc(a)-s.ca0; in >= minWindowAlloc && all >= in {
			return float64(n) * float64(all) / float64(in), true
		}
	}
	// In time: of the counting windows' length, what counting took on
	// each goroutine that ran holds no work; nor, of the whole stretch,
	// what counting and metering took.
	busy := busyAverage()
	lost := float64((countedAll()-s.call0)*countOverhead.outer.Load()) / busy
	metering := float64(sampler.over.Load()-s.o0) / busy
	work := max(float64(win)-lost, float64(win)/2)
	return float64(n) * max(float64(span)-lost-metering, work) / work, true
}

// countOverhead is what counting a firing costs, measured in counting
// windows as the metering overheads are (its outer figure).
var countOverhead overheadRing

// calibCount is the private sampled probe whose counted firings measure it.
var calibCount = func() *Probe {
	p := &Probe{name: "meter.calibration", internal: true}
	p.stats.init()
	p.ended.Store(true)
	p.state.Store(uint32(Sampled))
	p.ensureCounts()
	return p
}()

// measureCount measures two counted firings in a row against one, in a
// counting window.
func measureCount() {
	c := calibCount
	one := func() { c.End(c.Begin()) }
	one()
	t1 := now()
	one()
	one()
	t2 := now()
	one()
	t3 := now()
	if sampler.counting.Load() {
		countOverhead.record(0, nanos(t1, t2)-nanos(t2, t3))
	}
}
