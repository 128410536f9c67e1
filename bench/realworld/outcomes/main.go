// Command outcomes reads `go test -json` output and prints one line per
// test that finished, "package test outcome" (outcome is pass, fail or
// skip), and one line "package - outcome" for each package that reported
// no test at all (it did not build, or has no tests): so that a package
// that stops building shows up even though it loses no test line.
// bench/realworld/run.sh compares these sets between a plain run and an
// instrumented one, line by line.
//
// Subtests named after values that change from run to run (pointers,
// function addresses, the time, maps with NaN keys, which print in random
// order) are named with those values blanked, and printed once per run of
// such a subtest, so that sets still compare.
//
// With -except FILE, tests named in FILE ("package test", one a line) and
// their subtests are left out.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

var runValues = regexp.MustCompile(`0x[0-9a-f]+|time\.Date\([^)]*\)|map\[[^\]]*NaN[^\]]*\]`)

func main() {
	except := flag.String("except", "", "file of `package test` lines to leave out")
	flag.Parse()
	skip := map[string]bool{}
	if *except != "" {
		b, err := os.ReadFile(*except)
		if err != nil {
			fmt.Fprintln(os.Stderr, "outcomes:", err)
			os.Exit(2)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				skip[f[0]+" "+f[1]] = true
			}
		}
	}
	excepted := func(pkg, test string) bool {
		top, _, _ := strings.Cut(test, "/")
		return skip[pkg+" "+top]
	}

	seen := map[string]int{}
	tested := map[string]bool{}
	pkgs := map[string]string{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e struct{ Action, Package, Test string }
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Package == "" {
			continue
		}
		if e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
			continue
		}
		if e.Test == "" {
			pkgs[e.Package] = e.Action
			continue
		}
		tested[e.Package] = true
		if excepted(e.Package, e.Test) {
			continue
		}
		seen[e.Package+" "+runValues.ReplaceAllString(e.Test, "?")+" "+e.Action]++
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "outcomes:", err)
		os.Exit(2)
	}
	for p, a := range pkgs {
		if !tested[p] {
			seen[p+" - "+a]++
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	w := bufio.NewWriter(os.Stdout)
	for _, k := range out {
		for range seen[k] {
			fmt.Fprintln(w, k)
		}
	}
	w.Flush()
}
