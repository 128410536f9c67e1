package spotcheck

import "testing"

func TestReenables(t *testing.T) {
	r := Rule{Interval: 10, Threshold: 10_000, ThresholdInherent: 2_000}
	if !r.Reenables(10_000, 2_000) || r.Reenables(20_000, 1_999) || r.Reenables(9_999, 9_999) {
		t.Fatalf("Reenables: both thresholds, at or above")
	}
	if s := r.Settings(); s != "interval=10 threshold=10000ns inherent=2000ns" {
		t.Fatalf("Settings() = %q", s)
	}
}
