//go:build !amd64 || race

package meter

// begin is Begin: all of it in Go here (under -race, and off amd64).
//
//go:noinline
func begin(p *Probe, _ *Goroutine, _, _ uintptr) *Frame {
	pos, pc := firingFrame()
	return beginGo(p, nil, pos, pc)
}

// cached returns the running goroutine's state when it sits in its home
// slot of the goroutine table, and nil otherwise.
func cached() *Goroutine {
	g := getg()
	t := gtab.Load()
	e := &t.entries[ghash(g)&t.mask]
	if e.key.Load() == g {
		return e.val.Load()
	}
	return nil
}
