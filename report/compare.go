package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/meterio/meter/schema"
)

// Alpha is the significance level of Compare's marks, benchstat's
// default.
const Alpha = 0.05

// Tests Compare can judge a change with.
const (
	UTest     = "utest" // Mann-Whitney U test on the runs' values: the default, as benchstat's
	WelchTest = "welch" // Welch's t-test on the runs' values
)

// Runs is one side of a comparison: the models of one or more runs of a
// program. What varies from run to run (the host, the scheduler, the
// estimates of sampled probes) is what a change must stand out from, so
// significance is judged across runs, never from the spread of the calls
// within one run.
type Runs struct {
	Name   string // the file or directory given
	Models []*Model
}

// LoadRuns reads one side of a comparison: a model CSV (one run), or a
// directory whose .csv files are models, one per run, each with its
// sidecars. A directory without any is an error.
func LoadRuns(path string) (*Runs, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, pathErr(path, err)
	}
	r := &Runs{Name: path}
	if !fi.IsDir() {
		m, err := LoadModel(path)
		if err != nil {
			return nil, err
		}
		r.Models = []*Model{m}
		return r, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.csv"))
	if err != nil {
		return nil, &FileError{File: path, Err: err}
	}
	sort.Strings(files)
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		m, err := LoadModel(f)
		if err != nil {
			return nil, err
		}
		r.Models = append(r.Models, m)
	}
	if len(r.Models) == 0 {
		return nil, &FileError{File: path, Err: errors.New("no model CSV (*.csv) in this directory")}
	}
	return r, nil
}

// CompareOptions say how Compare judges a change.
type CompareOptions struct {
	Test  string  // UTest (also when empty) or WelchTest
	Alpha float64 // significance level; 0 means Alpha
}

func (o CompareOptions) alpha() float64 {
	if o.Alpha > 0 {
		return o.Alpha
	}
	return Alpha
}

// What a comparison measures of each probe, in the table's order.
const (
	callsMetric     = iota // calls per run
	inclusiveMetric        // mean inclusive time per call, ns
	inherentMetric         // mean inherent time per call, ns
	metrics
)

// change is one measure of one probe on both sides.
type change struct {
	Old, New    []float64 // one value per run that has it
	Center      [2]float64
	Delta       float64 // New/Old − 1 of the centers; NaN when either is missing or Old is 0
	P           float64 // p-value, adjusted over the row's tests (Holm); NaN when not tested
	Significant bool
	Untimed     [2]bool // the probe is untimed on that side: no times
	Partial     bool    // counts of a disabled or budget probe: they stop where it was switched off, so they are not tested
}

// difference is one probe's row in a comparison.
type difference struct {
	Probe    string
	Changes  [metrics]change
	Labels   [2]string // each side's label; runs that disagree give "a/b", the most frequent first
	Appeared bool      // in no run of the old side
	Vanished bool      // in no run of the new side
	// Own reports a significant change of the probe's own: its calls or
	// its inherent time. A change of inclusive time alone follows from
	// its callees, whose rows show where it comes from.
	Own bool
	// Size is how large its largest significant change is at least (of
	// its own changes, when it has one): the bound nearer to no change of
	// the change's confidence interval (at 1 − α/tests, on the logarithms
	// of the runs' values), as a log ratio; 0 when no change is
	// significant. A noisy probe's large change that is barely
	// significant has a small Size, so it does not outrank a clear one.
	Size  float64
	order float64 // its old side's inherent time, for the order of the rest
	sig   bool
}

// Significant reports whether any change of the row is.
func (d *difference) Significant() bool { return d.sig }

// comparison is the outcome of comparing two sides.
type comparison struct {
	Old, New    *Runs
	Options     CompareOptions
	Differences []difference // significant changes first (see Compare); then the rest in the old side's order; then appeared probes
	Tested      bool         // significance could be judged: more than one run on some side
}

