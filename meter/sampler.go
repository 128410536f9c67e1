package meter

import (
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/hotspot"
)

// Sampling windows. A sampled probe (a cold probe that is large in total,
// see hotspot.Rule.Keep) is off, its on-word cleared, except during
// sampling windows: WindowLength of metering for every sampled probe at
// once, 1/Sample of the time, and countingShare times as much of counting
// (counting.go). Outside a window its firing costs what a disabled
// probe's does. Inside a
// metered one, every firing of a sampled probe that begins is metered, and
// so are the firings nested in it, so the inherent times measured there
// are exact. The model estimates a sampled probe's count from the
// counting windows, and its times as that count times the means per
// firing the metered windows measured; before a counting window has
// counted any, as what the metered windows measured divided by their
// share of the program's work (their length less what their metering
// cost, see calibrate.go, or their share of allocations).
//
// Windows also correct the inherent time of the probes metered always: a
// metered firing's inherent time counts the time of the sampled firings
// under it that began outside windows, which were not metered. For a
// firing that began in a window, the engine measures how the window split
// its own part (outside the children metered anyway) into its own time,
// between its children's clock reads, and its sampled children's; the
// probe pools that split, and a firing not held whole has the pooled
// share of its own part as its inherent time (Frame.stretch, end). The
// model then gives each probe its inclusive time less what its sampled
// children take per firing, where windows held enough of its firings
// whole, or else the inherent share of its inclusive time that its
// firings in windows show (ownEstimate).
//
// Windows open at random times, on timers (time.AfterFunc: no goroutine
// waits between them), never at a point the program's own work picks, and
// are closed by their timers too. Timers run where the Go scheduler runs:
// on an idle P at once, on a busy one at its next scheduling point. So on a
// server whose Ps are busy, a window opens when a request ends (its
// goroutine waits for the next) and closes when the request running at its
// end ends: it holds whole requests. Closed at its length exactly, by
// the first firing past it, it could end in the middle of a search, before
// the handler's reply (sampled): on example/service the search handler's
// own time came out at 10 µs a call against 0.7, and the replies' counts
// at 1.11 to 1.28 of the true ones. A window still open at overdueWindows
// times its length (a program that does not reach a scheduling point) is
// closed by the first firing that finds it so: the end of a metered one,
// or every 64th count. The gap to the next window is drawn from the length
// the closed one had, so that each kind still holds its share of the time.
// Tests drive windows by hand.

// WindowLength is how long one sampling window lasts, at least, unless
// the hotspot rule says otherwise (METER_HOTSPOT_WINDOW).
const WindowLength = hotspot.DefaultWindow * time.Nanosecond

// overdueWindows is how many times WindowLength a window may stay open,
// waiting for its timer, before a firing closes it.
const overdueWindows = 4

var sampler samplerState

// samplerState is a named type so that begin_amd64.s can read its fields
// by offset (go_asm.h).
type samplerState struct {
	mu      sync.Mutex
	probes  []*Probe      // sampled probes, whose on-words the windows open
	active  atomic.Bool   // a window has been scheduled: frames track the windows' time
	seq     atomic.Uint32 // odd while a window is open
	openAt  atomic.Int64  // ticks when the open window opened
	closeAt atomic.Int64  // ticks when the last window closed
	overdue int64         // ticks a window may stay open (overdueWindows)
	length  atomic.Int64  // ticks of a window's length, when its timer is due
	since   atomic.Int64  // ticks when the first probe was sampled
	closed  atomic.Int64  // ns of the windows closed so far
	timer   *time.Timer
	sample  int64         // METER_HOTSPOT_SAMPLE: metered windows hold 1/sample of the time (windowGap)
	window  time.Duration // METER_HOTSPOT_WINDOW: a window's length, at least
	manual  bool          // tests open and close windows themselves

	// What windows cost the program: the outer overheads of the firings
	// metered because a window was open, summed over goroutines, and how
	// many goroutines metered such firings in each window (at most
	// GOMAXPROCS), summed over closed windows.
	over    atomic.Int64 // ns
	busy    atomic.Int64 // goroutines that metered in the open window
	busySum atomic.Int64
	procs   int64

	// What the program allocated, in bytes (see allocated): in the windows
	// closed so far, when the open one opened (under mu), and when the
	// first probe was sampled.
	allocWin   atomic.Int64
	allocOpen  int64
	allocSince atomic.Int64
	allocClock atomic.Bool // scale by allocations where there are enough (not with a manual clock: tests)

	// Counting windows (counting.go): whether one is open, when it opened,
	// the ns and the bytes allocated in those closed so far, how many
	// closed, and the bytes allocated when the open one opened (under mu).
	counting       atomic.Bool
	countOpenAt    atomic.Int64
	countNanos     atomic.Int64
	countAlloc     atomic.Int64
	countWindows   atomic.Int64
	countAllocOpen int64
}

