//go:build amd64 && !race

package meter

// cached returns the running goroutine's state when it sits in its home
// slot of the goroutine table, and nil otherwise (not there yet, or moved
// along by a collision). It is an assembly leaf: no call to getg, no
// frame. Under -race the Go version runs instead, so that the detector
// sees the table's atomic loads.
func cached() *Goroutine

// begin is Begin. Its common case outside a trace is an assembly leaf
// that the inlined Begin calls directly, with no Go frame on the way; the
// rest is beginSlow and expired.
func begin(p *Probe) Firing

// expired is begin's path, on amd64, for a firing whose countdown ran
// out: the assembly has counted down both words, and left the probe's
// count in g.left.
//
//lint:ignore U1000 jumped to from cached_amd64.s
func expired(p *Probe) Firing {
	g := current()
	gl := int64(1)
	if w := engine.gword; w >= 0 {
		gl = g.Ext[w&(GoroutineWords-1)]
	}
	return p.offer(g, gl, g.left)
}
