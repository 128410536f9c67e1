package tracepoint

import (
	"regexp"
	"testing"
)

func TestEligible(t *testing.T) {
	r := Default()
	for _, c := range []struct {
		root, anyRoot, want bool
	}{{false, false, true}, {true, true, true}, {false, true, false}} {
		if got := r.Eligible("p", c.root, c.anyRoot); got != c.want {
			t.Errorf("Eligible(root %v, any root %v) = %v", c.root, c.anyRoot, got)
		}
	}
	r.Include = regexp.MustCompile(`\.keep$`)
	if !r.Eligible("a.keep", false, true) || r.Eligible("a.drop", true, true) {
		t.Errorf("with an include expression, roots do not matter, names do")
	}
	if s := r.Settings(); s != `sample=100 include="\\.keep$"` {
		t.Errorf("Settings() = %s", s)
	}
}
