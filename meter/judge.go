package meter

import (
	"sync/atomic"

	"github.com/meterio/meter/extensions/hotspot"
)

// judge lets the chain see a metered firing of p that ended, with its
// inclusive and inherent ns (the inherent time less its timed children
// metered inside it); n is the count of the statistics row it went to.
// A spot check is judged by spotcheck alone, on the state it found.
// Everything else goes to hotspot, then budget, while p is metered at
// every firing.
//
// The engine's own probes (calibrate.go) keep credits too, so that what
// they measure is what a firing costs, and are never judged.
//
// Hotspot's credits follow DESIGN's rule: a hot firing adds one, any other
// takes one away, and when the balance runs out the probe is judged on its
// totals (decide), never on one firing. It returns the ns a verdict took,
// 0 when none was reached.
func judge(p *Probe, spot bool, incl, inh, n, t int64) (slow int64) {
	if spot {
		if s := engine.spotcheck; s != nil && s.Reenables(incl, inh) {
			p.Enable()
		}
		return 0
	}
	if !p.State().metered() {
		return 0 // sampled, or disabled since it began
	}
	if h := engine.hotspot; h != nil {
		if h.Hot(incl, inh) {
			for d := p.deficit.Load(); d > 0; d = p.deficit.Load() {
				if p.deficit.CompareAndSwap(d, d-1) {
					break
				}
			}
		} else if d := p.deficit.Add(1); d >= h.Initial && !p.internal {
			if d == h.Initial || !p.deciding.Load() {
				decide(p, t)
				return nanos(t, now())
			}
			return 0
		}
	}
	if b := engine.budget; b != nil && (n <= 64 || n%64 == 0) {
		// T, the mean of every metered firing, exact for a probe's first
		// firings on each row, then refreshed every 64.
		sum := p.stats.sum()
		a := b.Allowance(sum.total / max(sum.count, 1))
		if p.allowance.Load() != a+1 {
			p.allowance.Store(a + 1)
		}
		if a < 1 && !p.internal {
			p.Disable(DisabledBudget)
		}
	}
	return 0
}

// decide judges p, whose credit balance ran out, on its totals, as of
// tick t. One goroutine decides at a time; the others' cold firings wait
// for its verdict with the balance at zero.
//
//   - hot on average (mean inclusive and own times at or above the
//     thresholds): metered at every firing for good (label hotspot), its
//     balance restored, where metering costs at most hotspot's Cost of its
//     own time and waits, else sampled;
//   - its own time is below the share threshold of the time it has been
//     running (a root, the entry of a unit of work, never is): disabled.
//     A call's own time counts as at least what a clock read inside a
//     metered firing takes (its inner overhead): below that the clock
//     says nothing, and a function of 2 ns called a billion times must not
//     be disabled for reading 0. Its stretches left out whole count too
//     (heldAvg): their CPU time is the sampler's, a look every few ms, and
//     a thousand calls of a few µs each hold one look or none, so that
//     their own time alone may read 0 where the profile has them at a
//     sixth of the program (an HTTP client's call);
//   - its calls are too short to time, their inclusive time below the
//     untimed limit (their own time the more so), or their own time below
//     it and their inclusive time within untimedReach times it, or their
//     own time below it and p recursive (untimedBy): untimed, counted;
//   - metering it costs at most Cost of the time its calls hold their
//     goroutine (own time and waits): metered at every firing (no label);
//   - else sampled.
//
// Under a trace gate a probe is metered in traces only: the verdict is
// hot, kept (metered in traces) or disabled.
func decide(p *Probe, t int64) {
	if !p.deciding.CompareAndSwap(false, true) {
		return
	}
	defer p.deciding.Store(false)
	s := p.State()
	if !s.metered() {
		return
	}
	h := engine.hotspot
	sum := p.stats.sum()
	n := max(sum.wsum, 1)
	calls := p.Calls()
	wtotal, wown := sum.trimmed(calls)
	inclAvg := int64(wtotal / float64(n))
	ownAvg := int64(max(wown+float64(sum.back+givenBack(p)), 0) / float64(n))
	// What a call holds its goroutine: its own time, and its stretches
	// left out whole (a wait inside a call, with the work around it). A
	// call that waits so affords its metering out of both: only a metered
	// firing has stretches for the sampler's looks to land in, and a
	// sampled probe's unmetered calls would leave their CPU time to their
	// caller's. A bracketed wait of its own body does not count: the work
	// around it is timed.
	heldAvg := ownAvg + max(p.blind.Load(), 0)/int64(n)
	typical := min(inclAvg, sum.typical())
	span := nanos(p.first.Load(), t)
	cost := overhead[pathMeter].outer.Load()
	var to State
	switch {
	case h.Hot(typical, ownAvg):
		to = Timed
		if !engine.gated && !h.Affords(heldAvg, cost) {
			to = Sampled
		}
	case !p.root.Load() && !h.Keep(max(heldAvg, resolution())*calls, span):
		to = DisabledHotspot
	case engine.gated:
		to = Timed
	case untimedBy(typical, ownAvg, p.nested.Load()):
		if hinges(p, inclAvg, ownAvg) {
			p.deficit.Store(0) // another Initial firings metered, then judged again
			return
		}
		to = Untimed
	case h.Affords(heldAvg, cost) || h.Sample <= 0:
		to = Timed
	default:
		to = Sampled
	}
	if to == Timed {
		p.deficit.Store(0)
	}
	if to == s {
		return
	}
	if to.Disabled() {
		p.Disable(to)
		return
	}
	if p.setState(s, to) {
		p.warm.settle(to == Untimed)
	}
}

