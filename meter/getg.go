//go:build amd64 || arm64

package meter

// getg returns the address of the running goroutine's runtime g. The
// runtime never frees a g, and reuses it for later goroutines, so the
// address is a stable key for per-goroutine state whose number is bounded
// by the peak count of live goroutines.
//
//go:noescape
func getg() uintptr

// Supported reports whether this platform can find per-goroutine state.
const Supported = true
