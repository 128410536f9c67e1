//go:build !race

package probe

import "unsafe"

// On reports whether p's on-word is set (probe.go). A plain load: one
// compare with memory in the generated code, where an atomic load is a
// load and a test. The engine writes the word atomically and decides every
// firing that gets past it on its own state, so a stale read costs at most
// one firing metered or not as the word said a moment before.
func (p *Probe) On() bool { return *(*uint32)(unsafe.Pointer(&p.on)) != 0 }
