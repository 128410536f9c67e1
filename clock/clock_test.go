package clock

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// restore puts the package back on the source it had before the test.
func restore(t testing.TB) {
	t.Helper()
	src := Source()
	t.Cleanup(func() {
		switch src {
		case SourceTSC:
			if err := Setup("tsc"); err != nil {
				t.Errorf("restoring tsc: %v", err)
			}
		default:
			Setup("mono")
		}
	})
}

func TestScaleExact(t *testing.T) {
	const s = 32
	m := uint64(3) << 30 // 0.75 · 2^32: 0.75 ns per tick
	cases := []struct{ v, want uint64 }{
		{0, 0},
		{1, 0}, // 0.75 truncates
		{4, 3},
		{1e9, 75e7},
		{3e12, 225e10},                      // the product exceeds 64 bits
		{1 << 62, 3 << 60},                  // hi part carries most of the result
		{math.MaxInt64, 0x5fffffffffffffff}, // (2^63-1)·0.75, truncated
	}
	for _, c := range cases {
		if got := scale(c.v, m, s); got != c.want {
			t.Errorf("scale(%d, %#x, %d) = %d, want %d", c.v, m, s, got, c.want)
		}
	}
	// Identity scale used by the mono and manual sources.
	for _, v := range []uint64{0, 1, 12345, 1 << 40, math.MaxInt64} {
		if got := scale(v, identityMult, identityShift); got != v {
			t.Errorf("identity scale(%d) = %d", v, got)
		}
	}
}

func TestScaleMatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		s := uint(1 + r.IntN(63))
		m := r.Uint64() >> r.IntN(64)
		v := r.Uint64() >> r.IntN(64)
		want := new(big.Int).Mul(new(big.Int).SetUint64(v), new(big.Int).SetUint64(m))
		want.Rsh(want, s)
		if !want.IsUint64() {
			continue // result does not fit 64 bits: outside scale's contract
		}
		if got := scale(v, m, s); got != want.Uint64() {
			t.Fatalf("scale(%d, %d, %d) = %d, want %s", v, m, s, got, want)
		}
	}
}

func TestMultShift(t *testing.T) {
	for _, ratio := range []float64{1.0 / 3.1, 0.25, 1, 1.0 / 2.294608, 41.666, 1e3} {
		m, s := multShift(ratio)
		if m < 1<<31 || m >= 1<<32 || s < 1 || s > 63 {
			t.Errorf("multShift(%g) = %d, %d: mult outside [2^31, 2^32) or shift outside [1, 63]", ratio, m, s)
		}
		got := float64(scale(1e15, m, s))
		if rel := math.Abs(got-1e15*ratio) / (1e15 * ratio); rel > 1e-9 {
			t.Errorf("multShift(%g): 1e15 ticks → %g ns, relative error %g", ratio, got, rel)
		}
	}
}

func TestNanosTicksRoundTrip(t *testing.T) {
	restore(t)
	useTSC(2.5) // 2.5 GHz
	if got := Nanos(2500); got != 1000 {
		t.Errorf("Nanos(2500) at 2.5 GHz = %d, want 1000", got)
	}
	if got := Ticks(1000); got != 2500 {
		t.Errorf("Ticks(1000) at 2.5 GHz = %d, want 2500", got)
	}
	if got := TicksPerSecond(); got != 2_500_000_000 {
		t.Errorf("TicksPerSecond = %d, want 2.5e9", got)
	}
	if Nanos(-5) != 0 || Ticks(-5) != 0 || Nanos(0) != 0 {
		t.Error("Nanos and Ticks of a value ≤ 0 must be 0")
	}
	for _, ns := range []int64{1, 999, 1e6, 1e9, 86400e9} {
		// Each conversion carries a relative error under 2^-32.
		if back := Nanos(Ticks(ns)); math.Abs(float64(back-ns)) > 1+float64(ns)*1e-9 {
			t.Errorf("Nanos(Ticks(%d)) = %d", ns, back)
		}
	}
}

func TestElapsedClamps(t *testing.T) {
	before := Clamped()
	if got := Elapsed(100, 250); got != 150 {
		t.Errorf("Elapsed(100, 250) = %d, want 150", got)
	}
	if got := Elapsed(7, 7); got != 0 {
		t.Errorf("Elapsed(7, 7) = %d, want 0", got)
	}
	if Clamped() != before {
		t.Errorf("Clamped moved on non-negative durations")
	}
	if got := Elapsed(250, 100); got != 0 {
		t.Errorf("Elapsed(250, 100) = %d, want 0 (clamped)", got)
	}
	if got := Elapsed(math.MaxInt64, 0); got != 0 {
		t.Errorf("Elapsed(MaxInt64, 0) = %d, want 0 (clamped)", got)
	}
	if got := Clamped() - before; got != 2 {
		t.Errorf("Clamped counted %d, want 2", got)
	}
}

