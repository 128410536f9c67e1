//go:build unix

package probe

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// A signal reaches the program's channel and the runtime's at once; the
// program's shutdown may end its handling (SignalNotifyContext's stop,
// SignalStop) before the runtime has decided what to do with it. The
// decision is what held when the signal came: the program handled it, so
// the runtime must not end the process under the program's shutdown.
func TestSignalOnItsWayWhenHandlingEnds(t *testing.T) {
	box := swapChan(t, &mailbox, 8)
	term := syscall.SIGTERM

	// Reached the runtime, not yet decided on, when the program's stop()
	// runs.
	_, stop := SignalNotifyContext(context.Background(), term)
	box <- term
	stop()
	if !decide(term) {
		t.Fatal("a SIGTERM that came while the program handled it, decided after its stop(): not handled")
	}
	// The next one comes after: the program no longer handles it.
	box <- term
	if decide(term) {
		t.Fatal("a SIGTERM after the program's stop(): handled")
	}

	// The same with SignalStop.
	c := make(chan os.Signal, 1)
	SignalNotify(c, term)
	box <- term
	SignalStop(c)
	if !decide(term) {
		t.Fatal("a SIGTERM that came before the program's Stop, decided after it: not handled")
	}

	// Handling ended before the signal came.
	_, stop = SignalNotifyContext(context.Background(), term)
	stop()
	box <- term
	if decide(term) {
		t.Fatal("a SIGTERM after handling ended: handled")
	}

	// A SIGINT on its way does not excuse a later SIGTERM.
	_, stop = SignalNotifyContext(context.Background(), term, syscall.SIGINT)
	box <- syscall.SIGINT
	stop()
	if !decide(syscall.SIGINT) {
		t.Fatal("SIGINT on its way at stop(): not handled")
	}
	box <- term
	if decide(term) {
		t.Fatal("a later SIGTERM was excused by the SIGINT before it")
	}
	if len(box) != 0 {
		t.Fatalf("%d signals left undecided", len(box))
	}

	// A burst: three SIGINTs, of which the runtime's full channel got one
	// (the goroutine had taken none yet) and mailbox all three. Once that
	// one is decided nothing is on its way, and a registration ending
	// later leaves no grace.
	w := swapChan(t, &watch, 1)
	w <- syscall.SIGINT
	box <- syscall.SIGINT
	box <- syscall.SIGINT
	box <- syscall.SIGINT
	<-w
	decide(syscall.SIGINT)
	if len(box) != 0 {
		t.Fatalf("after a burst, %d signals left in mailbox with none in the runtime's channel", len(box))
	}
	_, stop = SignalNotifyContext(context.Background(), term)
	stop()
	if decide(term) {
		t.Fatal("a SIGTERM after handling ended, following a burst: handled")
	}
}

// swapChan puts a new channel of size n in *c, one of the runtime's signal
// channels, for the running test, and returns it.
func swapChan(t *testing.T, c *chan os.Signal, n int) chan os.Signal {
	watchMu.Lock()
	old, fresh := *c, make(chan os.Signal, n)
	*c = fresh
	watchMu.Unlock()
	t.Cleanup(func() {
		watchMu.Lock()
		*c = old
		watchMu.Unlock()
	})
	return fresh
}