// untimedReach is how many times the untimed limit a call may take, in
// all, and still be untimed when its own time is under the limit. The own
// time of a short call with metered children is mostly what the engine
// estimates their metering to cost: a tiny recursive function (a fib of a
// few ns a call) shows several times its own time. Such a call is untimed,
// its time its caller's. A longer call that does little itself (a middleware closure
// around a handler) stays timed: its inclusive time is worth having.
const untimedReach = 10

// untimedBy reports whether calls of inclAvg ns inclusive and ownAvg ns of
// own time each are too short to time, by the untimed limit, for a
// function that recurses or not.
//
// A recursive function's inclusive time holds its own calls nested in it:
// a parser whose expression, term and factor call one another tens of
// levels deep, each of a few tens of ns of its own, has calls of µs
// inclusive, nearly all of it the three functions' own short calls. Timed,
// each call's own time is what is left of a stretch once its metered
// children's estimated overheads are taken off, a clock's error per child;
// sampled, each unmetered call charges its caller an estimate as long as
// the call. So a recursive function whose own time is under the limit is
// untimed however long its inclusive time: its time is that of the nearest
// timed caller, which the recursion's entry is.
func untimedBy(inclAvg, ownAvg int64, recurses bool) bool {
	l := UntimedLimit()
	return inclAvg < l || ownAvg < l && (inclAvg < untimedReach*l || recurses)
}

// shortJudgeAt is how many metered firings of a probe one P's statistics
// row holds when, with hotspot off, the probe is judged (judgeShort):
// after its shared row's sharedFirings, so that a few slow first calls
// (cold caches, page faults, a clock read interrupted) weigh little; and
// again at each multiple while its verdict waits (hinges). A power of
// two: End tests it with a mask.
const shortJudgeAt = 4096

// What a probe's calls are, with hotspot off (Probe.short): not judged
// yet, long enough to time, or too short.
const (
	shortUnknown = iota
	shortNo
	shortYes
)

// judgeShort judges p, with hotspot off (every firing metered) and an
// untimed limit set (Chain.Untimed), on the totals of its first metered
// firings (shortJudgeAt), by hotspot's rule for untimed probes: too short
// to time, it is untimed (counted, no longer metered), and its own time is
// its timed parents', what it charged them given back; or timed. It is judged once,
// as hotspot judges a probe once its balance runs out. Metering calls
// shorter than the clock would leave their parents mostly the estimates
// of metering them that are taken off.
func (p *Probe) judgeShort() {
	sum := p.stats.sum()
	n := max(sum.wsum, 1)
	v := uint32(shortNo)
	own := max(sum.wown+sum.back+givenBack(p), 0) / n
	if untimedBy(min(sum.wtotal/n, sum.typical()), own, p.nested.Load()) {
		if hinges(p, sum.wtotal/n, own) {
			return // judged again after as many firings more (end.go)
		}
		v = shortYes
	}
	if p.short.CompareAndSwap(shortUnknown, v) {
		if v == shortYes {
			p.setState(Enabled, Untimed)
		}
		p.warm.settle(v == shortYes)
	}
}

