// Command meterinject adds a probe to every function of the chosen
// packages, for the meter runtime. See docs/meterinject.md.
//
//	meterinject [flags] [packages]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/meterio/meter/cmd/meterinject/internal/inject"
)

const usage = `usage: meterinject [flags] [packages]

meterinject puts one probe into every chosen function of the packages
(patterns as for go list; default "."), for the meter runtime, and takes it
out again byte for byte with -remove. Positions (file, line, column) stay
the user's, for panics, stack readers, coverage and vet.

Examples:

  In place, as a go generate step: add to one file of the package

      //go:generate meterinject

  then run go generate ./... and go mod tidy (once: the registration files
  import github.com/meterio/meter/probe, which needs nothing but the
  standard library). meterinject -remove ./... gives the original bytes
  back. meterinject runs as a binary on PATH rather than as a go tool
  dependency, so that its own requirements stay out of the module's go.mod.

  Through an overlay, with a dependency, leaving sources and module cache
  alone:

      meterinject -overlay /tmp/o.json ./... github.com/yuin/goldmark/...
      go build -overlay /tmp/o.json -o app ./cmd/app
      METER_EXPORT_CSV=model.csv ./app

  Refinement: instrument again, leaving out what an earlier run's model
  labels disabled or budget, so the next run meters only what matters:

      meterinject -model model.csv -overlay /tmp/o2.json ./...
      go build -overlay /tmp/o2.json -o app ./cmd/app

Flags:
`

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fail(err)
	}
	sum, err := inject.Run(o)
	if err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, sum)
}

// parseFlags reads the command line into Options.
func parseFlags(args []string, stderr io.Writer) (*inject.Options, error) {
	fs := flag.NewFlagSet("meterinject", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &inject.Options{}
	var include, exclude, shape string
	fs.BoolVar(&o.Remove, "remove", false, "remove the instrumentation, giving back the original bytes")
	fs.BoolVar(&o.DryRun, "n", false, "print the diff instead of writing")
	fs.BoolVar(&o.Tests, "tests", false, "instrument _test.go files too")
	fs.BoolVar(&o.All, "all", false, "also instrument what the default selection leaves out: cheap functions the compiler can inline, and small ones")
	fs.StringVar(&include, "include", "", "instrument only probes whose name matches `regexp`")
	fs.StringVar(&exclude, "exclude", "", "leave out probes whose name matches `regexp`")
	fs.StringVar(&o.Model, "model", "", "performance model CSV `file`: leave out probes labelled disabled or budget")
	fs.StringVar(&o.Overlay, "overlay", "", "leave sources alone; write instrumented copies and a go build -overlay `file`")
	fs.StringVar(&o.Cache, "cache", "", "`dir` for -overlay copies (default: the user cache dir/meterinject)")
	fs.StringVar(&o.Runtime, "runtime", "", "`dir` of the github.com/meterio/meter module (default: found, see docs)")
	fs.StringVar(&shape, "shape", "end", "how probes are placed: end (End before each return, no extra frame) or defer (a conditional defer everywhere, for comparison)")
	fs.BoolVar(&o.OTLP, "otlp", false, "link the OTLP export into the program (github.com/meterio/meter/otlp)")
	fs.BoolVar(&o.Live, "live", false, "link the live page into the program (github.com/meterio/meter/live)")
	fs.IntVar(&o.SmallMax, "small-max", inject.DefaultSmallMax, "leave out loop-free bodies of at most `statements` that call nothing uninstrumented (-1: none)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.Patterns = fs.Args()
	var err error
	if include != "" {
		if o.Include, err = regexp.Compile(include); err != nil {
			return nil, fmt.Errorf("-include: %v", err)
		}
	}
	if exclude != "" {
		if o.Exclude, err = regexp.Compile(exclude); err != nil {
			return nil, fmt.Errorf("-exclude: %v", err)
		}
	}
	switch inject.Shape(shape) {
	case inject.ShapeEnd, inject.ShapeDefer:
		o.Shape = inject.Shape(shape)
	default:
		return nil, fmt.Errorf("-shape: %q is not end or defer", shape)
	}
	return o, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "meterinject:", err)
	os.Exit(1)
}
