//go:build amd64 || arm64

package meter

import "unsafe"

// getg returns the address of the running goroutine's runtime g. The
// runtime never frees a g, and reuses it for later goroutines, so the
// address is a stable key for per-goroutine state whose number is bounded
// by the peak count of live goroutines.
//
//go:noescape
func getg() uintptr

// getgp is getg as a pointer, for reading the g's words.
//
//go:noescape
func getgp() unsafe.Pointer

// Supported reports whether this platform can find per-goroutine state.
const Supported = true

// callerFrame returns, for the function that called its caller, how deep
// in the goroutine's stack that function's frame is (stack top − frame
// pointer) and the address its call returns to. Its caller must not be
// inlined.
//
//go:noescape
func callerFrame() (pos, pc uintptr)

// callerFrameN is callerFrame for the function n calls further out.
//
//lint:ignore U1000 used by firingFrame, off amd64 and under -race
//go:noescape
func callerFrameN(n int) (pos, pc uintptr)
