// Package truth is what the adversarial programs share: their -cpuprofile
// and -profile-hz flags, and the file of true call counts each writes at
// exit for bench/judge.
//
// The programs are instrumented by meterinject and this package is not:
// nothing here is a probe, so nothing here has to be counted.
//
// The file, named by the environment variable ADVERSARIAL_TRUTH, is a CSV
// with the header function,calls and one row per function of the program,
// named as the Go toolchain names it (main.leaf, main.(*T).M,
// main.Map[...], main.handler.func1). Lines starting with # carry what
// else the judge needs:
//
//	#cpu_ns,N            the process's CPU time (user and system) at exit
//	#wait_ns,N           the time its threads were ready to run and waited
//	                     for a core (Linux's schedstat): on a machine shared
//	                     with other work, wall time holds it, CPU time not
//	#cpubound,1          one goroutine works at a time and never waits, so the
//	                     model's inherent times, which are wall time, add up
//	                     to at most the CPU time
//	#alias,RUNTIME,PROBE a function value whose code the runtime names RUNTIME
//	                     (a closure of a function the compiler inlined:
//	                     main.main.setup.trim.func2) belongs to the probe
//	                     PROBE (main.trim.func1); profiles show RUNTIME
package truth

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
)

var (
	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile to `file`")
	profileHz  = flag.Int("profile-hz", 250, "CPU profile `rate` in samples a second (the runtime's default, 100, gives few for the judge's shares; Linux delivers at most its tick rate, often 250, and a profile asking for more then holds less time than was spent)")
)

// Record holds a program's true calls until Finish writes them.
type Record struct {
	mu       sync.Mutex
	calls    map[string]int64
	order    []string
	aliases  [][2]string
	cpubound bool
	profile  *os.File
	busy0    int64 // the machine's busy and steal ticks at Start (machineTicks)
	steal0   int64
	ticks    bool
}

// Start begins the CPU profile asked for by -cpuprofile; call it after
// flag.Parse. The runtime prints one line on standard error when the rate
// is not its default ("cannot set cpu profile rate"): the rate set here is
// the one the profile records.
func Start() *Record {
	r := &Record{calls: map[string]int64{}}
	r.busy0, r.steal0, r.ticks = machineTicks()
	if *cpuprofile == "" {
		return r
	}
	f, err := os.Create(*cpuprofile)
	if err != nil {
		fatal(err)
	}
	if *profileHz != 100 {
		runtime.SetCPUProfileRate(*profileHz)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fatal(err)
	}
	r.profile = f
	return r
}

// Add adds n true calls to the function named fn.
func (r *Record) Add(fn string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.calls[fn]; !ok {
		r.order = append(r.order, fn)
	}
	r.calls[fn] += n
}

// Alias records the name the runtime gives the code of the function value
// fn, when it is not probe: a closure created in a function that the
// compiler inlined is named after the inlining (main.main.setup.trim.func2)
// where meterinject names its probe after the source (main.trim.func1).
// fn may be a func or a named func type such as http.HandlerFunc.
func (r *Record) Alias(fn any, probe string) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		fatal(fmt.Errorf("truth.Alias: %T is not a function", fn))
	}
	name := runtime.FuncForPC(v.Pointer()).Name()
	if name == probe {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.aliases {
		if a[0] == name {
			return
		}
	}
	r.aliases = append(r.aliases, [2]string{name, probe})
}

// CPUBound says that the program's work runs on one goroutine at a time
// and never waits.
func (r *Record) CPUBound() { r.cpubound = true }

// Finish stops the CPU profile and writes the truth file, if
// ADVERSARIAL_TRUTH names one.
func (r *Record) Finish() {
	if r.profile != nil {
		pprof.StopCPUProfile()
		if err := r.profile.Close(); err != nil {
			fatal(err)
		}
	}
	path := os.Getenv("ADVERSARIAL_TRUTH")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "function,calls")
	cpu := cpuNanos()
	fmt.Fprintf(w, "#cpu_ns,%d\n", cpu)
	if wait, ok := waitNanos(); ok {
		fmt.Fprintf(w, "#wait_ns,%d\n", wait)
	}
	if r.ticks {
		if steal, ok := stealNanos(r.busy0, r.steal0, cpu); ok {
			fmt.Fprintf(w, "#steal_ns,%d\n", steal)
		}
	}
	if r.cpubound {
		fmt.Fprintln(w, "#cpubound,1")
	}
	sort.Slice(r.aliases, func(i, j int) bool { return r.aliases[i][0] < r.aliases[j][0] })
	for _, a := range r.aliases {
		fmt.Fprintf(w, "#alias,%s,%s\n", quote(a[0]), quote(a[1]))
	}
	for _, fn := range r.order {
		fmt.Fprintf(w, "%s,%d\n", quote(fn), r.calls[fn])
	}
	if err := w.Flush(); err != nil {
		fatal(err)
	}
	if err := f.Close(); err != nil {
		fatal(err)
	}
}

// quote quotes a name for CSV when it needs it (generic names hold no
// comma, but a future one might).
func quote(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}
