package meter

import (
	"testing"
	"unsafe"
)

// cached_amd64.s reads gtab, gtable and gentry by offset.
func TestTableLayout(t *testing.T) {
	var tab gtable
	var e gentry
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"gtab's pointer", unsafe.Sizeof(gtab), 8},
		{"gtable.mask", unsafe.Offsetof(tab.mask), 0},
		{"gtable.entries", unsafe.Offsetof(tab.entries), 8},
		{"gentry.key", unsafe.Offsetof(e.key), 0},
		{"gentry.val", unsafe.Offsetof(e.val), 8},
		{"gentry", unsafe.Sizeof(e), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if g := current(); cached() != g {
		t.Errorf("cached() does not find the running goroutine's state in its home slot")
	}
}
