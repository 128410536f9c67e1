// Command locks runs goroutines that contend for locks. Four workers each
// do some work of their own (outside, about 1.7 µs) and then take a
// sync.Mutex (locked) to do work on the state it guards (critical, about
// 2.3 µs): the lock is wanted more than it is free, and held most of the
// run. Two readers take a sync.RWMutex's read half (readLocked) to look
// into a table (lookup, about 1.2 µs), with a little work between (think,
// about 0.6 µs); a writer takes its write half (writeLocked) to update the
// table (store, about 1.7 µs) after work of its own (outside). A sleeper
// sleeps 100 µs (time.Sleep; the runtime wakes it later, often after a
// ms) and does a little work at each wake (tick, about 1.7 µs) until the
// others are done. (Times at about 1.4 ns a round of busy.Spin.)
//
// Eight goroutines on two Ps: a lock is often held when another goroutine
// wants it, which then may spin for a moment (sync.(*Mutex).lockSlow, in a
// CPU profile under locked; rare here, as a P seldom has nothing else to
// run) and parks. A waiter left waiting over 1 ms puts the mutex in
// starvation mode, where Unlock hands it to the next waiter and yields.
// The wait is not own time: locked, readLocked and writeLocked are long in
// wall time and short in CPU time; what the profile gives them is the
// spinning, the park and the wake-up of the next waiter at Unlock.
//
// Calls are known from the loop bounds, and the sleeper's from a local
// count it returns. The functions are marked //go:noinline and are small:
// instrument with -all (the goroutines' functions are kept by the default
// selection too).
//
//	go run ./bench/adversarial/locks [-scale 1] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// Work at -scale 1.
const (
	workers = 4
	rounds  = 160_000 // calls of outside and locked on each worker

	readers = 2
	reads   = 320_000 // calls of think and readLocked on each reader
	writes  = 100_000 // calls of outside and writeLocked on the writer
)

var (
	mu     sync.Mutex
	shared [64]uint64 // guarded by mu

	rw    sync.RWMutex
	table [256]uint64 // guarded by rw

	stop  atomic.Bool
	sinks [workers + readers + 2]uint64
)

// critical is the work done holding mu.
//
//go:noinline
func critical(i int) {
	k := i % len(shared)
	shared[k] = busy.Spin(shared[k]+uint64(i), 1600)
}

// locked takes mu, waiting for it while another goroutine holds it.
//
//go:noinline
func locked(i int) {
	mu.Lock()
	critical(i)
	mu.Unlock()
}

// outside is work that takes no lock.
//
//go:noinline
func outside(x uint64) uint64 {
	return busy.Spin(x, 1200)
}

//go:noinline
func worker(id, n int) {
	x := uint64(id)
	for i := 0; i < n; i++ {
		x = outside(x + uint64(i))
		locked(id*n + i)
	}
	sinks[id] = x
}

// lookup is the work done holding rw's read half.
//
//go:noinline
func lookup(i int) uint64 {
	return busy.Spin(table[i%len(table)], 800)
}

//go:noinline
func readLocked(i int) uint64 {
	rw.RLock()
	v := lookup(i)
	rw.RUnlock()
	return v
}

//go:noinline
func think(x uint64) uint64 {
	return busy.Spin(x, 400)
}

//go:noinline
func reader(id, n int) {
	x := uint64(id)
	for i := 0; i < n; i++ {
		x = think(x) ^ readLocked(i+int(x%7))
	}
	sinks[id] = x
}

// store is the work done holding rw's write half.
//
//go:noinline
func store(i int, x uint64) {
	k := i % len(table)
	table[k] = busy.Spin(table[k]^x, 1200)
}

//go:noinline
func writeLocked(i int, x uint64) {
	rw.Lock()
	store(i, x)
	rw.Unlock()
}

//go:noinline
func writer(id, n int) {
	x := uint64(id)
	for i := 0; i < n; i++ {
		x = outside(x + uint64(i))
		writeLocked(i, x)
	}
	sinks[id] = x
}

// tick is the sleeper's work at each wake.
//
//go:noinline
func tick(x uint64) uint64 {
	return busy.Spin(x, 1200)
}

// sleeper sleeps 100 µs and ticks, over and over, until stop is set, and returns how
// many times it ticked.
//
//go:noinline
func sleeper(id int) int64 {
	x := uint64(id)
	var n int64
	for !stop.Load() {
		time.Sleep(100 * time.Microsecond)
		x = tick(x)
		n++
	}
	sinks[id] = x
	return n
}

// scaled is n times scale, at least 1.
//
//meter:ignore
func scaled(n int, scale float64) int { return max(1, int(float64(n)*scale)) }

func main() {
	scale := flag.Float64("scale", 1, "scale of every goroutine's work")
	flag.Parse()
	rec := truth.Start()
	nRounds, nReads, nWrites := scaled(rounds, *scale), scaled(reads, *scale), scaled(writes, *scale)

	ticks := make(chan int64)
	go func() {
		ticks <- sleeper(workers + readers + 1)
	}()
	var wg sync.WaitGroup
	wg.Add(workers + readers + 1)
	for id := 0; id < workers; id++ {
		go func(id int) {
			defer wg.Done()
			worker(id, nRounds)
		}(id)
	}
	for id := workers; id < workers+readers; id++ {
		go func(id int) {
			defer wg.Done()
			reader(id, nReads)
		}(id)
	}
	go func() {
		defer wg.Done()
		writer(workers+readers, nWrites)
	}()
	wg.Wait()
	stop.Store(true)
	nTicks := <-ticks
	fmt.Println("locks:", sinks, nTicks)

	rec.Add("main.main", 1)
	rec.Add("main.main.func1", 1)
	rec.Add("main.main.func2", workers)
	rec.Add("main.main.func3", readers)
	rec.Add("main.main.func4", 1)
	rec.Add("main.sleeper", 1)
	rec.Add("main.tick", nTicks)
	rec.Add("main.worker", workers)
	rec.Add("main.outside", int64(workers*nRounds+nWrites))
	rec.Add("main.locked", int64(workers*nRounds))
	rec.Add("main.critical", int64(workers*nRounds))
	rec.Add("main.reader", readers)
	rec.Add("main.think", int64(readers*nReads))
	rec.Add("main.readLocked", int64(readers*nReads))
	rec.Add("main.lookup", int64(readers*nReads))
	rec.Add("main.writer", 1)
	rec.Add("main.writeLocked", int64(nWrites))
	rec.Add("main.store", int64(nWrites))
	rec.Finish()
}
