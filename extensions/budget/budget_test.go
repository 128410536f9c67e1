package budget

import "testing"

func TestAllowance(t *testing.T) {
	r := Rule{Percent: 5, Unit: 1500}
	if a := r.Allowance(3_000_000); a != 100 {
		t.Fatalf("3 ms at 5%% of 1.5 µs = %d, want 100", a)
	}
	d := Default()
	if a := d.Allowance(9_999); a != 0 {
		t.Fatalf("a 9.999 µs probe at 10%% of 1 µs can afford %d units, want 0", a)
	}
	if a := d.Allowance(10_000); a != 1 {
		t.Fatalf("a 10 µs probe at 10%% of 1 µs can afford %d units, want 1", a)
	}
	if s := r.Settings(); s != "percent=5 unit=1500ns" {
		t.Fatalf("Settings() = %q", s)
	}
}
