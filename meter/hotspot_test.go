package meter

import (
	"sync"
	"testing"

	"github.com/meterio/meter/extensions/hotspot"
)

// hot is hotspot at small numbers: thresholds 10 and 2 µs, a balance of 50,
// no sampling unless a test sets it.
func hot() *hotspot.Rule {
	return &hotspot.Rule{Threshold: 10 * us, ThresholdInherent: 2 * us, Initial: 50}
}

func balance(p *Probe) int64 { return engine.hotspot.Initial - p.deficit.Load() }

func TestColdProbeIsDisabledAfterExactlyInitialFirings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		own      int64 // inherent ns of the probe
		childOwn int64 // ns of a metered child
	}{
		{"under both thresholds", 1 * us, 0},
		{"under the inclusive threshold", 10*us - 1, 0},
		{"under the inherent threshold", 2*us - 1, 20 * us}, // inclusive ≥ 10 µs, inherent < 2 µs
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hot()
			wire(t, Chain{Hotspot: h})
			p, child := newProbe(t, "p"), newProbe(t, "child")
			for n := int64(1); n <= h.Initial; n++ {
				if p.State() != Enabled {
					t.Fatalf("disabled after %d firings, want %d", n-1, h.Initial)
				}
				fire(p, tc.own, func() {
					if tc.childOwn > 0 {
						fire(child, tc.childOwn, nil)
					}
				})
			}
			if p.State() != DisabledHotspot {
				t.Fatalf("state %d after %d cold firings, want disabled", p.State(), h.Initial)
			}
			fire(p, tc.own, nil) // a disabled probe's firing is not metered
			if c := p.Count(); c != h.Initial {
				t.Fatalf("count = %d, want %d", c, h.Initial)
			}
		})
	}
}

func TestHotProbeIsNeverDisabled(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "hot")
	for n := int64(0); n < 20*h.Initial; n++ {
		fire(p, 10*us, nil) // exactly at both thresholds is hot
	}
	if p.State() != Enabled || balance(p) != h.Initial {
		t.Fatalf("hot probe: state %d balance %d", p.State(), balance(p))
	}
}

func TestCreditMovesByOneAndNeverExceedsInitial(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	for i := 0; i < 10; i++ {
		fire(p, 100, nil)
	}
	if b := balance(p); b != h.Initial-10 {
		t.Fatalf("balance = %d, want %d", b, h.Initial-10)
	}
	for i := 0; i < 14; i++ { // 10 credits back, 4 capped
		fire(p, 50*us, nil)
	}
	if b := balance(p); b != h.Initial {
		t.Fatalf("balance after hot firings = %d, want the initial %d", b, h.Initial)
	}
	for i := int64(0); i < h.Initial-1; i++ {
		fire(p, 100, nil)
	}
	if p.State() != Enabled {
		t.Fatal("disabled one firing early")
	}
	fire(p, 100, nil)
	if p.State() != DisabledHotspot {
		t.Fatal("not disabled at zero balance")
	}
}

func TestConcurrentColdFiringsDisableExactly(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < h.Initial; i++ {
				judge(p, false, 1, 1, 1, 0)
			}
		}()
	}
	wg.Wait()
	if p.State() != DisabledHotspot {
		t.Fatal("not disabled")
	}
	// Once disabled, a probe is not judged: the deficit stops where the
	// balance ran out, however many cold firings raced to it.
	if d := p.deficit.Load(); d != h.Initial {
		t.Fatalf("deficit = %d, want %d", d, h.Initial)
	}
}

func TestReenabledProbeGetsItsBalanceBack(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	for i := int64(0); i < h.Initial; i++ {
		fire(p, 1, nil)
	}
	p.Enable()
	if p.State() != Enabled || balance(p) != h.Initial || p.reenabled.Load() != 1 {
		t.Fatalf("after Enable: state %d balance %d reenabled %d", p.State(), balance(p), p.reenabled.Load())
	}
}

func TestHotspotLabels(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h})
	hotp, warm, cold := newProbe(t, "hot"), newProbe(t, "warm"), newProbe(t, "cold")
	fire(hotp, 10*us, nil)
	fire(warm, 1*us, func() { fire(hotp, 10*us, nil) }) // inclusive 11 µs, inherent 1 µs
	for i := int64(0); i < h.Initial; i++ {
		fire(cold, 1, nil)
	}
	for p, want := range map[*Probe]string{hotp: LabelHotspot, warm: "", cold: LabelDisabled} {
		if got := p.row().Label; got != want {
			t.Errorf("%s labelled %q, want %q", p.Name(), got, want)
		}
	}
}

// A probe hot on average whose metering would cost more than the rule's
// share of its own time per firing is sampled instead, whatever its share
// of the wall time; within that share, or with no alternative (sampling
// off, or no limit), it is metered at every call.
func TestHotOnAverageButCostlyToMeterIsSampled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sample int64   // Rule.Sample
		cost   float64 // Rule.Cost
		outer  int64   // ns, what metering a firing costs
		want   State
	}{
		{"metering within 2%", 10, 0.02, 462, Enabled}, // 2% of 23.11 µs is 462.2 ns
		{"metering over 2%", 10, 0.02, 463, Sampled},
		{"no limit", 10, 0, 100 * us, Enabled},
		{"sampling off", 0, 0.02, 100 * us, Enabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hot()
			h.Sample, h.SampleShare, h.Cost = tc.sample, 1, tc.cost // share 1: no probe is large enough in total
			wire(t, Chain{Hotspot: h})
			setOverhead(pathEnabled, 0, tc.outer) // no parent: nothing is taken off
			p := newProbe(t, "mapping")
			// One firing in ten of 200 µs, the others of 1 µs: the balance
			// of 50 runs out at the 63rd, 7 hot and 56 cold, of mean 23.11
			// µs, inclusive and own.
			const n = 63
			for i := range n {
				cost := int64(1 * us)
				if i%10 == 0 {
					cost = 200 * us
				}
				if p.State() != Enabled {
					t.Fatalf("judged at firing %d, want %d", i, n)
				}
				fire(p, cost, nil)
			}
			if s := p.State(); s != tc.want {
				t.Fatalf("state %d, want %d", s, tc.want)
			}
			if c := p.Count(); c != n {
				t.Fatalf("metered %d, want %d", c, n)
			}
		})
	}
}

// A probe whose firings are mostly cold but whose mean is hot (a handler
// that is usually quick and sometimes slow) keeps being metered when its
// balance runs out: the label and the state agree.
func TestHotOnAverageIsKept(t *testing.T) {
	h := hot()
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "handler")
	for i := int64(0); i < 3*h.Initial; i++ {
		cost := int64(1 * us)
		if i%10 == 0 {
			cost = 200 * us // one firing in ten: mean 20.9 µs
		}
		fire(p, cost, nil)
	}
	if s, l := p.State(), p.row().Label; s != Enabled || l != LabelHotspot {
		t.Fatalf("state %d label %q, want enabled and hotspot", s, l)
	}
	if c := p.Count(); c != 3*h.Initial {
		t.Fatalf("metered %d, want every firing (%d)", c, 3*h.Initial)
	}
}
