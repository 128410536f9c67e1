package meter

import (
	"fmt"
	"testing"

	"github.com/meterio/meter/extensions/budget"
)

func wireBudget(t *testing.T, percent int64) *budget.Rule {
	b := &budget.Rule{Percent: percent, Unit: 1 * us}
	wire(t, Chain{Budget: b})
	return b
}

// allowance returns p's allowance as Begin reads it.
func allowance(p *Probe) int64 {
	if a := p.allowance.Load(); a != 0 {
		return a - 1
	}
	return Unlimited
}

// teach meters one firing of p of ns, so that its T is ns.
func teach(t *testing.T, b *budget.Rule, p *Probe, ns int64) {
	t.Helper()
	fire(p, ns, nil)
	if m := p.stats.sum().total; m != ns || p.Metered() != 1 {
		t.Fatalf("%s: mean %d count %d after teaching, want %d and 1", p.Name(), m, p.Metered(), ns)
	}
	if a, want := allowance(p), b.Allowance(ns); a != want {
		t.Fatalf("%s: allowance %d, want %d", p.Name(), a, want)
	}
}

func TestUnknownIsUnlimited(t *testing.T) {
	b := wireBudget(t, 10)
	p := newProbe(t, "new")
	if a := allowance(p); a != Unlimited {
		t.Fatalf("allowance of an unknown probe = %d, want unlimited", a)
	}
	// A root that has not returned yet caps nothing beneath it: 1,000
	// callees of 10 µs (A = 1 each) are all metered.
	leaf := newProbe(t, "leaf")
	teach(t, b, leaf, 10*us)
	root := newProbe(t, "root")
	fire(root, 0, func() {
		for range 1000 {
			fire(leaf, 10*us, nil)
		}
	})
	if c := leaf.Metered(); c != 1001 {
		t.Fatalf("leaf metered %d times under an unknown root, want 1001", c)
	}
}

// One root call with T = 1,000 µs makes at most T×percent/100 measurements,
// itself included, however the callees nest.
func TestRootAllowance(t *testing.T) {
	for _, tc := range []struct {
		percent int64
		want    int64
	}{{10, 100}, {50, 500}, {5, 50}, {100, 1000}} {
		t.Run(fmt.Sprintf("breadth/%d%%", tc.percent), func(t *testing.T) {
			b := wireBudget(t, tc.percent)
			root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
			teach(t, b, root, 1000*us)
			teach(t, b, leaf, 20*us) // A ≥ 1 at every percentage here
			r0, l0 := root.Metered(), leaf.Metered()
			fire(root, 0, func() {
				for range 2000 {
					fire(leaf, 20*us, nil)
				}
			})
			if got := root.Metered() - r0 + leaf.Metered() - l0; got != tc.want {
				t.Fatalf("measurements in one root call = %d, want %d", got, tc.want)
			}
			if leaf.State() != Enabled {
				t.Fatalf("leaf skipped for budget was disabled (%d)", leaf.State())
			}
		})
		t.Run(fmt.Sprintf("depth/%d%%", tc.percent), func(t *testing.T) {
			b := wireBudget(t, tc.percent)
			root, rec := newProbe(t, "root"), newProbe(t, "recursive")
			teach(t, b, root, 1000*us)
			teach(t, b, rec, 100_000*us) // A far above the root's
			var descend func(n int)
			descend = func(n int) {
				if n > 0 {
					fire(rec, 0, func() { descend(n - 1) })
				}
			}
			r0, c0 := root.Metered(), rec.Metered()
			fire(root, 0, func() { descend(2000) })
			if got := root.Metered() - r0 + rec.Metered() - c0; got != tc.want {
				t.Fatalf("measurements in one root call = %d, want %d", got, tc.want)
			}
		})
	}
}

