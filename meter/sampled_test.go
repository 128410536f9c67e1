package meter

import (
	"testing"
	"time"

	"github.com/meterio/meter/extensions/hotspot"
	"github.com/meterio/meter/extensions/tracepoint"
)

// sample makes p sampled: Initial cold firings of 1 µs, back to back, so
// that its share of the time is all of it.
func sample(t *testing.T, p *Probe) {
	t.Helper()
	for i := int64(0); i < engine.hotspot.Initial; i++ {
		fire(p, 1*us, nil)
	}
	if s := p.State(); s != Sampled {
		t.Fatalf("%s: state %d after %d cold firings that take all the time, want sampled", p.Name(), s, engine.hotspot.Initial)
	}
}

// wireSampling wires a chain of hotspot alone, with sampling windows open
// 1/sample of the time for probes whose share reaches share (%).
func wireSampling(t *testing.T, sample int64, share float64) *hotspot.Rule {
	h := hot()
	h.Sample, h.SampleShare = sample, share
	wire(t, Chain{Hotspot: h})
	return h
}

// A probe whose firings are each cold but whose time adds up is sampled,
// not disabled: metered during sampling windows only, its totals
// estimated from them.
func TestCheapButLargeProbeIsSampled(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	big, small := newProbe(t, "big"), newProbe(t, "small")
	// big takes most of the time; small, 100 ns a firing in 2 µs, is cold.
	for i := int64(0); i < h.Initial; i++ {
		fire(small, 100, nil)
		clk.Advance(900)
		fire(big, 1*us, nil)
	}
	if s := big.State(); s != Sampled {
		t.Fatalf("big: state %d, want sampled", s)
	}
	if s := small.State(); s != DisabledHotspot {
		t.Fatalf("small: state %d, want disabled", s)
	}
	// 90 firings of 2 µs outside a window (not metered), 10 in one: the
	// window took a tenth of the stretch, so its 10 stand for 100.
	for i := 0; i < 90; i++ {
		fire(big, 2*us, nil)
	}
	openWindow()
	for i := 0; i < 10; i++ {
		fire(big, 2*us, nil)
	}
	closeWindow()
	r := big.row()
	if r.Label != LabelSampled || r.Metered != h.Initial+10 {
		t.Fatalf("big: label %q metered %d, want sampled and %d", r.Label, r.Metered, h.Initial+10)
	}
	warm := h.Initial * us
	if r.Count != h.Initial+100 || r.Total != warm+200*us || r.InherentTotal != warm+200*us {
		t.Fatalf("big: count %d total %d inherent %d; want %d, %d, %d", r.Count, r.Total, r.InherentTotal, h.Initial+100, warm+200*us, warm+200*us)
	}
	// A hot firing in a window changes nothing: the windows follow it.
	openWindow()
	fire(big, 20*us, nil)
	closeWindow()
	if s := big.State(); s != Sampled {
		t.Fatalf("after a hot sampled firing: state %d, want sampled", s)
	}
}

// A root (a request handler) that is cold and small in total is sampled,
// not disabled: the model keeps every handler's count.
func TestColdRootIsSampled(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	big, health := newProbe(t, "big"), newProbe(t, "health")
	health.SetRoot()
	// health, 100 ns a firing in 2 µs, has 5% of the time: under the share.
	for i := int64(0); i < h.Initial; i++ {
		fire(health, 100, nil)
		clk.Advance(900)
		fire(big, 1*us, nil)
	}
	if s := health.State(); s != Sampled {
		t.Fatalf("health: state %d, want sampled", s)
	}
	if r := health.row(); r.Label != LabelSampled {
		t.Fatalf("health: label %q, want sampled", r.Label)
	}
}

