//go:build unix

package truth

import "syscall"

// cpuNanos returns the process's CPU time so far, user and system.
func cpuNanos() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