// Breadth and depth draw from one pool, and a nested firing gets the
// smaller of its own allowance and what its metered parent has left.
func TestSharedPool(t *testing.T) {
	b := wireBudget(t, 10)
	root, mid, leaf := newProbe(t, "root"), newProbe(t, "mid"), newProbe(t, "leaf")
	teach(t, b, root, 1000*us) // A = 100
	teach(t, b, leaf, 10*us)   // A = 1
	teach(t, b, mid, 100*us)   // A = 10: itself and 9 leaves
	r0, m0, l0 := root.Metered(), mid.Metered(), leaf.Metered()
	fire(root, 0, func() {
		for range 50 {
			fire(mid, 0, func() {
				for range 10 {
					fire(leaf, 10*us, nil)
				}
			})
		}
	})
	// Root spends 1 and has 99 left: nine mids take 10 each (mid + 9
	// leaves), the tenth gets the 9 left (mid + 8 leaves), then nothing.
	if r, m, l := root.Metered()-r0, mid.Metered()-m0, leaf.Metered()-l0; r != 1 || m != 10 || l != 89 {
		t.Fatalf("root, mid, leaf metered %d, %d, %d times; want 1, 10, 89", r, m, l)
	}
	// The next call of root (T has grown to 3,000 µs: A = 300) meters its
	// subtrees again: budget is per call, not per process.
	r0, m0, l0 = root.Metered(), mid.Metered(), leaf.Metered()
	fire(root, 0, func() {
		for range 5 {
			fire(mid, 0, func() {
				for range 10 {
					fire(leaf, 10*us, nil)
				}
			})
		}
	})
	if r, m, l := root.Metered()-r0, mid.Metered()-m0, leaf.Metered()-l0; r != 1 || m != 5 || l != 45 {
		t.Fatalf("second call: root, mid, leaf metered %d, %d, %d times; want 1, 5, 45", r, m, l)
	}
}

func TestCheapCalleeDisabled(t *testing.T) {
	b := wireBudget(t, 10)
	root, cheap := newProbe(t, "root"), newProbe(t, "cheap")
	teach(t, b, root, 1000*us)
	fire(root, 0, func() {
		for range 10 {
			fire(cheap, 9*us, nil) // T = 9 µs: A = 0
		}
	})
	if c := cheap.Metered(); c != 1 {
		t.Fatalf("cheap callee metered %d times, want 1 (its first firing only)", c)
	}
	if s := cheap.State(); s != DisabledBudget {
		t.Fatalf("cheap callee: state %d, want DisabledBudget", s)
	}
	if l := cheap.row().Label; l != LabelBudget {
		t.Fatalf("cheap callee labelled %q, want %q", l, LabelBudget)
	}
	// 10 µs at 10% is exactly one unit: it can afford itself.
	ok := newProbe(t, "ten")
	fire(ok, 10*us, nil)
	if ok.State() != Enabled || allowance(ok) != 1 {
		t.Fatalf("a 10 µs probe: state %d, allowance %d; want enabled, 1", ok.State(), allowance(ok))
	}
}

func TestBudgetAllocs(t *testing.T) {
	b := wireBudget(t, 10)
	root, leaf := newProbe(t, "root"), newProbe(t, "leaf")
	teach(t, b, root, 1000*us)
	teach(t, b, leaf, 20*us)
	fire(root, 0, func() { fire(leaf, 20*us, nil) }) // grow the stack once
	n := testing.AllocsPerRun(100, func() {
		fire(root, 0, func() {
			for range 300 {
				fire(leaf, 20*us, nil)
			}
		})
	})
	if n != 0 {
		t.Fatalf("%v allocations per root call", n)
	}
}

// Budget meters every firing its allowance covers, with hotspot on as it
// is by default: 1,200 calls of a 10 µs leaf at the top (allowance 1 each:
// its own measurement) and 1,200 inside each call of a root whose
// allowance (T = 13.2 ms at 10%: 1,320 units) covers them and itself.
func TestBudgetMetersWhatItsAllowanceCovers(t *testing.T) {
	h := hot()
	h.Initial = 1 << 20 // no verdict in this test
	wire(t, Chain{Hotspot: h, Budget: &budget.Rule{Percent: 10, Unit: 1 * us}})
	leaf := newProbe(t, "leaf")
	for range 1200 {
		fire(leaf, 10*us, nil)
	}
	if c, n := leaf.Calls(), leaf.Metered(); c != 1200 || n != 1200 {
		t.Fatalf("top-level leaf: %d calls, %d metered; want 1200 of 1200", c, n)
	}
	root, inner := newProbe(t, "root"), newProbe(t, "inner")
	for r := int64(1); r <= 3; r++ {
		fire(root, 1200*us, func() {
			for range 1200 {
				fire(inner, 10*us, nil)
			}
		})
		if n := inner.Metered(); n != 1200*r {
			t.Fatalf("round %d: %d of %d inner calls metered", r, n, 1200*r)
		}
	}
	if a := allowance(root); a != 1320 {
		t.Fatalf("root allowance %d, want 1320", a)
	}
}
