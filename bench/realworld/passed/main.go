// Command passed reads `go test -json` output and prints one line per test
// that passed: "package test". bench/realworld/run.sh compares these sets.
// Subtests named after values that change from run to run (pointers,
// function addresses, the time) are named with those values blanked, and
// printed once per test that passed, so that sets still compare.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
)

var runValues = regexp.MustCompile(`0x[0-9a-f]+|time\.Date\([^)]*\)`)

func main() {
	seen := map[string]int{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct{ Action, Package, Test string }
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" || e.Action != "pass" {
			continue
		}
		seen[e.Package+" "+runValues.ReplaceAllString(e.Test, "?")]++
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	for _, k := range out {
		for range seen[k] {
			fmt.Println(k)
		}
	}
}
