//go:build !race

package probe

import (
	"unsafe"

	"github.com/meterio/meter/meter"
)

// On reports whether the generated code is to call Begin: p's on-word
// (probe.go), as an int32, is positive. A plain load: the engine writes
// the word atomically and decides every firing that gets past it on its
// own state, so a stale read costs at most one firing metered or not as
// the word said a moment before.
//
// A negative word is the tally of an untimed probe: On counts the firing
// there itself, with no call (meter.Tally, inlined as On is), and reports
// false; the firing due for a checkpoint makes the word positive, so that
// the next one goes to Begin, which makes it. Written so that the compiler
// tests the word once: a disabled probe costs a load and one branch, a
// probe whose firings go to Begin a second branch on the same test.
func (p *Probe) On() bool {
	w := *(*int32)(unsafe.Pointer(&p.on))
	if w != 0 {
		if w > 0 {
			return true
		}
		meter.Tally((*int32)(unsafe.Pointer(&p.on)), w)
	}
	return false
}
