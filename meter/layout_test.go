package meter

import "testing"

// The assembly (cached_amd64.s) reads gtab, gtable, gentry, Probe and
// Goroutine through go_asm.h's offsets; this checks that its look-up finds
// what the Go one finds. The exact tests of the gates, run without -race
// (make unit), go through its begin.
func TestCached(t *testing.T) {
	if g := current(); cached() != g {
		t.Errorf("cached() does not find the running goroutine's state in its home slot")
	}
}
