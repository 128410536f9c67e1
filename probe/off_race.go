//go:build race

package probe

// off reports whether p's on-word is clear: an atomic load under the race
// detector, which would report the plain one (off.go).
func (p *Probe) off() bool { return p.on.Load() == 0 }

// On reports whether p's on-word is set (probe.go).
func (p *Probe) On() bool { return p.on.Load() != 0 }
