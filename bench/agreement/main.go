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
// Of a profile with fewer than 10 probes, the same share of what it has:
// at least 80% in the model's top 15. The model measures wall time and the
// profile CPU time, so a probe that only waits (a server's accept loop, a
// main that waits for a signal) has no counterpart in the profile: -exclude
// leaves such probes out of both.
//
// The last column and line of the output take the model's own terms: a
// disabled probe is not metered, so its time is its caller's inherent
// time, and the samples whose innermost probed frame is a disabled probe
// are charged there to the nearest probe that is not disabled. They are
// shown beside the checks, which are as above.
//
// With -truth, a model of the same work with every firing metered
// (METER_HOTSPOT_ENABLED=false, same rounds or requests), it also prints,
// for the profile's top 10, how the model's counts compare with the true
// ones, and its own time per call with the profile's (the CPU time charged
// to the probe over its true count): what the estimates of sampled probes
// are made of. It checks nothing more. With -truth and no profile, it
// prints the same for the model's own top 10 by inherent time, the true
// model's time per call in place of the profile's.
//
// It exits 1 when a check fails. bench/judge is its successor: it also
// takes the true calls of the run, and holds the model to docs/design.md's
// figures (docs/adversarial.md).
//
//	go run ./bench/agreement [-exclude regexp] [-truth every.csv] model.csv cpu.pprof
//	go run ./bench/agreement -truth every.csv model.csv
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"

	"github.com/meterio/meter/report"
	"github.com/meterio/meter/schema"
)

