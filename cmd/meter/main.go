// Command meter shows what the runtime measured.
//
//	meter report model.csv [-o model.html] [-pprof model.pprof]
//	meter compare [-test utest|welch] [-alpha 0.05] OLD NEW
//
// report writes the model as one self-contained HTML page: the model as a
// sortable table with a legend, inclusive and inherent bars, the share of
// the program's time the model covers, the chain's settings from
// model.csv.meta and, when a pprof export exists (-pprof, or model.pprof
// next to the CSV), a flame graph of the traced call paths. The page goes
// to model.html next to the CSV unless -o names another file (- for
// standard output); the path written is printed. An existing file is
// replaced only if it is a regular file (through a symbolic link, the
// file it points to), by renaming a complete temporary file over it.
//
// compare prints a table of two sides, probe by probe: calls per run, mean
// inclusive and mean inherent time per call, old → new, and the change in
// percent. Each side is a model CSV, or a directory of model CSVs, one
// per run, as benchstat takes several runs of a benchmark. With several
// runs, each change is tested across the runs (the Mann-Whitney U test,
// or Welch's t-test with -test welch), adjusted over the row's three
// tests, and marked "~" when it is not significant at -alpha; significant
// changes come first, the largest first. With one run a side there are
// changes and no significance, and a line says so. Probes that appeared
// or vanished are flagged.
//
// Errors name the file and line, "meter: model.csv:3: …", and the exit
// status is 1; otherwise it is 0, whatever the comparison found.
//
// See docs/report.md for sample output.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/report"
)

const usage = `usage:
  meter report model.csv [-o model.html] [-pprof model.pprof]
  meter compare [-test utest|welch] [-alpha 0.05] OLD NEW
      OLD and NEW: each a model CSV, or a directory of model CSVs, one per run
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command without the process around it, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "report":
		err = reportCmd(args[1:], stdout, stderr)
	case "compare":
		err = compareCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "meter: unknown command %q\n%s", args[0], usage)
		return 2
	}
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "meter: %v\n%s", err, usage)
		return 2
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "meter: %v\n", err)
		return 1
	}
	return 0
}

type usageError string

func (e usageError) Error() string { return string(e) }

// parse parses flags that may come before or after the file names, as
// the usage lines put them, and returns the file names.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError(err.Error())
		}
		args = fs.Args()
		if len(args) == 0 {
			return files, nil
		}
		files = append(files, args[0])
		args = args[1:]
	}
}

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("meter report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the page to `file` (- for standard output); default: the model's name with .html")
	prof := fs.String("pprof", "", "draw the flame graph from this pprof `profile`; default: the model's name with .pprof, if it exists")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError(fmt.Sprintf("report takes one model CSV, got %d", len(files)))
	}
	m, err := report.Load(files[0], *prof)
	if err != nil {
		return err
	}
	if *out == "-" {
		return report.WriteHTML(stdout, m)
	}
	if *out == "" {
		*out = strings.TrimSuffix(files[0], filepath.Ext(files[0])) + ".html"
	}
	if err := export.WriteFile(*out, func(w io.Writer) error { return report.WriteHTML(w, m) }); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *out)
	return nil
}

func compareCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("meter compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	test := fs.String("test", report.UTest, "judge changes across runs with `test`: utest (Mann-Whitney U) or welch (Welch's t-test)")
	alpha := fs.Float64("alpha", report.Alpha, "significance `level`")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return usageError(fmt.Sprintf("compare takes two sides, old and new, each a model CSV or a directory of them, got %d", len(files)))
	}
	if *test != report.UTest && *test != report.WelchTest {
		return usageError(fmt.Sprintf("-test %q: want utest or welch", *test))
	}
	if !(*alpha > 0 && *alpha < 1) {
		return usageError(fmt.Sprintf("-alpha %g: want a level between 0 and 1, such as 0.05", *alpha))
	}
	var sides [2]*report.Runs
	for i, f := range files {
		if sides[i], err = report.LoadRuns(f); err != nil {
			return err
		}
	}
	return report.Compare(stdout, sides[0], sides[1], report.CompareOptions{Test: *test, Alpha: *alpha})
}
