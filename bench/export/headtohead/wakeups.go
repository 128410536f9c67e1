package main

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"runtime/trace"
	"strconv"
	"strings"
)

// traced is what the runtime trace says of the exporter goroutine: the
// goroutine that waits inside s.exporterFunc().
type traced struct {
	wakeups int64 // transitions from waiting to runnable
	running int64 // ns spent running on a P: its CPU time, short of steal
}

// startTrace starts a runtime trace and returns a function that stops it and
// reads the exporter goroutine's wake-ups and running time from
// `go tool trace -d=parsed`. It returns -1s when -trace is off or the trace
// cannot be taken or read.
func startTrace(s system) func() traced {
	none := func() traced { return traced{-1, -1} }
	if !*flagWakeups {
		return none
	}
	f, err := os.CreateTemp("", "headtohead-*.trace")
	if err != nil {
		return none
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return none
	}
	return func() traced {
		trace.Stop()
		f.Close()
		defer os.Remove(f.Name())
		return readTrace(f.Name(), s.exporterFunc())
	}
}

var transition = regexp.MustCompile(`StateTransition Time=(\d+) GoID=(\d+) (\w+)->(\w+)`)

func readTrace(file, fn string) traced {
	none := traced{-1, -1}
	cmd := exec.Command("go", "tool", "trace", "-d=parsed", file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return none
	}
	if err := cmd.Start(); err != nil {
		return none
	}
	wakes := map[string]int64{}
	running := map[string]int64{}
	since := map[string]int64{}
	exporter := map[string]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var waitingG string // goroutine of the Running->Waiting event whose stacks we are reading
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "M=") {
			waitingG = ""
			m := transition.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			t, _ := strconv.ParseInt(m[1], 10, 64)
			g, from, to := m[2], m[3], m[4]
			if from == "Running" {
				if s, ok := since[g]; ok {
					running[g] += t - s
					delete(since, g)
				}
			}
			if to == "Running" {
				since[g] = t
			}
			if from == "Waiting" && to == "Runnable" {
				wakes[g]++
			}
			if from == "Running" && to == "Waiting" {
				waitingG = g
			}
			continue
		}
		if waitingG != "" && strings.Contains(line, fn) {
			exporter[waitingG] = true
		}
	}
	if cmd.Wait() != nil || len(exporter) == 0 {
		return none
	}
	var r traced
	for g := range exporter {
		r.wakeups += wakes[g]
		r.running += running[g]
	}
	return r
}