// A probe metered always, whose sampled callee is not metered outside
// windows, gets the inherent share its firings in windows show.
func TestInherentUnderSampledCallees(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	fire(parent, 100*us, nil) // hot: it stays enabled
	sample(t, child)
	call := func() { fire(parent, 1*us, func() { fire(child, 9*us, nil) }) }
	base := parent.row()
	for i := 0; i < 90; i++ {
		call()
	}
	openWindow()
	for i := 0; i < 10; i++ {
		call()
	}
	closeWindow()
	// 100 calls of 10 µs, 1 µs of it the parent's own.
	r := parent.row()
	if r.Count-base.Count != 100 || r.Total-base.Total != 1000*us {
		t.Fatalf("parent: count +%d total +%d, want +100, +1000 µs", r.Count-base.Count, r.Total-base.Total)
	}
	if want := (r.Total) / 10; r.InherentTotal != want {
		t.Fatalf("parent: inherent %d, want %d (a tenth of its inclusive time, as the window showed)", r.InherentTotal, want)
	}
	c := child.row()
	if c.Metered != h.Initial+10 || c.Count != h.Initial+100 || c.InherentTotal != h.Initial*us+900*us {
		t.Fatalf("child: metered %d count %d inherent %d", c.Metered, c.Count, c.InherentTotal)
	}
}

// A probe metered always with enough firings in windows takes its sampled
// callees' time as a mean per firing from them, and its own time as its
// inclusive time less that mean: not as the windows' split of their own
// time, which rests on what metering a callee costs its caller. Here that
// cost is calibrated wrong by 500 ns a callee (the manual clock charges
// none), which only the parent's firings in windows see. The mean is taken
// from the firings that began before the window's timer was due: those
// that began later (here with callees of 30 µs) would make it one of the
// firings a window waited for.
func TestOwnTimeUnderSampledCalleesIsInclusiveLessTheirMean(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	h.Window = int64(2 * time.Millisecond)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	fire(parent, 100*us, nil) // hot: it stays enabled
	sample(t, child)
	const miss = 500
	overhead[pathDue].outer.Store(miss)
	call := func(c int64) { fire(parent, 4*us, func() { fire(child, c, nil) }) }
	for i := 0; i < 900; i++ {
		call(9 * us)
	}
	openWindow()
	for i := 0; i < minWhole+36; i++ { // 1.3 ms
		call(9 * us)
	}
	clk.Advance(1000 * us)
	for i := 0; i < 10; i++ {
		call(30 * us)
	}
	closeWindow()
	if s := parent.State(); s != Enabled {
		t.Fatalf("parent: state %d, want enabled (its firings are hot)", s)
	}
	r := parent.row()
	if want := int64(100*us + 900*13*us + 100*(13*us-miss) + 10*(34*us-miss)); r.Total != want {
		t.Fatalf("parent: total %d, want %d", r.Total, want)
	}
	// 1,010 calls of 4 µs of its own, less the 500 ns each of the 110 in
	// the window lost from its inclusive time, and what the last ten's
	// callees took beyond the mean of 9 µs; and the first firing.
	if want := int64(100*us + 1010*4*us - 110*miss + 10*21*us); r.InherentTotal != want {
		t.Fatalf("parent: inherent %d, want %d", r.InherentTotal, want)
	}
	// The windows' split gives (4 µs − 500 ns)/(13 µs − 500 ns), and
	// (4 µs − 500 ns)/(34 µs − 500 ns), of its inclusive time.
	w := parent.window.load()
	if split := int64(float64(r.Total) * float64(w.inherent) / float64(w.total)); split > 3800*us {
		t.Fatalf("the windows' split: %d, want under 3,800 µs", split)
	}
}