// maxHinges is how many times a probe's untimed verdict may be put off
// because it hinges on one call (hinges).
const maxHinges = 8

// hinges reports whether p, whose calls would be untimed with the longest
// of its metered firings left out, would be timed with it in (inclAvg
// and ownAvg: the means of all), and may wait for more firings: then it
// counts one more wait. The longest is left out for a call that held
// what the function does not do (its first page faults, a stop of the
// world). But a function whose cost is amortized (a buffered writer that
// flushes every few hundred calls, a table that grows) holds most of its
// time in such calls: judged on one of them left out, it would be untimed,
// its row without the time a profile gives it. More firings tell the two
// apart: a stall does not come again, amortized work does, and a verdict
// on several of its long calls no longer hinges on one. After maxHinges
// waits, the verdict leaves the longest out.
func hinges(p *Probe, inclAvg, ownAvg int64) bool {
	if untimedBy(inclAvg, ownAvg, p.nested.Load()) || p.hinged.Load() >= maxHinges {
		return false
	}
	p.hinged.Add(1)
	return true
}

// resolution returns the shortest own time per call the clock can tell
// from none: the inner overhead of a metered firing, 1 ns with a manual
// clock.
func resolution() int64 { return max(overhead[pathMeter].inner.Load(), 1) }

// untimedLimit is the own time per call under which a probe is untimed, in
// ns (setUntimedLimit).
var untimedLimit atomic.Int64

// UntimedLimit returns the own time per call, in ns, under which hotspot
// leaves a cold probe untimed: counted, never metered. It is a small
// multiple (hotspot's Untimed, 2) of what timing a call costs, two clock
// reads and the engine's work, measured at start-up; and at most 300 ns, so
// that a function whose calls take 300 ns of their own or more is always
// timed, even where clock reads are slow.
func UntimedLimit() int64 { return untimedLimit.Load() }

// maxUntimed returns the cap of the untimed limit under rule h: 300 ns at
// the default inherent threshold (2 µs), and that share of it (15%) where
// the thresholds are scaled, as they are to run a program under valgrind
// (about 50 times slower). A function whose calls take that long is timed
// whatever the clock costs.
func maxUntimed(h *hotspot.Rule) int64 { return max(h.ThresholdInherent*3/20, 1) }

// parentTable holds a number per parent probe, for a few parents in a
// fixed table: what a probe not judged yet (Enabled) charged its parents'
// own times with (Probe.warm, in the parent's recorded units: times the
// parent firing's weight), or how many calls its selected firings under
// each parent stand for (Probe.callers).
type parentTable struct {
	to [4]parentEntry
}

type parentEntry struct {
	parent atomic.Pointer[Probe]
	n      atomic.Int64
	own    atomic.Int64 // Probe.callers only
}

// add adds n to parent's number, where the table has room for it.
func (w *parentTable) add(parent *Probe, n int64) {
	if e := w.entry(parent); e != nil {
		e.n.Add(n)
	}
}

// addOwn adds n to parent's number and own to its own time, where the
// table has room for it.
func (w *parentTable) addOwn(parent *Probe, n, own int64) {
	if e := w.entry(parent); e != nil {
		e.n.Add(n)
		e.own.Add(own)
	}
}

// entry returns parent's entry, taking a free one for it; nil if the
// table has no room.
func (w *parentTable) entry(parent *Probe) *parentEntry {
	for i := range w.to {
		e := &w.to[i]
		q := e.parent.Load()
		if q == nil && e.parent.CompareAndSwap(nil, parent) {
			q = parent
		} else if q == nil {
			q = e.parent.Load()
		}
		if q == parent {
			return e
		}
	}
	return nil
}

