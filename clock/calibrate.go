package clock

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// calibrationBudget bounds the start-up calibration: 5 ms, part of every
// instrumented program's start. A point's bracket is a few clock reads
// wide, a few hundred ns at most on a VM, so one pair of points 5 ms
// apart gives the rate to about 1e-4, and the median of the pairs' slopes
// does better: far finer than the model's times need.
const calibrationBudget = 5 * time.Millisecond

const (
	calibrationPoints  = 20 // points spread evenly over the budget
	calibrationTries   = 8  // paired reads per point; the narrowest wins
	calibrationClosing = 100 * time.Microsecond
	calibrationSpread  = 1e-3
	calibrationMinRate = 1e-3 // ticks per ns: 1 MHz …
	calibrationMaxRate = 100  // … 100 GHz
)

// calibration is the outcome of one calibrate call.
type calibration struct {
	ticksPerNano float64       // the estimated rate
	took         time.Duration // wall time spent, budget included
	points, kept int           // points taken, points narrow enough to use
	span         time.Duration // monotonic time between the first and last kept point
	slopes       int           // pair estimates behind the median
	spread       float64       // interquartile range of the pair estimates / median
}

// point is one tick reading bracketing one monotonic reading.
type point struct {
	tick  int64 // midpoint of the two tick reads
	ns    int64 // monotonic ns, as mono reads them
	width int64 // ticks between the two tick reads: the point's uncertainty
}

// calibrate estimates the rate of read, in ticks per nanosecond of mono
// (monotonic ns, from any origin), spending at most budget of it. Past it, at most the read under way finishes,
// and, when a stall cut the points short, one closing point is taken.
//
// A VM's steal time can stall any read for microseconds or milliseconds,
// so no single pair of readings can be trusted:
//   - each point brackets a monotonic reading between two tick reads, and
//     keeps the narrowest of a few tries (min-latency bracketing);
//   - points wider than twice the narrowest are dropped;
//   - the rate is the median of the slopes between pairs of kept points at
//     least half the kept span apart, so a stalled point moves few of them.
func calibrate(read, mono func() int64, budget time.Duration) (calibration, error) {
	var c calibration
	// A first call may stall where later ones do not (a page fault on the
	// vDSO's page, code translated on first use under valgrind): make it
	// before the budget starts.
	read()
	origin := mono()
	limit := origin + int64(budget)
	step := int64(budget) / calibrationPoints

	var pts [calibrationPoints]point
	n := 0
	for i := range calibrationPoints {
		for mono() < origin+int64(i)*step {
			// Spin: a sleep could overshoot the budget on a busy host.
		}
		p, ok := bracket(read, mono, limit)
		if !ok {
			break
		}
		pts[n] = p
		n++
	}
	// On a busy host the OS may preempt this thread for tens or hundreds
	// of ms, eating the budget and leaving the points bunched at its
	// start. The stall costs accuracy nothing, only the points matter, so
	// one closing point (at most calibrationClosing of reads) restores a
	// wide window instead of giving up the TSC.
	if n > 0 && n < calibrationPoints {
		if p, ok := bracket(read, mono, mono()+int64(calibrationClosing)); ok {
			pts[n] = p
			n++
		}
	}
	c.took = time.Duration(mono() - origin)
	c.points = n
	if n < 2 {
		return c, fmt.Errorf("clock: calibration took only %d points in %v", n, budget)
	}

	minWidth := pts[0].width
	for _, p := range pts[1:n] {
		minWidth = min(minWidth, p.width)
	}
	var keep [calibrationPoints]point
	kept := keep[:0]
	for _, p := range pts[:n] {
		if p.width <= 2*minWidth+1 {
			kept = append(kept, p)
		}
	}
	c.kept = len(kept)
	if len(kept) < 2 {
		return c, errors.New("clock: calibration kept fewer than 2 points")
	}
	span := kept[len(kept)-1].ns - kept[0].ns
	c.span = time.Duration(span)
	if span < int64(budget)/4 {
		return c, fmt.Errorf("clock: calibration spanned only %v", c.span)
	}

	var slopes [calibrationPoints * calibrationPoints / 2]float64
	m := 0
	for i := range kept {
		for j := i + 1; j < len(kept); j++ {
			if dn := kept[j].ns - kept[i].ns; dn >= span/2 {
				slopes[m] = float64(kept[j].tick-kept[i].tick) / float64(dn)
				m++
			}
		}
	}
	s := slopes[:m]
	slices.Sort(s)
	c.slopes = m
	c.ticksPerNano = s[m/2]
	if m%2 == 0 {
		c.ticksPerNano = (s[m/2-1] + s[m/2]) / 2
	}
	c.spread = (s[3*m/4] - s[m/4]) / c.ticksPerNano
	if !(c.ticksPerNano >= calibrationMinRate && c.ticksPerNano <= calibrationMaxRate) {
		return c, fmt.Errorf("clock: calibrated rate %g ticks/ns is implausible", c.ticksPerNano)
	}
	if c.spread > calibrationSpread || math.IsNaN(c.spread) {
		return c, fmt.Errorf("clock: calibration estimates disagree by %.2g (ticks not steady against CLOCK_MONOTONIC)", c.spread)
	}
	return c, nil
}

// calibrateTSC is calibrate, once more when the first try failed. A stall
// of the thread (a busy host, a container's CPU quota spent) may eat the
// budget before the first point, or bunch every point at its end, and
// says nothing of the counter. Giving up would leave the process the
// monotonic clock, dearer at every metered firing, for its whole life; a
// second try costs one more budget, and only on a start that failed.
func calibrateTSC(read, mono func() int64, budget time.Duration) (calibration, error) {
	c, err := calibrate(read, mono, budget)
	if err != nil {
		c, err = calibrate(read, mono, budget)
	}
	return c, err
}

// sinceNow returns the monotonic clock as calibrate reads it: ns since the
// call.
func sinceNow() func() int64 {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}

// bracket takes the narrowest of calibrationTries (tick, mono, tick)
// triples. It gives up once the monotonic clock passes limit, so at most one
// read runs past it, and reports ok only if it has a point.
func bracket(read, mono func() int64, limit int64) (best point, ok bool) {
	best.width = math.MaxInt64
	for range calibrationTries {
		if mono() >= limit {
			break
		}
		t0 := read()
		ns := mono()
		if ns >= limit {
			break
		}
		t1 := read()
		if w := t1 - t0; w >= 0 && w < best.width {
			best, ok = point{tick: t0 + w/2, ns: ns, width: w}, true
		}
	}
	return best, ok
}
