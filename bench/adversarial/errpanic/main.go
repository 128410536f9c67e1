// Command errpanic parses records with a recursive-descent parser that
// reports an error by panicking, as text/template's and encoding/gob's
// do: one record in four holds a bad atom, tens of calls deep, and the
// panic unwinds every call above it to the recover in parseRecord's
// deferred function. value reads a value (about 120 ns of its own a call),
// list a bracketed list of them (about 200 ns, and the loop over its
// items), atom a number (about 400 ns). The records are generated from a
// seed, the same every run.
//
// What it tries to break: firings that a panic ends, on the hot path, by
// the thousand a second: sampled firings and their forced children
// unwound before their End, the parent's stretch to resume where the
// unwound one began; the time of the panic and of the recovery, which a
// CPU profile charges to the functions that ran them; counts, which hold
// the calls the panic cut short too.
//
// Calls are counted by the parser itself, in a plain add to a field per
// call. The functions are marked //go:noinline: instrument with -all.
//
//	go run ./bench/adversarial/errpanic [-n 100] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

type parser struct {
	src                                   []byte
	pos                                   int
	sum                                   uint64
	nValue, nList, nAtom, nRecord, nDefer int64
}

type parseError struct{ pos int }

//go:noinline
func (p *parser) value() {
	p.nValue++
	p.sum = busy.Spin(p.sum, 60)
	if p.src[p.pos] == '[' {
		p.list()
		return
	}
	p.atom()
}

//go:noinline
func (p *parser) list() {
	p.nList++
	p.pos++ // '['
	p.sum = busy.Spin(p.sum, 100)
	for {
		p.value()
		c := p.src[p.pos]
		p.pos++
		if c == ']' {
			return
		}
	}
}

//go:noinline
func (p *parser) atom() {
	p.nAtom++
	if p.src[p.pos] == '!' {
		panic(parseError{p.pos})
	}
	for p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.sum = busy.Spin(p.sum^uint64(p.src[p.pos]), 40)
		p.pos++
	}
}

//go:noinline
func (p *parser) parseRecord(src []byte) (err error) {
	p.nRecord++
	p.src, p.pos = src, 0
	defer func() {
		p.nDefer++
		if r := recover(); r != nil {
			e, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("bad atom at %d", e.pos)
		}
	}()
	p.value()
	return nil
}

// gen appends a random value nested up to depth levels; bad says where
// one atom is '!'. It makes the input, not the work: no probe.
//
//meter:ignore
func gen(b []byte, r *uint64, depth int, bad *int) []byte {
	rnd := func(n uint64) uint64 { return busy.Draw(r, n) }
	if depth > 0 && rnd(4) != 0 {
		b = append(b, '[')
		items := 1 + rnd(4)
		for i := uint64(0); i < items; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = gen(b, r, depth-1, bad)
		}
		return append(b, ']')
	}
	*bad--
	if *bad == 0 {
		return append(b, '!')
	}
	for i := uint64(0); i < 1+rnd(4); i++ {
		b = append(b, byte('0'+rnd(10)))
	}
	return b
}

func main() {
	n := flag.Int("n", 100, "rounds of parsing the records")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	seed := uint64(88172645463325252)
	var records [][]byte
	for i := 0; i < 512; i++ {
		bad := -1
		if i%4 == 3 {
			bad = 1 + int(seed%40)
		}
		records = append(records, append(gen(nil, &seed, 7, &bad), ';'))
	}
	var p parser
	var failed int
	for i := 0; i < *n; i++ {
		for _, r := range records {
			if err := p.parseRecord(r); err != nil {
				failed++
			}
		}
	}
	fmt.Println("errpanic:", p.nRecord, p.nAtom, failed, p.sum)
	rec.Add("main.main", 1)
	rec.Add("main.(*parser).value", p.nValue)
	rec.Add("main.(*parser).list", p.nList)
	rec.Add("main.(*parser).atom", p.nAtom)
	rec.Add("main.(*parser).parseRecord", p.nRecord)
	rec.Add("main.(*parser).parseRecord.func1", p.nDefer)
	rec.Finish()
}
