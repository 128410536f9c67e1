// Command short does its work in about a tenth of a second and exits, as
// a command-line tool or a test does: it makes 120,000 lines of text
// (lines), parses them (parseLine, field), groups them (group) and
// summarizes each group (summarize). Each function is called from about
// a thousand to two million times, so a model that needs time
// to warm up or to sample has little of either.
//
// Calls are known from the loop bounds and the data (the new groups are
// counted in a variable of main's, from group's result). The functions
// are small: instrument with -all.
//
//	go run ./bench/adversarial/short [-n 120000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

const fieldsPerLine = 17

type record struct {
	key    string
	values [fieldsPerLine - 1]int
}

type stats struct {
	n        int
	sum, max int
}

// lines makes the input: n lines of fieldsPerLine comma-separated fields.
func lines(n int) []string {
	out := make([]string, n)
	var b []byte
	for i := range out {
		b = append(b[:0], 'k')
		b = strconv.AppendInt(b, int64((i*7919)%997), 10)
		for f := 1; f < fieldsPerLine; f++ {
			b = append(b, ',')
			b = strconv.AppendInt(b, int64((i*31+f*7)%(517+f)), 10)
		}
		out[i] = string(b)
	}
	return out
}

//go:noinline
func field(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

//go:noinline
func parseLine(l string) record {
	var r record
	parts := strings.Split(l, ",")
	r.key = parts[0]
	for i := 1; i < fieldsPerLine; i++ {
		r.values[i-1] = field(parts[i])
	}
	return r
}

// group adds r to its key's stats, and reports whether the key was new.
//
//go:noinline
func group(m map[string]*stats, r record) bool {
	s, ok := m[r.key]
	if !ok {
		s = &stats{}
		m[r.key] = s
	}
	s.n++
	for _, v := range r.values {
		s.sum += v
		s.max = max(s.max, v)
	}
	return !ok
}

//go:noinline
func summarize(key string, s *stats) string {
	return key + ": " + strconv.Itoa(s.n) + " lines, mean " + strconv.FormatFloat(float64(s.sum)/float64(s.n*(fieldsPerLine-1)), 'f', 2, 64) + ", max " + strconv.Itoa(s.max)
}

func main() {
	n := flag.Int("n", 120000, "lines")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	in := lines(*n)
	m := map[string]*stats{}
	groups := 0
	for _, l := range in {
		if group(m, parseLine(l)) {
			groups++
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, summarize(k, m[k]))
	}
	fmt.Println("short:", len(out), "groups;", out[0])

	rec.Add("main.main", 1)
	rec.Add("main.lines", 1)
	rec.Add("main.parseLine", int64(*n))
	rec.Add("main.field", int64(*n)*(fieldsPerLine-1))
	rec.Add("main.group", int64(*n))
	rec.Add("main.summarize", int64(groups))
	rec.Finish()
}
