// Command shapes calls functions in every shape a frame can take, with
// known counts: closures returned (adder.func1), passed (round.func1 to
// apply), deferred (guarded.func1) and run as goroutines (fanOut.func1);
// a method value (counter.bump through bump-fm); interface dispatch
// (square.area, circle.area); generic functions and methods (sum[...],
// (*stack[...]).push and pop); recursion (fib); a panic recovered by its
// caller's deferred closure (mayPanic under guarded); a panic that
// unwinds several frames before a goroutine's deferred closure recovers
// it (deep under crash.func1); and runtime.Goexit (quit under
// leave.func1).
//
// Each does some work of its own, so that it shows in a CPU profile.
// Calls are known from the loop bounds and the rules below (mayPanic
// panics at every fourth round; crash and leave run every sixteenth). The
// functions that must be real calls are marked //go:noinline. adder is
// left inlinable on purpose: with the default selection it gets no probe,
// the compiler inlines it, and its closure is named after the inlining at
// run time (the truth file's #alias maps that name to main.adder.func1).
// Instrument with the default selection and with -all.
//
//	go run ./bench/adversarial/shapes [-n 3000000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"runtime"
	"sync"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// spin is the work of each shape. It has no probe, so its time is its
// callers' own time, as an inlined helper's is.
//
//meter:ignore
func spin(x, rounds int) int {
	for i := 0; i < rounds; i++ {
		x = x*1103515245 + 12345
		x ^= x >> 11
	}
	return x
}

var sink int

// Returned closure; adder itself is inlinable.
func adder(k int) func(int) int {
	return func(x int) int { return spin(x+k, 40) }
}

// adders holds the closures adder returns, so that their calls are
// calls through a function value.
var adders [4]func(int) int

// Passed closure.
//
//go:noinline
func apply(f func(int) int, x int) int {
	return f(spin(x, 20))
}

// Deferred closure that recovers the panic of its callee.
//
//go:noinline
func guarded(i int) (out int) {
	defer func() {
		if v := recover(); v != nil {
			out = spin(i, 30)
		}
	}()
	return mayPanic(i)
}

//go:noinline
func mayPanic(i int) int {
	x := spin(i, 40)
	if i%4 == 0 {
		panic("every fourth")
	}
	return x
}

// Method value.
type counter struct{ n int }

//go:noinline
func (c *counter) bump(x int) int {
	c.n += spin(x, 30) & 1
	return c.n
}

// Interface dispatch.
type shape interface{ area() int }

type square struct{ side int }
type circle struct{ r int }

//go:noinline
func (s square) area() int { return spin(s.side*s.side, 20) }

//go:noinline
func (c circle) area() int { return spin(3*c.r*c.r, 25) }

// Generics.
type number interface{ ~int | ~float64 }

//go:noinline
func sum[T number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

type stack[T any] struct{ items []T }

//go:noinline
func (s *stack[T]) push(v T) { s.items = append(s.items, v) }

//go:noinline
func (s *stack[T]) pop() T {
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v
}

// Recursion.
//
//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// fibCalls is how many calls fib(n) makes, itself included.
func fibCalls(n int) int64 {
	a, b := int64(1), int64(1) // calls of fib(0), fib(1)
	for i := 2; i <= n; i++ {
		a, b = b, a+b+1
	}
	if n == 0 {
		return a
	}
	return b
}

// Goroutines running closures.
//
//go:noinline
func fanOut(x, k int) int {
	results := make(chan int, k)
	for j := 0; j < k; j++ {
		go func(j int) { results <- spin(x+j, 200) }(j)
	}
	s := 0
	for j := 0; j < k; j++ {
		s += <-results
	}
	return s
}

// A panic that unwinds deep's frames up to the goroutine's deferred
// recover.
//
//go:noinline
func deep(n int) int {
	x := spin(n, 50)
	if n == 0 {
		panic("bottom")
	}
	return deep(n-1) + x
}

//go:noinline
func crash(depth int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { _ = recover() }()
		sink += deep(depth)
	}()
	wg.Wait()
}

// runtime.Goexit.
//
//go:noinline
func quit(x int) {
	sink += spin(x, 100)
	runtime.Goexit()
}

//go:noinline
func leave(x int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		quit(x)
	}()
	wg.Wait()
}

// Every round, per shape.
const (
	fibDepth   = 10
	crashDepth = 3 // deep calls itself down to 0: crashDepth+1 calls
	goEvery    = 16
	fanWidth   = 2
)

//go:noinline
func round(i int, c *counter, shapes []shape, ints *stack[int], floats *stack[float64]) int {
	x := adders[i%len(adders)](i)
	x += apply(func(y int) int { return spin(y+i, 30) }, x)
	x += guarded(i)
	bump := c.bump
	x += bump(x)
	for _, s := range shapes {
		x += s.area()
	}
	ints.push(x)
	floats.push(float64(x))
	x += ints.pop() + int(floats.pop())
	x += sum([]int{x, i, 3}) + int(sum([]float64{1.5, float64(i)}))
	x += fib(fibDepth)
	if i%goEvery == 0 {
		x += fanOut(x, fanWidth)
		crash(crashDepth)
		leave(x)
	}
	return x
}

func main() {
	n := flag.Int("n", 3000000, "rounds")
	flag.Parse()
	rec := truth.Start()

	for k := range adders {
		adders[k] = adder(k)
	}
	c := &counter{}
	shapes := []shape{square{3}, circle{2}, square{5}}
	ints, floats := &stack[int]{}, &stack[float64]{}
	for i := 0; i < *n; i++ {
		sink += round(i, c, shapes, ints, floats)
	}
	fmt.Println("shapes:", sink)

	r := int64(*n)
	every := (r + goEvery - 1) / goEvery
	rec.Alias(adders[0], "main.adder.func1")
	rec.Add("main.main", 1)
	rec.Add("main.adder", int64(len(adders)))
	rec.Add("main.adder.func1", r)
	rec.Add("main.round", r)
	rec.Add("main.apply", r)
	rec.Add("main.round.func1", r)
	rec.Add("main.guarded", r)
	rec.Add("main.guarded.func1", r)
	rec.Add("main.mayPanic", r)
	rec.Add("main.(*counter).bump", r)
	rec.Add("main.square.area", 2*r)
	rec.Add("main.circle.area", r)
	rec.Add("main.(*stack[...]).push", 2*r)
	rec.Add("main.(*stack[...]).pop", 2*r)
	rec.Add("main.sum[...]", 2*r)
	rec.Add("main.fib", r*fibCalls(fibDepth))
	rec.Add("main.fibCalls", 1)
	rec.Add("main.fanOut", every)
	rec.Add("main.fanOut.func1", every*fanWidth)
	rec.Add("main.crash", every)
	rec.Add("main.crash.func1", every)
	rec.Add("main.crash.func1.1", every)
	rec.Add("main.deep", every*(crashDepth+1))
	rec.Add("main.leave", every)
	rec.Add("main.leave.func1", every)
	rec.Add("main.quit", every)
	rec.Finish()
}
