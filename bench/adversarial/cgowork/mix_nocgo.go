//go:build !cgo

package main

import (
	"fmt"
	"os"
)

// mixC stands for the C half where cgo is off (no C compiler, or
// CGO_ENABLED=0): the program has nothing to measure without it. Not
// instrumented, as its cgo twin is not: meterinject instruments the files
// of every build constraint, and a probe of this one would be registered
// under the name of the function the cgo build runs.
//
//meter:ignore
func mixC(uint64, int) uint64 {
	fmt.Fprintln(os.Stderr, "cgowork: built without cgo; it needs a C compiler (CGO_ENABLED=1)")
	os.Exit(2)
	return 0
}
