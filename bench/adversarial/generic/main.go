// Command generic runs generic code and the call shapes that come with it,
// with functions of three sizes side by side:
//
//   - a binary heap of tasks, heap[T] with a comparator func passed in
//     (newHeap[...]; (*heap[...]).push and pop, each about 100-300 ns, with
//     up and down; the comparator, main.main.func1, 5 to 20 ns);
//   - generic Map, Filter and Reduce over slices with closures (Map and
//     Filter of 64 elements, about 1 µs; Reduce of 4096 elements, about
//     50 µs, nearly all of it in its closure's calls of a few ns);
//   - a recursive build of a binary tree of depth 20 (build, 2^21-1 calls
//     of tens of ns, allocating), and recursive walks of it (walk, the same
//     number of calls each) that call a method value, (*tally).visit
//     through visit-fm, at each node (5 to 20 ns);
//   - an interface with two implementations called through the interface
//     in a hot loop (linear.score, about 10 ns; poly.score, about 300 ns);
//   - checksum, about 50 µs of work of its own.
//
// One goroutine does all the work and never waits.
//
// Calls are known from the loop bounds, the slice lengths, the tree's
// shape, and, for the comparator, the compares up and down count in a local
// variable and add to the heap's total once per call. The functions that
// must be real calls are marked //go:noinline. Instrument with -all and
// with the default selection.
//
//	go run ./bench/adversarial/generic [-rounds 200000] [-depth 20] [-walks 8] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

// ---- The heap.

type task struct {
	pri uint64
	id  int
}

type heap[T any] struct {
	items []T
	less  func(a, b T) bool
	cmps  int64 // calls of less, added by up and down once per call
}

//go:noinline
func newHeap[T any](less func(a, b T) bool, capacity int) *heap[T] {
	return &heap[T]{items: make([]T, 0, capacity), less: less}
}

