// Command treewalk walks a tree of directories as a file indexer would:
// walk reads a directory's entries (its own work grows with their number,
// 0.3 to 3 µs a call), calls visit for each sub-directory, which checks it
// (about 400 ns of its own) and walks it in turn, and scan for each file,
// which hashes the file's block (1 to 2 µs). The tree is eight levels
// deep; the same tree every run.
//
// What it tries to break: a function that recurses, through another,
// with own time above the untimed limit but too short to meter at every
// call, so sampled. A sampled call's estimate must hold its own time
// alone, not the calls nested in it, of itself and of visit: a metered
// walk's firing has metered walks below it, so what bounds a flat
// sampled function's estimate (its firings have no metered children)
// does not apply.
//
// Calls are counted by the walker, in a plain add to a field per call.
// The functions are marked //go:noinline: instrument with -all.
//
//	go run ./bench/adversarial/treewalk [-n 400] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

type dir struct {
	names []uint64
	subs  []*dir
	files []uint64
}

type walker struct {
	sum                  uint64
	nWalk, nVisit, nScan int64
}

//go:noinline
func (w *walker) walk(d *dir) {
	w.nWalk++
	h := uint64(len(d.names))
	for _, n := range d.names {
		h = busy.Spin(h^n, 20) // about 30 ns a name
	}
	w.sum += h
	for _, s := range d.subs {
		w.visit(s)
	}
	for _, f := range d.files {
		w.scan(f)
	}
}

//go:noinline
func (w *walker) visit(d *dir) {
	w.nVisit++
	w.sum += busy.Spin(uint64(len(d.subs)), 280)
	w.walk(d)
}

//go:noinline
func (w *walker) scan(f uint64) {
	w.nScan++
	w.sum += busy.Spin(f, 700+int(f%700))
}

// build makes a directory depth levels deep. It makes the input, not the
// work: no probe.
//
//meter:ignore
func build(r *uint64, depth int) *dir {
	rnd := func(n uint64) uint64 { return busy.Draw(r, n) }
	d := &dir{}
	for i := uint64(0); i < 10+rnd(90); i++ {
		d.names = append(d.names, rnd(1<<32))
	}
	if depth > 0 {
		for i := uint64(0); i < 1+rnd(4); i++ {
			d.subs = append(d.subs, build(r, depth-1))
		}
	}
	for i := uint64(0); i < rnd(4); i++ {
		d.files = append(d.files, rnd(1<<32))
	}
	return d
}

func main() {
	n := flag.Int("n", 400, "walks of the tree")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	seed := uint64(88172645463325252)
	root := build(&seed, 8)
	var w walker
	for i := 0; i < *n; i++ {
		w.walk(root)
	}
	fmt.Println("treewalk:", w.nWalk, w.nScan, w.sum)
	rec.Add("main.main", 1)
	rec.Add("main.(*walker).walk", w.nWalk)
	rec.Add("main.(*walker).visit", w.nVisit)
	rec.Add("main.(*walker).scan", w.nScan)
	rec.Finish()
}
