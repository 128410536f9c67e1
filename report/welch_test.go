package report

import (
	"math"
	"testing"
)

// For one and two degrees of freedom Student's t has closed forms:
// P(|T| ≥ t) = 1 − (2/π)·atan(t) and 1 − t/√(t²+2).
func TestStudentClosedForms(t *testing.T) {
	for _, x := range []float64{0, 0.1, 0.5, 1, 2, 3.5, 10, 100} {
		if got, want := studentTwoSided(x, 1), 1-2/math.Pi*math.Atan(x); math.Abs(got-want) > 1e-12 {
			t.Errorf("df=1 t=%g: %g, want %g", x, got, want)
		}
		if got, want := studentTwoSided(-x, 2), 1-x/math.Sqrt(x*x+2); math.Abs(got-want) > 1e-12 {
			t.Errorf("df=2 t=%g: %g, want %g", -x, got, want)
		}
	}
}

// Critical values from the t table: two-sided p = 0.05 and 0.01.
func TestStudentTable(t *testing.T) {
	for _, c := range []struct{ t, df, p float64 }{
		{12.706, 1, 0.05}, {2.228, 10, 0.05}, {2.042, 30, 0.05}, {3.169, 10, 0.01}, {2.660, 60, 0.01},
		{1.960, 1e9, 0.05}, {2.576, 5e6, 0.01},
	} {
		if got := studentTwoSided(c.t, c.df); math.Abs(got-c.p) > 2e-4 {
			t.Errorf("t=%g df=%g: p=%.5f, want %.2f", c.t, c.df, got, c.p)
		}
	}
}

func TestWelch(t *testing.T) {
	// Equal spreads and two firings a side: df is exactly 2 and t = Δ/sd.
	p, ok := welch(10, 4, 2, 18, 4, 2)
	if want := 1 - 2/math.Sqrt(4+2); !ok || math.Abs(p-want) > 1e-12 {
		t.Fatalf("p=%g ok=%v, want %g", p, ok, want)
	}
	if _, ok := welch(10, 4, 1, 18, 4, 100); ok {
		t.Fatal("a test with one firing on a side")
	}
	if p, ok := welch(5, 0, 10, 5, 0, 10); !ok || p != 1 {
		t.Fatalf("no spread, no change: p=%g", p)
	}
	if p, ok := welch(5, 0, 10, 6, 0, 10); !ok || p != 0 {
		t.Fatalf("no spread, a change: p=%g", p)
	}
	// Symmetric in the two sides.
	a, _ := welch(100, 30, 20, 120, 10, 50)
	b, _ := welch(120, 10, 50, 100, 30, 20)
	if a != b || a <= 0 || a >= Alpha {
		t.Fatalf("p=%g and %g", a, b)
	}
}
