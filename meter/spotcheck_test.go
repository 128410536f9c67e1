package meter

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
)

func spotRule(interval int64) *spotcheck.Rule {
	return &spotcheck.Rule{Interval: interval, Threshold: 10 * us, ThresholdInherent: 2 * us}
}

func TestSpotChecks(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h, Spotcheck: spotRule(10)})
	var gate atomic.Uint32
	p := NewProbe(t.Name()+".changes", &gate)
	fire(p, 1*us, nil)
	p.Disable(DisabledHotspot)
	if gate.Load() == 0 {
		t.Fatalf("with spotcheck on, a disabled probe's on-word was cleared")
	}
	// Cheap: every 10th firing is metered, and none re-enables it.
	for range 35 {
		fire(p, 1*us, nil)
	}
	if c := p.Metered(); c != 1+3 {
		t.Fatalf("%d metered, want 1 + 3 spot checks", c)
	}
	if p.State() != DisabledHotspot {
		t.Fatalf("a cold spot check re-enabled the probe")
	}
	// The cost changes: the next spot check (the 40th disabled firing) is
	// hot and enables the probe again, with hotspot's initial balance.
	for range 4 {
		fire(p, 50*us, nil)
	}
	if p.State() != DisabledHotspot {
		t.Fatalf("re-enabled before a spot check")
	}
	fire(p, 50*us, nil)
	if p.State() != Enabled || balance(p) != h.Initial || p.Metered() != 5 {
		t.Fatalf("after a hot spot check: state %d, balance %d, count %d; want enabled, %d, 5", p.State(), balance(p), p.Metered(), h.Initial)
	}
	for range 10 {
		fire(p, 50*us, nil)
	}
	// Counted: the firing before it was disabled and the ten after; the
	// disabled firings, spot checks among them, are not.
	if r := p.row(); r.Count != 11 || r.Metered != 15 || r.Reenabled != 1 || r.Label != LabelHotspot {
		t.Fatalf("row %+v", r)
	}
}

// A spot check is hot only when both thresholds are reached.
func TestSpotcheckInherentThreshold(t *testing.T) {
	wire(t, Chain{Spotcheck: spotRule(1)})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(inner, 1*us, nil)
	outer.Disable(DisabledBudget)
	fire(outer, 1*us, func() { fire(inner, 19*us, nil) }) // inclusive 20 µs, inherent 1 µs
	if outer.Metered() != 1 || outer.State() != DisabledBudget {
		t.Fatalf("outer: count %d, state %d; want 1, budget", outer.Metered(), outer.State())
	}
	fire(outer, 20*us, nil)
	if outer.State() != Enabled {
		t.Fatalf("a hot spot check did not re-enable")
	}
}

// The count is shared by every goroutine: exactly one in N disabled
// firings is spot-checked.
func TestSpotcheckOneInN(t *testing.T) {
	wire(t, Chain{Spotcheck: spotRule(7)})
	p := newProbe(t, "p")
	p.Disable(DisabledHotspot)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 700 {
				fire(p, 0, nil)
			}
		}()
	}
	wg.Wait()
	if c := p.Metered(); c != 16*100 {
		t.Fatalf("%d spot checks, want %d", c, 16*100)
	}
}

// A spot check is a nested firing like any other: it draws on its metered
// ancestor's pool and counts towards its trace's maximum; one it cannot
// afford is skipped, and the next due one is judged, not the next firing.
func TestSpotcheckWithinBudgetAndTrace(t *testing.T) {
	wire(t, Chain{Budget: &budget.Rule{Percent: 10, Unit: 1 * us}, Spotcheck: spotRule(2)})
	root, p := newProbe(t, "root"), newProbe(t, "p")
	fire(root, 20*us, nil) // T = 20 µs: A = 2, itself and one more
	p.Disable(DisabledHotspot)
	fire(root, 0, func() {
		for range 4 { // due at 2 (afforded) and 4 (the pool is empty)
			fire(p, 50*us, nil)
		}
	})
	if c := p.Metered(); c != 1 || p.State() != Enabled {
		t.Fatalf("spot checks metered %d, state %d; want 1 and re-enabled by it", c, p.State())
	}

	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Spotcheck: spotRule(1), TraceMax: 2})
	root, p = newProbe(t, "root"), newProbe(t, "p")
	fire(root, 0, nil)
	p.Disable(DisabledHotspot)
	t0, tr0 := traces()
	fire(root, 0, func() {
		fire(p, 1, nil) // the trace's second metered firing
		fire(p, 1, nil) // over the maximum: skipped
	})
	if c := p.Metered(); c != 1 {
		t.Fatalf("spot checks in a trace of at most 2: %d, want 1", c)
	}
	if e, tr := traces(); e-t0 != 1 || tr-tr0 != 1 {
		t.Fatalf("%d traces, %d truncated; want 1, 1", e-t0, tr-tr0)
	}
}

func TestSpotcheckAllocs(t *testing.T) {
	wire(t, Chain{Spotcheck: spotRule(3)})
	p := newProbe(t, "p")
	p.Disable(DisabledHotspot)
	if n := testing.AllocsPerRun(3000, func() { fire(p, 1, nil) }); n != 0 {
		t.Fatalf("%v allocations per firing", n)
	}
}