// Outside windows a sampled callee is not metered, and what is metered
// anyway under it (a recursive parser's next level) is its caller's child:
// the mean taken off the caller counts the callee's time less that, as
// windows see it. Taken whole, the next level would come off twice, and
// the caller's own time out at zero (yaml.v3's (*parser).mapping, under
// the sampled node and its nested mappings).
func TestOwnTimeLeavesWhatIsMeteredUnderSampledCallees(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	h.Window = int64(5 * time.Millisecond)
	parent, child, next := newProbe(t, "parent"), newProbe(t, "child"), newProbe(t, "next")
	fire(parent, 100*us, nil) // hot: they stay enabled
	fire(next, 100*us, nil)
	sample(t, child)
	call := func() { fire(parent, 4*us, func() { fire(child, 3*us, func() { fire(next, 20*us, nil) }) }) }
	for i := 0; i < 900; i++ {
		call()
	}
	openWindow()
	for i := 0; i < minWhole+36; i++ { // 2.7 ms
		call()
	}
	closeWindow()
	if s, n := parent.State(), next.State(); s != Enabled || n != Enabled {
		t.Fatalf("states %d and %d, want both enabled", s, n)
	}
	if r := parent.row(); r.InherentTotal != 100*us+1000*4*us {
		t.Fatalf("parent: inherent %d, want %d", r.InherentTotal, 100*us+1000*4*us)
	}
}

// A probe whose firings windows mostly cut (they close during it) keeps
// the windows' split: the mean of the few held whole would be that of its
// shorter firings.
func TestOwnTimeOfFiringsWindowsCutIsTheSplit(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	h.Window = int64(2 * time.Millisecond)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	fire(parent, 100*us, nil)
	sample(t, child)
	for i := 0; i < minWhole+1; i++ {
		openWindow() // cut: the window closes between its two callees
		fire(parent, 4*us, func() {
			fire(child, 9*us, nil)
			closeWindow()
			fire(child, 9*us, nil)
		})
	}
	for i := 0; i < minWhole; i++ {
		openWindow()
		fire(parent, 4*us, func() { fire(child, 9*us, nil) })
		closeWindow()
	}
	w := &parent.window
	if b, wh := w.began.Load(), w.whole.Load(); b != 2*minWhole+1 || wh != minWhole {
		t.Fatalf("began %d whole %d, want %d and %d", b, wh, 2*minWhole+1, minWhole)
	}
	sum := parent.stats.sum()
	wt := parent.window.load()
	split := int64(float64(sum.total) * float64(wt.inherent) / float64(wt.total))
	if own, ok := ownEstimate(parent, sum); !ok || own != split {
		t.Fatalf("ownEstimate: %d, %v; want the split, %d", own, ok, split)
	}
	// One more held whole, and the mean is taken.
	openWindow()
	fire(parent, 4*us, func() { fire(child, 9*us, nil) })
	closeWindow()
	sum = parent.stats.sum()
	n := sum.count - parent.window.base.Load()
	if own, _ := ownEstimate(parent, sum); own != sum.inherent+parent.window.kids.Load()-n*9*us {
		t.Fatalf("ownEstimate: %d, want its inherent time %d with its sampled callees' %d and less %d of them at 9 µs",
			own, sum.inherent, parent.window.kids.Load(), n)
	}
}

