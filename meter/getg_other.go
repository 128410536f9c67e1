//go:build !amd64 && !arm64

package meter

// getg is not available here: every firing is left unmetered.
func getg() uintptr { return 0 }

// Supported reports whether this platform can find per-goroutine state.
const Supported = false
