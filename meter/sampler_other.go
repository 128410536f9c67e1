//go:build !linux || !(amd64 || arm64) || race

package meter

import "time"

// StartSampler does nothing here: the sampler (sampler_linux.go)
// runs on Linux on amd64 and arm64, without the race detector. A stretch in which
// the goroutine parked is left out whole.
func StartSampler(time.Duration) bool { return false }
