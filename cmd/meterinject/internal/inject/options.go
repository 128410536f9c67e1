package inject

import (
	"io"
	"regexp"
)

// Options is what the command line chooses.
type Options struct {
	Dir      string   // where patterns are resolved; "" for the current directory
	Patterns []string // go list patterns; default "."
	Remove   bool     // take the instrumentation out
	DryRun   bool     // print a diff instead of writing
	Tests    bool     // instrument _test.go files too
	All      bool     // instrument functions the compiler can inline
	Include  *regexp.Regexp
	Exclude  *regexp.Regexp
	Model    string // performance model CSV: leave out disabled and budget probes
	Overlay  string // write a go build -overlay file instead of the sources
	Cache    string // where -overlay writes its copies; "" for the user cache dir
	Runtime  string // directory of the github.com/meterio/meter module
	Shape    Shape  // how probes are placed; "" for ShapeEnd
	OTLP     bool   // main's registration file imports the OTLP export
	Live     bool   // main's registration file imports the live page
	SmallMax int    // largest loop-free body (statements) skipped as small; 0 for DefaultSmallMax, < 0 for none
	// BuildFlags are go build flags the analyses use, as the build will
	// (-tags).
	BuildFlags []string
	Stdout     io.Writer
	Stderr     io.Writer
}

// Summary counts what a run did.
type Summary struct {
	Name         string // the packages, under go generate (see name)
	Packages     int
	Cached       int // packages an overlay run took from the cache
	Files        int
	Instrumented int
	Skipped      map[string]int // by reason
	Removed      bool           // a -remove run
	Changed      int            // files written or deleted (in place)
}