// diff compares two sides probe by probe: calls per run, mean inclusive
// and mean inherent time per call. Each change is tested across the runs
// (each run gives one value a side) with the options' test; the row's
// tests are adjusted for their number (Holm), so that a probe that did not
// change is flagged at most α of the time. With one run a side nothing is
// tested.
func diff(old, cur *Runs, opt CompareOptions) *comparison {
	c := &comparison{Old: old, New: cur, Options: opt, Tested: len(old.Models) > 1 || len(cur.Models) > 1}
	index := map[string]int{}
	var diffs []difference
	for side, runs := range []*Runs{old, cur} {
		for _, m := range runs.Models {
			for i := range m.Rows {
				r := &m.Rows[i]
				k, ok := index[r.Probe]
				if !ok {
					k = len(diffs)
					index[r.Probe] = k
					diffs = append(diffs, difference{Probe: r.Probe})
				}
				if side == 0 {
					diffs[k].order += float64(r.InherentTotal)
				}
			}
		}
	}
	rows := [2][]map[string]*Row{}
	for side, runs := range []*Runs{old, cur} {
		for _, m := range runs.Models {
			byName := make(map[string]*Row, len(m.Rows))
			for i := range m.Rows {
				byName[m.Rows[i].Probe] = &m.Rows[i]
			}
			rows[side] = append(rows[side], byName)
		}
	}
	for k := range diffs {
		d := &diffs[k]
		for side := range rows {
			labels := map[string]int{}
			present, untimed := 0, 0
			for _, byName := range rows[side] {
				r := byName[d.Probe]
				count := 0.0
				if r != nil {
					present++
					labels[r.Label]++
					count = float64(r.Count)
					if schema.SwitchedOff(r.Label) {
						d.Changes[callsMetric].Partial = true
					}
					if r.Label == schema.LabelUntimed {
						untimed++
					}
					if r.Timed() {
						add(&d.Changes[inclusiveMetric], side, float64(r.Total)/float64(r.Count))
						add(&d.Changes[inherentMetric], side, float64(r.InherentTotal)/float64(r.Count))
					}
				}
				add(&d.Changes[callsMetric], side, count) // a run without the probe did not call it
			}
			if present == 0 {
				d.Appeared = d.Appeared || side == 0
				d.Vanished = d.Vanished || side == 1
			}
			if untimed > 0 && untimed == present {
				d.Changes[inclusiveMetric].Untimed[side] = true
				d.Changes[inherentMetric].Untimed[side] = true
			}
			d.Labels[side] = labelOf(labels)
		}
		c.judge(d)
	}
	sort.SliceStable(diffs, func(i, j int) bool {
		a, b := &diffs[i], &diffs[j]
		if a.Appeared != b.Appeared {
			return b.Appeared
		}
		if a.sig != b.sig {
			return a.sig
		}
		if a.Own != b.Own {
			return a.Own
		}
		if a.Size != b.Size {
			return a.Size > b.Size
		}
		if a.Appeared {
			return false
		}
		return a.order > b.order
	})
	c.Differences = diffs
	return c
}

func add(ch *change, side int, v float64) {
	if side == 0 {
		ch.Old = append(ch.Old, v)
	} else {
		ch.New = append(ch.New, v)
	}
}

// labelOf names a side's label: the one its runs share, or each label
// they have, the most frequent first.
func labelOf(labels map[string]int) string {
	var ls []string
	for l := range labels {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool {
		if labels[ls[i]] != labels[ls[j]] {
			return labels[ls[i]] > labels[ls[j]]
		}
		return ls[i] < ls[j]
	})
	if len(ls) == 1 {
		return ls[0]
	}
	for i, l := range ls {
		if l == "" {
			ls[i] = "none"
		}
	}
	return strings.Join(ls, "/")
}

