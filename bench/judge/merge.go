package main

import (
	"fmt"
	"slices"
	"sort"

	"github.com/meterio/meter/report"
)

// A program that runs for a tenth of a second leaves a CPU profile of a few
// dozen samples, whose shares are uncertain by ten points or more: the
// judge cannot tell a model's error from the profile's. Such a program is
// judged over several runs at once: their models, profiles and truths
// added up, as if one run had done all their work.

// mergeModels adds the models' rows by probe: counts and times add, min and
// max are the runs' extremes, and the label is the one most runs gave (the
// first run's on a tie). It returns the labels that differed, as
// "probe: a b", for the judge to print.
func mergeModels(ms []*report.Model) (*report.Model, []string) {
	out := *ms[0]
	out.Rows = nil
	out.CPU = 0
	byProbe := map[string]*report.Row{}
	labels := map[string][]string{}
	var order []string
	for _, m := range ms {
		out.CPU += m.CPU
		for _, r := range m.Rows {
			labels[r.Probe] = append(labels[r.Probe], r.Label)
			s, ok := byProbe[r.Probe]
			if !ok {
				c := r
				byProbe[r.Probe] = &c
				order = append(order, r.Probe)
				continue
			}
			s.Count += r.Count
			s.Total += r.Total
			s.InherentTotal += r.InherentTotal
			s.Min = min(s.Min, r.Min)
			s.Max = max(s.Max, r.Max)
		}
	}
	var differ []string
	for _, p := range order {
		r := byProbe[p]
		if r.Count > 0 {
			r.Avg, r.InherentAvg = r.Total/r.Count, r.InherentTotal/r.Count
		}
		r.Label = majority(labels[p])
		if slices.ContainsFunc(labels[p], func(l string) bool { return l != labels[p][0] }) {
			differ = append(differ, fmt.Sprintf("%s: %v", p, labels[p]))
		}
		out.Rows = append(out.Rows, *r)
	}
	sort.SliceStable(out.Rows, func(i, j int) bool { return out.Rows[i].InherentTotal > out.Rows[j].InherentTotal })
	return &out, differ
}

// majority returns the most frequent of ls, the earliest on a tie.
func majority(ls []string) string {
	best, n := ls[0], 0
	for _, l := range ls {
		c := 0
		for _, k := range ls {
			if k == l {
				c++
			}
		}
		if c > n {
			best, n = l, c
		}
	}
	return best
}

// mergeProfiles puts the profiles' samples into one profile; they must
// have the same sample types.
func mergeProfiles(ps []*report.Profile) (*report.Profile, error) {
	out := *ps[0]
	out.Samples = slices.Clone(out.Samples)
	for i, p := range ps[1:] {
		if !slices.Equal(p.SampleTypes, out.SampleTypes) {
			return nil, fmt.Errorf("profile %d has sample types %v, the first %v", i+2, p.SampleTypes, out.SampleTypes)
		}
		out.Samples = append(out.Samples, p.Samples...)
	}
	return &out, nil
}

// mergeTruths adds the runs' calls, CPU and wait times; the work is
// CPU-bound if every run says so.
func mergeTruths(ts []*Truth) *Truth {
	out := &Truth{Calls: map[string]int64{}, Aliases: map[string]string{}, CPUBound: true}
	for _, t := range ts {
		for f, n := range t.Calls {
			out.Calls[f] += n
		}
		for k, v := range t.Aliases {
			out.Aliases[k] = v
		}
		out.CPU += t.CPU
		out.Wait += t.Wait
		out.Steal += t.Steal
		out.CPUBound = out.CPUBound && t.CPUBound
	}
	return out
}
