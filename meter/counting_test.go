package meter

import (
	"math"
	"testing"
	"time"
)

// openCountingWindow opens a counting window by hand (tests).
func openCountingWindow() {
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	openCounting()
}

// A sampled probe's count comes from the counting windows, over their
// share of the time; its times are that count times the means per firing
// of its firings in metered windows, whatever number of them those held.
func TestCountingWindowsGiveTheCount(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	p := newProbe(t, "p")
	sample(t, p)
	base := p.row()
	// Firings of 2 µs: 100 outside windows, 20 in a counting window (40
	// µs of the 260), and 2 in a metered window of 20 µs that fell on
	// other work: the counting window's 20 stand for 130; the metered
	// window's 2 alone would stand for 26.
	for range 100 {
		fire(p, 2*us, nil)
	}
	openCountingWindow()
	for range 20 {
		fire(p, 2*us, nil)
	}
	closeWindow()
	if n := p.counted(); n != 20 {
		t.Fatalf("counted %d, want 20", n)
	}
	openWindow()
	for range 2 {
		fire(p, 2*us, nil)
	}
	clk.Advance(16 * us)
	closeWindow()
	r := p.row()
	if r.Metered != base.Metered+2 {
		t.Fatalf("metered %d, want %d: a counting window meters nothing", r.Metered, base.Metered+2)
	}
	warm := h.Initial * us
	if r.Count != h.Initial+130 || r.Total != warm+260*us || r.InherentTotal != warm+260*us || r.Label != LabelSampled {
		t.Fatalf("count %d total %d inherent %d label %q; want %d, %d, %d, sampled",
			r.Count, r.Total, r.InherentTotal, r.Label, h.Initial+130, warm+260*us, warm+260*us)
	}
}

// Without allocations to go by, a counting window's share of the work is
// its time less what counting took in it.
func TestCountingCostIsTakenOff(t *testing.T) {
	h := wireSampling(t, 10, 0.5)
	p := newProbe(t, "p")
	sample(t, p)
	countOverhead.outer.Store(1 * us)
	// 100 firings of 2 µs outside; 20 counted in a window, each followed
	// by the µs its count took: 60 µs, 40 of work; 10 metered. 280 µs in
	// all, 260 of work: 20 counted in 40 stand for 130.
	for range 100 {
		fire(p, 2*us, nil)
	}
	openCountingWindow()
	for range 20 {
		fire(p, 2*us, nil)
		clk.Advance(1 * us)
	}
	closeWindow()
	openWindow()
	for range 10 {
		fire(p, 2*us, nil)
	}
	closeWindow()
	if r := p.row(); r.Count != h.Initial+130 {
		t.Fatalf("count %d, want %d", r.Count, h.Initial+130)
	}
}

// Counting allocates nothing, and neither a firing outside windows nor
// one metered in a window is counted.
func TestCountingFiringsAllocateNothing(t *testing.T) {
	wireSampling(t, 10, 0.5)
	p := newProbe(t, "p")
	sample(t, p)
	openCountingWindow()
	if a := testing.AllocsPerRun(100, func() { fire(p, 1, nil) }); a != 0 {
		t.Fatalf("%v allocations per counted firing, want 0", a)
	}
	closeWindow()
	n := p.counted()
	fire(p, 1, nil)
	openWindow()
	fire(p, 1, nil)
	closeWindow()
	if m := p.counted(); m != n {
		t.Fatalf("counted %d more outside counting windows, want 0", m-n)
	}
}

// A window is closed by its timer, at a scheduling point; a firing closes
// it only once it is overdueWindows times its length old: closed at its
// length by the first firing past it, a window held every request's
// beginning more often than its end.
func TestWindowsAreOverdueOnlyLate(t *testing.T) {
	wireSampling(t, 10, 0.5)
	sample(t, newProbe(t, "p")) // starts the windows
	openCountingWindow()
	defer closeWindow()
	opened := sampler.countOpenAt.Load()
	if countingOverdue(opened + toTicks(WindowLength)) {
		t.Fatal("a counting window is overdue at its length")
	}
	if !countingOverdue(opened + toTicks(overdueWindows*WindowLength)) {
		t.Fatalf("a counting window is not overdue at %d times its length", overdueWindows)
	}
}

// METER_HOTSPOT_WINDOW sets the windows' length: a window is overdue at
// overdueWindows times the rule's length, not the default's.
func TestWindowLengthFollowsTheRule(t *testing.T) {
	h := hot()
	h.Sample, h.SampleShare, h.Window = 10, 0.5, int64(10*WindowLength)
	wire(t, Chain{Hotspot: h})
	sample(t, newProbe(t, "p"))
	openCountingWindow()
	defer closeWindow()
	opened := sampler.countOpenAt.Load()
	if countingOverdue(opened + toTicks(overdueWindows*WindowLength)) {
		t.Fatalf("a window of %v is overdue at %d times the default length", 10*WindowLength, overdueWindows)
	}
	if !countingOverdue(opened + toTicks(overdueWindows*10*WindowLength)) {
		t.Fatalf("a window of %v is not overdue at %d times its length", 10*WindowLength, overdueWindows)
	}
}

// A window of length l followed by the mean gap gives all windows
// (countingShare+1)/Sample of the time; one in countingShare+1 is a
// metered one, so metered windows hold 1/Sample and counting ones
// countingShare/Sample. Below countingShare+1, windows follow each other.
func TestWindowGapGivesEachKindItsShare(t *testing.T) {
	for _, c := range []struct {
		l      time.Duration
		sample int64
	}{{WindowLength, 100}, {3 * WindowLength, 100}, {WindowLength, 1000}, {WindowLength, 10}} {
		g := windowGap(c.l, c.sample)
		metered := float64(c.l) / float64(c.l+g) / float64(countingShare+1)
		if want := 1 / float64(c.sample); math.Abs(metered-want) > 1e-6 { // the gap is whole ns
			t.Errorf("windows of %v at sample %d: a gap of %v gives metered windows %.6f of the time, want %.6f", c.l, c.sample, g, metered, want)
		}
	}
	if g := windowGap(WindowLength, countingShare); g != 0 {
		t.Errorf("at sample %d the gap is %v, want 0", countingShare, g)
	}
}
