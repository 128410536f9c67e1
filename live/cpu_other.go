//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package live

import "time"

// processCPU is not known here: the page sets the model against wall time
// only.
func processCPU() time.Duration { return 0 }
