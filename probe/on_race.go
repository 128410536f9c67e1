//go:build race

package probe

import "github.com/meterio/meter/meter"

// On reports whether the generated code is to call Begin (on.go): an
// atomic load of the on-word under the race detector, which would report
// the plain one.
func (p *Probe) On() bool {
	w := p.on.Load()
	if w <= 1 {
		return w != 0
	}
	return meter.Tally(w)
}