// noteWindowed counts what a firing metered because a window was open
// cost, on g. Its End calls it, holding g.
func noteWindowed(g *Goroutine, cost int64) {
	sampler.over.Add(cost)
	if s := sampler.seq.Load(); g.winSeq != s {
		g.winSeq = s
		sampler.busy.Add(1)
	}
}

// busyAverage returns how many goroutines ran in a window, on average
// over the closed windows; 1 before any.
func busyAverage() float64 {
	n := int64(sampler.seq.Load()) / 2
	if n == 0 {
		return 1
	}
	return max(float64(sampler.busySum.Load())/float64(n), 1)
}

// windowNanos returns the ns windows have been open so far, as of tick t.
func windowNanos(t int64) int64 {
	w := sampler.closed.Load()
	if sampler.seq.Load()&1 == 1 {
		w += nanos(sampler.openAt.Load(), t)
	}
	return w
}

// addSampled puts p among the probes the windows open, and starts the
// windows if they are not running.
func addSampled(p *Probe) {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	sampler.probes = append(sampler.probes, p)
	if p.gate != nil {
		p.gate.Store(b2u32(sampler.seq.Load()&1 == 1))
	}
	if !sampler.active.Load() {
		for _, q := range Probes() {
			q.window.base.Store(q.stats.sum().count)
		}
		sampler.since.Store(now())
		sampler.allocSince.Store(allocated())
		sampler.active.Store(true)
		sampler.sample = int64(max(engine.hotspot.Sample, 2))
		sampler.procs = int64(runtime.GOMAXPROCS(0))
		sampler.window = WindowLength
		if h := engine.hotspot; h != nil && h.Window > 0 {
			sampler.window = time.Duration(h.Window)
		}
		sampler.overdue = toTicks(overdueWindows * sampler.window)
		sampler.length.Store(toTicks(sampler.window))
		if !sampler.manual {
			d := jitter(sampler.window * time.Duration(sampler.sample))
			sampler.timer = time.AfterFunc(d, openWindow)
		}
	}
}

// removeSampled takes p out of the windows (it was enabled again).
func removeSampled(p *Probe) {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	for i, q := range sampler.probes {
		if q == p {
			sampler.probes = append(sampler.probes[:i], sampler.probes[i+1:]...)
			break
		}
	}
}

// openWindow opens a window: every sampled probe's on-word is set.
func openWindow() {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	if sampler.seq.Load()&1 == 1 || sampler.counting.Load() || !sampler.active.Load() {
		return
	}
	if !sampler.manual && rand.IntN(countingShare+1) != 0 { // countingShare of every countingShare+1 count (counting.go)
		openCounting()
		return
	}
	sampler.openAt.Store(now())
	sampler.allocOpen = allocated()
	sampler.busy.Store(0)
	sampler.seq.Add(1)
	openGates(sampler.window)
}

// openGates sets every sampled probe's on-word, and the timer that closes
// the window after d. Under sampler.mu.
func openGates(d time.Duration) {
	for _, p := range sampler.probes {
		if p.gate != nil && engine.on {
			p.gate.Store(1)
		}
	}
	if !sampler.manual {
		if sampler.timer != nil {
			sampler.timer.Stop()
		}
		sampler.timer = time.AfterFunc(d, closeWindow)
	}
}

// closeGates clears the on-words of the probes still sampled. Under
// sampler.mu.
func closeGates() {
	for _, p := range sampler.probes {
		if p.gate != nil && p.State() == Sampled {
			p.gate.Store(0)
		}
	}
}

// keepWindows closes a window that is overdue, as of tick t: the end of
// every metered firing asks, while windows run. It never opens one: the
// ends of the firings metered outside windows fall at particular points
// of the program's work (between a parse and a render, say), and a window
// opened there would see that work more often than its share.
func keepWindows(t int64) {
	if sampler.manual {
		return
	}
	if sampler.seq.Load()&1 == 1 && t-sampler.openAt.Load() >= sampler.overdue || countingOverdue(t) {
		closeWindow()
	}
}

// toTicks converts a duration to the engine clock's ticks.
func toTicks(d time.Duration) int64 {
	if engine.manual != nil {
		return int64(d)
	}
	return clock.Ticks(int64(d))
}

