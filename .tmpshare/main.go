package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/meterio/meter/report"
)

// usage: share model.csv cpu.pprof ops
func main() {
	f, _ := os.Open(os.Args[1])
	counts := map[string]float64{}
	labels := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		r := strings.Split(sc.Text(), ",")
		c, _ := strconv.ParseFloat(r[1], 64)
		counts[r[0]] = c
		labels[r[0]] = r[8]
	}
	pf, _ := os.Open(os.Args[2])
	p, err := report.ReadProfile(pf)
	if err != nil {
		panic(err)
	}
	ops, _ := strconv.ParseFloat(os.Args[3], 64)
	ch := map[string]int64{}
	var tot int64
	vi := len(p.SampleTypes) - 1
	for _, s := range p.Samples {
		for _, fn := range s.Stack {
			if _, ok := counts[fn]; ok {
				ch[fn] += s.Values[vi]
				tot += s.Values[vi]
				break
			}
		}
	}
	type row struct {
		n  string
		sh float64
	}
	var rs []row
	for n := range counts {
		rs = append(rs, row{n, float64(ch[n]) / float64(tot)})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].sh > rs[j].sh })
	cum := 0.0
	for i, r := range rs {
		cum += counts[r.n] / ops
		pc := 0.0
		if counts[r.n] > 0 {
			pc = float64(ch[r.n]) / counts[r.n]
		}
		fmt.Printf("%2d %6.2f%% calls/op %8.0f cum %8.0f ns/call %7.1f %-9s %s\n", i+1, 100*r.sh, counts[r.n]/ops, cum, pc, labels[r.n], r.n)
	}
}
