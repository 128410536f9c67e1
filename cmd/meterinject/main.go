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
	"strings"

	"github.com/meterio/meter/cmd/meterinject/internal/inject"
)

const usage = `usage: meterinject [flags] go build|test|run|install|vet [go flags] [packages]
       meterinject [flags] [packages]

meterinject puts one probe into every chosen function of the packages
(patterns as for go list; default "."), for the meter runtime, and takes it
out again byte for byte with -remove. Positions (file, line, column) stay
the user's, for panics, stack readers, coverage and vet.

Examples:

  One command: build, test or run the module instrumented, leaving its
  sources, go.mod and go.sum alone (flags for meterinject before go, the
  go command's after it; exit status the go command's):

      meterinject go test ./...
      meterinject go run ./cmd/app
      meterinject -deps github.com/yuin/goldmark/... go build -o app ./cmd/app

  Instrumented packages are kept in a cache (the user cache dir's
  meterinject, or -cache), by content: a second run instruments again only
  what changed.

  In place, as a go generate step: add to one file at the module's root

      //go:generate meterinject ./...

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
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fail(err)
	}
	if c.goArgs != nil {
		code, err := inject.Go(c.o, c.deps, c.goArgs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "meterinject:", err)
		}
		os.Exit(code)
	}
	sum, err := inject.Run(c.o)
	if err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, sum)
}

// commandLine is what the command line asks for.
type commandLine struct {
	o      *inject.Options
	deps   []string // -deps patterns
	goArgs []string // "go", subcommand, its arguments; nil without
}

// patternList is a flag that may be given more than once.
type patternList []string

func (l *patternList) String() string     { return strings.Join(*l, " ") }
func (l *patternList) Set(s string) error { *l = append(*l, s); return nil }

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (*commandLine, error) {
	fs := flag.NewFlagSet("meterinject", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &inject.Options{}
	c := &commandLine{o: o}
	var deps patternList
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
	fs.Var(&deps, "deps", "with go or -overlay: also instrument the dependency packages `pattern` matches (may be repeated)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.Patterns = fs.Args()
	if len(o.Patterns) > 0 && o.Patterns[0] == "go" {
		c.goArgs, o.Patterns = o.Patterns, nil
		switch {
		case o.Remove:
			return nil, fmt.Errorf("-remove: meterinject go never writes sources, so there is nothing to remove")
		case o.DryRun, o.Overlay != "":
			return nil, fmt.Errorf("-n and -overlay do not go with %s: meterinject go writes its own overlay", strings.Join(c.goArgs[:min(2, len(c.goArgs))], " "))
		}
	}
	c.deps = deps
	if c.goArgs == nil {
		if len(deps) > 0 && o.Overlay == "" {
			return nil, fmt.Errorf("-deps: dependencies are instrumented through go or -overlay, never in place")
		}
		o.Patterns = append(o.Patterns, deps...)
	}
	if o.Remove && o.Overlay != "" {
		return nil, fmt.Errorf("-remove and -overlay do not go together: an overlay leaves the sources alone")
	}
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
	return c, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "meterinject:", err)
	os.Exit(1)
}
