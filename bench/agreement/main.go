// Command agreement compares a performance model with a CPU profile of the
// same run: each CPU sample is charged to its innermost probed frame (the
// innermost function on its stack that is a probe of the model), which is
// what inherent time means; samples with no probed frame are left out. It
// prints the profile's top probes beside the model's, and checks:
//
//   - at least 8 of the profile's top 10 are in the model's top 15;
//   - none of the profile's top 5 is disabled in the model;
//   - each of the profile's top 10 has a share of the model's inherent time
//     within 5 points of its share of the charged samples.
//
// It exits 1 when a check fails.
//
//	go run ./bench/agreement model.csv cpu.pprof
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/meterio/meter/report"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: agreement model.csv cpu.pprof")
		os.Exit(2)
	}
	m, err := report.LoadModel(os.Args[1])
	if err != nil {
		fail(err)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fail(err)
	}
	prof, err := report.ReadProfile(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	ok := compare(os.Stdout, m.Rows, prof)
	if !ok {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "agreement:", err)
	os.Exit(2)
}

type share struct {
	probe string
	value float64 // share, 0..1
}

// compare writes the table and reports whether every check holds.
func compare(w *os.File, rows []report.Row, prof *report.Profile) bool {
	probed := map[string]report.Row{}
	var modelTotal float64
	for _, r := range rows {
		probed[r.Probe] = r
		modelTotal += float64(r.InherentTotal)
	}
	cpu := prof.Index("cpu")
	if cpu < 0 {
		cpu = len(prof.SampleTypes) - 1
	}
	charged := map[string]float64{}
	var total, unprobed float64
	for _, s := range prof.Samples {
		v := float64(s.Values[cpu])
		hit := false
		for _, fn := range s.Stack { // leaf first
			if _, ok := probed[fn]; ok {
				charged[fn] += v
				hit = true
				break
			}
		}
		if hit {
			total += v
		} else {
			unprobed += v
		}
	}
	profile := ranked(charged, total)
	modelShares := map[string]float64{}
	for _, r := range rows {
		modelShares[r.Probe] = float64(r.InherentTotal) / modelTotal
	}
	model := ranked(modelShares, 1)
	rank := map[string]int{}
	for i, s := range model {
		rank[s.probe] = i + 1
	}
	fmt.Fprintf(w, "CPU samples with a probed frame: %.1f%% of all\n\n", 100*total/(total+unprobed))
	fmt.Fprintf(w, "| profile rank | probe | profile share | model share | model rank | label |\n| ---: | --- | ---: | ---: | ---: | --- |\n")
	inTop15, dropped, far := 0, 0, 0
	for i := 0; i < 10 && i < len(profile); i++ {
		s := profile[i]
		r := probed[s.probe]
		ms := modelShares[s.probe]
		fmt.Fprintf(w, "| %d | %s | %.1f%% | %.1f%% | %d | %s |\n", i+1, s.probe, 100*s.value, 100*ms, rank[s.probe], r.Label)
		if rank[s.probe] > 0 && rank[s.probe] <= 15 {
			inTop15++
		}
		if i < 5 && (r.Label == "disabled" || r.Label == "budget") {
			dropped++
		}
		if d := 100 * (s.value - ms); d > 5 || d < -5 {
			far++
		}
	}
	fmt.Fprintf(w, "\nof the profile's top 10: %d in the model's top 15 (want ≥ 8); of its top 5, %d disabled (want 0); %d with shares more than 5 points apart (want 0)\n", inTop15, dropped, far)
	return inTop15 >= 8 && dropped == 0 && far == 0
}

func ranked(m map[string]float64, total float64) []share {
	var s []share
	for k, v := range m {
		s = append(s, share{k, v / total})
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].value != s[j].value {
			return s[i].value > s[j].value
		}
		return s[i].probe < s[j].probe
	})
	return s
}
