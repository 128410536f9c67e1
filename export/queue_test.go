package export

import (
	"context"
	"io"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/meterio/meter/meter"
)

// TestQueueTakenRecordsStayPut: while the consumer exports a taken batch in
// place, producers may fill the queue's whole capacity again, and none of
// their records lands on the batch's slots.
func TestQueueTakenRecordsStayPut(t *testing.T) {
	const size, batch = 8, 3 // batches that do not divide the ring: some wrap around it
	q := newQueue(size, batch)
	put := func(n int) int {
		pos, k := q.claim(n)
		for i := range k {
			q.slots[(pos+uint64(i))&q.mask].rec = record{trace: pos + uint64(i)}
		}
		if k > 0 {
			q.publish(pos, k)
			q.produced(pos, k)
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

// TestStalledProducer: a producer that has claimed the slot at the head and
// not published it yet (descheduled, say) holds the exporter up; the
// exporter sleeps until that producer wakes it, rather than spin, then
// exports everything.
func TestStalledProducer(t *testing.T) {
	probe := meter.NewProbe("example.com/queue.stalled", nil)
	e := &checkingExporter{}
	p := newPipeline(config{exporter: e, queueSize: 64, batchSize: 4, delay: time.Hour, stderr: io.Discard})
	defer p.Shutdown(context.Background())
	pos, k := p.q.claim(1) // the stalled producer
	if k != 1 {
		t.Fatalf("claimed %d", k)
	}
	for i := range 8 {
		p.TraceSpans(uint64(i+1), spansOf(probe, 1), true, false)
	}
	for !p.q.parked.Load() || p.q.hole.Load() != pos { // the exporter waits on the stalled slot
		runtimeYield()
	}
	if st := p.Stats(); st.Exported != 0 || p.q.hole.Load() != pos || !p.q.parked.Load() {
		t.Errorf("before the stalled producer publishes: exported %d, waiting on position %d (parked %v); want 0 and %d",
			st.Exported, p.q.hole.Load(), p.q.parked.Load(), pos)
	}
	p.q.slots[pos&p.q.mask].rec = record{trace: 100, probe: int32(probe.ID()), end: 5, inherent: 5, parent: -1}
	p.q.publish(pos, 1)
	p.q.produced(pos, 1)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Exported != 9 || st.Stalls != 1 || st.Wakeups > 2 {
		t.Errorf("exported %d, stalls %d, wake-ups %d; want 9, 1, at most 2", st.Exported, st.Stalls, st.Wakeups)
	}
	for _, msg := range e.errs {
		t.Error(msg)
	}
}

// TestSlotIsACacheLine: a record and its sequence word fill one 64-byte
// line, so that a producer writing a span touches one line.
func TestSlotIsACacheLine(t *testing.T) {
	if s := unsafe.Sizeof(slot{}); s != 64 {
		t.Errorf("a slot is %d bytes, want 64", s)
	}
}

// TestSlotHoldsNoPointer: the ring lives outside the Go heap
// (ring_unix.go), where the collector would not see a pointer.
func TestSlotHoldsNoPointer(t *testing.T) {
	var walk func(reflect.Type) bool
	walk = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				if !walk(ty.Field(i).Type) {
					return false
				}
			}
			return true
		case reflect.Array:
			return walk(ty.Elem())
		case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint,
			reflect.Float32, reflect.Float64:
			return true
		}
		t.Errorf("slot holds a %s", ty)
		return false
	}
	walk(reflect.TypeOf(slot{}))
}
