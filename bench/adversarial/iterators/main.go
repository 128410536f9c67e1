//go:build go1.23

// Command iterators runs its hot path through range-over-func iterators
// (Go 1.23), as code written for iter.Seq does:
//
//   - a binary search tree of 1,023 keys whose All returns an iter.Seq
//     (main.(*tree).All.func1) that yields the keys in order through
//     push, a recursive method (about 80 ns of its own a call), so that
//     each yield, and the loop body it runs, is nested as deep as the
//     node; Backward returns an iter.Seq2 of index and key over the
//     sorted keys;
//   - consumers ranging over them: sumTop (the body calls weigh, about
//     700 ns, and mixes the key through a closure made in the body, apply
//     and main.sumTop.func1, tens of ns; it breaks out at a random key),
//     find (it returns from inside the loop body at the key it looks
//     for, after 128 keys on average), tail (over Backward, breaking
//     after a few dozen), and take, a method value passed as the yield
//     function itself;
//   - generic adapters Filter and Map over iter.Seq, whose closures run
//     a predicate (odd, a few ns) and a method value ((*scaler).scale,
//     about 300 ns) for each key, consumed by pipeline;
//   - iter.Pull: merge pulls two sorted sequences of gen (its closure,
//     main.gen.func1, works about 550 ns between yields) and merges them,
//     mix (about 20 ns) and 200 ns of its own for each key; mergeTree
//     pulls the tree's All beside one gen. A pulled iterator runs on a
//     coroutine: a goroutine of its own, which the runtime switches to
//     and back from at each next, on the same thread.
//
// What it tries to break: yields that run the consumer's loop body inside
// the iterator's firing, tens of frames deep, so that the body's work is
// the iterator's as a CPU profile sees it; a return from inside a loop
// body, which runs inside the iterator's calls, deep in the recursion,
// while the consumer's firing waits for them to return (meterinject gives
// such a consumer the defer shape: an End at that return would end it
// there, the iterator's firings still open above it); a pulled iterator's firing on a coroutine, and the consumer's
// firing parked, in the runtime's eyes, at every next while the
// coroutine runs, its stretches holding a wait and the CPU time around
// it; short and long functions side by side; a closure made in a loop
// body, which the runtime names after the body (main.sumTop-range1.func1)
// where meterinject names it after the function.
//
// Calls are counted by the functions themselves, in a plain add to a
// field or a variable per call. The functions are marked //go:noinline:
// instrument with -all. The module says go 1.22; the build line gives
// this file the range-over-func of 1.23.
//
//	go run ./bench/adversarial/iterators [-n 2000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"iter"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// calls holds the true calls of every function of the program.
var calls struct {
	all, allSeq, push, backward, backwardSeq        int64
	sumTop, weigh, apply, applyFn, find, tail, take int64
	filter, filterSeq, mapF, mapSeq, odd, scale     int64
	pipeline, gen, genSeq, merge, mergeTree, mix    int64
}

var sink uint64

// ---- The tree and its iterators.

type node struct {
	key         uint64
	left, right *node
}

type tree struct {
	root *node
	keys []uint64 // sorted
}

// All returns the keys in order. Its sequence recurses through push,
// each yield nested as deep as its node.
//
//go:noinline
func (t *tree) All() iter.Seq[uint64] {
	calls.all++
	return func(yield func(uint64) bool) {
		calls.allSeq++
		if t.root != nil {
			t.push(t.root, yield)
		}
	}
}

// push yields the keys of n's subtree in order; false once yield said
// stop.
//
//go:noinline
func (t *tree) push(n *node, yield func(uint64) bool) bool {
	calls.push++
	if n.left != nil && !t.push(n.left, yield) {
		return false
	}
	sink = busy.Spin(sink^n.key, 55)
	if !yield(n.key) {
		return false
	}
	return n.right == nil || t.push(n.right, yield)
}

// Backward returns the index and key of each key, largest first.
//
//go:noinline
func (t *tree) Backward() iter.Seq2[int, uint64] {
	calls.backward++
	return func(yield func(int, uint64) bool) {
		calls.backwardSeq++
		for i := len(t.keys) - 1; i >= 0; i-- {
			sink = busy.Spin(sink^t.keys[i], 40)
			if !yield(i, t.keys[i]) {
				return
			}
		}
	}
}

