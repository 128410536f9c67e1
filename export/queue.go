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
// that position is written: the consumer reads a slot only when seq says so.
type slot struct {
	seq atomic.Uint64
	rec record
}

type pad [64]byte

// queue is a bounded multi-producer single-consumer ring of span records,
// after Vyukov's bounded queue and JCTools' MpscArrayQueue, with one change:
// a producer claims all the spans of a trace with a single compare-and-swap
// on the tail, then fills and publishes each slot. So a trace costs one
// contended atomic operation, not one per span.
//
// Signal batching: needed counts down the spans the consumer still wants
// before a full batch is waiting. A producer whose claim takes it from above
// zero to zero or below sends one non-blocking wake-up; no other producer
// touches the channel. The consumer re-arms needed before each sleep.
//
// Nothing here allocates or blocks after newQueue.
type queue struct {
	_      pad
	tail   atomic.Uint64 // next position to claim; producers only
	_      pad
	head   atomic.Uint64 // next position to read; written by the consumer only
	_      pad
	needed atomic.Int64
	parked atomic.Bool // the consumer is (about to be) waiting in select
	_      pad
	slots  []slot
	mask   uint64
	size   uint64
	wake   chan struct{} // capacity 1
}

// newQueue returns a queue of at least size slots (rounded up to a power of
// two).
func newQueue(size int) *queue {
	n := 1
	for n < size {
		n <<= 1
	}
	q := &queue{slots: make([]slot, n), mask: uint64(n - 1), size: uint64(n), wake: make(chan struct{}, 1)}
	q.needed.Store(1 << 62) // nobody signals until the consumer arms it
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

// publish makes the record at position pos visible to the consumer.
func (q *queue) publish(pos uint64, r *record) {
	s := &q.slots[pos&q.mask]
	s.rec = *r
	s.seq.Store(pos + 1)
}

// produced tells the consumer k more spans are queued, waking it when they
// complete the batch it waits for, and reports whether it did.
func (q *queue) produced(k int) bool {
	n := q.needed.Add(-int64(k))
	if n <= 0 && n+int64(k) > 0 {
		select {
		case q.wake <- struct{}{}:
			return true
		default:
		}
	}
	return false
}

// pending reports how many positions are claimed and not yet read. Some of
// them may not be published yet.
func (q *queue) pending() int {
	return int(q.tail.Load() - q.head.Load())
}

// take moves up to len(buf) published records, in queue order, into buf and
// frees their slots. Consumer only.
func (q *queue) take(buf []record) int {
	h := q.head.Load()
	i := 0
	for ; i < len(buf); i++ {
		s := &q.slots[(h+uint64(i))&q.mask]
		if s.seq.Load() != h+uint64(i)+1 {
			break // not yet published (or empty)
		}
		buf[i] = s.rec
	}
	if i > 0 {
		q.head.Store(h + uint64(i))
	}
	return i
}

// arm sets how many more spans the consumer wants before it is woken, given
// it wants batch in all, and reports whether it may sleep (false: a full
// batch is already waiting). Consumer only.
func (q *queue) arm(batch int) bool {
	select { // a wake-up from an earlier countdown is stale
	case <-q.wake:
	default:
	}
	q1 := q.pending()
	if q1 >= batch {
		return false
	}
	q.needed.Store(int64(batch - q1))
	// Spans claimed between the read and the store did not count down the
	// new value: count them now.
	if q2 := q.pending(); q2 > q1 {
		if q.needed.Add(-int64(q2-q1)) <= 0 {
			return false
		}
	}
	return true
}

// disarm stops producers from signalling (the consumer is awake).
func (q *queue) disarm() { q.needed.Store(1 << 62) }
