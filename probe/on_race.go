//go:build race

package probe

import (
	"unsafe"

	"github.com/meterio/meter/meter"
)

// On reports whether the generated code is to call Begin (on.go): an
// atomic load of the on-word under the race detector, which would report
// the plain one.
func (p *Probe) On() bool {
	w := int32(p.on.Load())
	if w != 0 {
		if w > 0 {
			return true
		}
		meter.Tally((*int32)(unsafe.Pointer(&p.on)), w)
	}
	return false
}
