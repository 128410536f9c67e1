//go:build unix

package probe

import (
	"os"
	"os/signal"
	"slices"
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

	// mailbox gets every signal watch gets, and no goroutine waits on it:
	// a signal handed to the goroutine waiting on watch is out of that
	// channel before the goroutine runs, but it stays in mailbox until the
	// runtime has decided on it (decide), so that a registration ending
	// meanwhile sees it on its way.
	mailbox chan os.Signal
)

// watchSignals catches SIGTERM and SIGINT for the model's sake (onSignal).
func watchSignals() {
	c, m := make(chan os.Signal, 1), make(chan os.Signal, 8)
	watchMu.Lock()
	watch, mailbox = c, m
	signal.Notify(m, watched...)
	signal.Notify(c, watched...)
	watchMu.Unlock()
	go func() {
		for s := range c {
			onSignal(s, func() {
				watchMu.Lock()
				watch, mailbox = nil, nil
				signal.Stop(c)
				signal.Stop(m)
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
		if len(sig) == 0 || slices.Contains(sig, w) {
			signal.Notify(mailbox, w)
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

// pendingSignal reports whether a signal has reached the runtime and waits
// for its decision.
func pendingSignal() bool {
	watchMu.Lock()
	defer watchMu.Unlock()
	return len(mailbox) > 0
}

// decided takes the signal the runtime has decided on out of mailbox, and
// any that watch never got: when signals come faster than the runtime's
// goroutine takes them, watch, full, drops some that mailbox keeps, and
// those would otherwise stay there as on their way for ever. What is left
// is one for each signal still in watch.
func decided() {
	watchMu.Lock()
	defer watchMu.Unlock()
	for first := true; first || len(mailbox) > len(watch); first = false {
		select {
		case <-mailbox:
		default:
			return
		}
	}
}
