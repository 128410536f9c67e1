package report

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Exact values for five runs against five: 252 orderings, of which U
// (the pairs where x is the larger) takes 0, 1, 2, 3, 4, … in 1, 1, 2, 3,
// 5, … of them. Two-sided: U = 0 gives 2/252, U = 1 4/252, U = 2 8/252
// (0.032, the tables' critical value), U = 10 174/252.
func TestMannWhitneyExact(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		p    float64
	}{
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{[]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252},
		{[]float64{1, 2, 3, 4, 6}, []float64{5, 7, 8, 9, 10}, 4.0 / 252},
		{[]float64{1, 2, 3, 4, 7}, []float64{5, 6, 8, 9, 10}, 8.0 / 252},
		{[]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 174.0 / 252},
		{[]float64{1, 2}, []float64{3, 4}, 2.0 / 6},                                         // two a side can never be significant
		{[]float64{1}, []float64{2, 3, 4, 5, 6}, 2.0 / 6},                                   // nor one against five
		{[]float64{5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5}, 1},                             // all tied
		{[]float64{100, 100, 100, 100, 100}, []float64{120, 120, 120, 120, 120}, 2.0 / 252}, // counts, each side constant
	} {
		if p, ok := uTest(c.x, c.y); !ok || math.Abs(p-c.p) > 1e-12 {
			t.Errorf("%v against %v: p=%.6f, want %.6f", c.x, c.y, p, c.p)
		}
	}
	if _, ok := uTest(nil, []float64{1}); ok {
		t.Error("a test with an empty side")
	}
	if got, want := minP(5, 5), 2.0/252; math.Abs(got-want) > 1e-15 {
		t.Errorf("minP(5, 5) = %g, want %g", got, want)
	}
	if got := minP(4, 4); math.Abs(got-2.0/70) > 1e-15 {
		t.Errorf("minP(4, 4) = %g", got)
	}
}

// Ties: 1,1,2 against 2,3,3. Doubled mid-ranks 3,3,7 | 7,11,11; x's sum
// 13 against a mean of 21; of the 20 ways to choose three, those at least
// 8 from 21 are the sums 13 ({3,3,7}, two ways) and 29 ({7,11,11}, two).
func TestMannWhitneyTies(t *testing.T) {
	p, ok := uTest([]float64{1, 1, 2}, []float64{2, 3, 3})
	if !ok || math.Abs(p-0.2) > 1e-12 {
		t.Fatalf("p=%g, want 0.2", p)
	}
}

// Past the exact sizes the normal approximation agrees with the exact
// distribution to well within the printed digits, and under the null
// hypothesis p-values below 0.05 come about 5% of the time.
func TestMannWhitneyLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	sample := func(n int, shift float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = rng.NormFloat64() + shift
		}
		return s
	}
	for range 20 {
		x, y := sample(25, 0), sample(25, 0.5)
		x[3] = y[7] // a tie
		exact, _ := mannWhitney(x, y, true)
		approx, _ := mannWhitney(x, y, false)
		if math.Abs(exact-approx) > 0.005 {
			t.Errorf("exact %.4f, approximated %.4f", exact, approx)
		}
	}
	flagged := 0
	const trials = 2000
	for range trials {
		if p, _ := uTest(sample(5, 0), sample(5, 0)); p < Alpha {
			flagged++
		}
	}
	// The exact test at five a side rejects at U ≤ 2: 16/252 = 3.2%.
	if rate := float64(flagged) / trials; rate < 0.02 || rate > 0.045 {
		t.Errorf("null rejections at 5 a side: %.3f, want about 0.032", rate)
	}
}

func TestHolm(t *testing.T) {
	got := holm([]float64{0.04, 0.01, 0.03})
	// Sorted 0.01, 0.03, 0.04: ×3, ×2, ×1 = 0.03, 0.06, 0.04 → monotone 0.03, 0.06, 0.06.
	want := []float64{0.06, 0.03, 0.06}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	if got := holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Fatalf("Holm caps at 1 and keeps the order: %v", got)
	}
}

// The U test's critical values from the tables (two-sided α = 0.05: 2 for
// five against five, 13 for eight against eight, 37 for twelve against
// twelve, 2 for four against six, none for three against three), and the
// normal approximation near the table's 317 for thirty against thirty.
func TestUCritical(t *testing.T) {
	for _, c := range []struct{ n1, n2, want int }{{5, 5, 2}, {8, 8, 13}, {12, 12, 37}, {3, 3, -1}, {4, 6, 2}} {
		if got := uCritical(c.n1, c.n2, 0.05); got != c.want {
			t.Errorf("uCritical(%d, %d) = %d, want %d", c.n1, c.n2, got, c.want)
		}
	}
	if got := uCritical(5, 5, 0.05/3); got != 1 {
		t.Errorf("uCritical(5, 5, α/3) = %d, want 1", got)
	}
	if got := uCritical(30, 30, 0.05); got < 315 || got > 319 {
		t.Errorf("uCritical(30, 30) = %d, want about 317", got)
	}
}

func TestStudentQuantile(t *testing.T) {
	for _, c := range []struct{ alpha, df, t float64 }{{0.05, 10, 2.228}, {0.05, 4, 2.776}, {0.01, 30, 2.750}, {0.05, 1, 12.706}} {
		if got := studentQuantile(c.alpha, c.df); math.Abs(got-c.t) > 1e-3 {
			t.Errorf("t(%g, %g) = %.4f, want %.3f", c.alpha, c.df, got, c.t)
		}
	}
}

// The bound ranks a clear change above a larger, noisier one: +25% with
// 2% noise is at least about +20%; a −50% change in runs that wander by
// a third, barely significant, is at least much less.
func TestBound(t *testing.T) {
	c := &comparison{}
	clear := c.bound([]float64{100, 102, 98, 101, 99}, []float64{125, 127, 123, 126, 124}, 0.05)
	if clear < math.Log1p(0.18) || clear > math.Log1p(0.25) {
		t.Errorf("clear change: bound %.3f", clear)
	}
	noisy := c.bound([]float64{100, 160, 70, 130, 90}, []float64{30, 65, 75, 55, 62}, 0.05)
	if noisy >= clear {
		t.Errorf("noisy change: bound %.3f, not below the clear one's %.3f", noisy, clear)
	}
	if b := c.bound([]float64{1, 2, 3}, []float64{2, 3, 4}, 0.05); b != 0 {
		t.Errorf("overlapping: bound %g, want 0", b)
	}
}
