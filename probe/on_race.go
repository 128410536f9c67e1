//go:build race

package probe

// On reports whether p's on-word is set (probe.go): an atomic load under
// the race detector, which would report the plain one (on.go).
func (p *Probe) On() bool { return p.on.Load() != 0 }