func TestManual(t *testing.T) {
	m := NewManual()
	if m.Now() != 0 {
		t.Fatalf("a new manual clock reads %d, want 0", m.Now())
	}
	m.Advance(1500)
	if got := m.Now(); got != 1500 {
		t.Errorf("after Advance(1500): Now = %d", got)
	}
	m.Set(10_000)
	m.Advance(250)
	if got := m.Now(); got != 10_250 {
		t.Errorf("after Set(10000), Advance(250): Now = %d, want 10250", got)
	}
}

func TestSetupMono(t *testing.T) {
	restore(t)
	if err := Setup("mono"); err != nil {
		t.Fatal(err)
	}
	if Source() != SourceMono || TicksPerSecond() != 1e9 {
		t.Fatalf("Setup(mono): Source %q, TicksPerSecond %d", Source(), TicksPerSecond())
	}
	// Two readings inside a time.Now bracket span no more than it does,
	// and the span of readings around the bracket no less.
	a := Now()
	t0 := time.Now()
	b := Now()
	for time.Since(t0) < time.Millisecond {
	}
	c := Now()
	t1 := time.Now()
	d := Now()
	inner, outer := Nanos(Elapsed(b, c)), Nanos(Elapsed(a, d))
	if bracket := t1.Sub(t0).Nanoseconds(); inner > bracket || outer < bracket {
		t.Errorf("mono: readings inside a %d ns bracket span %d ns, around it %d ns", bracket, inner, outer)
	}
}

func TestSetupUnknown(t *testing.T) {
	restore(t)
	if err := Setup("mono"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"bogus", "", "TSC", "monotonic"} {
		err := Setup(kind)
		if err == nil || !strings.Contains(err.Error(), "auto, tsc or mono") {
			t.Errorf("Setup(%q) = %v, want an error naming what is accepted", kind, err)
		}
	}
	if Source() != SourceMono {
		t.Errorf("an unknown kind changed the source to %q", Source())
	}
}

func TestSetupAutoAndTSC(t *testing.T) {
	restore(t)
	if err := Setup("auto"); err != nil {
		t.Fatalf("Setup(auto) = %v; auto never fails", err)
	}
	want := SourceMono
	if Invariant() {
		want = SourceTSC
	}
	if Source() != want {
		t.Errorf("Setup(auto): Source %q, want %q (Invariant %v, calibration %+v)", Source(), want, Invariant(), lastCalibration)
	}
	err := Setup("tsc")
	switch {
	case Invariant() && err != nil:
		t.Errorf("Setup(tsc) on an invariant TSC = %v", err)
	case Invariant() && Source() != SourceTSC:
		t.Errorf("Setup(tsc): Source %q", Source())
	case !Invariant() && (err == nil || Source() != SourceMono):
		t.Errorf("Setup(tsc) without an invariant TSC: err %v, Source %q; want an error and mono", err, Source())
	}
	t.Logf("invariant %v, source %s, %d ticks/s, calibration %+v", Invariant(), Source(), TicksPerSecond(), lastCalibration)
}

func TestKernelClocksource(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := kernelTrustsTSC(write("tsc", "tsc\n")); err != nil {
		t.Errorf("clocksource tsc: %v", err)
	}
	if err := kernelTrustsTSC(write("kvm", "kvm-clock\n")); err == nil || !strings.Contains(err.Error(), "kvm-clock") {
		t.Errorf("clocksource kvm-clock: %v, want an error naming it", err)
	}
	if err := kernelTrustsTSC(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing clocksource file: %v, want nil (CPUID decides)", err)
	}
}

