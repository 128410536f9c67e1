// Command pipeline runs a three-stage pipeline of goroutines connected by
// buffered channels, and a fourth that writes to files:
//
//   - parser: makes each input line (makeLine, under 1 µs) and parses it
//     (parse, about 3 µs of CPU), and sends the record on;
//   - a pool of three workers: each transforms the records it receives
//     (transform, about 6 µs of CPU) and sends them on;
//   - aggregator: folds each record into its totals (aggregate, about
//     1.5 µs of CPU), in a select that also waits on a time.After timeout
//     (timedOut, on each timeout) and on the context; every 1000 records it
//     hands the batch to the writer; after the last record it cancels the
//     context, which stops the parser and the workers mid-stream;
//   - writer: encodes each batch and writes it to a temp file with
//     os.WriteFile (writeBatch: open, write and close system calls, on a
//     regular file, outside the network poller);
//   - monitor: wakes every few ms on a time.After, reports the progress
//     (report, about 2 µs), and stops when the context is cancelled.
//
// Seven goroutines on two cores: five of them busy, waiting on each
// other's channels and for a core. Nothing here is CPU-bound in the
// judge's sense.
//
// Calls are counted by the callers, in local variables (the parser's lines,
// each worker's records, the aggregator's timeouts, the monitor's ticks),
// and by the loop bounds. The functions that must be real calls are marked
// //go:noinline. Instrument with -all and with the default selection.
//
//	go run ./bench/adversarial/pipeline [-n 400000] [-cpuprofile cpu.pprof]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

const (
	nfields   = 8
	keys      = 1000
	batchSize = 1000
	workers   = 3
	chanDepth = 64
	timeout   = time.Millisecond
	tick      = 5 * time.Millisecond
)

type record struct {
	id     int
	key    string
	fields [nfields]uint64
	score  uint64
}

// makeLine is the input: "id,key,f0,...,f7".
//
//go:noinline
func makeLine(i int) string {
	b := make([]byte, 0, 128)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, ",k"...)
	b = strconv.AppendInt(b, int64(i%keys), 10)
	x := uint64(i) * 0x9E3779B97F4A7C15
	for f := 0; f < nfields; f++ {
		x = x*6364136223846793005 + 1442695040888963407
		b = append(b, ',')
		b = strconv.AppendUint(b, x>>40, 10)
	}
	return string(b)
}

//go:noinline
func parse(line string) record {
	var r record
	field, start := 0, 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && line[i] != ',' {
			continue
		}
		s := line[start:i]
		start = i + 1
		switch {
		case field == 0:
			r.id, _ = strconv.Atoi(s)
		case field == 1:
			r.key = s
		case field-2 < nfields:
			r.fields[field-2], _ = strconv.ParseUint(s, 10, 64)
		}
		field++
	}
	for f := range r.fields {
		r.fields[f] = busy.Spin(r.fields[f], 200)
	}
	return r
}

//go:noinline
func transform(r record) record {
	var s uint64
	for f := range r.fields {
		r.fields[f] = busy.Spin(r.fields[f]^s, 500)
		s += r.fields[f]
	}
	r.score = s
	return r
}

type totals struct {
	byKey map[string]uint64
	sum   uint64
}

//go:noinline
func aggregate(t *totals, r record) {
	t.byKey[r.key] += r.score
	t.sum += busy.Spin(r.score, 1000)
}

// timedOut is the aggregator's work when no record came within the
// timeout.
//
//go:noinline
func timedOut(t *totals, n int) {
	t.sum += busy.Spin(uint64(n), 100)
}

//go:noinline
func writeBatch(dir string, seq int, batch []record) error {
	b := make([]byte, 0, len(batch)*48)
	for _, r := range batch {
		b = strconv.AppendInt(b, int64(r.id), 10)
		b = append(b, ' ')
		b = append(b, r.key...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, r.score, 16)
		b = append(b, '\n')
	}
	return os.WriteFile(filepath.Join(dir, "batch-"+strconv.Itoa(seq%16)), b, 0o600)
}

