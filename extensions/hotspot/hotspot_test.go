package hotspot

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/meter"
)

const (
	threshold = 10_000 // ns
	inherent  = 2_000
	initial   = 50
)

type fixture struct {
	t     *testing.T
	h     *Hotspot
	man   clock.Manual
	gates []atomic.Uint32
	ps    []*meter.Probe
}

func setup(t *testing.T, names ...string) *fixture {
	f := &fixture{t: t, h: New(threshold, inherent, initial), man: clock.UseManual(), gates: make([]atomic.Uint32, len(names))}
	meter.Configure(meter.Chain{Enabled: true, Judges: []meter.Judge{f.h}, Labelers: []meter.Labeler{f.h}})
	t.Cleanup(func() { meter.Configure(meter.Chain{Enabled: true}) })
	for i, n := range names {
		f.ps = append(f.ps, meter.NewProbe(t.Name()+"."+n, &f.gates[i]))
	}
	return f
}

// fire runs one firing of probe i as generated code does: the body
// advances the clock by own ns and runs nested.
func (f *fixture) fire(i int, own int64, nested func()) {
	if f.gates[i].Load() != 0 {
		defer f.ps[i].Begin().End()
	}
	f.man.Advance(own)
	if nested != nil {
		nested()
	}
}

func TestColdProbeIsDisabledAfterExactlyInitialFirings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		own      int64 // inherent ns of the probe
		childOwn int64 // ns of a metered child
	}{
		{"under both thresholds", 1_000, 0},
		{"under the inclusive threshold", 9_999, 0},
		{"under the inherent threshold", 1_999, 20_000}, // inclusive 21,999 ≥ 10 µs, inherent 1,999 < 2 µs
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, "p", "child")
			f.ps[1].Disable(meter.DisabledHotspot) // keep the child out of the way
			f.ps[1].Enable()
			for n := 1; n <= initial; n++ {
				if f.gates[0].Load() == 0 {
					t.Fatalf("disabled after %d firings, want %d", n-1, initial)
				}
				f.fire(0, tc.own, func() {
					if tc.childOwn > 0 {
						f.fire(1, tc.childOwn, nil)
					}
				})
			}
			if f.gates[0].Load() != 0 || f.ps[0].Disabled() != meter.DisabledHotspot {
				t.Fatalf("not disabled after %d cold firings", initial)
			}
			if c := f.ps[0].Count(); c != initial {
				t.Fatalf("count = %d, want %d", c, initial)
			}
			f.fire(0, tc.own, nil) // a disabled probe's firing is not metered
			if c := f.ps[0].Count(); c != initial {
				t.Fatalf("count after disable = %d, want %d", c, initial)
			}
		})
	}
}

func TestHotProbeIsNeverDisabled(t *testing.T) {
	f := setup(t, "hot")
	for n := 0; n < 20*initial; n++ {
		f.fire(0, threshold, nil) // exactly at both thresholds is hot
	}
	if f.ps[0].Disabled() != meter.Enabled || f.h.Balance(f.ps[0]) != initial {
		t.Fatalf("hot probe: disabled=%v balance=%d", f.ps[0].Disabled(), f.h.Balance(f.ps[0]))
	}
}

func TestCreditMovesByOneAndNeverExceedsInitial(t *testing.T) {
	f := setup(t, "p")
	p := f.ps[0]
	// 10 cold, 4 hot, 3 hot beyond what was lost are capped, then the rest
	// of the balance cold: disabled exactly when the balance reaches zero.
	for i := 0; i < 10; i++ {
		f.fire(0, 100, nil)
	}
	if b := f.h.Balance(p); b != initial-10 {
		t.Fatalf("balance = %d, want %d", b, initial-10)
	}
	for i := 0; i < 14; i++ {
		f.fire(0, 50_000, nil)
	}
	if b := f.h.Balance(p); b != initial {
		t.Fatalf("balance after hot firings = %d, want the initial %d", b, initial)
	}
	for i := 0; i < initial-1; i++ {
		f.fire(0, 100, nil)
	}
	if p.Disabled() != meter.Enabled {
		t.Fatal("disabled one firing early")
	}
	f.fire(0, 100, nil)
	if p.Disabled() != meter.DisabledHotspot {
		t.Fatal("not disabled at zero balance")
	}
}

func TestConcurrentColdFiringsDisableExactly(t *testing.T) {
	f := setup(t, "p")
	p := f.ps[0]
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < initial; i++ {
				f.h.Ended(p, 1, 1)
			}
		}()
	}
	wg.Wait()
	if p.Disabled() != meter.DisabledHotspot {
		t.Fatal("not disabled")
	}
	if b := f.h.Balance(p); b != initial-64*initial {
		t.Fatalf("balance = %d, want %d: a cold firing was lost", b, initial-64*initial)
	}
}

func TestReenabledProbeGetsItsBalanceBack(t *testing.T) {
	f := setup(t, "p")
	p := f.ps[0]
	for i := 0; i < initial; i++ {
		f.fire(0, 1, nil)
	}
	p.Enable()
	if f.gates[0].Load() == 0 || f.h.Balance(p) != initial {
		t.Fatalf("after Enable: gate=%d balance=%d", f.gates[0].Load(), f.h.Balance(p))
	}
}

func TestLabels(t *testing.T) {
	f := setup(t, "hot", "warm", "cold")
	f.fire(0, threshold, nil)
	f.fire(1, 1_000, func() { f.fire(0, threshold, nil) }) // inclusive 11 µs, inherent 1 µs
	for i := 0; i < initial; i++ {
		f.fire(2, 1, nil)
	}
	labels := map[string]string{}
	for _, r := range meter.Take().Rows {
		labels[r.Probe] = r.Label
	}
	want := map[string]string{"hot": meter.LabelHotspot, "warm": "", "cold": meter.LabelDisabled}
	for n, l := range want {
		if got := labels[t.Name()+"."+n]; got != l {
			t.Errorf("%s labelled %q, want %q", n, got, l)
		}
	}
}
