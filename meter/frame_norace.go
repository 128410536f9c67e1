//go:build !race

package meter

// firingFrame returns the place of the function whose firing begins: the
// caller of begin's caller, where probe.Probe.Begin is inlined, as it is
// in every build but -race, except in closures made by inlined functions
// (shim.go): then Begin's caller.
//
//lint:ignore U1000 used by begin_other.go, off amd64
//go:noinline
func firingFrame() (pos, pc uintptr) {
	if pos, pc = callerFrameN(1); inShim(pc) {
		pos, pc = callerFrameN(2)
	}
	return pos, pc
}
