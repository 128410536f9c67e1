package probe

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meterio/meter/meter"
)

var (
	mainOnce sync.Once
	packages atomic.Int64 // Register calls: one per instrumented package (and test group)
)

// Main is called by generated code at the start of func main, after every
// package's init. It starts what only a running program needs, not a test
// binary: the handling of SIGTERM and SIGINT (see SignalNotify), and one line on
// standard error saying what is metered, where the model goes and where
// the live page is, when an export or the page is configured (silent
// otherwise), and one line when METER_HTTP asks for the live page and the
// program does not link it.
func Main() {
	mainOnce.Do(func() {
		setupOnce.Do(setup)
		checkExports()
		if exports != nil && exports.AtExit() {
			// Only then: a goroutine that waits for signals (os/signal's)
			// keeps the runtime from finding the program deadlocked, and a
			// program that deadlocks must end as it did ("all goroutines
			// are asleep").
			watchSignals()
		}
		announce()
		checkLive(stderr) // live.go: every init has run, so a missing live page is known
	})
}

// announce writes the start-up line: what is metered, where the model
// goes (only the files that can be written: an unwritable path was
// reported when the exports started), and where the live page is.
func announce() {
	var to []string
	csv, pprof := config.ExportCSV, config.ExportPprof
	if exports != nil {
		csv, pprof = exports.Files()
	}
	if csv != "" {
		to = append(to, "model to "+csv)
	}
	if pprof != "" {
		to = append(to, "profile to "+pprof)
	}
	if config.ExportOTLP {
		to = append(to, "traces and model over OTLP")
	}
	var parts []string
	if len(to) > 0 {
		when := "at exit"
		if config.ExportInterval > 0 {
			when = fmt.Sprintf("every %v and at exit", config.ExportInterval)
		}
		parts = append(parts, strings.Join(to, ", ")+" "+when)
	}
	page := livePage() // live.go
	if page == "" && (len(parts) == 0 || !config.Enabled) {
		return
	}
	if page != "" {
		parts = append(parts, page)
	}
	chain := strings.Join(meter.Settings(), " ")
	switch {
	case !config.Enabled:
		chain = "METER_ENABLED=false: nothing is metered"
	case chain == "":
		chain = "no extensions: every firing metered"
	}
	fmt.Fprintf(stderr, "meter: %s in %s, %s; %s\n",
		plural(len(meter.Probes()), "probe"), plural(int(packages.Load()), "package"), chain, strings.Join(parts, "; "))
}

// plural writes n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// handled records the signals the program handles itself, registration
// by registration, as os/signal keeps them: SignalNotify adds to a
// channel's registration (every signal, when none is named), SignalStop
// and SignalNotifyContext's stop end one, and SignalReset and SignalIgnore
// take their signals out of all of them. A program that has stopped handling SIGINT dies of
// it again, as it would without meter.
var handled struct {
	sync.Mutex
	regs map[any]*sigset // by channel, or by SignalNotifyContext call

	// A signal reaches the program's channel and the runtime's at once, and
	// the program may stop handling it (its shutdown ends with stop())
	// before the runtime's goroutine has looked: what the runtime decides
	// must be what held when the signal came. So a registration that ends
	// while a signal has reached the runtime and waits for its decision
	// (in mailbox) leaves its signals in grace, which the decisions count
	// as handled until none waits.
	grace map[os.Signal]bool
}

// inFlight puts in grace those of the signals a registration that is
// ending had, r, that are on their way to a decision. Under handled.
func inFlight(r *sigset) {
	if !pendingSignal() {
		return
	}
	for _, s := range watched { // which one is on its way is not known: each
		if r.has(s) {
			if handled.grace == nil {
				handled.grace = map[os.Signal]bool{}
			}
			handled.grace[s] = true
		}
	}
}

