package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/meterio/meter/report"
)

func main() {
	m, _ := report.LoadModel(os.Args[1])
	f, _ := os.Open(os.Args[2])
	prof, err := report.ReadProfile(f)
	if err != nil { panic(err) }
	probed := map[string]report.Row{}
	for _, r := range m.Rows { probed[r.Probe] = r }
	cpu := len(prof.SampleTypes) - 1
	charged := map[string]float64{}
	var total float64
	for _, s := range prof.Samples {
		v := float64(s.Values[cpu])
		total += v
		for _, fn := range s.Stack {
			if _, ok := probed[fn]; ok { charged[fn] += v; break }
		}
	}
	type kv struct{ k string; v float64 }
	var l []kv
	for k, v := range charged { l = append(l, kv{k, v}) }
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v })
	for _, e := range l {
		r := probed[e.k]
		fmt.Printf("%6.2f%% %10d  %8.1f ns/call  %s\n", 100*e.v/total, r.Count, e.v/float64(r.Count), e.k)
	}
}
