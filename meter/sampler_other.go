//go:build !linux || !amd64 || race

package meter

import "time"

// StartSampler does nothing here: the sampler (sampler_linux_amd64.go)
// runs on Linux on amd64, without the race detector. A stretch in which
// the goroutine parked is left out whole.
func StartSampler(time.Duration) bool { return false }
