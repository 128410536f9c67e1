package flowcheck

import (
	"math"
	"testing"
)

func TestDraw(t *testing.T) {
	r := Rule{Lower: 250, Upper: 500}
	s := Seed(42, 1)
	lo, hi := int64(math.MaxInt64), int64(0)
	for i := 0; i < 10000; i++ {
		d := r.Draw(&s)
		if d < 250 || d >= 500 {
			t.Fatalf("gap %d outside [250, 500)", d)
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo != 250 || hi != 499 {
		t.Fatalf("10,000 gaps span [%d, %d], want [250, 499]", lo, hi)
	}
	a, b := Seed(42, 1), Seed(42, 1)
	if r.Draw(&a) != r.Draw(&b) || Seed(42, 1) == Seed(42, 2) {
		t.Fatalf("seeds: not repeatable, or not distinct per goroutine")
	}
	fixed := Rule{Lower: 7, Upper: 3}
	if d := fixed.Draw(&a); d != 7 {
		t.Fatalf("UPPER below LOWER: gap %d, want LOWER", d)
	}
	ends := []uint64{0, math.MaxUint64}
	for i, want := range []int64{250, 499} {
		r.Random = func() uint64 { return ends[i] }
		if d := r.Draw(&a); d != want {
			t.Fatalf("draw of %#x = %d, want %d", ends[i], d, want)
		}
	}
}
