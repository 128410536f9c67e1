package export

import (
	"sync/atomic"

	"github.com/meterio/meter/meter"
)

// record is one span as it waits in the queue: a copy of meter.Span plus the
// trace it belongs to and its index in that trace.
type record struct {
	trace    uint64 // meter.Goroutine.TraceID
	probe    *meter.Probe
	start    int64 // ticks
	end      int64 // ticks
	inherent int64 // ns
	parent   int32 // index of the parent span in the same trace; -1 for the root
	index    int32 // index of this span in its trace
	flags    uint32
}

const flagTruncated = 1 // set on a root whose trace reached METER_TRACE_MAX

// slot holds one record. seq is the queue position + 1 once the record for
// that position is written. The consumer reads seq only when some claimed
// position may not be published yet (see ready).
type slot struct {
	seq atomic.Uint64
	rec record
}

type pad [64]byte

// queue is a bounded multi-producer single-consumer ring of span records,
// after Vyukov's bounded queue and JCTools' MpscArrayQueue, with one change:
// a producer claims all the spans of a trace with a single compare-and-swap
// on the tail, then fills and publishes each slot, then adds the trace's
// spans to done. So a trace costs one contended compare-and-swap and one
// contended add, not one per span.
//
// Zero copy: the consumer reads records in place. ready says how many are
// published; the consumer hands them to the exporter where they lie and
// frees their slots (release) only afterwards.
//
// Signal batching: target is the value of done at which the consumer wants
// to be woken (a full batch published past head). A producer whose add
// takes done from below target to target or above sends one non-blocking
// wake-up; no other producer touches the channel. The consumer re-arms
// target before each sleep, and sets it out of reach while awake.
//
// Nothing here allocates or blocks after newQueue.
type queue struct {
	_      pad
	tail   atomic.Uint64 // next position to claim; producers only
	_      pad
	head   atomic.Uint64 // first position not yet freed; written by the consumer only
	_      pad
	done   atomic.Uint64 // spans published, in all; producers add after publishing
	_      pad
	target atomic.Uint64 // wake the consumer when done reaches it; consumer writes
	parked atomic.Bool   // the consumer is (about to be) waiting in select
	_      pad
	slots  []slot
	mask   uint64
	size   uint64
	wake   chan struct{} // capacity 1
}

const unarmed = 1 << 63 // target while the consumer is awake: never reached

// newQueue returns a queue of at least size slots (rounded up to a power of
// two).
func newQueue(size int) *queue {
	n := 1
	for n < size {
		n <<= 1
	}
	q := &queue{slots: make([]slot, n), mask: uint64(n - 1), size: uint64(n), wake: make(chan struct{}, 1)}
	q.target.Store(unarmed) // nobody signals until the consumer arms it
	return q
}

// claim reserves up to n consecutive positions and returns the first and how
// many it got: fewer than n when the queue is nearly full, 0 when full.
// Lock-free: one load of each index and one CAS, retried only when another
// producer claimed in between.
func (q *queue) claim(n int) (uint64, int) {
	for {
		t := q.tail.Load()
		h := q.head.Load()
		used := t - h
		if h > t { // the consumer moved past a tail we read too early: reload
			continue
		}
		free := q.size - used
		k := uint64(n)
		if k > free {
			k = free
		}
		if k == 0 {
			return t, 0
		}
		if q.tail.CompareAndSwap(t, t+k) {
			return t, int(k)
		}
	}
}

// publish makes the record at position pos visible to a consumer that
// checks slots one by one.
func (q *queue) publish(pos uint64, r *record) {
	s := &q.slots[pos&q.mask]
	s.rec = *r
	s.seq.Store(pos + 1)
}

// produced counts k more published spans (after publish of each), waking
// the consumer when they complete the batch it waits for, and reports
// whether it did.
func (q *queue) produced(k int) bool {
	v := q.done.Add(uint64(k))
	if t := q.target.Load(); v >= t && v-uint64(k) < t {
		select {
		case q.wake <- struct{}{}:
			return true
		default:
		}
	}
	return false
}

// pending reports how many positions are claimed and not yet freed. Some of
// them may not be published yet.
func (q *queue) pending() int {
	return int(q.tail.Load() - q.head.Load())
}

// ready returns the first position not yet freed and how many records from
// there on, up to max, are published. Consumer only. The records stay in
// their slots, and producers do not touch them, until release.
//
// When done equals tail, every claimed position is published, and ready
// touches no slot: this is the common case (no producer between claim and
// done.Add). Otherwise it checks each slot's seq and stops at the first
// that is not published yet.
func (q *queue) ready(max int) (uint64, int) {
	h := q.head.Load()
	d := q.done.Load() // before tail: d == t then means all of [0, t) is published
	t := q.tail.Load()
	if d == t {
		return h, int(min(t-h, uint64(max)))
	}
	n := 0
	for ; n < max; n++ {
		pos := h + uint64(n)
		if q.slots[pos&q.mask].seq.Load() != pos+1 {
			break // not yet published (or empty)
		}
	}
	return h, n
}

// release frees the n slots from position h on (h as ready returned it).
// Consumer only.
func (q *queue) release(h uint64, n int) {
	q.head.Store(h + uint64(n))
}

// records returns the slots of n positions from h on, as one or two runs
// (the second when they wrap around the ring).
func (q *queue) records(h uint64, n int) (a, b []slot) {
	i := int(h & q.mask)
	if i+n <= len(q.slots) {
		return q.slots[i : i+n], nil
	}
	return q.slots[i:], q.slots[:i+n-len(q.slots)]
}

// arm asks to be woken once a full batch (batch spans) is published past
// the head, and reports whether the consumer may sleep (false: a full batch
// is already published). Consumer only.
func (q *queue) arm(batch int) bool {
	select { // a wake-up from an earlier round is stale
	case <-q.wake:
	default:
	}
	want := q.head.Load() + uint64(batch)
	q.target.Store(want)
	// A producer whose add came before the store may have missed the new
	// target: count what is published now.
	return q.done.Load() < want
}

// disarm stops producers from signalling (the consumer is awake).
func (q *queue) disarm() { q.target.Store(unarmed) }