// settle ends the probe's stay in Enabled: the charges its warm table
// holds are given back to its parents (giveBack: it is untimed or
// disabled), or stand.
func (w *parentTable) settle(giveBack bool) {
	for i := range w.to {
		e := &w.to[i]
		ns := e.n.Swap(0)
		if q := e.parent.Load(); q != nil && giveBack && ns != 0 {
			q.stats.addBack(ns)
		}
	}
}

// parents returns the names of the parent probes the table kept charges
// for.
func (w *parentTable) parents() []string {
	var names []string
	for i := range w.to {
		if q := w.to[i].parent.Load(); q != nil {
			names = append(names, q.name)
		}
	}
	return names
}

// givenBack returns what p's children not judged yet, that would be
// untimed on what they show so far, charged p with: a model taken now gives
// it back.
func givenBack(p *Probe) int64 {
	var ns int64
	for _, q := range Probes() {
		if q.State() != Enabled {
			continue
		}
		var n int64
		for i := range q.warm.to {
			if e := &q.warm.to[i]; e.parent.Load() == p {
				n += e.n.Load()
			}
		}
		if n != 0 && q.untimedYet() {
			ns += n
		}
	}
	return ns
}

// Rechecks. An untimed verdict rests on a probe's first calls. A function
// whose calls grow longer later (a lock that comes under contention, a
// table that grows, a phase of the program) would stay untimed, its time
// in its callers', though its calls are long enough to time. So at each of
// its checkpoints (every checkpointEvery calls on a P, stretch.go; denseGap
// for its first: nextCheckpoint) one
// call of an untimed probe is metered again, its time given to its
// parent as any untimed call's is; every recheckEvery of them, their mean
// own time is compared with the untimed limit, and a probe whose rechecked
// calls are at or above it is sampled from then on. The calls it made
// while untimed charged their callers nothing: its first repricing
// (parent.go) charges them at its selected calls' mean, as it does any
// unmetered call, and its row counts them so. The firings metered before
// its untimed verdict were given to its callers then (Probe.warm) and
// stay there too, a few thousand calls at most. With hotspot off (every
// firing metered, Chain.Untimed), where a verdict rests on a probe's
// first shortJudgeAt calls alone, a rechecked probe is metered at every
// call from then on: its row's time is that of its metered calls scaled
// to its count, so that the calls it made untimed are priced at its
// metered mean, and they also stay in their callers' own time (no
// repricing takes them off: its metered calls are no sample of them). A
// probe its first rechecks find long made a few thousand calls untimed on
// each P (they come denseGap calls apart); one whose calls grow long
// later, up to recheckEvery checkpoints' worth. With hotspot on and
// sampling off, an untimed probe is not rechecked.
// A recursive probe, one whose metered firings, before its verdict, ran
// directly inside its own (Probe.nested), is rechecked too, with the calls
// of its own nested in a rechecked call counted (recheckStart): that
// call's own time holds theirs, untimed, so it stands for all of them, and
// the mean is the rechecked calls' own time over the calls it holds. A
// call that moved to another P counts nothing and adds nothing. A
// recursion through another instrumented function is not seen.

// recheckEvery is how many rechecked calls of an untimed probe are judged
// together; maxRechecks how many it is rechecked in all.
//
// recheckCap bounds what one rechecked call adds to the mean, in untimed
// limits. A rechecked call of a 2 ns function that its goroutine was taken
// off its P in (a preemption, the collector's stop) holds what the sampler
// saw it run in that stretch, a whole interval of the sampler's (ms) one
// time in many, the unbiased estimate of a stretch that nothing else
// tells: alone among eight, it would make the function sampled for good.
// At four limits, one such call in eight leaves the mean at half the
// limit; a quarter of the calls that long is what it takes.
const (
	recheckEvery = 8
	maxRechecks  = 4096
	recheckCap   = 4
)