// judge sets a row's centers, changes and p-values. The family Holm's
// correction counts holds only tests that carry information of their
// own: a measure that has one value in every run of both sides (a program
// that does a set amount of work calls each function as often every
// time) cannot show a change and gets p = 1 outside it, and inclusive
// time equal to inherent time in every run (a leaf) is one test, not two.
func (c *comparison) judge(d *difference) {
	var tested []int
	var ps []float64
	for k := range d.Changes {
		ch := &d.Changes[k]
		ch.P, ch.Delta = math.NaN(), math.NaN()
		ch.Center = [2]float64{c.center(ch.Old), c.center(ch.New)}
		if len(ch.Old) > 0 && len(ch.New) > 0 && ch.Center[0] != 0 {
			ch.Delta = ch.Center[1]/ch.Center[0] - 1
		} else if len(ch.Old) > 0 && len(ch.New) > 0 && ch.Center[1] == 0 {
			ch.Delta = 0
		}
		if !c.Tested || d.Appeared || d.Vanished || ch.Partial || len(ch.Old) == 0 || len(ch.New) == 0 {
			continue
		}
		if constant(ch.Old, ch.New) {
			ch.P = 1
			continue
		}
		if k == inherentMetric && slices.Equal(ch.Old, d.Changes[inclusiveMetric].Old) && slices.Equal(ch.New, d.Changes[inclusiveMetric].New) {
			continue // the inclusive test's
		}
		p, ok := c.test(ch.Old, ch.New)
		if !ok {
			continue
		}
		tested = append(tested, k)
		ps = append(ps, p)
	}
	var size [metrics]float64
	for i, p := range holm(ps) {
		k := tested[i]
		ch := &d.Changes[k]
		ch.P = p
		if p < c.Options.alpha() && ch.Center[0] != ch.Center[1] {
			ch.Significant, d.sig = true, true
			size[k] = c.bound(ch.Old, ch.New, c.Options.alpha()/float64(len(ps)))
		}
	}
	if in, inh := &d.Changes[inclusiveMetric], &d.Changes[inherentMetric]; math.IsNaN(inh.P) && !math.IsNaN(in.P) &&
		slices.Equal(in.Old, inh.Old) && slices.Equal(in.New, inh.New) {
		inh.P, inh.Significant, size[inherentMetric] = in.P, in.Significant, size[inclusiveMetric]
	}
	d.Own = d.Changes[callsMetric].Significant || d.Changes[inherentMetric].Significant
	if d.Own {
		d.Size = max(size[callsMetric], size[inherentMetric])
	} else {
		d.Size = size[inclusiveMetric]
	}
}

// constant reports whether every value of both sides is the same.
func constant(x, y []float64) bool {
	for _, v := range append(x[1:len(x):len(x)], y...) {
		if v != x[0] {
			return false
		}
	}
	return true
}

// center is what a side's values are summed up by: the median for the U
// test, which compares ranks; the mean for Welch's test, which compares
// means.
func (c *comparison) center(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	if c.Options.Test == WelchTest {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func (c *comparison) test(x, y []float64) (float64, bool) {
	if c.Options.Test == WelchTest {
		m1, s1 := meanSD(x)
		m2, s2 := meanSD(y)
		return welch(m1, s1, int64(len(x)), m2, s2, int64(len(y)))
	}
	return uTest(x, y)
}

// bound returns how large the change from x to y is at least: of the
// confidence interval at 1 − alpha of the shift in ln(1+value), the end
// nearer to zero, or 0 when the interval holds zero. Judge calls it with
// α over the number of the row's tests (Bonferroni), as Holm's
// correction tests the row's most significant change. For the U test the
// interval is the one that goes with it (Moses): between the (C+1)-th
// smallest and largest of the differences of every pair, where C is the
// largest U whose one-sided probability is at most α/2. For Welch's test,
// the mean difference of the logarithms less its t quantile times its
// standard error.
func (c *comparison) bound(x, y []float64, alpha float64) float64 {
	lx, ly := make([]float64, len(x)), make([]float64, len(y))
	for i, v := range x {
		lx[i] = math.Log1p(max(v, 0))
	}
	for i, v := range y {
		ly[i] = math.Log1p(max(v, 0))
	}
	var lo, hi float64
	if c.Options.Test == WelchTest {
		m1, s1 := meanSD(lx)
		m2, s2 := meanSD(ly)
		n1, n2 := float64(len(lx)), float64(len(ly))
		v1, v2 := s1*s1/n1, s2*s2/n2
		d := m2 - m1
		if v1+v2 == 0 {
			return math.Abs(d)
		}
		if n1 < 2 || n2 < 2 {
			return 0
		}
		df := (v1 + v2) * (v1 + v2) / (v1*v1/(n1-1) + v2*v2/(n2-1))
		half := studentQuantile(alpha, df) * math.Sqrt(v1+v2)
		lo, hi = d-half, d+half
	} else {
		diffs := make([]float64, 0, len(lx)*len(ly))
		for _, a := range lx {
			for _, b := range ly {
				diffs = append(diffs, b-a)
			}
		}
		sort.Float64s(diffs)
		k := uCritical(len(lx), len(ly), alpha)
		if k < 0 {
			return 0
		}
		lo, hi = diffs[k], diffs[len(diffs)-1-k]
	}
	switch {
	case lo > 0:
		return lo
	case hi < 0:
		return -hi
	}
	return 0
}

// uCritical returns the largest U (pairs where the first sample is the
// larger) whose probability of being at most that, with n1 values
// against n2 all distinct and from one distribution, is at most α/2; -1
// when even U = 0 is more likely than that.
func uCritical(n1, n2 int, alpha float64) int {
	n := n1 + n2
	if n > maxExact {
		// The normal approximation of U's distribution.
		mean, sd := float64(n1*n2)/2, math.Sqrt(float64(n1*n2*(n+1))/12)
		return int(math.Floor(mean - normalQuantile(alpha/2)*sd - 0.5))
	}
	// ways[k][u]: ways to choose k of the ranks seen so far with U = u,
	// U being the rank sum less k(k+1)/2: built on ranks 1…n.
	top := n1 * n2
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, top+1)
	}
	ways[0][0] = 1
	for r := 1; r <= n; r++ {
		for k := min(r, n1); k >= 1; k-- {
			// Choosing rank r as the k-th smallest adds r − k to U.
			add := r - k
			if add < 0 {
				continue
			}
			for u := top; u >= add; u-- {
				ways[k][u] += ways[k-1][u-add]
			}
		}
	}
	total := 0.0
	for _, w := range ways[n1] {
		total += w
	}
	cum, crit := 0.0, -1
	for u, w := range ways[n1] {
		cum += w
		if cum/total > alpha/2 {
			break
		}
		crit = u
	}
	return crit
}

