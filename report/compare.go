package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Alpha is the significance level of Compare's marks, benchstat's
// default.
const Alpha = 0.05

// Compare writes a table of two models, probe by probe: counts, mean
// inclusive and mean inherent times old → new, the change in percent, and
// the labels. Rows come in the old model's order; probes only in the new
// one follow, marked appeared; those only in the old one are marked
// vanished. Where both models carry spreads (.stats), a change gets
// Welch's t-test: "~ (p=0.412)" when it is not significant at Alpha,
// "+12.50% (p=0.003)" when it is. The last row is the geometric mean of
// the means over the probes in both. Lines after the table say how
// significance was judged, or why it was not.
func Compare(w io.Writer, old, cur *Model) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "probe\tcount\tinclusive mean\tdelta\tinherent mean\tdelta\tlabel")
	curRow := make(map[string]*Row, len(cur.Rows))
	for i := range cur.Rows {
		curRow[cur.Rows[i].Probe] = &cur.Rows[i]
	}
	inOld := make(map[string]bool, len(old.Rows))
	significance := old.Spreads != nil && cur.Spreads != nil
	var lnOld, lnCur [2]float64 // sums of log means, inclusive and inherent, for the geometric mean
	var nGeo [2]int
	for i := range old.Rows {
		o := &old.Rows[i]
		inOld[o.Probe] = true
		c := curRow[o.Probe]
		if c == nil {
			fmt.Fprintf(tw, "%s\t%d → –\t%s → –\tvanished\t%s → –\tvanished\t%s\n",
				o.Probe, o.Count, mean(o.Total, o.Count), mean(o.InherentTotal, o.Count), o.Label)
			continue
		}
		var deltas [2]string
		for k, tot := range [2][2]int64{{o.Total, c.Total}, {o.InherentTotal, c.InherentTotal}} {
			deltas[k] = delta(o, c, tot[0], tot[1], k, old, cur, significance)
			if o.Count > 0 && c.Count > 0 && tot[0] > 0 && tot[1] > 0 {
				lnOld[k] += math.Log(float64(tot[0]) / float64(o.Count))
				lnCur[k] += math.Log(float64(tot[1]) / float64(c.Count))
				nGeo[k]++
			}
		}
		fmt.Fprintf(tw, "%s\t%d → %d\t%s → %s\t%s\t%s → %s\t%s\t%s\n", o.Probe, o.Count, c.Count,
			mean(o.Total, o.Count), mean(c.Total, c.Count), deltas[0],
			mean(o.InherentTotal, o.Count), mean(c.InherentTotal, c.Count), deltas[1], labels(o.Label, c.Label))
	}
	for i := range cur.Rows {
		c := &cur.Rows[i]
		if inOld[c.Probe] {
			continue
		}
		fmt.Fprintf(tw, "%s\t– → %d\t– → %s\tappeared\t– → %s\tappeared\t%s\n",
			c.Probe, c.Count, mean(c.Total, c.Count), mean(c.InherentTotal, c.Count), c.Label)
	}
	if nGeo[0] > 0 || nGeo[1] > 0 {
		fmt.Fprint(tw, "geomean\t")
		for k := range nGeo {
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
	switch {
	case significance:
		fmt.Fprintf(&out, "p: Welch's t-test on the means, spreads from %s and %s; ~: no significant change (α=%.2f)\n",
			old.Name+StatsSuffix, cur.Name+StatsSuffix, Alpha)
	default:
		var missing []string
		for _, m := range []*Model{old, cur} {
			if m.Spreads == nil {
				missing = append(missing, m.Name+StatsSuffix)
			}
		}
		verb := "is"
		if len(missing) > 1 {
			verb = "are"
		}
		fmt.Fprintf(&out, "no significance marks: %s %s missing (the runtime writes each probe's spread there); changes alone\n",
			strings.Join(missing, " and "), verb)
	}
	if a, b := extensions(old), extensions(cur); a != b {
		fmt.Fprintf(&out, "the chains differ: %s has %q, %s has %q\n", old.Name, a, cur.Name, b)
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// extensions is the model's chain as .meta names it; "" when unknown.
func extensions(m *Model) string {
	v, _ := m.MetaValue(MetaExtensions)
	return v
}

// mean prints total/count as a time; "–" with no metered firing.
func mean(total, count int64) string {
	if count == 0 {
		return "–"
	}
	return Duration(float64(total)/float64(count), "")
}

// delta prints the change of one mean (k: 0 inclusive, 1 inherent) with
// its significance mark.
func delta(o, c *Row, oldTotal, curTotal int64, k int, old, cur *Model, significance bool) string {
	if o.Count == 0 || c.Count == 0 {
		return "–"
	}
	m0, m1 := float64(oldTotal)/float64(o.Count), float64(curTotal)/float64(c.Count)
	change := "±0.00%"
	switch {
	case m0 == 0 && m1 == 0:
	case m0 == 0:
		change = "+∞%"
	default:
		if d := 100 * (m1/m0 - 1); d != 0 {
			change = fmt.Sprintf("%+.2f%%", d)
		}
	}
	if !significance {
		return change
	}
	s0, ok0 := old.Spreads[o.Probe]
	s1, ok1 := cur.Spreads[c.Probe]
	if !ok0 || !ok1 {
		return change + " (no spread)"
	}
	sd0, sd1 := s0.Inclusive, s1.Inclusive
	if k == 1 {
		sd0, sd1 = s0.Inherent, s1.Inherent
	}
	// The test's sample sizes are the firings measured: for a sampled
	// probe, the .stats file says how many; otherwise the count is.
	n0, n1 := o.Count, c.Count
	if s0.Metered > 0 {
		n0 = s0.Metered
	}
	if s1.Metered > 0 {
		n1 = s1.Metered
	}
	p, ok := Welch(m0, sd0, n0, m1, sd1, n1)
	if !ok {
		return change + " (n<2)"
	}
	if p >= Alpha {
		return fmt.Sprintf("~ (p=%.3f)", p)
	}
	return fmt.Sprintf("%s (p=%.3f)", change, p)
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