//go:noinline
func (h *heap[T]) up(i int) {
	var cmps int64
	for i > 0 {
		p := (i - 1) / 2
		cmps++
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
	h.cmps += cmps
}

//go:noinline
func (h *heap[T]) down(i int) {
	var cmps int64
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n {
			cmps++
			if h.less(h.items[r], h.items[l]) {
				m = r
			}
		}
		cmps++
		if !h.less(h.items[m], h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	h.cmps += cmps
}

//go:noinline
func (h *heap[T]) push(v T) {
	h.items = append(h.items, v)
	h.up(len(h.items) - 1)
}

//go:noinline
func (h *heap[T]) pop() T {
	v := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return v
}

// ---- Map, Filter, Reduce.

//go:noinline
func Map[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

//go:noinline
func Filter[T any](xs []T, keep func(T) bool) []T {
	out := xs[:0:0]
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

//go:noinline
func Reduce[T, A any](xs []T, acc A, f func(A, T) A) A {
	for _, x := range xs {
		acc = f(acc, x)
	}
	return acc
}

// ---- The tree.

type node struct {
	left, right *node
	val         uint64
}

// build makes a full binary tree of the given depth: 2^(depth+1)-1 nodes.
//
//go:noinline
func build(depth int, seed uint64) *node {
	n := &node{val: busy.Spin(seed, 3)}
	if depth > 0 {
		n.left = build(depth-1, seed*2+1)
		n.right = build(depth-1, seed*2+2)
	}
	return n
}

// walk visits every node, children first; one call per node.
//
//go:noinline
func walk(n *node, visit func(*node)) {
	if n.left != nil {
		walk(n.left, visit)
	}
	if n.right != nil {
		walk(n.right, visit)
	}
	visit(n)
}

type tally struct{ sum uint64 }

//go:noinline
func (t *tally) visit(n *node) {
	t.sum += busy.Spin(n.val, 4)
}

// ---- The interface.

type scorer interface{ score(x uint64) uint64 }

type linear struct{ k uint64 }
type poly struct{ rounds int }

//go:noinline
func (l linear) score(x uint64) uint64 { return busy.Spin(x*l.k, 4) }

//go:noinline
func (p poly) score(x uint64) uint64 { return busy.Spin(x, p.rounds) }

// ---- A long one.

//go:noinline
func checksum(x uint64) uint64 {
	return busy.Spin(x, 40000)
}

// ---- The rounds.

const (
	heapOps     = 8    // pushes and pops per round
	heapSize    = 1024 // the heap's size between rounds
	sliceLen    = 64   // Map's and Filter's input
	scoreCalls  = 64   // interface calls per round
	polyEvery   = 8    // one in polyEvery of them is poly's
	reduceEvery = 32   // a Reduce of reduceLen every reduceEvery rounds
	reduceLen   = 4096
	sumEvery    = 16 // a checksum every sumEvery rounds
)

//go:noinline
func round(i int, h *heap[task], xs []int, big []uint64, scorers []scorer) uint64 {
	x := uint64(i)
	for j := 0; j < heapOps; j++ {
		h.push(task{pri: busy.Spin(x+uint64(j), 2) % 4096, id: i*heapOps + j})
	}
	for j := 0; j < heapOps; j++ {
		x += h.pop().pri
	}

	ys := Map(xs, func(v int) float64 { return float64(busy.Spin(uint64(v)+x, 3)&1023) * 0.5 })
	zs := Filter(ys, func(f float64) bool { return uint64(f)%3 != 0 })
	x += uint64(len(zs))

	for j := 0; j < scoreCalls; j++ {
		x += scorers[j%polyEvery].score(x)
	}

	if i%reduceEvery == 0 {
		x += Reduce(big, x, func(acc, v uint64) uint64 { return busy.Spin(acc^v, 6) })
	}
	if i%sumEvery == 0 {
		x += checksum(x)
	}
	return x
}

//go:noinline
func walkAll(root *node, walks int) uint64 {
	t := &tally{}
	visit := t.visit
	for w := 0; w < walks; w++ {
		walk(root, visit)
	}
	return t.sum
}

func main() {
	rounds := flag.Int("rounds", 200000, "rounds of heap, slices and interface calls")
	depth := flag.Int("depth", 20, "the tree's depth")
	walks := flag.Int("walks", 8, "walks of the tree")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	h := newHeap(func(a, b task) bool {
		return a.pri < b.pri || (a.pri == b.pri && a.id < b.id)
	}, heapSize+heapOps)
	for j := 0; j < heapSize; j++ {
		h.push(task{pri: busy.Spin(uint64(j), 2) % 4096, id: -1 - j})
	}
	xs := make([]int, sliceLen)
	for j := range xs {
		xs[j] = j * 7
	}
	big := make([]uint64, reduceLen)
	for j := range big {
		big[j] = uint64(j) * 0x9E3779B97F4A7C15
	}
	scorers := make([]scorer, polyEvery)
	for j := range scorers {
		scorers[j] = linear{k: uint64(j + 3)}
	}
	scorers[polyEvery-1] = poly{rounds: 200}

	for i := 0; i < *rounds; i++ {
		sink += round(i, h, xs, big, scorers)
	}
	root := build(*depth, 1)
	sink += walkAll(root, *walks)
	fmt.Println("generic:", sink)

	r := int64(*rounds)
	nodes := int64(1)<<(*depth+1) - 1
	pushes := int64(heapSize) + r*heapOps
	pops := r * heapOps
	scores := r * scoreCalls
	polys := r * (scoreCalls / polyEvery)
	rec.Add("main.main", 1)
	rec.Add("main.newHeap[...]", 1)
	rec.Add("main.main.func1", h.cmps)
	rec.Add("main.(*heap[...]).push", pushes)
	rec.Add("main.(*heap[...]).up", pushes)
	rec.Add("main.(*heap[...]).pop", pops)
	rec.Add("main.(*heap[...]).down", pops) // the heap never empties: every pop sifts down
	rec.Add("main.round", r)
	rec.Add("main.Map[...]", r)
	rec.Add("main.round.func1", r*sliceLen)
	rec.Add("main.Filter[...]", r)
	rec.Add("main.round.func2", r*sliceLen)
	rec.Add("main.linear.score", scores-polys)
	rec.Add("main.poly.score", polys)
	rec.Add("main.Reduce[...]", (r+reduceEvery-1)/reduceEvery)
	rec.Add("main.round.func3", (r+reduceEvery-1)/reduceEvery*reduceLen)
	rec.Add("main.checksum", (r+sumEvery-1)/sumEvery)
	rec.Add("main.build", nodes)
	rec.Add("main.walkAll", 1)
	rec.Add("main.walk", nodes*int64(*walks))
	rec.Add("main.(*tally).visit", nodes*int64(*walks))
	rec.Finish()
}
