package hotspot

import "testing"

func TestRule(t *testing.T) {
	r := Default()
	for _, c := range []struct {
		incl, inh int64
		hot       bool
	}{{10_000, 2_000, true}, {9_999, 9_999, false}, {50_000, 1_999, false}, {1 << 40, 1 << 40, true}} {
		if got := r.Hot(c.incl, c.inh); got != c.hot {
			t.Errorf("Hot(%d, %d) = %v", c.incl, c.inh, got)
		}
	}
	// Keep: own time against the wall time it ran over.
	r.SampleShare = 0.01
	if !r.Keep(10, 1000) || r.Keep(9, 1000) || r.Keep(10, 0) {
		t.Errorf("Keep at 1%%: 10/1000 %v, 9/1000 %v, 10/0 %v", r.Keep(10, 1000), r.Keep(9, 1000), r.Keep(10, 0))
	}
	// Affords: metering a firing at most Cost (2%) of its own time.
	d := Default()
	if !d.Affords(5000, 100) || d.Affords(4999, 100) || d.Affords(0, 1) {
		t.Errorf("Affords at 2%%: 100 of 5000 %v, of 4999 %v, 1 of 0 %v", d.Affords(5000, 100), d.Affords(4999, 100), d.Affords(0, 1))
	}
	off := Default()
	off.Sample = 0
	if !off.Affords(1, 1000) {
		t.Errorf("Affords with sampling off: nothing cheaper keeps the probe measured")
	}
	off = Default()
	off.Cost = 0
	if !off.Affords(1, 1000) {
		t.Errorf("Affords with no limit")
	}
	if s := d.Settings(); s != "threshold=10000ns inherent=2000ns initial=1000 sample=100 share=0.0005" {
		t.Errorf("Settings() = %q", s)
	}
	off.Cost, off.Untimed = 0.05, 0
	if s := off.Settings(); s != "threshold=10000ns inherent=2000ns initial=1000 sample=100 share=0.0005 cost=0.05 untimed=0" {
		t.Errorf("Settings() at 5%% = %q", s)
	}
}