// closeWindow closes the open window (metered or counting), and
// schedules the next, whose kind openWindow draws (scheduleNext).
func closeWindow() {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	if sampler.counting.Load() {
		scheduleNext(closeCounting())
		return
	}
	if sampler.seq.Load()&1 == 0 {
		return
	}
	closeGates()
	t := now()
	sampler.closeAt.Store(t)
	open := nanos(sampler.openAt.Load(), t)
	sampler.closed.Add(open)
	if a := allocated(); a >= 0 && sampler.allocOpen >= 0 {
		sampler.allocWin.Add(a - sampler.allocOpen)
	}
	sampler.busySum.Add(min(max(sampler.busy.Load(), 1), sampler.procs))
	sampler.seq.Add(1)
	scheduleNext(open)
}

// scheduleNext sets the timer of the next window, the one that closed
// having been open for ns. Under sampler.mu.
func scheduleNext(ns int64) {
	if !sampler.manual && sampler.active.Load() {
		if sampler.timer != nil {
			sampler.timer.Stop()
		}
		l := max(time.Duration(ns), sampler.window)
		sampler.timer = time.AfterFunc(jitter(windowGap(l, sampler.sample)), openWindow)
	}
}

// windowGap returns the mean gap after a window that was open for l, for
// windows of both kinds to hold (countingShare+1)/sample of the time: a
// window of length l every l×sample/(countingShare+1) on average. One
// window in countingShare+1 is a metered one (openWindow), so metered
// windows hold 1/sample of the time, counting ones countingShare/sample.
func windowGap(l time.Duration, sample int64) time.Duration {
	k := time.Duration(countingShare + 1)
	return l * max(time.Duration(sample)-k, 0) / k
}

// jitter returns d scaled by a uniform factor in [0.5, 1.5): windows at
// random phases, so that a periodic program is not sampled at one point
// of its cycle.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.5 + rand.Float64()))
}

// resetSampler stops the windows and forgets the sampled probes (a new
// chain). Under configureMu.
func resetSampler(manual bool) {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	if sampler.timer != nil {
		sampler.timer.Stop()
		sampler.timer = nil
	}
	sampler.probes = nil
	sampler.active.Store(false)
	if sampler.seq.Load()&1 == 1 {
		sampler.seq.Add(1)
	}
	sampler.closed.Store(0)
	sampler.over.Store(0)
	sampler.allocWin.Store(0)
	sampler.allocClock.Store(!manual)
	allocated() // the first read sets runtime/metrics up, and allocates: not in a firing
	sampler.busy.Store(0)
	sampler.busySum.Store(0)
	interruptions.Store(0)
	sampler.counting.Store(false)
	sampler.countNanos.Store(0)
	sampler.countAlloc.Store(0)
	sampler.countWindows.Store(0)
	for _, r := range []*overheadRing{&countOverhead} {
		r.inner.Store(0)
		r.outer.Store(0)
		r.next.Store(0)
	}
	sampler.manual = manual
}

// windowStats are the totals of a probe's metered firings that a window
// overlapped, with inherent times corrected for the sampled firings under
// them that began outside windows, and the split of their own parts that
// the windows saw: own time (self) out of own time and sampled children's
// (seen).
//
// For a probe metered always they also hold what its sampled children
// take per firing (ownEstimate): how many of its firings began in a
// window, how many of those ended in it (whole) and the inclusive ns of
// their sampled children (kidsWhole); the same of all its firings (kids);
// and its count of firings when the first probe was sampled (base). A
// sampled child's time counts without the firings metered anyway under
// it, which outside windows are its parent's children (Frame.kidsNet).
type windowStats struct {
	count, total, inherent  atomic.Int64
	self, seen              atomic.Int64
	began, whole, kidsWhole atomic.Int64
	kids, base              atomic.Int64
}

func (w *windowStats) load() totals {
	return totals{count: w.count.Load(), total: w.total.Load(), inherent: w.inherent.Load()}
}

// sampling holds what a sampled probe's estimates start from, and the
// adjustments estimates made to earlier sampled stretches.
type sampling struct {
	mu    sync.Mutex
	base  totals // its statistics when the current stretch started
	win   totals // its window statistics then
	t0    int64  // ticks then
	w0    int64  // windowNanos then
	o0    int64  // the windows' overhead then (sampler.over)
	a0    int64  // bytes the program had allocated then, or -1
	aw0   int64  // of those, in windows
	c0    int64  // its firings counted in counting windows then (counting.go)
	cw0   int64  // ns of counting windows then
	ca0   int64  // bytes allocated in counting windows then
	call0 int64  // firings counted then, over every sampled probe
	extra totals // what estimates added to ended stretches
}

