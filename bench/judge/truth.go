package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Truth is what a program knows of its own run (the file the adversarial
// programs write, bench/adversarial/internal/truth): the true calls of
// each of its functions, the process's CPU time and the time its threads
// waited for a core, whether its work ran on
// one goroutine at a time without waiting, and the runtime's names for
// closures whose probes are named otherwise.
type Truth struct {
	Calls    map[string]int64
	CPU      time.Duration     // 0: not given
	Wait     time.Duration     // threads ready to run, waiting for a core; 0: not given
	Steal    time.Duration     // the process's share of the machine's steal time (a VM's host running others); 0: not given
	CPUBound bool              // the model's inherent times cannot add up to more than CPU
	Aliases  map[string]string // runtime name → probe name
}

// ReadTruth reads a truth file: the header function,calls, then one row
// per function, and lines starting with # (#cpu_ns,N; #cpubound,1;
// #wait_ns,N; #alias,RUNTIME,PROBE). A function named twice has its
// calls added.
func ReadTruth(r io.Reader, name string) (*Truth, error) {
	t := &Truth{Calls: map[string]int64{}, Aliases: map[string]string{}}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if header {
			if len(rec) < 2 || rec[0] != "function" || rec[1] != "calls" {
				return nil, bad("the header is not function,calls")
			}
			header = false
			continue
		}
		if strings.HasPrefix(rec[0], "#") {
			switch key := rec[0]; {
			case key == "#cpu_ns" && len(rec) == 2:
				n, err := strconv.ParseInt(rec[1], 10, 64)
				if err != nil || n < 0 {
					return nil, bad("#cpu_ns %q is not a whole number of at least 0", rec[1])
				}
				t.CPU = time.Duration(n)
			case key == "#wait_ns" && len(rec) == 2:
				n, err := strconv.ParseInt(rec[1], 10, 64)
				if err != nil || n < 0 {
					return nil, bad("#wait_ns %q is not a whole number of at least 0", rec[1])
				}
				t.Wait = time.Duration(n)
			case key == "#steal_ns" && len(rec) == 2:
				n, err := strconv.ParseInt(rec[1], 10, 64)
				if err != nil || n < 0 {
					return nil, bad("#steal_ns %q is not a whole number of at least 0", rec[1])
				}
				t.Steal = time.Duration(n)
			case key == "#cpubound" && len(rec) == 2:
				t.CPUBound = rec[1] == "1"
			case key == "#alias" && len(rec) == 3:
				t.Aliases[rec[1]] = rec[2]
			default:
				// A key from a newer program: not needed here.
			}
			continue
		}
		if len(rec) != 2 {
			return nil, bad("%d fields, want 2", len(rec))
		}
		n, err := strconv.ParseInt(rec[1], 10, 64)
		if err != nil || n < 0 {
			return nil, bad("calls %q is not a whole number of at least 0", rec[1])
		}
		t.Calls[rec[0]] += n
	}
	if header {
		return nil, fmt.Errorf("%s: empty: no header function,calls", name)
	}
	return t, nil
}