// normalQuantile returns z with P(Z > z) = p for a standard normal Z.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfcinv(2*p) }

// studentQuantile returns t with P(|T| ≥ t) = alpha for Student's t with
// df degrees of freedom, by bisection on studentTwoSided.
func studentQuantile(alpha, df float64) float64 {
	lo, hi := 0.0, 1.0
	for studentTwoSided(hi, df) > alpha && hi < 1e6 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if studentTwoSided(mid, df) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// Compare writes the comparison of two sides as a table: per probe, calls
// per run, mean inclusive and mean inherent time per call, old → new,
// each with its change in percent and, when there are several runs, its
// p-value across runs: "+25.00% (p=0.008)" is significant, "~ (p=0.690)"
// is not. With several runs a side the values are the runs' medians (the
// means with Welch's test). Significant rows come first: those whose own
// calls or inherent time changed, then those whose inclusive time alone
// did (it follows from their callees), each by how large the change is at
// least (difference.Size); then the rest in the old side's order (largest
// inherent time first); probes that appeared last, those that vanished
// among the rest. The last row is the geometric mean of the per-call times over the
// probes on both sides; lines after the table say how significance was
// judged, or why it was not.
func Compare(w io.Writer, old, cur *Runs, opt CompareOptions) error {
	c := diff(old, cur, opt)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "probe\tcalls\tdelta\tinclusive/call\tdelta\tinherent/call\tdelta\tlabel")
	var lnOld, lnCur [metrics]float64 // sums of log centers, for the geometric mean
	var nGeo [metrics]int
	for i := range c.Differences {
		d := &c.Differences[i]
		fmt.Fprintf(tw, "%s", d.Probe)
		for k := range d.Changes {
			ch := &d.Changes[k]
			fmt.Fprintf(tw, "\t%s\t%s", c.values(d, k), c.delta(d, k))
			if k != callsMetric && !d.Appeared && !d.Vanished && ch.Center[0] > 0 && ch.Center[1] > 0 {
				lnOld[k] += math.Log(ch.Center[0])
				lnCur[k] += math.Log(ch.Center[1])
				nGeo[k]++
			}
		}
		switch {
		case d.Appeared:
			fmt.Fprintf(tw, "\t%s\n", d.Labels[1])
		case d.Vanished:
			fmt.Fprintf(tw, "\t%s\n", d.Labels[0])
		default:
			fmt.Fprintf(tw, "\t%s\n", labels(d.Labels[0], d.Labels[1]))
		}
	}
	if nGeo[inclusiveMetric] > 0 || nGeo[inherentMetric] > 0 {
		fmt.Fprint(tw, "geomean\t\t")
		for _, k := range []int{inclusiveMetric, inherentMetric} {
			if nGeo[k] == 0 {
				fmt.Fprint(tw, "\t–\t–")
				continue
			}
			g0, g1 := math.Exp(lnOld[k]/float64(nGeo[k])), math.Exp(lnCur[k]/float64(nGeo[k]))
			fmt.Fprintf(tw, "\t%s → %s\t%+.2f%%", Duration(g0, ""), Duration(g1, ""), 100*(g1/g0-1))
		}
		fmt.Fprint(tw, "\t\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			out.WriteString(strings.TrimRight(line, " \n") + "\n")
		}
	}
	c.footer(&out)
	_, err := io.WriteString(w, out.String())
	return err
}

