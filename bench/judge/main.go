// Command judge scores a performance model against the truth of the same
// run (the calls each function really made, which the adversarial
// programs of bench/adversarial write) and against a CPU profile of that
// run. It is the successor of bench/agreement, which compares a model with
// a profile alone and stays for bench/agreement.sh.
//
//	go run ./bench/judge [flags] model.csv cpu.pprof
//
// It prints a compact table per check, a last line starting "summary:",
// and exits 1 when a check fails (2 when a file cannot be read). The
// checks, with docs/design.md's figures:
//
//   - counts: every model row not labelled disabled or budget holds its
//     true calls within 0.5% (-count-tolerance); a disabled or budget row
//     holds at most its true calls. A row whose function the truth file
//     does not name fails. Needs -truth.
//   - shares: each CPU sample of the program (below) is charged to the innermost frame of a probe
//     the model times (rows labelled untimed, disabled or budget, and
//     probes absent from the model, pass their samples on to the nearest
//     caller that is timed). Over the top 5 of that charging, the model's
//     share of inherent time (inherent_total_ns over the sum of the timed
//     rows') and the profile's share of the charged CPU time differ by at
//     most 3 points on average and 8 at most.
//   - cpu: the sum of the rows' inherent times is at most the process's
//     CPU time. The CPU time is the truth file's #cpu_ns, else the model's
//     .meta cpu_ns, else the profile's samples. Inherent time is wall time,
//     so it can pass the CPU time honestly where goroutines wait or run
//     side by side on fewer cores: the check fails only where the truth
//     file declares the work CPU-bound (#cpubound,1), or with -cpubound.
//     Otherwise the figure is printed for information. On a machine
//     shared with other work, wall time also holds the time the process's
//     threads were ready and waited for a core: where the truth file gives
//     it (#wait_ns), the bound is CPU time plus that wait; on a VM, plus
//     the process's share of the time the host ran other guests
//     (#steal_ns), in which its threads ran as far as the guest knew.
//   - hidden: each sample is charged to the innermost instrumented frame
//     instead: a probe the model has a row for, or one named in the
//     -probes file (the registered probes; rows are written only for
//     probes metered or labelled, so without that file a registered probe
//     that never made a row counts as uninstrumented and its samples go to
//     its caller). Each function of that top 10 is in the model, not
//     disabled or budget, holds its true calls (with -truth), and if
//     untimed, its true own time per call (its CPU time in the profile over
//     its true calls) is under -untimed-limit (300ns), at the 95% lower
//     bound of its samples' count (a Poisson count): a few samples do not
//     tell a function of 300 ns a call from one of 100.
//
// Samples with a frame of the meter runtime on their stack (Begin and End
// inlined into the function they measure, the clock, the export at exit:
// -metering) are the cost of measuring. The model leaves that cost out of
// inherent times, so shares and hidden leave those samples out, and print
// how much of the profile they held; cpu keeps them (the process spent
// that time).
//
// Function names join the three files: the profile's names are the
// runtime's, the model's are meterinject's. They differ for a closure
// created in a function the compiler inlined (main.main.setup.trim.func2
// at run time, main.trim.func1 as a probe); the truth file's #alias lines
// map one to the other, and the judge prints each mapping it used. The
// profile names generic functions by their instantiation
// (main.sum[go.shape.int]), probes by main.sum[...]: the judge reads the
// one as the other.
// -exclude leaves probes out of the model, as bench/agreement does.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/meterio/meter/report"
	"github.com/meterio/meter/schema"
)

