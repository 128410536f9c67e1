//go:build !linux || !amd64 || race

package meter

import (
	"sync/atomic"
	"time"
)

// samplerInterval stays 0: no sampler.
var samplerInterval atomic.Int64

// StartSampler does nothing here: the sampler (sampler_linux_amd64.go)
// runs on Linux on amd64, without the race detector. A stretch in which
// the goroutine parked is left out whole.
func StartSampler(time.Duration) bool { return false }

// sampleOnce does nothing here.
func sampleOnce(uint64) {}