// A firing a window only partly held: the split of its own time and its
// sampled callees' that the window saw stands for its whole time, whether
// it began in the window or before it.
func TestStraddlingFiringIsCorrected(t *testing.T) {
	wireSampling(t, 10, 0.5)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	fire(parent, 100*us, nil)
	sample(t, child)
	w0 := parent.window.load()
	// 40 µs: 4 callees of 9 µs and 4 µs of its own; the window it begins
	// in holds the first two callees and 2 µs of its own time.
	openWindow()
	fire(parent, 0, func() {
		for i := 0; i < 4; i++ {
			if i == 2 {
				closeWindow()
			}
			clk.Advance(1 * us)
			fire(child, 9*us, nil)
		}
	})
	w := parent.window.load()
	if got := w.inherent - w0.inherent; got != 4*us {
		t.Fatalf("corrected inherent %d ns, want 4 µs (40 × 2/20; measured 22, with two callees unmetered)", got)
	}
	// Begun before a window, which opens half-way through its own µs
	// before its third callee: the window holds 1.5 µs of its own and two
	// callees, and its inherent time is the pooled share of the whole,
	// 3.5 µs of own time in 39.5.
	w0 = w
	fire(parent, 0, func() {
		for i := 0; i < 4; i++ {
			if i == 2 {
				clk.Advance(us / 2)
				openWindow()
				clk.Advance(us / 2)
			} else {
				clk.Advance(1 * us)
			}
			fire(child, 9*us, nil)
		}
		closeWindow()
	})
	w = parent.window.load()
	whole := float64(40 * us)
	want := int64(whole * 3.5 / 39.5)
	if w.count-w0.count != 1 || w.total-w0.total != 40*us || w.inherent-w0.inherent != want {
		t.Fatalf("a firing begun before the window: window totals +%d, +%d, +%d; want +1, +40 µs, +%d",
			w.count-w0.count, w.total-w0.total, w.inherent-w0.inherent, want)
	}
}

func TestSamplingNeedsNoTraceGate(t *testing.T) {
	h := hot()
	h.Sample, h.SampleShare = 8, 0
	wire(t, Chain{Hotspot: h, Tracepoint: &tracepoint.Rule{Sample: 1}})
	p := newProbe(t, "p")
	fire(p, 0, nil) // the first firing outside a trace: noted, not metered
	for i := int64(0); i < h.Initial; i++ {
		fire(p, 1*us, nil) // each starts a trace of its own
	}
	if p.State() != DisabledHotspot {
		t.Fatalf("state %d with a trace gate on, want disabled (sampling needs a chain with no gate)", p.State())
	}
}

func TestSampledFiringsAllocateNothing(t *testing.T) {
	wireSampling(t, 4, 0)
	p, q := newProbe(t, "p"), newProbe(t, "q")
	sample(t, p)
	q.Enable()
	fire(q, 100*us, nil)
	body := func() { fire(p, 1, nil) }
	if n := testing.AllocsPerRun(1000, func() { fire(q, 1, body) }); n != 0 {
		t.Fatalf("%v allocations per firing outside a window", n)
	}
	openWindow()
	defer closeWindow()
	if n := testing.AllocsPerRun(1000, func() { fire(q, 1, body) }); n != 0 {
		t.Fatalf("%v allocations per firing in a window", n)
	}
}

// A pause inside a sampled firing in a window (the goroutine preempted,
// the world stopped for the collector) is no firing's work: a firing whose
// own time exceeds hotspot's threshold and 64 times its probe's mean keeps
// the mean, and neither it nor its ancestors keep the rest.
func TestInterruptionIsTakenOff(t *testing.T) {
	wireSampling(t, 10, 0.5)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	fire(parent, 100*us, nil) // hot: it stays enabled
	sample(t, child)
	openWindow()
	call := func(pause int64) { fire(parent, 1*us, func() { fire(child, 100+pause, nil) }) }
	for range 63 {
		call(0)
	}
	before := Take().Interrupted
	call(50 * us) // 63 firings seen: too few to judge
	if got := Take().Interrupted - before; got != 0 {
		t.Fatalf("interrupted after 63 firings of the probe: %d, want 0", got)
	}
	p0, c0 := parent.stats.sum(), child.stats.sum()
	call(5 * us)   // under hotspot's threshold: its own
	call(500 * us) // a pause
	closeWindow()
	p1, c1 := parent.stats.sum(), child.stats.sum()
	if got := Take().Interrupted - before; got != 1 {
		t.Fatalf("interrupted: %d, want 1", got)
	}
	mean := int64(63*100+100+50*us+100+5*us) / 65 // what the windows had seen of the child
	if c1.count-c0.count != 2 || c1.inherent-c0.inherent != 100+5*us+mean {
		t.Fatalf("child: +%d firings, +%d ns own; want +2, +%d", c1.count-c0.count, c1.inherent-c0.inherent, 100+5*us+mean)
	}
	if d := p1.total - p0.total; d != 2*us+100+5*us+mean {
		t.Fatalf("parent: +%d ns inclusive, want %d (the pause taken off)", d, 2*us+100+5*us+mean)
	}
	if d := p1.inherent - p0.inherent; d != 2*us {
		t.Fatalf("parent: +%d ns own, want %d", d, 2*us)
	}
}

