package report

import "math"

// Welch returns the two-sided p-value of Welch's t-test for the
// difference of two means, given each sample's mean, standard deviation
// and size. It needs at least two firings a side; ok is false otherwise.
// With no spread on either side, any difference is certain (p = 0) and
// none is p = 1.
func welch(mean1, sd1 float64, n1 int64, mean2, sd2 float64, n2 int64) (p float64, ok bool) {
	if n1 < 2 || n2 < 2 {
		return 0, false
	}
	v1, v2 := sd1*sd1/float64(n1), sd2*sd2/float64(n2)
	se2 := v1 + v2
	if se2 == 0 {
		if mean1 == mean2 {
			return 1, true
		}
		return 0, true
	}
	t := (mean2 - mean1) / math.Sqrt(se2)
	df := se2 * se2 / (v1*v1/float64(n1-1) + v2*v2/float64(n2-1))
	return studentTwoSided(t, df), true
}

// studentTwoSided is P(|T| ≥ |t|) for Student's t with df degrees of
// freedom: the regularized incomplete beta function I_x(df/2, 1/2) at
// x = df/(df+t²). Past a million degrees of freedom the t distribution is
// the normal one to far better than the p-value's printed digits, and the
// continued fraction would need thousands of terms.
func studentTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if df > 1e6 {
		return math.Erfc(math.Abs(t) / math.Sqrt2)
	}
	return regIncBeta(df/(df+t*t), df/2, 0.5)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated by its continued fraction (modified Lentz method) on the side
// where the fraction converges fast.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) + lab - la - lb)
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction evaluates the continued fraction of I_x(a, b):
// 1/(1+ d1/(1+ d2/(1+ …))) with d(2m+1) = −(a+m)(a+b+m)x/((a+2m)(a+2m+1))
// and d(2m) = m(b−m)x/((a+2m−1)(a+2m)).
func betaFraction(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/clamp(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m <= 10000; m++ {
		even := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / clamp(1+even*d)
		c = clamp(1 + even/c)
		h *= d * c
		odd := -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / clamp(1+odd*d)
		c = clamp(1 + odd/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return h
}
