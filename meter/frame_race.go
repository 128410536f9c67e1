//go:build race

package meter

// firingFrame returns the place of the function whose firing begins.
// Under -race probe.Probe.Begin is not inlined (its atomic load is a call
// there), so the function is the one that called it.
//
//go:noinline
func firingFrame() (pos, pc uintptr) {
	for n := 1; ; n++ {
		pos, pc = callerFrameN(n)
		if n > 4 || !funcOf(pc).inProbe {
			return pos, pc
		}
	}
}
