package truth

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// waitNanos returns the time the process's threads spent ready to run,
// waiting for a core: the second field of each thread's
// /proc/self/task/*/schedstat, summed. It reports false where there is no
// such file (not Linux, or a kernel without schedstats).
func waitNanos() (int64, bool) {
	files, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum int64
	found := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended meanwhile
		}
		fs := strings.Fields(string(b))
		if len(fs) < 2 {
			continue
		}
		n, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil {
			continue
		}
		sum += n
		found = true
	}
	return sum, found
}
