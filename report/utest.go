package report

import (
	"math"
	"sort"
)

// uTest returns the two-sided p-value of the Mann-Whitney U test
// (the Wilcoxon rank-sum test) of x against y: how likely a rank sum at
// least as far from its mean would be if both were samples of one
// distribution. Tied values share their mean rank, and the p-value is the
// exact one of the permutation distribution of those ranks, so it holds
// for the handful of runs a side a comparison has, ties (equal counts)
// included. Past maxExact values in all it is the normal approximation
// with the tie correction. It needs a value on each side; ok is false
// otherwise.
func uTest(x, y []float64) (p float64, ok bool) {
	return mannWhitney(x, y, len(x)+len(y) <= maxExact)
}

func mannWhitney(x, y []float64, exact bool) (p float64, ok bool) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, false
	}
	n := n1 + n2
	type value struct {
		v    float64
		side int
	}
	all := make([]value, 0, n)
	for _, v := range x {
		all = append(all, value{v, 0})
	}
	for _, v := range y {
		all = append(all, value{v, 1})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Doubled mid-ranks are whole numbers: ranks i+1 … j share (i+1+j)/2.
	ranks := make([]int, n)
	var ties float64 // Σ (t³ − t) over groups of t tied values
	for i := 0; i < n; {
		j := i
		for j < n && all[j].v == all[i].v {
			j++
		}
		for k := i; k < j; k++ {
			ranks[k] = i + 1 + j
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	if ties == float64(n)*float64(n)*float64(n)-float64(n) {
		return 1, true // every value equal: no evidence of any difference
	}
	sum := 0 // doubled rank sum of x
	for k, v := range all {
		if v.side == 0 {
			sum += ranks[k]
		}
	}
	mean := n1 * (n + 1) // doubled mean of the rank sum
	dist := abs(sum - mean)
	if !exact {
		// Normal approximation, with the tie correction and a continuity
		// correction of half a rank (one in doubled ranks).
		v := float64(n1*n2) / 12 * (float64(n+1) - ties/float64(n*(n-1)))
		z := (float64(dist)/2 - 0.5) / math.Sqrt(v)
		return math.Min(1, math.Erfc(math.Max(z, 0)/math.Sqrt2)), true
	}
	// ways[k][s]: the number of ways to choose k of the values seen so far
	// with doubled ranks summing to s. Float64 holds every count exactly:
	// C(50, 25) is below 2⁵³.
	top := 2 * n * n1
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, top+1)
	}
	ways[0][0] = 1
	for i, r := range ranks {
		for k := min(i+1, n1); k >= 1; k-- {
			row, prev := ways[k], ways[k-1]
			for s := top; s >= r; s-- {
				row[s] += prev[s-r]
			}
		}
	}
	var extreme, total float64
	for s, w := range ways[n1] {
		if w == 0 {
			continue
		}
		total += w
		if abs(s-mean) >= dist {
			extreme += w
		}
	}
	return extreme / total, true
}

// maxExact is the most values the U test takes the exact distribution
// of: beyond it the normal approximation is as good as the printed digits.
const maxExact = 50

// minP is the smallest two-sided p-value the U test can give n1 values
// against n2, all distinct: when it is above the significance level, no
// change can be shown with that many runs.
func minP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// 2 / C(n1+n2, n1): the two most extreme orderings.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// holm adjusts the p-values of a family of tests for their number
// (Holm–Bonferroni): a change is significant at α when its adjusted
// p-value is below α, and then the chance that any test of the family
// flags a change where there is none stays under α. The result is in the
// order of ps.
func holm(ps []float64) []float64 {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ps[order[a]] < ps[order[b]] })
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		running = math.Max(running, math.Min(1, float64(m-rank)*ps[i]))
		adj[i] = running
	}
	return adj
}
