package spotcheck_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/meter"
)

const us = 1000

var clk clock.Manual

// reenabled stands in for hotspot: it counts the Reenabled calls.
type reenabled struct{ n atomic.Int64 }

func (r *reenabled) Ended(p *meter.Probe, inclusive, inherent int64) {}
func (r *reenabled) Reenabled(p *meter.Probe)                        { r.n.Add(1) }

func wire(t *testing.T, interval int64) (*spotcheck.Spotcheck, *reenabled) {
	t.Helper()
	clk = clock.UseManual()
	s := spotcheck.New(interval, 10*us, 2*us)
	r := &reenabled{}
	meter.Configure(meter.Chain{Enabled: true, Spotter: s, KeepGates: true,
		Judges: []meter.Judge{s, r}, Extensions: []meter.Extension{s}})
	t.Cleanup(func() { meter.Configure(meter.Chain{}) })
	return s, r
}

var probes atomic.Int64

func newProbe(name string, gate *atomic.Uint32) *meter.Probe {
	return meter.NewProbe(fmt.Sprintf("spotcheck_test.#%d.%s", probes.Add(1), name), gate)
}

func fire(p *meter.Probe, cost int64) {
	f := p.Begin()
	clk.Advance(cost)
	f.End()
}

func TestSpotChecks(t *testing.T) {
	_, r := wire(t, 10)
	var gate atomic.Uint32
	p := newProbe("changes", &gate)
	fire(p, 1*us)
	p.Disable(meter.DisabledHotspot)
	if gate.Load() == 0 {
		t.Fatalf("KeepGates: the disabled probe's gate word was cleared")
	}
	// Cheap: every 10th firing is metered, and none re-enables it.
	for range 35 {
		fire(p, 1*us)
	}
	if c := p.Count(); c != 1+3 {
		t.Fatalf("%d metered, want 1 + 3 spot checks", c)
	}
	if p.Disabled() != meter.DisabledHotspot || r.n.Load() != 0 {
		t.Fatalf("a cold spot check re-enabled the probe")
	}
	// The cost changes: the next spot check (the 40th disabled firing) is
	// hot and enables the probe again, through the Reenabler hook.
	for range 4 {
		fire(p, 50*us)
	}
	if p.Disabled() != meter.DisabledHotspot {
		t.Fatalf("re-enabled before a spot check")
	}
	fire(p, 50*us)
	if p.Disabled() != meter.Enabled || r.n.Load() != 1 || p.Count() != 5 {
		t.Fatalf("after a hot spot check: disabled %d, reenabled %d, count %d; want enabled, 1, 5", p.Disabled(), r.n.Load(), p.Count())
	}
	for range 10 {
		fire(p, 50*us)
	}
	if p.Count() != 15 {
		t.Fatalf("re-enabled probe metered %d, want 15", p.Count())
	}
	var row meter.Row
	for _, x := range meter.Take().Rows {
		if x.Probe == p.Name() {
			row = x
		}
	}
	if row.Reenabled != 1 || row.Label != "" {
		t.Fatalf("row %+v", row)
	}
}

// A spot check is hot only when both thresholds are reached.
func TestInherentThreshold(t *testing.T) {
	wire(t, 1)
	outer, inner := newProbe("outer", nil), newProbe("inner", nil)
	fire(inner, 1*us)
	outer.Disable(meter.DisabledBudget)
	f := outer.Begin() // spot-checked: inclusive 20 µs, inherent 1 µs
	clk.Advance(1 * us)
	fire(inner, 19*us)
	f.End()
	if outer.Count() != 1 || outer.Disabled() != meter.DisabledBudget {
		t.Fatalf("outer: count %d, disabled %d; want 1, budget", outer.Count(), outer.Disabled())
	}
	fire(outer, 20*us)
	if outer.Disabled() != meter.Enabled {
		t.Fatalf("hot spot check did not re-enable")
	}
}

// The count is shared by every goroutine: exactly one in N disabled
// firings is spot-checked.
func TestOneInN(t *testing.T) {
	wire(t, 7)
	p := newProbe("p", nil)
	p.Disable(meter.DisabledHotspot)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 700 {
				p.Begin().End()
			}
		}()
	}
	wg.Wait()
	if c := p.Count(); c != 16*100 {
		t.Fatalf("%d spot checks, want %d", c, 16*100)
	}
}

func TestAllocs(t *testing.T) {
	wire(t, 3)
	p := newProbe("p", nil)
	p.Disable(meter.DisabledHotspot)
	if n := testing.AllocsPerRun(3000, func() { fire(p, 1) }); n != 0 {
		t.Fatalf("%v allocations per firing", n)
	}
}

// twin has the shape meterinject generates: a metered firing calls the
// function back, after Reenter, through its twin.
func twin(p *meter.Probe, gate *atomic.Uint32) {
	if gate.Load() != 0 {
		if f := p.Begin(); f.Active() {
			twinMetered(f, p, gate)
			return
		}
	}
	clk.Advance(1 * us)
}

func twinMetered(f meter.Firing, p *meter.Probe, gate *atomic.Uint32) {
	defer f.End()
	f.Reenter()
	twin(p, gate)
}

// The twin's call back is not a firing of its own: spot checks stay every
// N-th call of the function.
func TestOneInNCallsThroughTheTwin(t *testing.T) {
	wire(t, 5)
	var gate atomic.Uint32
	p := newProbe("twin", &gate)
	p.Disable(meter.DisabledHotspot)
	for range 50 {
		twin(p, &gate)
	}
	if c := p.Count(); c != 10 {
		t.Fatalf("%d spot checks in 50 calls, want 10", c)
	}
}