// ---- Consumers of the tree's sequences.

// weigh is the work of sumTop's loop body for each key: about 700 ns.
//
//go:noinline
func weigh(k uint64) uint64 {
	calls.weigh++
	return busy.Spin(k, 500)
}

// apply runs f on k: tens of ns.
//
//go:noinline
func apply(k uint64, f func(uint64) uint64) uint64 {
	calls.apply++
	return f(busy.Spin(k, 5))
}

// sumTop sums the weights of the keys up to limit, breaking out of the
// loop at the first key above it.
//
//go:noinline
func sumTop(t *tree, limit uint64) uint64 {
	calls.sumTop++
	var s uint64
	for k := range t.All() {
		if k&(1<<32-1) > limit {
			break
		}
		s += weigh(k)
		s = apply(s, func(x uint64) uint64 {
			calls.applyFn++
			return busy.Spin(x^k, 15)
		})
		s = busy.Spin(s, 100) // the body's own work: about 140 ns
	}
	return s
}

// find returns the position of the first key at or above key, returning
// from inside the loop body.
//
//go:noinline
func find(t *tree, key uint64) int {
	calls.find++
	i := 0
	for k := range t.All() {
		if k&(1<<32-1) >= key {
			return i
		}
		sink = busy.Spin(sink^k, 30)
		i++
	}
	return -1
}

// tail weighs the n largest keys, from Backward's Seq2.
//
//go:noinline
func tail(t *tree, n int) uint64 {
	calls.tail++
	var s uint64
	for i, k := range t.Backward() {
		if i < len(t.keys)-n {
			break
		}
		s += weigh(k ^ uint64(i))
	}
	return s
}

type collector struct {
	sum  uint64
	left int
}

// take is a yield function passed as a method value: it adds k, about
// 250 ns, and stops after its quota.
//
//go:noinline
func (c *collector) take(k uint64) bool {
	calls.take++
	c.sum = busy.Spin(c.sum^k, 180)
	c.left--
	return c.left > 0
}

// ---- Generic adapters.

//go:noinline
func Filter[V any](seq iter.Seq[V], keep func(V) bool) iter.Seq[V] {
	calls.filter++
	return func(yield func(V) bool) {
		calls.filterSeq++
		for v := range seq {
			if keep(v) && !yield(v) {
				return
			}
		}
	}
}

//go:noinline
func Map[V, W any](seq iter.Seq[V], f func(V) W) iter.Seq[W] {
	calls.mapF++
	return func(yield func(W) bool) {
		calls.mapSeq++
		for v := range seq {
			if !yield(f(v)) {
				return
			}
		}
	}
}

//go:noinline
func odd(k uint64) bool {
	calls.odd++
	return k&1 == 1
}

type scaler struct{ factor uint64 }

//go:noinline
func (s *scaler) scale(k uint64) uint64 {
	calls.scale++
	return busy.Spin(k*s.factor, 200)
}

// pipeline sums the scaled odd keys, through Filter and Map, up to max of
// them.
//
//go:noinline
func pipeline(t *tree, sc *scaler, max int) uint64 {
	calls.pipeline++
	var s uint64
	n := 0
	for v := range Map(Filter(t.All(), odd), sc.scale) {
		s ^= v
		if n++; n == max {
			break
		}
	}
	return s
}

// ---- Pulled sequences.

// gen returns n ascending values from seed, about 550 ns of work before
// each.
//
//go:noinline
func gen(seed uint64, n int) iter.Seq[uint64] {
	calls.gen++
	return func(yield func(uint64) bool) {
		calls.genSeq++
		v := seed % 1000
		for i := 0; i < n; i++ {
			h := busy.Spin(seed+uint64(i), 400)
			v += 1 + h%1000
			if !yield(v) {
				return
			}
		}
	}
}

// mix folds v into s: about 20 ns.
//
//go:noinline
func mix(s, v uint64) uint64 {
	calls.mix++
	return busy.Spin(s^v, 12)
}

