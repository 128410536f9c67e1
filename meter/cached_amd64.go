//go:build amd64 && !race

package meter

// cached returns the running goroutine's state when it sits in its home
// slot of the goroutine table, and nil otherwise (not there yet, or moved
// along by a collision). It is an assembly leaf: no call to getg, no
// frame. Under -race the Go version runs instead, so that the detector
// sees the table's atomic loads.
func cached() *Goroutine