// values prints one measure old → new.
func (c *comparison) values(d *difference, k int) string {
	ch := &d.Changes[k]
	side := func(s int) string {
		v := ch.Old
		if s == 1 {
			v = ch.New
		}
		switch {
		case s == 0 && d.Appeared, s == 1 && d.Vanished:
			return "–"
		case ch.Untimed[s]:
			return schema.LabelUntimed
		case len(v) == 0:
			return "–"
		case k == callsMetric:
			return fmt.Sprintf("%.0f", ch.Center[s])
		}
		return Duration(ch.Center[s], "")
	}
	a, b := side(0), side(1)
	if a == schema.LabelUntimed && b == schema.LabelUntimed {
		return schema.LabelUntimed
	}
	return a + " → " + b
}

// delta prints one measure's change with its mark.
func (c *comparison) delta(d *difference, k int) string {
	ch := &d.Changes[k]
	switch {
	case d.Appeared:
		return "appeared"
	case d.Vanished:
		return "vanished"
	case ch.Untimed[0] && ch.Untimed[1]:
		return ""
	case math.IsNaN(ch.Delta) && len(ch.Old) > 0 && len(ch.New) > 0:
		return "+∞%"
	case math.IsNaN(ch.Delta):
		return "–"
	}
	change := "±0.00%"
	if ch.Delta != 0 {
		change = fmt.Sprintf("%+.2f%%", 100*ch.Delta)
	}
	switch {
	case ch.Partial && c.Tested:
		return change + " (partial)"
	case math.IsNaN(ch.P):
		return change
	case ch.Significant:
		return fmt.Sprintf("%s (p=%.3f)", change, ch.P)
	}
	return fmt.Sprintf("~ (p=%.3f)", ch.P)
}

// footer says what the runs were, how significance was judged, or why
// it was not.
func (c *comparison) footer(out *strings.Builder) {
	n0, n1 := len(c.Old.Models), len(c.New.Models)
	if n0 > 1 || n1 > 1 {
		fmt.Fprintf(out, "old: %s, %s; new: %s, %s\n", c.Old.Name, plural(n0, "run"), c.New.Name, plural(n1, "run"))
	}
	alpha := c.Options.alpha()
	switch {
	case !c.Tested:
		fmt.Fprintln(out, "one run a side: no significance can be given, only the changes; the order is the old model's. "+
			"Give each side a directory of models from several runs (5 or more) for p-values across runs")
	case c.Options.Test == WelchTest:
		fmt.Fprintf(out, "p: Welch's t-test on the runs' values, adjusted over each row's tests (Holm); ~: no significant change (α=%.2f)\n", alpha)
	default:
		fmt.Fprintf(out, "p: Mann-Whitney U test on the runs' values, adjusted over each row's tests (Holm); ~: no significant change (α=%.2f)\n", alpha)
		if p := minP(n0, n1); p >= alpha/metrics {
			fmt.Fprintf(out, "with %d against %d runs the smallest p the U test can give is %.3f: a change that moves a row's three measures "+
				"can hardly be shown; take 5 runs a side or more\n", n0, n1, p)
		}
	}
	for _, d := range c.Differences {
		if d.Changes[callsMetric].Partial && c.Tested {
			fmt.Fprintln(out, "(partial): a disabled or budget probe's calls are counted only until it was switched off, so they are not tested")
			break
		}
	}
	chains := func(r *Runs) []string {
		var s []string
		seen := map[string]bool{}
		for _, m := range r.Models {
			if e := extensions(m); !seen[e] {
				seen[e] = true
				s = append(s, e)
			}
		}
		return s
	}
	a, b := chains(c.Old), chains(c.New)
	if len(a) > 1 || len(b) > 1 {
		fmt.Fprintln(out, "the runs of a side were measured by different chains: the same code measured by different chains can read differently")
	} else if a[0] != b[0] {
		fmt.Fprintf(out, "the chains differ: %s has %q, %s has %q\n", c.Old.Name, a[0], c.New.Name, b[0])
	}
}

func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// extensions is the model's chain as .meta names it; "" when unknown.
func extensions(m *Model) string {
	v, _ := m.MetaValue(schema.MetaExtensions)
	return v
}

// labels prints a probe's label, or its change.
func labels(old, cur string) string {
	if old == cur {
		return old
	}
	if old == "" {
		old = "none"
	}
	if cur == "" {
		cur = "none"
	}
	return old + " → " + cur
}