func main() {
	lim := DefaultLimits
	truthFile := flag.String("truth", "", "the program's true calls: CSV function,calls (bench/adversarial/internal/truth)")
	probesFile := flag.String("probes", "", "the registered probes, one name a line")
	exclude := flag.String("exclude", "", "leave out probes whose names match `regexp`")
	cpubound := flag.Bool("cpubound", false, "check inherent times against CPU time even where the truth file does not declare the work CPU-bound")
	metering := flag.String("metering", MeteringFrames.String(), "samples with a frame matching `regexp` are the cost of measuring: left out of shares and hidden (empty: keep every sample)")
	flag.Float64Var(&lim.CountTolerance, "count-tolerance", lim.CountTolerance, "largest relative difference of a count from the true calls")
	flag.DurationVar(&lim.UntimedLimit, "untimed-limit", lim.UntimedLimit, "an untimed probe's true own time per call must be below this")
	flag.Parse()
	if flag.NArg() < 2 || flag.NArg()%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: judge [-truth truth.csv[,truth.csv...]] [-probes probes.txt] [-exclude regexp] model.csv cpu.pprof [model.csv cpu.pprof]...")
		flag.PrintDefaults()
		os.Exit(2)
	}
	var models []*report.Model
	var profs []*report.Profile
	var err error
	for i := 0; i < flag.NArg(); i += 2 {
		m, err := report.LoadModel(flag.Arg(i))
		if err != nil {
			fail(err)
		}
		f, err := os.Open(flag.Arg(i + 1))
		if err != nil {
			fail(err)
		}
		prof, err := report.ReadProfile(f)
		f.Close()
		if err != nil {
			fail(fmt.Errorf("%s: %v", flag.Arg(i+1), err))
		}
		models, profs = append(models, m), append(profs, prof)
	}
	m, prof := models[0], profs[0]
	var differ []string
	if len(models) > 1 {
		m, differ = mergeModels(models)
		if prof, err = mergeProfiles(profs); err != nil {
			fail(err)
		}
	}
	var t *Truth
	if *truthFile != "" {
		var ts []*Truth
		for _, name := range strings.Split(*truthFile, ",") {
			f, err := os.Open(name)
			if err != nil {
				fail(err)
			}
			tt, err := ReadTruth(f, name)
			f.Close()
			if err != nil {
				fail(err)
			}
			ts = append(ts, tt)
		}
		if len(ts) != len(models) {
			fail(fmt.Errorf("%d truth files for %d runs", len(ts), len(models)))
		}
		t = ts[0]
		if len(ts) > 1 {
			t = mergeTruths(ts)
		}
	}
	registered := map[string]bool{}
	if *probesFile != "" {
		if registered, err = readProbes(*probesFile); err != nil {
			fail(err)
		}
	}
	rows := m.Rows
	if *exclude != "" {
		re, err := regexp.Compile(*exclude)
		if err != nil {
			fail(err)
		}
		rows = nil
		for _, r := range m.Rows {
			if !re.MatchString(r.Probe) {
				rows = append(rows, r)
			}
		}
		for p := range registered {
			if re.MatchString(p) {
				delete(registered, p)
			}
		}
	}
	var frames *regexp.Regexp
	if *metering != "" {
		if frames, err = regexp.Compile(*metering); err != nil {
			fail(err)
		}
	}
	if len(models) > 1 {
		fmt.Printf("runs: %d, their models, profiles and truths added up\n", len(models))
		for _, d := range differ {
			fmt.Printf("labels: runs differ on %s; the most frequent is judged\n", d)
		}
	}
	if !judge(os.Stdout, m, rows, registered, prof, frames, t, *cpubound, lim) {
		os.Exit(1)
	}
}

