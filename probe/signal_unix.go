//go:build unix

package probe

import (
	"os"
	"os/signal"
	"syscall"
)

// watchSignals catches SIGTERM and SIGINT for the model's sake (onSignal).
func watchSignals() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range c {
			onSignal(s, func() { signal.Stop(c) })
		}
	}()
}

// redeliver sends s to the process again, now that meter no longer
// catches it: with no other handler, its default action ends the process.
func redeliver(s os.Signal) {
	if n, ok := s.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), n)
	}
}
