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
// binary: the handling of SIGTERM and SIGINT (see Notify), and one line on
// standard error saying what is metered and where the model goes, when an
// export is configured (silent otherwise), and one line when METER_HTTP
// asks for the live page and the program does not link it.
func Main() {
	mainOnce.Do(func() {
		setupOnce.Do(setup)
		checkExports()
		watchSignals()
		announce()
		checkLive(stderr) // live.go: every init has run, so a missing live page is known
	})
}

// announce writes the start-up line.
func announce() {
	var to []string
	if config.ExportCSV != "" {
		to = append(to, "model to "+config.ExportCSV)
	}
	if config.ExportPprof != "" {
		to = append(to, "profile to "+config.ExportPprof)
	}
	if config.ExportOTLP {
		to = append(to, "traces and model over OTLP")
	}
	if len(to) == 0 || !config.Enabled {
		return
	}
	when := "at exit"
	if config.ExportInterval > 0 {
		when = fmt.Sprintf("every %v and at exit", config.ExportInterval)
	}
	fmt.Fprintf(stderr, "meter: %d probes in %d packages, %s; %s\n",
		len(meter.Probes()), packages.Load(), strings.Join(meter.Settings(), " "), strings.Join(to, ", ")+" "+when)
}

// handled records the signals the program handles itself, through Notify
// and NotifyContext: all of them when asked for with no signal named.
var handled struct {
	sync.Mutex
	all  bool
	sigs map[os.Signal]bool
}

func markHandled(sig []os.Signal) {
	handled.Lock()
	defer handled.Unlock()
	if len(sig) == 0 {
		handled.all = true
		return
	}
	if handled.sigs == nil {
		handled.sigs = map[os.Signal]bool{}
	}
	for _, s := range sig {
		handled.sigs[s] = true
	}
}

func handles(s os.Signal) bool {
	handled.Lock()
	defer handled.Unlock()
	return handled.all || handled.sigs[s]
}

// Notify is signal.Notify, and tells the runtime that the program handles
// these signals itself: on SIGTERM or SIGINT the model is written and the
// program's own shutdown goes on. meterinject routes the program's calls
// of signal.Notify here.
func Notify(c chan<- os.Signal, sig ...os.Signal) {
	markHandled(sig)
	signal.Notify(c, sig...)
}

// NotifyContext is signal.NotifyContext, and tells the runtime that the
// program handles these signals itself (see Notify).
func NotifyContext(parent context.Context, sig ...os.Signal) (context.Context, context.CancelFunc) {
	markHandled(sig)
	return signal.NotifyContext(parent, sig...)
}

// onSignal is what the runtime does on SIGTERM or SIGINT: it writes the
// model; then, unless the program handles the signal itself, it finishes
// the exports and lets the signal end the process as it would have ended
// it without meter (same exit status).
func onSignal(s os.Signal, stop func()) {
	if handles(s) {
		flush()
		return
	}
	Shutdown()
	stop()
	redeliver(s) // if the process lives on, something outside meter handles s
}
