// Command yamlwork decodes a 300-item YAML document with gopkg.in/yaml.v3,
// -n times: the workload bench/inject-figures.sh counts instructions of,
// plain and instrumented.
package main

import (
	"flag"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

func doc() string {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "- name: item%d\n  id: %d\n  tags: [a, b, c]\n  nested:\n    x: 1.5\n    y: \"str %d\"\n", i, i, i)
	}
	return b.String()
}

// mark does nothing: with -mark N it is called after the Nth decode and
// after the last, and bench/cost.sh has callgrind dump its counts as it is
// entered (--dump-before), so that the decodes between the two are counted
// in one process, whose hotspot verdicts are the same throughout.
//
//go:noinline
func mark() {}

func main() {
	n := flag.Int("n", 10, "decodes")
	at := flag.Int("mark", -1, "call mark after this many decodes and after the last")
	flag.Parse()
	d := []byte(doc())
	for i := 0; i < *n; i++ {
		if i == *at {
			mark()
		}
		var v []map[string]any
		if err := yaml.Unmarshal(d, &v); err != nil {
			panic(err)
		}
	}
	if *at >= 0 {
		mark()
	}
}
