package export

import (
	"sync/atomic"
)

// record is one span as it waits in the queue: a copy of meter.Span plus the
// trace it belongs to. It holds no pointer (the probe is its id in
// registration order), so that the ring is memory the garbage collector
// never scans, and a producer writes it without write barriers.
type record struct {
	trace    uint64 // the meter trace id
	start    int64  // ticks
	end      int64  // ticks; 0 for a firing cut off before it ended
	inherent int64  // ns
	parent   int32  // index of the parent span in the same trace; -1 for the root
	index    int32  // index of this span in its trace
	probe    int32  // meter.Probe.ID
	flags    uint16
	run      uint16 // on the first record of a claim: how many positions it claimed
}

const (
	flagTruncated = 1 << iota // handed over in a truncated part of its trace
	flagFinal                 // the last span of its trace's final part
)

// slot holds one record. On the first slot of a claim, seq is the queue
// position + 1 once every record of the claim is written (publish): one
// atomic store per claim, not per record. The consumer reads seq only when
// some claimed position may not be published yet (see take).
type slot struct {
	seq atomic.Uint64
	rec record
	_   [8]byte // a slot is a cache line
}

type pad [64]byte

// queue is a bounded multi-producer single-consumer ring of span records,
// after Vyukov's bounded queue and JCTools' MpscArrayQueue, with one change:
// a producer claims all the spans of a trace with a single compare-and-swap
// on the tail, fills the slots, publishes the claim with one store of seq
// in its first slot, then adds the trace's spans to done. So a trace costs
// one contended compare-and-swap, one store and one contended add, not one
// of each per span.
//
// Zero copy: the consumer reads records in place. take says how many are
// published from the head on and moves the head past them at once, so that
// producers may claim again as much room as before; the records stay where
// they are while the consumer exports them. That is safe because the ring
// has room for the queue's capacity plus the batch in flight: producers may
// claim up to capacity positions past the head, and those never fall on
// the slots of the batch being exported (see newQueue).
//
// Signal batching: target is the value of done at which the consumer wants
// to be woken (a full batch published past head). A producer whose add
// takes done from below target to target or above sends one non-blocking
// wake-up; no other producer touches the channel. The consumer re-arms
// target before each sleep, and sets it out of reach while awake.
//
// Holes: when the position at the head is claimed but not published (its
// producer is between claim and publication, perhaps descheduled), the
// consumer sets hole to it and sleeps rather than spin; the producer that
// claimed it wakes the consumer after its add.
//
// Nothing here allocates or blocks after newQueue.
type queue struct {
	_      pad
	tail   atomic.Uint64 // next position to claim; producers only
	_      pad
	head   atomic.Uint64 // first position not yet taken; written by the consumer only
	_      pad
	done   atomic.Uint64 // spans published, in all; producers add after publishing
	_      pad
	target atomic.Uint64 // wake the consumer when done reaches it; consumer writes
	hole   atomic.Uint64 // wake the consumer when this position is published; consumer writes
	parked atomic.Bool   // the consumer is (about to be) waiting: for tests to see
	_      pad
	slots  []slot
	mask   uint64
	size   uint64        // capacity: at most size positions are claimed and not taken
	wake   chan struct{} // capacity 1
	known  uint64        // consumer only: every position below it is published
}

const unarmed = 1 << 63 // target while the consumer is awake: never reached

// newQueue returns a queue that holds size spans while the consumer
// exports up to batch taken ones in place. The ring has a power of two of
// at least size+batch slots: a batch taken from positions [h, h+n),
// n <= batch, occupies slots that positions up to h+n+size-1, the most
// producers may claim before the next take, never reach.
func newQueue(size, batch int) *queue {
	ring := ringSize(size, batch)
	q := &queue{mask: uint64(ring - 1), size: uint64(size), wake: make(chan struct{}, 1)}
	q.slots = newRing(q, ring)
	q.target.Store(unarmed) // nobody signals until the consumer arms it
	q.hole.Store(unarmed)
	return q
}

// ringSize is the number of slots newQueue allocates: the smallest power
// of two of at least size+batch.
func ringSize(size, batch int) int {
	ring := 1
	for ring < size+batch {
		ring <<= 1
	}
	return ring
}

// maxRun is the most positions one claim takes, so that its length fits
// a record's run field.
const maxRun = 1<<16 - 1

// claim reserves up to n (at most maxRun) consecutive positions and
// returns the first and how many it got: fewer than n when the queue is
// nearly full, 0 when full. Lock-free: one load of each index and one CAS,
// retried only when another producer claimed in between.
func (q *queue) claim(n int) (uint64, int) {
	n = min(n, maxRun)
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

// publish makes the k records claimed from position pos on, already
// written, visible to a consumer that checks claims one by one.
func (q *queue) publish(pos uint64, k int) {
	s := &q.slots[pos&q.mask]
	s.rec.run = uint16(k)
	s.seq.Store(pos + 1)
}

// produced counts the k spans claimed from position pos on as published
// (after publish of each), waking the consumer when they complete the batch
// it waits for or fill the hole it waits on, and reports whether it did.
func (q *queue) produced(pos uint64, k int) bool {
	v := q.done.Add(uint64(k))
	t, w := q.target.Load(), q.hole.Load() // one cache line, written once per wake
	if v >= t && v-uint64(k) < t || w-pos < uint64(k) {
		select {
		case q.wake <- struct{}{}:
			return true
		default:
		}
	}
	return false
}

// pending reports how many positions are claimed and not yet taken. Some of
// them may not be published yet.
func (q *queue) pending() int {
	return int(q.tail.Load() - q.head.Load())
}

// take returns the first position not yet taken and how many records from
// there on, up to max, are published, and moves the head past them.
// Consumer only. The records stay in their slots, and producers do not
// touch those, until the consumer takes again (see newQueue): the consumer
// reads them in place in between.
//
// When done equals tail, every claimed position is published, and take
// touches no slot: the common case (no producer between its claim and its
// add to done). Otherwise it walks the claims from the head, one seq load
// each, and stops at the first that is not published yet.
func (q *queue) take(max int) (uint64, int) {
	h := q.head.Load()
	d := q.done.Load() // before tail: d == t then means all of [0, t) is published
	t := q.tail.Load()
	limit := h + uint64(max)
	pos := h
	if d == t {
		pos = min(t, limit)
		q.known = t
	} else {
		for pos < limit {
			if pos < q.known {
				pos = min(q.known, limit)
				continue
			}
			s := &q.slots[pos&q.mask]
			if s.seq.Load() != pos+1 {
				break // not yet published (or never claimed)
			}
			q.known = pos + uint64(s.rec.run)
		}
	}
	if pos > h {
		q.head.Store(pos)
	}
	return h, int(pos - h)
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

// armHole asks to be woken once the position at the head is published, and
// reports whether the consumer may sleep (false: it is published now).
// Consumer only; disarmHole when awake.
func (q *queue) armHole() bool {
	select { // a wake-up from an earlier round is stale
	case <-q.wake:
	default:
	}
	h := q.head.Load()
	q.hole.Store(h)
	// A producer that read hole before the store published before its
	// add: see whether it did. The head is the start of a claim, unless
	// it lies inside one known to be published.
	return h >= q.known && q.slots[h&q.mask].seq.Load() != h+1
}

func (q *queue) disarmHole() { q.hole.Store(unarmed) }

// disarm stops producers from signalling (the consumer is awake).
func (q *queue) disarm() { q.target.Store(unarmed) }