//go:noinline
func report(done int64, t0 time.Time) uint64 {
	rate := float64(done) / time.Since(t0).Seconds()
	return busy.Spin(uint64(rate), 1000)
}

// ---- The stages, each a goroutine.

//go:noinline
func parser(ctx context.Context, out chan<- record, lines *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; ; i++ {
		r := parse(makeLine(i))
		*lines = int64(i + 1)
		select {
		case out <- r:
		case <-ctx.Done():
			return
		}
	}
}

//go:noinline
func worker(ctx context.Context, in <-chan record, out chan<- record, done *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	var n int64
	defer func() { *done = n }()
	for {
		select {
		case r := <-in:
			t := transform(r)
			n++
			select {
			case out <- t:
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

//go:noinline
func aggregator(ctx context.Context, cancel context.CancelFunc, n int, in <-chan record, batches chan<- []record, progress *atomic.Int64, timeouts *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	t := &totals{byKey: make(map[string]uint64, keys)}
	batch := make([]record, 0, batchSize)
	done := 0
	for done < n {
		select {
		case r := <-in:
			aggregate(t, r)
			done++
			progress.Store(int64(done))
			batch = append(batch, r)
			if len(batch) == batchSize {
				batches <- batch
				batch = make([]record, 0, batchSize)
			}
		case <-time.After(timeout):
			*timeouts++
			timedOut(t, done)
		case <-ctx.Done():
			panic("pipeline: cancelled before the last record")
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	cancel()
	sink += t.sum + uint64(len(t.byKey))
}

//go:noinline
func writer(dir string, batches <-chan []record, written *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	for batch := range batches {
		if err := writeBatch(dir, int(*written), batch); err != nil {
			fmt.Fprintln(os.Stderr, "pipeline:", err)
			os.Exit(1)
		}
		*written++
	}
}

//go:noinline
func monitor(ctx context.Context, progress *atomic.Int64, ticks *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	t0 := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
			*ticks++
			sink += report(progress.Load(), t0)
		}
	}
}

func main() {
	n := flag.Int("n", 400000, "records aggregated")
	flag.Parse()
	rec := truth.Start()

	dir, err := os.MkdirTemp("", "pipeline")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithCancel(context.Background())
	parsed := make(chan record, chanDepth)
	transformed := make(chan record, chanDepth)
	batches := make(chan []record, 4)
	var progress atomic.Int64
	var lines, timeouts, written, ticks int64
	var done [workers]int64
	var wg sync.WaitGroup
	wg.Add(4 + workers)
	go parser(ctx, parsed, &lines, &wg)
	for w := 0; w < workers; w++ {
		go worker(ctx, parsed, transformed, &done[w], &wg)
	}
	go aggregator(ctx, cancel, *n, transformed, batches, &progress, &timeouts, &wg)
	go writer(dir, batches, &written, &wg)
	go monitor(ctx, &progress, &ticks, &wg)
	wg.Wait()
	fmt.Println("pipeline:", sink, "lines", lines, "timeouts", timeouts, "ticks", ticks, "batches", written)

	var transforms int64
	for _, d := range done {
		transforms += d
	}
	rec.Add("main.main", 1)
	rec.Add("main.parser", 1)
	rec.Add("main.worker", workers)
	rec.Add("main.worker.func1", workers)
	rec.Add("main.aggregator", 1)
	rec.Add("main.writer", 1)
	rec.Add("main.monitor", 1)
	rec.Add("main.makeLine", lines)
	rec.Add("main.parse", lines)
	rec.Add("main.transform", transforms)
	rec.Add("main.aggregate", int64(*n))
	rec.Add("main.timedOut", timeouts)
	rec.Add("main.writeBatch", written)
	rec.Add("main.report", ticks)
	rec.Finish()
}