// TestSetupDistrustedTSC stands in for a kernel that has dropped the TSC:
// "tsc" must fail and leave mono, "auto" must quietly choose mono.
func TestSetupDistrustedTSC(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("no TSC here: Setup refuses it before reading the clocksource")
	}
	restore(t)
	p := filepath.Join(t.TempDir(), "current_clocksource")
	if err := os.WriteFile(p, []byte("hpet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := clocksourcePath
	clocksourcePath = p
	defer func() { clocksourcePath = saved }()

	if Invariant() {
		t.Fatal("Invariant with clocksource hpet")
	}
	err := Setup("tsc")
	if err == nil || Source() != SourceMono {
		t.Errorf("Setup(tsc) with clocksource hpet: err %v, Source %q; want an error and mono", err, Source())
	} else {
		t.Logf("Setup(tsc): %v", err)
	}
	if err := Setup("auto"); err != nil || Source() != SourceMono {
		t.Errorf("Setup(auto) with clocksource hpet: err %v, Source %q; want nil and mono", err, Source())
	}
	if f := Fallback(); !strings.Contains(f, "hpet") {
		t.Errorf("Fallback after Setup(auto) with clocksource hpet: %q, want the reason, naming hpet", f)
	}
	if Setup("mono"); Fallback() != "" {
		t.Errorf("Fallback after Setup(mono): %q, want none", Fallback())
	}
}

// TestCalibrateKnownRate calibrates a synthetic counter that runs at
// exactly 3 ticks per monotonic ns, so any error is the method's own.
func TestCalibrateKnownRate(t *testing.T) {
	start := time.Now()
	read := func() int64 { return 3 * int64(time.Since(start)) }
	c, err := calibrate(read, sinceNow(), calibrationBudget)
	if err != nil {
		t.Fatalf("calibrate: %v (%+v)", err, c)
	}
	if rel := math.Abs(c.ticksPerNano-3) / 3; rel > 1e-5 {
		t.Errorf("calibrated %g ticks/ns for a 3 ticks/ns counter: relative error %g", c.ticksPerNano, rel)
	}
	t.Logf("%+v", c)
}

// fakeTime is a monotonic clock that moves on by step at every reading,
// and by more where a test stalls it: a host that preempts calibration,
// with no time spent waiting.
type fakeTime struct{ ns, step int64 }

func (f *fakeTime) mono() int64 { f.ns += f.step; return f.ns }

// TestCalibrateAfterStall preempts calibration for three times its
// budget, as a busy host does: the closing point must still give the rate.
func TestCalibrateAfterStall(t *testing.T) {
	ft := &fakeTime{step: 1000}
	reads := 0
	read := func() int64 {
		if reads++; reads == 30 {
			ft.ns += int64(3 * calibrationBudget)
		}
		return 3 * ft.mono()
	}
	c, err := calibrate(read, ft.mono, calibrationBudget)
	if err != nil {
		t.Fatalf("calibrate after a stall: %v (%+v)", err, c)
	}
	if rel := math.Abs(c.ticksPerNano-3) / 3; rel > 1e-5 {
		t.Errorf("calibrated %g ticks/ns for a 3 ticks/ns counter: relative error %g", c.ticksPerNano, rel)
	}
	if c.span < calibrationBudget {
		t.Errorf("span %v: the closing point was not taken after the stall", c.span)
	}
	t.Logf("%+v", c)
}

// TestCalibrateStallFirst stalls the thread for three budgets at the first
// point, before anything was measured, as a container whose CPU quota ran
// out at start-up does: one try gets no point at all, and calibrateTSC's
// second try must still give the rate.
func TestCalibrateStallFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		try  func(read, mono func() int64, budget time.Duration) (calibration, error)
		ok   bool
	}{{"calibrate", calibrate, false}, {"calibrateTSC", calibrateTSC, true}} {
		ft := &fakeTime{step: 1000}
		reads := 0
		read := func() int64 {
			if reads++; reads == 2 { // the warm-up read is the first
				ft.ns += int64(3 * calibrationBudget)
			}
			return 3 * ft.mono()
		}
		c, err := tc.try(read, ft.mono, calibrationBudget)
		if (err == nil) != tc.ok {
			t.Fatalf("%s with a stall at its first point: err %v, want ok %v (%+v)", tc.name, err, tc.ok, c)
		}
		if err == nil {
			if rel := math.Abs(c.ticksPerNano-3) / 3; rel > 1e-5 {
				t.Errorf("%s: %g ticks/ns for a 3 ticks/ns counter: relative error %g", tc.name, c.ticksPerNano, rel)
			}
		}
	}
}

// TestCalibrateBudget checks that calibration stops at its budget even
// when every read stalls, as reads do on a VM whose host is busy: once the
// budget is spent, at most the one read already under way may start.
func TestCalibrateBudget(t *testing.T) {
	const stall = 3 * time.Millisecond
	ft := &fakeTime{step: 1000}
	late := 0
	read := func() int64 {
		if time.Duration(ft.ns) >= calibrationBudget {
			late++
		}
		ft.ns += int64(stall)
		return ft.mono()
	}
	c, err := calibrate(read, ft.mono, calibrationBudget)
	t.Logf("with %v stalls: took %v, %d points, %d reads started late, err %v", stall, c.took, c.points, late, err)
	// The read under way at the budget, and the first of the closing
	// point's: calibration stops reading once the budget is spent.
	if late > 2 {
		t.Fatalf("%d reads started after the %v budget, want at most 2", late, calibrationBudget)
	}
	if c.took < calibrationBudget || c.points == 0 {
		t.Errorf("took %v with %d points: want the whole budget spent on some points", c.took, c.points)
	}
}

