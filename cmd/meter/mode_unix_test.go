//go:build unix

package main

import (
	"os"
	"syscall"
)

// newFileMode is the mode a new file of mode 0644 gets under the umask.
func newFileMode() (os.FileMode, bool) {
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	return 0o644 &^ os.FileMode(umask), true
}
