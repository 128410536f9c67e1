//go:build amd64 && !race

package meter

// cached returns the running goroutine's state when it sits in its home
// slot of the goroutine table, and nil otherwise (not there yet, or moved
// along by a collision). It is an assembly leaf: no call to getg, no
// frame. Under -race the Go version runs instead, so that the detector
// sees the table's atomic loads.
func cached() *Goroutine

// begin is Begin. Its common cases (a firing outside a trace, one inside a
// trace or in a chain with no gate, one of a disabled probe) are an
// assembly leaf that the inlined Begin calls directly, with no Go frame
// on the way; it jumps to beginSlow, measure, spotted and expired, passing
// a count or the goroutine in the scratch words. Callers pass 0, 0.
func begin(p *Probe, scratch, scratch2 int64) Firing

// expired is begin's path, on amd64, for a firing outside a trace whose
// countdown ran out: the assembly has counted down both words, and passes
// the probe's count as left (the goroutine's is in its word).
//
//lint:ignore U1000 jumped to from cached_amd64.s
func expired(p *Probe, left, _ int64) Firing {
	g := current()
	gl := int64(1)
	if w := engine.gword; w >= 0 {
		gl = g.Ext[w&(GoroutineWords-1)]
	}
	return p.offer(g, gl, left)
}
