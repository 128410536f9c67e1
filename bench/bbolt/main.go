// Command bbolt is a write-stress program for go.etcd.io/bbolt, the
// workload of the measurement-reduction table in docs/chain.md.
//
// Many goroutines put random keys in batches (DB.Batch coalesces their
// transactions), with now and then a read of a key just written; every
// goroutine draws from its own generator seeded from -seed, so the work is
// the same from run to run. It prints one line:
//
//	puts=N seconds=S puts_per_second=R cpu_seconds=C cpu_us_per_put=U metered=M probes=P <name>=<count> …
//
// where metered is the total of metered firings in the performance model
// (0 when bbolt is not instrumented) and the names are a few of bbolt's
// probes. Build it plain for the baseline, or with bbolt instrumented by
// meterinject -overlay (run.sh does both).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meterio/meter/probe"
	bolt "go.etcd.io/bbolt"
)

// named are the probes whose counts the line reports.
var named = []string{
	"go.etcd.io/bbolt.(*Bucket).Put",
	"go.etcd.io/bbolt.(*Bucket).Get",
	"go.etcd.io/bbolt.(*Cursor).seek",
	"go.etcd.io/bbolt.(*node).put",
	"go.etcd.io/bbolt.(*node).spill",
	"go.etcd.io/bbolt.(*Tx).Commit",
	"go.etcd.io/bbolt.(*DB).Batch",
}

func main() {
	goroutines := flag.Int("goroutines", 16, "writing goroutines")
	batches := flag.Int("batches", 150, "batched transactions per goroutine")
	puts := flag.Int("puts", 100, "puts per batched transaction")
	valueSize := flag.Int("value", 128, "value size in bytes")
	seed := flag.Uint64("seed", 1, "seed of the key and value generators")
	dir := flag.String("dir", "", "directory for the database file (default: a temporary one)")
	flag.Parse()

	d := *dir
	if d == "" {
		var err error
		if d, err = os.MkdirTemp("", "bbolt-stress"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
	}
	// No fsync: the table is about CPU, and fsync on a shared VM's disk
	// would drown it in noise.
	db, err := bolt.Open(filepath.Join(d, "stress.db"), 0o600, &bolt.Options{NoSync: true, NoFreelistSync: true, Timeout: time.Second})
	if err != nil {
		fail(err)
	}
	defer db.Close()
	db.MaxBatchDelay = time.Millisecond
	bucket := []byte("stress")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		fail(err)
	}

	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, *goroutines)
	for g := range *goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*seed, uint64(g)))
			value := make([]byte, *valueSize)
			for range *batches {
				keys := make([][]byte, *puts)
				for i := range keys {
					keys[i] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(nil, uint32(g)), rng.Uint64())
				}
				fill := rng.Uint64()
				err := db.Batch(func(tx *bolt.Tx) error {
					b := tx.Bucket(bucket)
					for i, k := range keys {
						binary.LittleEndian.PutUint64(value, fill+uint64(i))
						if err := b.Put(k, value); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				if rng.IntN(4) == 0 {
					k := keys[rng.IntN(len(keys))]
					db.View(func(tx *bolt.Tx) error {
						if tx.Bucket(bucket).Get(k) == nil {
							return fmt.Errorf("key %x lost", k)
						}
						return nil
					})
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	close(errs)
	for err := range errs {
		fail(err)
	}

	total := *goroutines * *batches * *puts
	var line strings.Builder
	fmt.Fprintf(&line, "puts=%d seconds=%.3f puts_per_second=%.0f cpu_seconds=%.3f cpu_us_per_put=%.3f",
		total, elapsed.Seconds(), float64(total)/elapsed.Seconds(), cpu.Seconds(), float64(cpu.Microseconds())/float64(total))
	s := probe.Snapshot()
	counts := map[string]int64{}
	var metered int64
	for _, r := range s.Rows {
		metered += r.Count
		counts[r.Probe] = r.Count
	}
	fmt.Fprintf(&line, " metered=%d probes=%d traces=%d truncated=%d", metered, s.Probes, s.Traces, s.TruncatedTraces)
	for _, n := range named {
		fmt.Fprintf(&line, " %s=%d", n, counts[n])
	}
	fmt.Println(line.String())
	probe.Shutdown()
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bbolt stress:", err)
	os.Exit(1)
}
