package main

import (
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/meterio/meter/report"
)

func main() {
	m, _ := report.LoadModel(os.Args[1])
	f, _ := os.Open(os.Args[2])
	prof, err := report.ReadProfile(f)
	if err != nil {
		panic(err)
	}
	rows := map[string]report.Row{}
	var modelTotal float64
	for _, r := range m.Rows {
		rows[r.Probe] = r
		if timed(r) {
			modelTotal += float64(r.InherentTotal)
		}
	}
	cpu := len(prof.SampleTypes) - 1
	charged := map[string]float64{}
	var total float64
	for _, s := range prof.Samples {
		v := float64(s.Values[cpu])
		for _, fn := range s.Stack {
			if r, ok := rows[fn]; ok && timed(r) {
				charged[fn] += v
				total += v
				break
			}
		}
	}
	type kv struct {
		k string
		v float64
	}
	var l []kv
	for k, v := range charged {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v })
	var sum, worst float64
	for i, e := range l {
		if i >= 8 {
			break
		}
		r := rows[e.k]
		ps, ms := 100*e.v/total, 100*float64(r.InherentTotal)/modelTotal
		d := math.Abs(ps - ms)
		if i < 5 {
			sum += d
			worst = max(worst, d)
		}
		fmt.Printf("%5.1f%% %5.1f%%  %+5.1f  %-8s %s\n", ps, ms, ms-ps, r.Label, e.k)
	}
	fmt.Printf("top5: mean diff %.1f, max %.1f\n", sum/5, worst)
}

func timed(r report.Row) bool {
	return r.Label != "untimed" && r.Label != "disabled" && r.Label != "budget"
}
