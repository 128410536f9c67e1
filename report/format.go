package report

import (
	"math"
	"strconv"
)

var timeUnits = [...]struct {
	ns   float64
	name string
}{{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}}

// Duration formats ns with three significant digits in the largest unit
// that keeps the figure at 1 or more: "850 ns", "12.3 µs", "1.48 s". sep
// goes between figure and unit: " " on the page, "" in compare's table.
func Duration(ns float64, sep string) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "?"
	}
	neg := ns < 0
	ns = math.Abs(ns)
	u := 0
	for u < len(timeUnits)-1 && round3(ns/timeUnits[u].ns) >= 1000 {
		u++
	}
	s := sig3(ns/timeUnits[u].ns) + sep + timeUnits[u].name
	if neg {
		s = "-" + s
	}
	return s
}

// round3 rounds x to three significant digits.
func round3(x float64) float64 {
	if x == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(x)))
	return math.Round(x*p) / p
}

// sig3 prints x with three significant digits and no exponent (at least
// the integer part of a figure of 1000 or more).
func sig3(x float64) string {
	x = round3(x)
	switch {
	case x == 0:
		return "0"
	case x < 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

// Count prints n with thousands separated by commas: 1,234,567.
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	start := 0
	if n < 0 {
		start = 1
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	out = append(out, s[:start]...)
	digits := s[start:]
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, digits[i])
	}
	return string(out)
}
