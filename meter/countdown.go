package meter

import "sync/atomic"

// stripeCount is how many stripes a Countdown spreads its firings over. An
// enabled probe's firing counts on the stripe of its goroutine's P (as of
// the goroutine's last refill), so goroutines running at once on different
// cores decrement different cache lines, up to 8 Ps; a disabled probe's,
// which has no goroutine state at hand, on a stripe that follows from its
// runtime g's address.
const stripeCount = 8

// maxLease caps a lease: a goroutine takes its stripe anew, from the P it
// runs on, each time its lease runs out (leaseOut), so a goroutine that
// moved to another P counts on its old P's line for at most this many
// firings; and two cores meet on the shared word (taken) once per lease each.
const maxLease = 256

// procStripes is how many stripes an enabled probe's firings use: its
// goroutine's P, doubled so that two Ps never share a pair of adjacent
// lines (procStripe), modulo stripeCount.
const procStripes = stripeCount / 2

// Countdown is a per-probe count, shared in meaning by every goroutine, on
// which exactly one firing in n is due over whole rounds: tracepoint's
// every Nth firing, spotcheck's every Nth disabled firing.
//
// The firings' units are numbered 1, 2, 3, … in the order stripes lease
// them from taken, the count's one shared word: a stripe whose lease ran
// out adds k to taken (one atomic add, no retry) and so owns the k units
// up to the sum. The unit numbered a multiple of n ends a round: the
// firing whose lease holds it is due, whichever place that unit has in the
// lease. Every other firing costs one atomic decrement of its stripe's
// lease, on a line of its own (Take). Leased units not used yet count as
// taken, so a due firing may come up to (k−1) of its own lease, plus the
// units other stripes hold, early, never late: after any whole number of
// rounds of firings exactly that many were due, as long as all stripes
// together hold fewer than n units. The lease is n/(2×spread) units (1 to
// maxLease), spread being how many stripes the count's firings use (reset),
// which leaves that bound a factor of two. With n below 2×spread every
// firing takes its unit alone and the count is exact at every firing. A
// stripe goes to taken's line once per lease: at N = 100 on 2 Ps, once in
// 25 firings.
type Countdown struct {
	n      atomic.Int64             // one firing in n is due
	lease  atomic.Int64             // units a stripe takes at a time
	leases atomic.Pointer[leaseSet] // nil until the first reset
}

// leaseSet holds what firings write: the stripes, and the units leased so
// far, each on a cache line of its own, apart from the probe's fields that
// every firing reads (a write to taken would otherwise make every other
// core read those again).
type leaseSet struct {
	stripes [stripeCount]leaseLine // first: the assembly of begin indexes from the start
	taken   atomic.Int64           // units leased so far
	_       [56]byte
}

type leaseLine struct {
	units atomic.Int64
	_     [56]byte
}

// reset starts the count over: one firing in n (at least 1) due, counted
// on spread stripes (procStripes for an enabled probe's, stripeCount for a
// disabled one's).
//
// A reset while other goroutines count may lose or add a few of their
// firings to the new round; the probe's state changed under them.
func (c *Countdown) reset(n int64, spread int) {
	n = max(n, 1)
	ls := c.leases.Load()
	if ls == nil {
		ls = new(leaseSet)
		if !c.leases.CompareAndSwap(nil, ls) {
			ls = c.leases.Load()
		}
	}
	c.n.Store(n)
	c.lease.Store(min(max(n/int64(2*max(spread, 1)), 1), maxLease))
	ls.taken.Store(0)
	for i := range ls.stripes {
		ls.stripes[i].units.Store(0)
	}
}

// Take counts one firing on stripe s and reports whether it is due. The
// assembly of begin inlines its first line and calls refill.
func (c *Countdown) Take(s uint) bool {
	ls := c.leases.Load()
	if ls == nil {
		return false // never reset: nothing is counted
	}
	if ls.stripes[s&(stripeCount-1)].units.Add(-1) >= 0 {
		return false
	}
	return c.refill(s)
}

// refill is Take's path for a stripe whose lease ran out: the decrement
// that found it empty is undone, and the firing leases the next k units,
// keeping k−1 on its stripe. It is due if they hold a multiple of n (k is
// below n: one at most).
func (c *Countdown) refill(s uint) bool {
	ls := c.leases.Load()
	l := &ls.stripes[s&(stripeCount-1)].units
	k, n := c.lease.Load(), c.n.Load()
	t := ls.taken.Add(k)
	l.Add(k) // the undone decrement, and the lease less this firing's unit
	return t/n != (t-k)/n
}

// Counted returns how many firings the count has seen since its reset,
// as of now (exact when no firing is counting at the same time).
func (c *Countdown) Counted() int64 {
	ls := c.leases.Load()
	if ls == nil {
		return 0
	}
	counted := ls.taken.Load()
	for i := range ls.stripes {
		counted -= ls.stripes[i].units.Load()
	}
	return max(counted, 0)
}

// stripe returns the stripe of the goroutine whose runtime g is at g.
func stripe(g uintptr) uint { return uint(uint64(g) * 0x9E3779B97F4A7C15 >> 61) }
