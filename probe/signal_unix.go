//go:build unix

package probe

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// watched are the signals the runtime catches, and watch the channel it
// catches them on, nil before Main and after the runtime has let one end
// the process.
var (
	watched = []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	watchMu sync.Mutex
	watch   chan os.Signal
)

// watchSignals catches SIGTERM and SIGINT for the model's sake (onSignal).
func watchSignals() {
	c := make(chan os.Signal, 1)
	watchMu.Lock()
	watch = c
	signal.Notify(c, watched...)
	watchMu.Unlock()
	go func() {
		for s := range c {
			onSignal(s, func() {
				watchMu.Lock()
				watch = nil
				signal.Stop(c)
				watchMu.Unlock()
			})
		}
	}()
}

// rewatch catches again those of sig (every one, if none) that the runtime
// watches, after signal.Reset ended its catching of them.
func rewatch(sig []os.Signal) {
	watchMu.Lock()
	defer watchMu.Unlock()
	if watch == nil {
		return
	}
	for _, w := range watched {
		for _, s := range sig {
			if s == w {
				signal.Notify(watch, w)
			}
		}
		if len(sig) == 0 {
			signal.Notify(watch, w)
		}
	}
}

// redeliver sends s to the process again, now that meter no longer
// catches it: with no other handler, its default action ends the process.
func redeliver(s os.Signal) {
	if n, ok := s.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), n)
	}
}
