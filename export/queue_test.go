package export

import "testing"

// TestQueueTakenRecordsStayPut: while the consumer exports a taken batch in
// place, producers may fill the queue's whole capacity again, and none of
// their records lands on the batch's slots.
func TestQueueTakenRecordsStayPut(t *testing.T) {
	const size, batch = 8, 3 // batches that do not divide the ring: some wrap around it
	q := newQueue(size, batch)
	put := func(n int) int {
		pos, k := q.claim(n)
		for i := range k {
			q.publish(pos+uint64(i), &record{trace: pos + uint64(i)})
		}
		if k > 0 {
			q.produced(k)
		}
		return k
	}
	next := uint64(0) // the position the next take should start at
	for round := range 50 {
		put(size)
		h, n := q.take(batch)
		if h != next || n != batch {
			t.Fatalf("round %d: took %d from %d, want %d from %d", round, n, h, batch, next)
		}
		next += batch
		// The queue has room for batch more: producers fill it.
		if k := put(size); k != batch {
			t.Fatalf("round %d: claimed %d, want %d", round, k, batch)
		}
		a, b := q.records(h, n)
		for i := range n {
			r := &a[min(i, len(a)-1)].rec
			if i >= len(a) {
				r = &b[i-len(a)].rec
			}
			if r.trace != h+uint64(i) {
				t.Fatalf("round %d: the record of position %d was overwritten by position %d", round, h+uint64(i), r.trace)
			}
		}
		// Drain, keeping the loop's positions in step.
		for q.pending() > 0 {
			_, k := q.take(batch)
			next += uint64(k)
		}
	}
}
