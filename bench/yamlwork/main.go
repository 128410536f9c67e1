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

func main() {
	n := flag.Int("n", 10, "decodes")
	flag.Parse()
	d := []byte(doc())
	for i := 0; i < *n; i++ {
		var v []map[string]any
		if err := yaml.Unmarshal(d, &v); err != nil {
			panic(err)
		}
	}
}
