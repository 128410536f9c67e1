//go:build !amd64

package clock

// Without amd64 there is no TSC: Setup never selects it, so these are never
// called on the hot path.

func rdtscp() int64      { return 0 }
func rdtscFenced() int64 { return 0 }
func rdtsc() int64       { return 0 }

func cpuTSC() (hasRDTSCP, invariant bool) { return false, false }