func main() {
	exclude := flag.String("exclude", "", "leave out probes whose names match `regexp` (probes that only wait)")
	truthFile := flag.String("truth", "", "a model of the same work with every firing metered, to compare counts and time per call with")
	flag.Parse()
	if flag.NArg() != 2 && (flag.NArg() != 1 || *truthFile == "") {
		fmt.Fprintln(os.Stderr, "usage: agreement [-exclude regexp] [-truth every.csv] model.csv cpu.pprof\n       agreement [-exclude regexp] -truth every.csv model.csv")
		os.Exit(2)
	}
	m, err := report.LoadModel(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	if *exclude != "" {
		re, err := regexp.Compile(*exclude)
		if err != nil {
			fail(err)
		}
		rows := m.Rows[:0]
		for _, r := range m.Rows {
			if !re.MatchString(r.Probe) {
				rows = append(rows, r)
			}
		}
		m.Rows = rows
	}
	if flag.NArg() == 1 {
		t, err := report.LoadModel(*truthFile)
		if err != nil {
			fail(err)
		}
		counts(os.Stdout, m.Rows, t.Rows)
		return
	}
	f, err := os.Open(flag.Arg(1))
	if err != nil {
		fail(err)
	}
	prof, err := report.ReadProfile(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	ok, top := compare(os.Stdout, m.Rows, prof)
	if *truthFile != "" {
		t, err := report.LoadModel(*truthFile)
		if err != nil {
			fail(err)
		}
		perCall(os.Stdout, m.Rows, t.Rows, top)
	}
	if !ok {
		os.Exit(1)
	}
}

// perCall prints, for the profile's top probes (with the CPU ns charged to
// each), the model's count over the true one and the ns per call of the
// model's inherent time and of the profile's.
func perCall(w *os.File, rows, truth []report.Row, top []charge) {
	fmt.Fprintln(w)
	table(w, rows, truth, top, "profile ns/call")
}

// counts prints, for the model's top 10 by inherent time, its count over
// the true one and the ns per call of its inherent time and of the true
// model's.
func counts(w *os.File, rows, truth []report.Row) {
	every := map[string]report.Row{}
	for _, r := range truth {
		every[r.Probe] = r
	}
	byOwn := append([]report.Row(nil), rows...)
	sort.SliceStable(byOwn, func(i, j int) bool { return byOwn[i].InherentTotal > byOwn[j].InherentTotal })
	var top []charge
	for _, r := range byOwn[:min(10, len(byOwn))] {
		top = append(top, charge{r.Probe, float64(every[r.Probe].InherentTotal)})
	}
	table(w, rows, truth, top, "true ns/call (own)")
}

// table prints, for each probe of top, its true count, the model's count
// over it, the model's inherent ns per call, and top's ns over the true
// count under the heading last.
func table(w *os.File, rows, truth []report.Row, top []charge, last string) {
	model, every := map[string]report.Row{}, map[string]report.Row{}
	for _, r := range rows {
		model[r.Probe] = r
	}
	for _, r := range truth {
		every[r.Probe] = r
	}
	fmt.Fprintf(w, "| probe | true count | model count / true | model ns/call (own) | %s |\n| --- | ---: | ---: | ---: | ---: |\n", last)
	for _, c := range top {
		r, t := model[c.probe], every[c.probe]
		if t.Count == 0 {
			fmt.Fprintf(w, "| %s | not in the true model | | | |\n", c.probe)
			continue
		}
		own := 0.0
		if r.Count > 0 {
			own = float64(r.InherentTotal) / float64(r.Count)
		}
		fmt.Fprintf(w, "| %s | %d | %.2f | %.1f | %.1f |\n", c.probe, t.Count, float64(r.Count)/float64(t.Count), own, c.ns/float64(t.Count))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "agreement:", err)
	os.Exit(2)
}

// charge is the CPU time, in ns, the profile charges to a probe.
type charge struct {
	probe string
	ns    float64
}

type share struct {
	probe string
	value float64 // share, 0..1
}

// compare writes the table and reports whether every check holds, and
// what the profile charged to its top 10.
func compare(w *os.File, rows []report.Row, prof *report.Profile) (bool, []charge) {
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
	charged, metered := map[string]float64{}, map[string]float64{}
	var total, unprobed float64
	for _, s := range prof.Samples {
		v := float64(s.Values[cpu])
		hit := false
		for _, fn := range s.Stack { // leaf first
			r, ok := probed[fn]
			if !ok {
				continue
			}
			if !hit {
				charged[fn] += v
				hit = true
			}
			if !off(r) {
				metered[fn] += v
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
	fmt.Fprintf(w, "| profile rank | probe | profile share | model share | model rank | label | profile share, disabled probes' to their callers |\n| ---: | --- | ---: | ---: | ---: | --- | ---: |\n")
	inTop15, dropped, far, farMetered := 0, 0, 0, 0
	top := min(10, len(profile))
	for i := 0; i < top; i++ {
		s := profile[i]
		r := probed[s.probe]
		ms := modelShares[s.probe]
		mv := metered[s.probe] / total
		fmt.Fprintf(w, "| %d | %s | %.1f%% | %.1f%% | %d | %s | %.1f%% |\n", i+1, s.probe, 100*s.value, 100*ms, rank[s.probe], r.Label, 100*mv)
		if rank[s.probe] > 0 && rank[s.probe] <= 15 {
			inTop15++
		}
		if i < 5 && off(r) {
			dropped++
		}
		if d := 100 * (s.value - ms); d > 5 || d < -5 {
			far++
		}
		if d := 100 * (mv - ms); d > 5 || d < -5 {
			farMetered++
		}
	}
	want := (8*top + 9) / 10
	fmt.Fprintf(w, "\nof the profile's top %d: %d in the model's top 15 (want ≥ %d); of its top 5, %d disabled (want 0); %d with shares more than 5 points apart (want 0)\n", top, inTop15, want, dropped, far)
	fmt.Fprintf(w, "with disabled probes' samples charged to their nearest caller not disabled, as the model's inherent time counts them: %d more than 5 points apart\n", farMetered)
	var top10 []charge
	for _, s := range profile[:top] {
		top10 = append(top10, charge{s.probe, charged[s.probe]})
	}
	return inTop15 >= want && dropped == 0 && far == 0, top10
}

// off reports whether the model labels r's probe as switched off.
func off(r report.Row) bool { return schema.SwitchedOff(r.Label) }

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