// TestCalibration runs the real start-up calibration: it must agree with
// itself, on enough points, whatever the host's load.
func TestCalibration(t *testing.T) {
	if !Invariant() {
		t.Skip("no invariant TSC here")
	}
	a, err := calibrate(rdtscp, sinceNow(), calibrationBudget)
	if err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	b, err := calibrate(rdtscp, sinceNow(), calibrationBudget)
	if err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	t.Logf("calibration took %v: %d points, %d kept over %v, %d slopes, spread %.2g, %.6f ticks/ns",
		a.took, a.points, a.kept, a.span, a.slopes, a.spread, a.ticksPerNano)
	if a.kept < 3 || math.Abs(a.ticksPerNano-b.ticksPerNano)/a.ticksPerNano > 1e-4 {
		t.Fatalf("two calibrations: %.6f and %.6f ticks/ns, %d points kept", a.ticksPerNano, b.ticksPerNano, a.kept)
	}
}

// TestAccuracyOneSecond compares a TSC duration of about 1 s with
// CLOCK_MONOTONIC (within 0.01%). Both ends are bracketed the
// way calibration brackets its points, so a stall at either end cannot
// pass for clock error.
func TestAccuracyOneSecond(t *testing.T) {
	restore(t)
	if err := Setup("tsc"); err != nil {
		t.Skipf("TSC not in use: %v", err)
	}
	start := time.Now()
	mono := func() int64 { return int64(time.Since(start)) }
	a, ok := bracket(rdtscp, mono, math.MaxInt64)
	time.Sleep(time.Second) // the interval the test measures with both clocks
	b, ok2 := bracket(rdtscp, mono, math.MaxInt64)
	if !ok || !ok2 {
		t.Fatal("no bracket")
	}
	tscNs := Nanos(b.tick - a.tick)
	monoNs := b.ns - a.ns
	rel := math.Abs(float64(tscNs-monoNs)) / float64(monoNs)
	t.Logf("TSC %d ns, CLOCK_MONOTONIC %d ns: difference %d ns, %.5f%% (brackets %d and %d ticks); calibration %+v",
		tscNs, monoNs, tscNs-monoNs, rel*100, a.width, b.width, lastCalibration)
	if rel > 1e-4 {
		t.Errorf("TSC duration differs from CLOCK_MONOTONIC by %.4f%%, want ≤ 0.01%%", rel*100)
	}
}

func TestNowMonotonicAndAllocFree(t *testing.T) {
	restore(t)
	for _, kind := range []string{"mono", "auto"} {
		if err := Setup(kind); err != nil {
			t.Fatal(err)
		}
		prev, back := Now(), 0
		c0 := Clamped()
		for range 10000 {
			n := Now()
			if n < prev {
				back++
				if Elapsed(prev, n) != 0 {
					t.Fatalf("%s: a negative difference was not clamped", Source())
				}
			}
			prev = n
		}
		// The runtime's clock never goes back; the TSC may, across cores
		// that disagree, and each time is counted.
		if Source() == SourceMono && back != 0 || Clamped()-c0 != uint64(back) {
			t.Errorf("%s: %d readings went back, %d clamps counted", Source(), back, Clamped()-c0)
		}
		if a := testing.AllocsPerRun(1000, func() { Nanos(Elapsed(Now(), Now())) }); a != 0 {
			t.Errorf("%s: Now/Elapsed/Nanos allocate %v per run", Source(), a)
		}
	}
}

func TestWallNanos(t *testing.T) {
	restore(t)
	for _, kind := range []string{"mono", "auto"} {
		if err := Setup(kind); err != nil {
			t.Fatal(err)
		}
		// Between two time.Now readings, give or take the anchor's
		// pairing (a few µs; 1 ms of slack).
		w0 := time.Now().UnixNano()
		now := Now()
		w1 := time.Now().UnixNano()
		got := WallNanos(now)
		if got < w0-1e6 || got > w1+1e6 {
			t.Errorf("%s: WallNanos(Now()) = %d, outside [%d, %d]", Source(), got, w0, w1)
		}
		if d := got - WallNanos(now-Ticks(1e9)); d < 1e9-1e3 || d > 1e9+1e3 {
			t.Errorf("%s: WallNanos of 1 s earlier is %d ns before", Source(), d)
		}
	}
}
