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
	// Keep: inherent time against the wall time it was metered over.
	r.SampleShare = 0.01
	if !r.Keep(10, 1000, false) || r.Keep(9, 1000, false) || r.Keep(10, 0, false) {
		t.Errorf("Keep at 1%%: 10/1000 %v, 9/1000 %v, 10/0 %v", r.Keep(10, 1000, false), r.Keep(9, 1000, false), r.Keep(10, 0, false))
	}
	// A root is kept whatever its share.
	if !r.Keep(0, 1000, true) || !r.Keep(9, 1000, true) {
		t.Errorf("Keep of a root at 0/1000 %v, 9/1000 %v", r.Keep(0, 1000, true), r.Keep(9, 1000, true))
	}
	r.Sample = 0
	if r.Keep(1000, 1000, false) || r.Keep(1000, 1000, true) {
		t.Errorf("Keep with sampling off")
	}
	d := Default()
	if s := d.Settings(); s != "threshold=10000ns inherent=2000ns initial=1000 sample=100 share=0.0005" {
		t.Errorf("Settings() = %q", s)
	}
}
