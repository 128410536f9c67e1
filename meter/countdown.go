package meter

import "sync/atomic"

// Stripes is how many stripes a Countdown spreads its firings over. An
// enabled probe's firing counts on the stripe of its goroutine's P (as of
// the goroutine's last refill), so goroutines running at once on different
// cores decrement different cache lines, up to 8 Ps; a disabled probe's,
// which has no goroutine state at hand, on a stripe that follows from its
// runtime g's address.
const Stripes = 8

// maxLease caps a lease: a goroutine takes its stripe anew, from the P it
// runs on, each time its lease runs out (leaseOut), so a goroutine that
// moved to another P counts on its old P's line for at most this many
// firings; and two cores meet on the round's line once per lease each.
const maxLease = 256

// Countdown is a per-probe count, shared in meaning by every goroutine, on
// which exactly one firing in n is due over whole rounds: tracepoint's
// every Nth firing, spotcheck's every Nth disabled firing.
//
// The round's units live in left. A stripe takes a lease of several units
// at once while many are left and one at a time near the round's end, so
// the unit that takes left from 1 to 0 is always taken alone, by the
// firing it belongs to: that firing is due, and puts n units back. A
// firing that finds its stripe's lease non-empty costs one atomic decrement
// on its stripe's line and nothing else (Take). Leased units not used yet
// count as taken, so a due firing may come up to Stripes×(lease−1)
// firings early, never late. The lease is n/(2×Stripes) units (1 to
// maxLease), so that is less than half a round: after any whole number of
// rounds of firings, exactly that many were due; with n below 2×Stripes
// every firing takes its unit from the round, and the count is exact at
// every firing. A stripe goes back to the round's line once per lease, and
// the round's last lease-many units are taken singly: at N = 100 about a
// quarter of the firings touch the round's line, which is where two cores
// firing one probe meet; from 1 in 4,096, a few in a thousand.
type Countdown struct {
	n      atomic.Int64             // one firing in n is due
	lease  atomic.Int64             // units a stripe takes at a time while more than that are left
	leases atomic.Pointer[leaseSet] // nil until the first reset
}

// leaseSet holds what firings write: the stripes, and the round's units,
// each on a cache line of its own, apart from the probe's fields that
// every firing reads (a write to left would otherwise make every other
// core read those again).
type leaseSet struct {
	stripes [Stripes]leaseLine // first: the assembly of begin indexes from the start
	left    atomic.Int64       // units left in the current round
	rounds  atomic.Int64       // due firings so far
	_       [48]byte
}

type leaseLine struct {
	units atomic.Int64
	_     [56]byte
}

// reset starts the count over: one firing in n (at least 1) due.
//
// A reset while other goroutines count may lose or add a few of their
// firings to the new round; the probe's state changed under them.
func (c *Countdown) reset(n int64) {
	n = max(n, 1)
	ls := c.leases.Load()
	if ls == nil {
		ls = new(leaseSet)
		if !c.leases.CompareAndSwap(nil, ls) {
			ls = c.leases.Load()
		}
	}
	c.n.Store(n)
	c.lease.Store(min(max(n/(2*Stripes), 1), maxLease))
	ls.left.Store(n)
	ls.rounds.Store(0)
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
	if ls.stripes[s&(Stripes-1)].units.Add(-1) >= 0 {
		return false
	}
	return c.refill(s)
}

// refill is Take's path for a stripe whose lease ran out: the decrement
// that found it empty is undone, and the unit comes from the round.
func (c *Countdown) refill(s uint) bool {
	ls := c.leases.Load()
	l := &ls.stripes[s&(Stripes-1)].units
	l.Add(1)
	for {
		r := ls.left.Load()
		k := c.lease.Load()
		if r <= k {
			k = 1
		}
		if !ls.left.CompareAndSwap(r, r-k) {
			continue
		}
		// The firing that takes left to zero took the round's last unit:
		// it is due, and puts the next round's n units back. Firings that
		// take left below zero before it does took units of later rounds:
		// one that lands on a further multiple of n completes one.
		if n := c.n.Load(); r <= 1 && (1-r)%n == 0 {
			ls.left.Add(n)
			ls.rounds.Add(1)
			return true
		}
		if k > 1 {
			l.Add(k - 1)
		}
		return false
	}
}

// Counted returns how many firings the count has seen since its reset,
// as of now (exact when no firing is counting at the same time).
func (c *Countdown) Counted() int64 {
	ls := c.leases.Load()
	if ls == nil {
		return 0
	}
	n := c.n.Load()
	counted := ls.rounds.Load()*n + n - ls.left.Load()
	for i := range ls.stripes {
		counted -= ls.stripes[i].units.Load()
	}
	return max(counted, 0)
}

// stripe returns the stripe of the goroutine whose runtime g is at g.
func stripe(g uintptr) uint { return uint(uint64(g) * 0x9E3779B97F4A7C15 >> 61) }
