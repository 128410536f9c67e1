//go:build linux

package export

import (
	"bytes"
	"os"
	"strconv"
)

// coreWait returns the time the process's threads have spent ready to
// run, waiting for a core: the second field of each thread's
// /proc/self/task/*/schedstat, summed. A machine whose cores are shared
// (more busy threads than cores, a CPU quota, other processes) makes
// wall time longer than CPU time by as much, and own times, which are
// wall times less the goroutines' waits, hold it where it fell. It reports
// false where the kernel keeps no such figures. Threads that have ended
// are not counted; the Go runtime seldom ends one.
func coreWait() (int64, bool) {
	dir, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	var sum int64
	seen := false
	for _, e := range dir {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if n, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil && n >= 0 {
			sum += n
			seen = true
		}
	}
	return sum, seen
}
