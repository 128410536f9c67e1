package export

import "golang.org/x/sys/unix"

// threadCPU returns the calling thread's CPU time (user + system) in ns.
func threadCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// ThreadCPU returns the calling OS thread's CPU time in ns (Linux:
// getrusage(RUSAGE_THREAD)); pair it with runtime.LockOSThread.
func ThreadCPU() int64 { return threadCPU() }

// ProcessCPU returns the process's CPU time in ns.
func ProcessCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func (p *Pipeline) readCPU() { p.cpu.Store(threadCPU()) }