// startSampling moves p from Enabled to Sampled, its statistics at sum.
func (p *Probe) startSampling(sum totals, t int64) {
	p.sampling.mu.Lock()
	if p.State() != Enabled {
		p.sampling.mu.Unlock()
		return
	}
	p.sampling.base, p.sampling.win = sum, p.window.load()
	p.sampling.t0, p.sampling.w0, p.sampling.o0 = t, windowNanos(t), sampler.over.Load()
	p.sampling.a0 = allocated()
	p.sampling.aw0 = windowAlloc(p.sampling.a0)
	p.ensureCounts()
	p.sampling.c0, p.sampling.cw0 = p.counted(), countingNanos(t)
	p.sampling.ca0, p.sampling.call0 = countingAlloc(p.sampling.a0), countedAll()
	p.state.CompareAndSwap(uint32(Enabled), uint32(Sampled))
	p.sampling.mu.Unlock()
	addSampled(p)
}

// adjustment returns what the estimates add to p's statistics sum: the
// ended stretches' adjustments, and, while p is sampled, the current
// stretch's, measured at tick t. A stretch's estimate is what windows
// measured of it, divided by the share of the program's work the windows
// held over the stretch (in bytes allocated, or in time less the windows'
// metering; see allocated); the adjustment is that estimate less what its
// metered firings recorded. Under p.sampling.mu.
func (p *Probe) adjustment(sum totals, t int64) totals {
	e := p.sampling.extra
	if p.State() != Sampled {
		return e
	}
	s := &p.sampling
	w := p.window.load()
	span, win := nanos(s.t0, t), windowNanos(t)-s.w0
	if win <= 0 || span <= 0 {
		return e // no window yet: the warm-up's figures stand
	}
	// Both in work: inside a window every firing of a sampled probe is
	// metered, so the program runs slower there. Of the windows' length,
	// what their metering took on each goroutine that ran holds no work:
	// their overhead spread over those goroutines.
	lost := float64(sampler.over.Load()-s.o0) / busyAverage()
	work := max(float64(win)-lost, float64(win)/50)
	scale := max(float64(span)-lost, work) / work
	if a := allocated(); a >= 0 && s.a0 >= 0 && sampler.allocClock.Load() {
		// The program's allocations are a clock of its work that metering
		// does not move: prefer it where there are enough of them.
		if all, in := a-s.a0, windowAlloc(a)-s.aw0; in >= minWindowAlloc && all >= in {
			scale = float64(all) / float64(in)
		}
	}
	if n, ok := p.countEstimate(t); ok && w.count > s.win.count {
		// Counted in counting windows; times per firing from the metered
		// ones (counting.go).
		m := float64(w.count - s.win.count)
		e.count += int64(n) - (sum.count - s.base.count)
		e.total += int64(n*float64(w.total-s.win.total)/m) - (sum.total - s.base.total)
		e.inherent += int64(n*float64(w.inherent-s.win.inherent)/m) - (sum.inherent - s.base.inherent)
		return e
	}
	est := func(a, b int64) int64 { return int64(float64(a-b) * scale) }
	e.count += est(w.count, s.win.count) - (sum.count - s.base.count)
	e.total += est(w.total, s.win.total) - (sum.total - s.base.total)
	e.inherent += est(w.inherent, s.win.inherent) - (sum.inherent - s.base.inherent)
	return e
}

// Allocation as a clock of work. The windows' share of the program's work
// is what their counts are scaled by; taken in time, it is their length
// less what their metering cost, and that cost is measured on empty
// firings, which a program's firings exceed (their clock reads wait for
// its instructions in flight; their branches and lines meet its own): on
// goldmark the windows' work came out at about twice the truth, and the
// sampled counts at half. The bytes the program allocates do not move
// with metering (no firing allocates), and windows open at random times,
// so the windows' share of them is their share of the work, on average,
// wherever the program allocates in proportion to what it does. Where the
// windows saw at least minWindowAlloc of them, the estimates are scaled by
// that share; elsewhere (a program that hardly allocates), by the windows'
// time less their metering.
const minWindowAlloc = 1 << 20

var allocRead struct {
	sync.Mutex
	sample [1]metrics.Sample
}

// allocated returns the bytes the program has allocated on the heap so
// far (runtime/metrics, counted when a span is handed to an allocating
// P), or -1 where the runtime does not say. It does not allocate.
func allocated() int64 {
	allocRead.Lock()
	defer allocRead.Unlock()
	allocRead.sample[0].Name = "/gc/heap/allocs:bytes"
	metrics.Read(allocRead.sample[:])
	if allocRead.sample[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(allocRead.sample[0].Value.Uint64())
}

// windowAlloc returns the bytes allocated in windows so far, a being the
// bytes allocated in all.
func windowAlloc(a int64) int64 {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	w := sampler.allocWin.Load()
	if sampler.seq.Load()&1 == 1 && a >= sampler.allocOpen && sampler.allocOpen >= 0 {
		w += a - sampler.allocOpen
	}
	return w
}