// checkpointed makes the checkpoint of an untimed probe's firing whose
// countdown ran out on its P (pos and pc: where it runs), and meters the
// firing as a recheck where rechecks are on.
func checkpointed(p *Probe, pos, pc uintptr) *Frame {
	checkpoint(pos, pc)
	if !p.rechecks() {
		return nil
	}
	fr := meterHere(p, pos, pc, meterRecheck)
	if fr != nil && p.nested.Load() {
		fr.recheckStart(p)
	}
	return fr
}

// recheckStart notes, for fr, a recheck of the recursive probe p, the P
// it runs on and p's count there (Frame.recheckP).
func (fr *Frame) recheckStart(p *Probe) {
	fr.recheckP, fr.recheckN = p.callsHere()
}

// recheckCalls returns how many calls of p the rechecked firing fr holds:
// 1, and for a recursive probe the calls nested in it, counted on the P it
// began on; 0 where it ran on another P at its end, or inside a rechecked
// call of p on its goroutine, which holds it.
func (fr *Frame) recheckCalls(p *Probe) int64 {
	if !p.nested.Load() {
		return 1
	}
	start := fr.recheckP
	fr.recheckP = 0
	if start == 0 {
		return 0
	}
	for i := fr.index - 1; i >= 0; i-- {
		if f := fr.g.frames[i]; f.probe == p && f.how == meterRecheck {
			return 0
		}
	}
	if pid, n := p.callsHere(); pid == start {
		return 1 + int64(n-fr.recheckN)
	}
	return 0
}

// callsHere returns 1 + the number of the P the goroutine runs on, and
// the low bits of p's count on that P; 0 for a P that counts in the spill
// word, whose calls are not told apart.
func (p *Probe) callsHere() (uint8, uint32) {
	pid := uintptr(procPin())
	var id uint8
	var n uint32
	if pid < countProcs && pid < 255 {
		id, n = uint8(pid+1), uint32(atomic.LoadInt64(&p.slotOn(pid).calls))
	}
	procUnpin()
	return id, n
}

// rechecks reports whether p's next checkpoint is a recheck.
func (p *Probe) rechecks() bool {
	return p.rechecked.Load() < maxRechecks && p.State() == Untimed && p.recheckable()
}

// recheckable reports whether p, untimed, is rechecked at all.
func (p *Probe) recheckable() bool {
	return !p.internal && (engine.hotspot != nil && engine.sample > 0 || engine.hotspot == nil && engine.untimed != nil)
}

// nextCheckpoint returns how many of p's firings on a P pass before its
// next checkpoint there: checkpointEvery, or denseGap while its first
// denseRechecks rechecks are to come. A rechecked call's own time varies
// from one call to the next (a lock's slow path, a cache miss): in a
// function of 100,000 calls, a few hundred ms of a program, checkpoints
// every checkpointEvery calls would recheck it a dozen times, and a
// function whose calls grow to 300 ns and more of their own could read
// below the limit in that many.
func (p *Probe) nextCheckpoint() int32 {
	if p.rechecked.Load() < denseRechecks && p.recheckable() {
		return denseGap
	}
	return checkpointEvery
}

// denseRechecks is how many of an untimed probe's first rechecks come
// denseGap calls apart on a P (nextCheckpoint): 64 metered calls in its
// first 65,536 after the verdict, a few µs of metering in all.
const (
	denseRechecks = 64
	denseGap      = checkpointEvery / 8
)

// recheck notes a rechecked call of p, of own ns of its own, holding calls
// calls of p (recheckCalls; 0: left out), and samples p (with hotspot
// off, meters it at every call) once its rechecked calls take the untimed
// limit or more a call on average, each counted at recheckCap times the
// limit a call at most.
func (p *Probe) recheck(own, calls int64) {
	if calls <= 0 {
		return
	}
	sum := p.recheckOwn.Add(min(max(own, 0), recheckCap*UntimedLimit()*calls))
	c := p.recheckCalls.Add(calls)
	n := p.rechecked.Add(1)
	if n%recheckEvery == 0 && sum/c >= UntimedLimit() {
		if engine.hotspot == nil {
			p.short.Store(shortNo) // timed: its row is no longer labelled untimed (untimedYet)
			p.setState(Untimed, Enabled)
			return
		}
		p.setState(Untimed, Sampled)
	}
}