// judge runs every check, prints them, and reports whether all hold.
func judge(w io.Writer, m *report.Model, rows []report.Row, registered map[string]bool, whole *report.Profile, metering *regexp.Regexp, t *Truth, cpubound bool, lim Limits) bool {
	var alias map[string]string
	if t != nil {
		alias = t.Aliases
	}
	all := Charge(whole, nil, func(string) bool { return false }).All
	prof, measuring := whole, 0.0
	if metering != nil {
		byName := map[string]bool{}
		for _, r := range rows {
			byName[r.Probe] = timed(r)
		}
		prof, measuring = WithoutMetering(whole, metering, alias, func(fn string) bool { return byName[fn] })
	}
	labels := map[string]int{}
	for _, r := range rows {
		labels[r.Label]++
	}
	fmt.Fprintf(w, "model %s: %d rows (%s)", m.Name, len(rows), labelCounts(labels))
	if t != nil {
		fmt.Fprintf(w, "; truth: %d functions", len(t.Calls))
	}
	fmt.Fprintf(w, "; profile: %d samples, %s CPU\n", samples(whole), seconds(all))
	if v, ok := m.MetaValue(schema.MetaWaits); ok && v != "seen" {
		fmt.Fprintf(w, "waits: %s: the engine did not find the wait reason, so own times hold waits\n", v)
	}
	if metering != nil {
		fmt.Fprintf(w, "metering: the runtime's frames hold %.1f%% of the profile's CPU time, left out of shares and hidden\n", 100*measuring/all)
	}
	used := usedAliases(whole, alias)
	for _, a := range used {
		fmt.Fprintf(w, "names: the profile's %s is the probe %s\n", a[0], a[1])
	}

	summary := []string{}
	ok := true

	if t != nil {
		counts, cok := Counts(rows, t, lim)
		ok = ok && cok
		good := 0
		for _, c := range counts {
			if c.OK {
				good++
			}
		}
		fmt.Fprintf(w, "\ncounts: rows hold their true calls within %.1f%% (disabled, budget: at most): %d of %d %s\n", 100*lim.CountTolerance, good, len(counts), verdict(cok))
		fmt.Fprintln(w, "| probe | label | count | true calls | count/true | |\n| --- | --- | ---: | ---: | ---: | --- |")
		for _, c := range counts {
			if !c.Known {
				fmt.Fprintf(w, "| %s | %s | %s | no truth | | FAIL |\n", c.Probe, c.Label, thousands(c.Model))
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", c.Probe, c.Label, thousands(c.Model), thousands(c.True), ratio(c.Model, c.True), verdict(c.OK))
		}
		summary = append(summary, fmt.Sprintf("%d/%d %s", good, len(counts), verdict(cok)))
		if absent := Absent(rows, registered, t); len(absent) > 0 {
			fmt.Fprint(w, "registered probes called but without a row:")
			for _, p := range absent {
				fmt.Fprintf(w, " %s (%s calls)", p, thousands(t.Calls[p]))
			}
			fmt.Fprintln(w)
		}
	} else {
		fmt.Fprintln(w, "\ncounts: not checked (no -truth)")
		summary = append(summary, "-")
	}

	sh := Shares(rows, prof, alias, lim)
	ok = ok && sh.OK
	fmt.Fprintf(w, "\nshares: the profile's top %d charged to the innermost timed probe (%d timed rows; %.1f%% of the profile's CPU time charged), against shares of the model's inherent time: mean %.1f points (want ≤ %g), largest %.1f (want ≤ %g) %s\n",
		lim.ShareTop, sh.TimedRows, 100*sh.Claimed, sh.Avg, lim.ShareAvg, sh.Max, lim.ShareMax, verdict(sh.OK))
	fmt.Fprintln(w, "| probe | label | profile | model | points apart | profile ns/call | model ns/call |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	counts := map[string]int64{}
	for _, r := range rows {
		counts[r.Probe] = r.Count
	}
	for _, s := range sh.Rows {
		n := max(counts[s.Probe], 1)
		fmt.Fprintf(w, "| %s | %s | %.1f%% | %.1f%% | %.1f | %.0f | %d |\n", s.Probe, s.Label, 100*s.Profile, 100*s.Model, s.DiffPoints, s.ProfileNS/float64(n), s.ModelInherentNS/n)
	}
	summary = append(summary, fmt.Sprintf("%.1f/%.1f %s", sh.Avg, sh.Max, verdict(sh.OK)))

	c := CPU(rows, t, m, whole, cpubound)
	ok = ok && c.OK
	r := 0.0
	if c.CPU > 0 {
		r = float64(c.Inherent) / float64(c.CPU)
	}
	fmt.Fprintf(w, "\ncpu: inherent times add up to %s, the process's CPU time is %s (%s): %.2f of it", seconds(float64(c.Inherent)), seconds(float64(c.CPU)), c.Source, r)
	switch {
	case c.Steal > 0:
		fmt.Fprintf(w, "; its threads waited %s for a core, and the host took %s of their time (steal), %.2f of CPU, wait and steal", seconds(float64(c.Wait)), seconds(float64(c.Steal)), cpuRatio(c))
	case c.Wait > 0:
		fmt.Fprintf(w, "; its threads waited %s for a core, %.2f of CPU and wait", seconds(float64(c.Wait)), cpuRatio(c))
	}
	if c.Checked {
		fmt.Fprintf(w, " %s\n", verdict(c.OK))
		summary = append(summary, fmt.Sprintf("%.2f %s", cpuRatio(c), verdict(c.OK)))
	} else {
		fmt.Fprintln(w, " (not checked: the work is not declared CPU-bound)")
		summary = append(summary, fmt.Sprintf("(%.2f)", cpuRatio(c)))
	}
	if c.CPU > 0 {
		fmt.Fprintf(w, "profile: its samples hold %.0f%% of the process's CPU time\n", 100*all/float64(c.CPU))
	}

	h := Hidden(rows, registered, prof, t, lim)
	ok = ok && h.OK
	good := 0
	for _, r := range h.Rows {
		if r.Why == "" {
			good++
		}
	}
	fmt.Fprintf(w, "\nhidden: the profile's top %d charged to the innermost instrumented frame (%.1f%% of its CPU time charged): in the model, not disabled or budget", lim.HiddenTop, 100*h.Claimed)
	if t != nil {
		fmt.Fprint(w, ", true calls")
	}
	fmt.Fprintf(w, ", untimed ones under %v a call: %d of %d %s\n", lim.UntimedLimit, good, len(h.Rows), verdict(h.OK))
	fmt.Fprintln(w, "| probe | label | profile | count/true | own ns/call | |\n| --- | --- | ---: | ---: | ---: | --- |")
	for _, r := range h.Rows {
		cr := ""
		switch {
		case !r.InModel:
			cr = "not in the model"
		case t == nil:
			cr = thousands(r.Model)
		case !r.Known:
			cr = "no truth"
		default:
			cr = ratio(r.Model, r.True)
		}
		v := "ok"
		if r.Why != "" {
			v = "FAIL: " + r.Why
		}
		fmt.Fprintf(w, "| %s | %s | %.1f%% | %s | %.1f | %s |\n", r.Probe, r.Label, 100*r.Share, cr, r.OwnPerCall, v)
	}
	summary = append(summary, fmt.Sprintf("%d/%d %s", good, len(h.Rows), verdict(h.OK)))

	summary = append(summary, fmt.Sprintf("%.0f%%", 100*measuring/all), verdict(ok))
	fmt.Fprintf(w, "\nsummary: | %s |\n", strings.Join(summary, " | "))
	return ok
}

// cpuRatio is the sum of inherent times over the bound it is checked
// against: CPU time and the wait for a core.
func cpuRatio(c CPUResult) float64 {
	if c.CPU+c.Wait+c.Steal == 0 {
		return 0
	}
	return float64(c.Inherent) / float64(c.CPU+c.Wait+c.Steal)
}

// samples is how many samples the profile holds: the sum of its sample
// type "samples", else its number of stacks.
func samples(prof *report.Profile) int64 {
	i := prof.Index("samples")
	if i < 0 {
		return int64(len(prof.Samples))
	}
	var n int64
	for _, s := range prof.Samples {
		if i < len(s.Values) {
			n += s.Values[i]
		}
	}
	return n
}

// usedAliases lists the names of the profile's frames that the truth
// file's aliases map to another probe name, and what they map to.
func usedAliases(prof *report.Profile, alias map[string]string) [][2]string {
	seen := map[string]string{}
	for _, s := range prof.Samples {
		for _, fn := range s.Stack {
			if p := elideTypeArgs(fn); alias[p] != "" {
				seen[fn] = alias[p]
			}
		}
	}
	var out [][2]string
	for fn, p := range seen {
		out = append(out, [2]string{fn, p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// readProbes reads probe names, one a line; blank lines and lines
// starting with # are skipped.
func readProbes(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out, sc.Err()
}

func labelCounts(labels map[string]int) string {
	var ks []string
	for k := range labels {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		name := k
		if name == "" {
			name = "unlabelled"
		}
		parts = append(parts, fmt.Sprintf("%d %s", labels[k], name))
	}
	return strings.Join(parts, ", ")
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

func ratio(a, b int64) string {
	if b == 0 {
		if a == 0 {
			return "1.000"
		}
		return "∞"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 3, 64)
}

func seconds(ns float64) string { return strconv.FormatFloat(ns/1e9, 'f', 2, 64) + " s" }

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "judge:", err)
	os.Exit(2)
}
