//go:build amd64 && !race

package meter

// callers is callersGo as an assembly leaf (callers_amd64.s).
//
//go:noescape
func callers(pos, stop uintptr, buf *[walkMax]stackCaller) int
