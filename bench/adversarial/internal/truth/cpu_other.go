//go:build !unix

package truth

// cpuNanos returns 0: the CPU time is not known here, and the judge falls
// back to the model's or the profile's.
func cpuNanos() int64 { return 0 }
