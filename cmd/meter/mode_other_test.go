//go:build !unix

package main

import "os"

func newFileMode() (os.FileMode, bool) { return 0, false }
