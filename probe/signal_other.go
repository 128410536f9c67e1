//go:build !unix

package probe

import "os"

// watchSignals does nothing where signals are not Unix ones: the model is
// written when main returns, and before os.Exit and log.Fatal.
func watchSignals() {}

func redeliver(os.Signal) {}

func rewatch([]os.Signal) {}

// watched are the signals the runtime catches: none here.
var watched []os.Signal

func pendingSignal() bool { return false }

func decided() {}
