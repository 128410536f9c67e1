// Command gcheavy works beside a large live heap. It builds a binary tree
// of 4 million nodes of 48 bytes, three pointers each (about 200 MB, with
// a 32 MB slice of pointers to them), links every node to another at
// random into one cycle, and keeps it all live to the end. It sets GOGC to
// 25 (-gcpercent): the heap may grow 50 MB before the collector runs
// again, so once the tree is built the collector marks its 240 MB most of
// the time. Then one goroutine loops over three functions:
//
//   - allocating mixes a value and allocates a small object of 32 bytes
//     (two pointers) at each of its 32 steps, chaining them into a list
//     that it keeps until its next call: it pays for the collector in
//     assists (runtime.gcAssistAlloc under mallocgc, in a CPU profile
//     under allocating; about half of its time);
//   - computing does the same mixing (about 0.8 µs) and allocates nothing;
//   - walk follows the random links, four a call (pointer chasing, a cache
//     and TLB miss a hop: about 1.2 µs a call).
//
// What it tries to break: the collector's assists, its stack scans and its
// stops of the world land in the hot function's stretches, as waits, as
// preemptions, as CPU time; an estimate of the allocating function's time
// may follow any of them.
//
// Calls are known from the loop bounds and the tree's shape. One goroutine
// works at a time and waits for nothing of the program's (the collector's
// workers run beside it). The functions are marked //go:noinline and are
// small: instrument with -all.
//
//	go run ./bench/adversarial/gcheavy [-depth 22] [-n 450000] [-gcpercent 25] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"runtime/debug"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

type node struct {
	left, right, link *node
	val, a, b         uint64
}

type cell struct {
	next *cell
	from *node
	v, w uint64
}

const (
	steps      = 32 // objects allocated by each call of allocating
	stepRounds = 16 // rounds of busy.Spin a step
	hops       = 4  // links followed by each call of walk
)

var (
	root  *node
	all   []*node
	kept  *cell
	sinks [4]uint64
)

// build makes a complete tree of the given depth (2^depth−1 nodes),
// appending each node to all.
//
//go:noinline
func build(depth int, x uint64) *node {
	n := &node{val: x, a: x >> 7, b: x << 3}
	all = append(all, n)
	if depth > 1 {
		n.left = build(depth-1, x*2+1)
		n.right = build(depth-1, x*2+2)
	}
	return n
}

// link shuffles all (Fisher–Yates, its own generator) and links each node
// to the next, the last to the first: one cycle through every node, in an
// order unrelated to where they lie in memory.
//
//go:noinline
func link(seed uint64) {
	order := make([]*node, len(all))
	copy(order, all)
	x := seed
	for i := len(order) - 1; i > 0; i-- {
		x = x*6364136223846793005 + 1442695040888963407
		j := int((x >> 33) % uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	for i, n := range order {
		n.link = order[(i+1)%len(order)]
	}
}

//go:noinline
func allocating(x uint64, at *node) uint64 {
	var head *cell
	if kept != nil {
		x ^= kept.v // the list of the call before, dropped now
	}
	for j := 0; j < steps; j++ {
		x = busy.Spin(x, stepRounds)
		head = &cell{next: head, from: at, v: x, w: uint64(j)}
	}
	kept = head
	return x
}

//go:noinline
func computing(x uint64) uint64 {
	for j := 0; j < steps; j++ {
		x = busy.Spin(x, stepRounds)
	}
	return x
}

//go:noinline
func walk(p *node) (*node, uint64) {
	var s uint64
	for j := 0; j < hops; j++ {
		s += p.val ^ p.a
		p = p.link
	}
	return p, s
}

//go:noinline
func loop(n int) {
	p := root
	var x, y, s uint64
	for i := 0; i < n; i++ {
		x = allocating(x+uint64(i), p)
		y = computing(y + uint64(i))
		var t uint64
		p, t = walk(p)
		s += t
	}
	sinks[0], sinks[1], sinks[2] = x, y, s
}

func main() {
	depth := flag.Int("depth", 22, "depth of the live tree (2^depth−1 nodes of 48 bytes)")
	n := flag.Int("n", 450_000, "calls of allocating, computing and walk")
	gcPercent := flag.Int("gcpercent", 25, "GOGC: the heap may grow this many percent over the live heap before the collector runs again")
	flag.Parse()
	debug.SetGCPercent(*gcPercent)
	rec := truth.Start()

	all = make([]*node, 0, 1<<*depth)
	root = build(*depth, 1)
	link(uint64(*depth))
	loop(*n)
	sinks[3] = uint64(len(all)) + root.val
	fmt.Println("gcheavy:", sinks)

	rec.Add("main.main", 1)
	rec.Add("main.build", int64(1)<<*depth-1)
	rec.Add("main.link", 1)
	rec.Add("main.loop", 1)
	rec.Add("main.allocating", int64(*n))
	rec.Add("main.computing", int64(*n))
	rec.Add("main.walk", int64(*n))
	rec.CPUBound()
	rec.Finish()
}
