//go:build race

package meter

// A runtime g is reused by a later goroutine without any synchronisation the
// race detector can see. Under -race, every visit to a goroutine's state
// begins with an acquire and ends with a release on the state itself, so
// the detector sees the hand-over that the runtime performs.
func (g *Goroutine) acquire() { g.handoff.Load() }
func (g *Goroutine) release() { g.handoff.Add(1) }