// With a real program's allocations, the windows' share of the work is
// their share of the bytes allocated, which metering does not move: a
// window that held 1 MB of the 10 MB allocated over the sampled stretch
// stands for a tenth of it, whatever its share of the time.
func TestAllocationsScaleTheEstimates(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	big := newProbe(t, "big")
	sample(t, big)
	sampler.allocClock.Store(true)
	defer sampler.allocClock.Store(false)
	var keep [][]byte
	// Outside windows: half the time, 9 MB.
	for range 9 {
		keep = append(keep, make([]byte, 1<<20))
	}
	clk.Advance(100 * us)
	// In a window: the other half of the time, 1 MB, 10 firings.
	openWindow()
	keep = append(keep, make([]byte, 1<<20))
	for range 10 {
		fire(big, 10*us, nil)
	}
	closeWindow()
	r := big.row()
	// 10 firings for a tenth of the bytes: 100 (other allocations of the
	// process, a few KB, move it by less than 1%); by time, 20.
	if est := r.Count - h.Initial; est < 99 || est > 101 {
		t.Fatalf("big: %d firings estimated, want 100 (by allocations)", est)
	}
	if len(keep) != 10 {
		t.Fatal("lost an allocation")
	}
}

// A caller of a sampled function is judged hot on average on its own
// time as windows show it: outside windows its sampled callee is not
// metered, and the callee's time, in the caller's recorded inherent time,
// would keep it metered at every call for good.
func TestCallerOfSampledIsJudgedOnItsOwnTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window bool // one of its calls in a window shows its own share: 1 µs of 1.5
		want   State
	}{
		{"own time not known yet", false, Sampled},
		{"own time shown by a window", true, Enabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := wireSampling(t, 10, 0.5)
			caller, callee := newProbe(t, "caller"), newProbe(t, "callee")
			sample(t, callee)
			short := func() { fire(caller, 1*us, func() { fire(callee, us/2, nil) }) }
			if tc.window {
				openWindow()
				short()
				closeWindow()
			}
			// One long call, all of it the callee's: 500 µs of inclusive
			// time make the caller's mean 11 µs, past the threshold.
			fire(caller, 0, func() { fire(callee, 500*us, nil) })
			for i := int64(0); i < h.Initial; i++ {
				short()
			}
			if s := caller.State(); s != tc.want {
				t.Fatalf("caller: state %d, want %d", s, tc.want)
			}
		})
	}
}

// A firing that began before any probe was sampled (main, a worker's
// loop) learns its own share from the windows that open during it.
func TestFiringBegunBeforeSamplingLearnsFromWindows(t *testing.T) {
	wireSampling(t, 10, 0.5)
	parent, child := newProbe(t, "parent"), newProbe(t, "child")
	fire(parent, 0, func() {
		sample(t, child) // metered, while child is enabled
		call := func() {
			clk.Advance(1 * us)
			fire(child, 9*us, nil)
		}
		for range 10 {
			call() // child not metered: 100 µs of parent's own part
		}
		openWindow()
		for range 10 {
			call() // the window shows 10 µs own in 100
		}
		closeWindow()
	})
	// Its own part, 200 µs besides the warm-up's metered calls, at the
	// window's share: 20 µs.
	if w := parent.window.load(); w.count != 1 || w.inherent != 20*us {
		t.Fatalf("parent's window totals: count %d inherent %d, want 1 and 20 µs", w.count, w.inherent)
	}
}