// merge merges two ascending sequences, pulled, and folds each value in
// order, 200 ns of work of its own for each.
//
//go:noinline
func merge(a, b iter.Seq[uint64]) uint64 {
	calls.merge++
	nextA, stopA := iter.Pull(a)
	defer stopA()
	nextB, stopB := iter.Pull(b)
	defer stopB()
	va, okA := nextA()
	vb, okB := nextB()
	var s uint64
	for okA || okB {
		var v uint64
		if okA && (!okB || va <= vb) {
			v = va
			va, okA = nextA()
		} else {
			v = vb
			vb, okB = nextB()
		}
		s = busy.Spin(mix(s, v), 140)
	}
	return s
}

// mergeTree merges the tree's keys, pulled, with one gen until either
// runs out, and stops the other.
//
//go:noinline
func mergeTree(t *tree, g iter.Seq[uint64]) uint64 {
	calls.mergeTree++
	nextT, stopT := iter.Pull(t.All())
	nextG, stopG := iter.Pull(g)
	vt, okT := nextT()
	vg, okG := nextG()
	var s uint64
	for okT && okG {
		if vt&(1<<32-1) <= vg<<20 {
			s = mix(s, vt)
			vt, okT = nextT()
		} else {
			s = mix(s, vg)
			vg, okG = nextG()
		}
		s = busy.Spin(s, 100)
	}
	stopT()
	stopG()
	return s
}

// build makes a balanced search tree of the sorted keys. It makes the
// input, not the work: no probe.
//
//meter:ignore
func build(keys []uint64) *node {
	if len(keys) == 0 {
		return nil
	}
	m := len(keys) / 2
	return &node{key: keys[m], left: build(keys[:m]), right: build(keys[m+1:])}
}

func main() {
	n := flag.Int("n", 2000, "rounds of the consumers")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	seed := uint64(88172645463325252)
	keys := make([]uint64, 1023)
	for i := range keys {
		keys[i] = uint64(i)<<22 | busy.Draw(&seed, 1<<22) // ascending, below 1<<32
	}
	t := &tree{root: build(keys), keys: keys}
	sc := &scaler{factor: 3}
	var s uint64
	for r := 0; r < *n; r++ {
		s ^= sumTop(t, busy.Draw(&seed, 1<<31)) // half the keys, on average
		for i := 0; i < 8; i++ {
			s += uint64(find(t, busy.Draw(&seed, 1<<30))) // a key among the first 256
		}
		s ^= tail(t, 16+int(busy.Draw(&seed, 48)))
		c := &collector{left: 40 + int(busy.Draw(&seed, 100))}
		t.All()(c.take)
		s ^= c.sum
		s ^= pipeline(t, sc, 100+int(busy.Draw(&seed, 200)))
		s ^= merge(gen(busy.Draw(&seed, 1<<20), 100+int(busy.Draw(&seed, 100))), gen(busy.Draw(&seed, 1<<20), 100+int(busy.Draw(&seed, 100))))
		s ^= mergeTree(t, gen(busy.Draw(&seed, 1<<20), 50+int(busy.Draw(&seed, 100))))
	}
	fmt.Println("iterators:", calls.push, calls.genSeq, s, sink)
	rec.Add("main.main", 1)
	rec.Add("main.(*tree).All", calls.all)
	rec.Add("main.(*tree).All.func1", calls.allSeq)
	rec.Add("main.(*tree).push", calls.push)
	rec.Add("main.(*tree).Backward", calls.backward)
	rec.Add("main.(*tree).Backward.func1", calls.backwardSeq)
	rec.Add("main.weigh", calls.weigh)
	rec.Add("main.apply", calls.apply)
	rec.Add("main.sumTop", calls.sumTop)
	rec.Add("main.sumTop.func1", calls.applyFn)
	rec.Add("main.find", calls.find)
	rec.Add("main.tail", calls.tail)
	rec.Add("main.(*collector).take", calls.take)
	rec.Add("main.Filter[...]", calls.filter)
	rec.Add("main.Filter[...].func1", calls.filterSeq)
	rec.Add("main.Map[...]", calls.mapF)
	rec.Add("main.Map[...].func1", calls.mapSeq)
	rec.Add("main.odd", calls.odd)
	rec.Add("main.(*scaler).scale", calls.scale)
	rec.Add("main.pipeline", calls.pipeline)
	rec.Add("main.gen", calls.gen)
	rec.Add("main.gen.func1", calls.genSeq)
	rec.Add("main.merge", calls.merge)
	rec.Add("main.mergeTree", calls.mergeTree)
	rec.Add("main.mix", calls.mix)
	rec.Finish()
}