// decide reports whether the program handled s when it came: a
// registration has it, or one that had it ended while s was on its way.
func decide(s os.Signal) bool {
	handled.Lock()
	defer handled.Unlock()
	decided()
	h := handled.grace[s]
	if !pendingSignal() {
		handled.grace = nil
	}
	for _, r := range handled.regs {
		if r.has(s) {
			h = true
		}
	}
	return h
}

type sigset struct {
	all  bool               // every signal...
	off  map[os.Signal]bool // ...but these, reset or ignored since
	sigs map[os.Signal]bool
}

func (r *sigset) has(s os.Signal) bool { return r.sigs[s] || r.all && !r.off[s] }

func markHandled(key any, sig []os.Signal) {
	handled.Lock()
	defer handled.Unlock()
	if handled.regs == nil {
		handled.regs = map[any]*sigset{}
	}
	r := handled.regs[key]
	if r == nil {
		r = &sigset{sigs: map[os.Signal]bool{}}
		handled.regs[key] = r
	}
	if len(sig) == 0 {
		r.all, r.off = true, nil
		return
	}
	for _, s := range sig {
		r.sigs[s] = true
		delete(r.off, s)
	}
}

func unmarkHandled(key any) {
	handled.Lock()
	defer handled.Unlock()
	if r := handled.regs[key]; r != nil {
		inFlight(r)
	}
	delete(handled.regs, key)
}

// unmarkSignals takes sig (every signal, if none) out of every
// registration.
func unmarkSignals(sig []os.Signal) {
	handled.Lock()
	defer handled.Unlock()
	for _, r := range handled.regs {
		inFlight(r)
	}
	if len(sig) == 0 {
		handled.regs = nil
		return
	}
	for _, r := range handled.regs {
		for _, s := range sig {
			delete(r.sigs, s)
			if r.all {
				if r.off == nil {
					r.off = map[os.Signal]bool{}
				}
				r.off[s] = true
			}
		}
	}
}

// SignalNotify is signal.Notify, and tells the runtime that the program
// handles these signals itself: on SIGTERM or SIGINT the model is written
// and the program's own shutdown goes on. meterinject routes the program's
// calls of signal.Notify here, as it routes signal.NotifyContext, Stop,
// Reset and Ignore to the Signal functions below.
func SignalNotify(c chan<- os.Signal, sig ...os.Signal) {
	if c != nil { // signal.Notify panics
		markHandled(c, sig)
	}
	signal.Notify(c, sig...)
}

// SignalStop is signal.Stop, and tells the runtime that the program no
// longer handles the signals it asked c for.
func SignalStop(c chan<- os.Signal) {
	signal.Stop(c)
	unmarkHandled(c)
}

// SignalReset is signal.Reset: the signals' default actions come back,
// and the runtime, whose own catching of SIGTERM and SIGINT Reset ends
// too, catches them again, so that the model is still written before they
// end the process.
func SignalReset(sig ...os.Signal) {
	signal.Reset(sig...)
	unmarkSignals(sig)
	rewatch(sig)
}

// SignalIgnore is signal.Ignore: the signals are ignored, by the runtime
// too.
func SignalIgnore(sig ...os.Signal) {
	signal.Ignore(sig...)
	unmarkSignals(sig)
}

// SignalNotifyContext is signal.NotifyContext, and tells the runtime that
// the program handles these signals itself until stop is called (see
// SignalNotify).
func SignalNotifyContext(parent context.Context, sig ...os.Signal) (context.Context, context.CancelFunc) {
	key := new(int)
	markHandled(key, sig)
	ctx, stop := signal.NotifyContext(parent, sig...)
	return ctx, func() {
		stop()
		unmarkHandled(key)
	}
}

// onSignal is what the runtime does on SIGTERM or SIGINT: it writes the
// model; then, unless the program handles the signal itself, it finishes
// the exports and lets the signal end the process as it would have ended
// it without meter (same exit status).
func onSignal(s os.Signal, stop func()) {
	if decide(s) {
		flush()
		return
	}
	Shutdown()
	stop()
	redeliver(s) // if the process lives on, something outside meter handles s
}
