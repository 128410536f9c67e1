//go:build !race

package probe

import (
	"unsafe"

	"github.com/meterio/meter/meter"
)

// On reports whether the generated code is to call Begin: p's on-word
// (probe.go) is 1. A plain load: one compare with memory in the generated
// code, where an atomic load is a load and a test. The engine writes the
// word atomically and decides every firing that gets past it on its own
// state, so a stale read costs at most one firing metered or not as the
// word said a moment before.
//
// A word of 2 or more is the tally of an untimed probe: On counts the
// firing there itself, with no call (meter.Tally, inlined as On is), and
// reports true only for the firing due for a checkpoint, which Begin
// makes. Written as one expression: the compiler then branches on the
// word's first test straight past Begin, and a disabled probe still costs
// one load and one branch.
func (p *Probe) On() bool {
	w := *(*uint32)(unsafe.Pointer(&p.on))
	return w != 0 && (w == 1 || meter.Tally(w))
}
