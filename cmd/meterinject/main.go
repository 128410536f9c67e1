// Command meterinject adds a probe to every function of the chosen
// packages, for the meter runtime. See docs/meterinject.md.
//
//	meterinject [flags] [packages]
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"

	"github.com/meterio/meter/cmd/meterinject/internal/inject"
)

func main() {
	var o inject.Options
	var include, exclude, shape string
	flag.BoolVar(&o.Remove, "remove", false, "remove the instrumentation, giving back the original bytes")
	flag.BoolVar(&o.DryRun, "n", false, "print the diff instead of writing")
	flag.BoolVar(&o.Tests, "tests", false, "instrument _test.go files too")
	flag.BoolVar(&o.All, "all", false, "also instrument what the default selection leaves out: functions the compiler can inline, and small ones")
	flag.StringVar(&include, "include", "", "instrument only probes whose name matches `regexp`")
	flag.StringVar(&exclude, "exclude", "", "leave out probes whose name matches `regexp`")
	flag.StringVar(&o.Model, "model", "", "performance model CSV `file`: leave out probes labelled disabled or budget")
	flag.StringVar(&o.Overlay, "overlay", "", "leave sources alone; write instrumented copies and a go build -overlay `file`")
	flag.StringVar(&o.Cache, "cache", "", "`dir` for -overlay copies (default: the user cache dir/meterinject)")
	flag.StringVar(&o.Runtime, "runtime", "", "`dir` of the github.com/meterio/meter module, for -overlay (default: found, see docs)")
	flag.StringVar(&shape, "shape", "twin", "generated statement: twin or defer")
	flag.IntVar(&o.SmallMax, "small-max", inject.DefaultSmallMax, "leave out loop-free bodies of at most `statements` (-1: none; -all: none)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: meterinject [flags] [packages]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.Patterns = flag.Args()
	var err error
	if include != "" {
		if o.Include, err = regexp.Compile(include); err != nil {
			fail(fmt.Errorf("-include: %v", err))
		}
	}
	if exclude != "" {
		if o.Exclude, err = regexp.Compile(exclude); err != nil {
			fail(fmt.Errorf("-exclude: %v", err))
		}
	}
	switch inject.Shape(shape) {
	case inject.ShapeTwin, inject.ShapeDefer:
		o.Shape = inject.Shape(shape)
	default:
		fail(fmt.Errorf("-shape: %q is not twin or defer", shape))
	}
	sum, err := inject.Run(&o)
	if err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, sum)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "meterinject:", err)
	os.Exit(1)
}
