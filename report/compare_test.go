package report

import (
	"strings"
	"testing"
)

func compareModels() (old, cur *Model) {
	old = &Model{Name: "old.csv",
		Rows: []Row{
			{Probe: "a.handle", Count: 100, Total: 100_000_000, InherentTotal: 50_000_000, Label: "hotspot"},
			{Probe: "a.parse", Count: 50, Total: 500_000, InherentTotal: 250_000},
			{Probe: "a.gone", Count: 10, Total: 10_000, InherentTotal: 10_000, Label: "disabled"},
			{Probe: "a.once", Count: 1, Total: 2_000, InherentTotal: 2_000},
			{Probe: "a.zero", Label: "budget"},
		},
		Spreads: map[string]Spread{"a.handle": {Inclusive: 100_000, Inherent: 10_000}, "a.parse": {Inclusive: 5_000, Inherent: 1_000}, "a.once": {}},
		Meta:    []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000)"}},
	}
	cur = &Model{Name: "new.csv",
		Rows: []Row{
			{Probe: "a.handle", Count: 120, Total: 108_000_000, InherentTotal: 60_000_000, Label: "hotspot"},
			{Probe: "a.fresh", Count: 7, Total: 7_000, InherentTotal: 3_500, Label: "hotspot"},
			{Probe: "a.parse", Count: 40, Total: 420_000, InherentTotal: 200_000, Label: "hotspot"},
			{Probe: "a.once", Count: 3, Total: 3_000, InherentTotal: 3_000},
			{Probe: "a.zero", Label: "budget"},
		},
		Spreads: map[string]Spread{"a.handle": {Inclusive: 100_000, Inherent: 10_000}, "a.parse": {Inclusive: 5_000, Inherent: 1_000}, "a.once": {Inclusive: 10, Inherent: 10}},
		Meta:    []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000)"}},
	}
	return old, cur
}

// handle: inclusive 1ms → 900µs, t = −7.4 on 100 and 120 firings;
// inherent unchanged. parse: +5% with t = 0.47 on ~84 degrees of
// freedom, p = 0.639 (numerical integration of the t density gives
// 0.63858). once: one firing before, no test. zero: never metered. gone
// and fresh: vanished and appeared. geomean over handle, parse and once:
// inclusive (1ms·10µs·2µs)^⅓ = 27.1µs → (900µs·10.5µs·1µs)^⅓ = 21.1µs,
// −22.11%; inherent (500µs·5µs·2µs)^⅓ = 17.1µs → 13.6µs, (½)^⅓ − 1 = −20.63%.
const wantCompare = `probe     count      inclusive mean   delta              inherent mean    delta          label
a.handle  100 → 120  1.00ms → 900µs   -10.00% (p=0.000)  500µs → 500µs    ~ (p=1.000)    hotspot
a.parse   50 → 40    10.0µs → 10.5µs  ~ (p=0.639)        5.00µs → 5.00µs  ~ (p=1.000)    none → hotspot
a.gone    10 → –     1.00µs → –       vanished           1.00µs → –       vanished       disabled
a.once    1 → 3      2.00µs → 1.00µs  -50.00% (n<2)      2.00µs → 1.00µs  -50.00% (n<2)
a.zero    0 → 0      – → –            –                  – → –            –              budget
a.fresh   – → 7      – → 1.00µs       appeared           – → 500ns        appeared       hotspot
geomean              27.1µs → 21.1µs  -22.11%            17.1µs → 13.6µs  -20.63%
p: Welch's t-test on the means, spreads from old.csv.stats and new.csv.stats; ~: no significant change (α=0.05)
`

func TestCompare(t *testing.T) {
	old, cur := compareModels()
	var b strings.Builder
	if err := Compare(&b, old, cur); err != nil {
		t.Fatal(err)
	}
	if b.String() != wantCompare {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), wantCompare)
	}
}

// Without spreads on a side there are changes and no marks, and one line
// says why; a probe missing from the spreads is said so in its cell.
func TestCompareWithoutSpreads(t *testing.T) {
	old, cur := compareModels()
	cur.Spreads = nil
	cur.Meta = []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000) budget(percent=10 unit=1000ns)"}}
	var b strings.Builder
	Compare(&b, old, cur)
	lines := strings.Split(b.String(), "\n")
	if want := "a.handle  100 → 120  1.00ms → 900µs   -10.00%   500µs → 500µs    ±0.00%    hotspot"; lines[1] != want {
		t.Errorf("line 2:\n%q\nwant\n%q", lines[1], want)
	}
	if want := "no significance marks: new.csv.stats is missing (the runtime writes each probe's spread there); changes alone"; lines[8] != want {
		t.Errorf("line 9: %q", lines[8])
	}
	if !strings.HasPrefix(lines[9], `the chains differ: old.csv has "hotspot(`) || !strings.Contains(lines[9], `new.csv has "hotspot(threshold=10000ns inherent=2000ns initial=1000) budget(`) {
		t.Errorf("line 10: %q", lines[9])
	}
	if strings.Contains(b.String(), "(p=") || strings.Contains(b.String(), "~") {
		t.Errorf("significance marks without spreads:\n%s", b.String())
	}

	old.Spreads = nil
	b.Reset()
	Compare(&b, old, cur)
	if !strings.Contains(b.String(), "no significance marks: old.csv.stats and new.csv.stats are missing") {
		t.Errorf("both missing:\n%s", b.String())
	}

	// A sampled probe's test counts the firings metered, not its count.
	old, cur = compareModels()
	cur.Spreads["a.handle"] = Spread{Inclusive: 100_000, Inherent: 10_000, Metered: 1}
	b.Reset()
	Compare(&b, old, cur)
	if !strings.Contains(b.String(), "-10.00% (n<2)") {
		t.Errorf("the metered count is not the sample size:\n%s", b.String())
	}

	old, cur = compareModels()
	delete(cur.Spreads, "a.parse")
	b.Reset()
	Compare(&b, old, cur)
	if !strings.Contains(b.String(), "+5.00% (no spread)") {
		t.Errorf("a probe without a spread:\n%s", b.String())
	}
}
