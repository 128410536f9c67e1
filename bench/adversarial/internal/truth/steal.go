package truth

import (
	"os"
	"strconv"
	"strings"
)

// machineTicks reads the first line of /proc/stat: the machine's busy
// time (user, nice, system, irq, softirq) and its steal time (what the
// host gave other guests while a CPU of this one wanted to run), in clock
// ticks, summed over its CPUs. It reports false where there is no such
// file (not Linux).
func machineTicks() (busy, steal int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fs := strings.Fields(line)
	if len(fs) < 9 || fs[0] != "cpu" {
		return 0, 0, false
	}
	var v [8]int64
	for i := range v {
		if v[i], err = strconv.ParseInt(fs[i+1], 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return v[0] + v[1] + v[2] + v[5] + v[6], v[7], true
}

// stealNanos returns the process's share of the steal time since the
// machine's counters read busy0 and steal0: the machine's steal, times
// the share of its busy time that was the process's CPU time (cpu ns).
// A thread the host stops is running as far as this machine knows: its
// wall time goes on, and neither its CPU time nor its wait for a core
// holds that time. Clock ticks are USER_HZ, 100 a second on Linux.
func stealNanos(busy0, steal0, cpu int64) (int64, bool) {
	busy1, steal1, ok := machineTicks()
	if !ok {
		return 0, false
	}
	const tick = 10_000_000 // ns
	busy, steal := (busy1-busy0)*tick, (steal1-steal0)*tick
	if busy <= 0 || steal <= 0 {
		return 0, true
	}
	return int64(float64(steal) * min(float64(cpu)/float64(busy), 1)), true
}
