// Command naming prints, for each function that runs, the toolchain's name
// and the line where the function starts. names_test.go compares them with
// the names meterinject gives. Run it with -gcflags=-l.
package main

import (
	"fmt"
	"runtime"
	"sort"
)

var seen = map[string]int{}

func rec() {
	pc, _, _, _ := runtime.Caller(1)
	f := runtime.FuncForPC(pc)
	_, line := f.FileLine(f.Entry())
	seen[f.Name()] = line
}

var glob = func() int {
	rec()
	return func() int {
		rec()
		return 1
	}()
}()

func init() {
	rec()
	func() {
		rec()
	}()
}

func init() {
	rec()
}

type List[T any] struct{ items []T }

func (l *List[T]) Push(v T) {
	rec()
	func() {
		rec()
	}()
}

func (l List[T]) Len() int {
	rec()
	return len(l.items)
}

type Pair[K comparable, V any] struct{}

func (p *Pair[K, V]) Get() {
	rec()
}

type T struct{}

func (T) Value() {
	rec()
}

func (*T) Pointer() {
	rec()
}

func Gen[X any](x X) {
	rec()
}

func Outer() {
	f := func() {
		rec()
		g := func() {
			rec()
		}
		g()
		func() {
			rec()
			func() {
				rec()
			}()
		}()
	}
	f()
	defer func() {
		rec()
	}()
}

func main() {
	rec()
	(&List[int]{}).Push(1)
	List[int]{}.Len()
	(&Pair[string, int]{}).Get()
	T{}.Value()
	(&T{}).Pointer()
	Gen(1)
	Outer()
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(seen[n], n)
	}
}
