// Command descent parses and evaluates arithmetic expressions with a
// recursive-descent parser: expr calls term, term calls factor, and
// factor calls expr again for each parenthesis, so the three recurse
// through one another, tens of levels deep. Each call is tens of ns of
// its own; next, the lexer, a few ns. The expressions are generated from
// a seed, the same every run.
//
// What it tries to break: recursion through other instrumented functions
// (no function calls itself), where a call's time measured whole holds
// every call nested in it, of all three; a verdict or a recheck that
// takes such a call's inclusive time for its own; functions too short to
// time that nest tens deep.
//
// Calls are counted by the parser itself, in a plain add to a variable of
// main's per call, as a CPU profile would not see (a nanosecond in calls
// of tens). The functions are marked //go:noinline: instrument with -all.
//
//	go run ./bench/adversarial/descent [-n 3000] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// parser reads one expression; its fields count its functions' calls.
type parser struct {
	src                          []byte
	pos                          int
	nNext, nExpr, nTerm, nFactor int64
}

//go:noinline
func (p *parser) next() byte {
	p.nNext++
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	if p.pos == len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

// expr := term {('+'|'-') term}
//
//go:noinline
func (p *parser) expr() int64 {
	p.nExpr++
	v := p.term()
	for {
		switch p.next() {
		case '+':
			p.pos++
			v += p.term()
		case '-':
			p.pos++
			v -= p.term()
		default:
			return int64(busy.Spin(uint64(v), 8))
		}
	}
}

// term := factor {'*' factor}
//
//go:noinline
func (p *parser) term() int64 {
	p.nTerm++
	v := p.factor()
	for p.next() == '*' {
		p.pos++
		v = v * p.factor() % 1000003
	}
	return int64(busy.Spin(uint64(v), 6))
}

// factor := digit+ | '(' expr ')'
//
//go:noinline
func (p *parser) factor() int64 {
	p.nFactor++
	if p.next() == '(' {
		p.pos++
		v := p.expr()
		p.next()
		p.pos++ // ')'
		return v
	}
	var v int64
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		v = v*10 + int64(p.src[p.pos]-'0')
		p.pos++
	}
	return int64(busy.Spin(uint64(v), 4))
}

// gen appends a random expression nested up to depth levels. It makes
// the input, not the work: no probe.
//
//meter:ignore
func gen(b []byte, r *uint64, depth int) []byte {
	rnd := func(n uint64) uint64 { return busy.Draw(r, n) }
	terms := 1 + rnd(3)
	for i := uint64(0); i < terms; i++ {
		if i > 0 {
			b = append(b, " +-*"[1+rnd(3)], ' ')
		}
		if depth > 0 && rnd(3) != 0 {
			b = append(b, '(')
			b = gen(b, r, depth-1)
			b = append(b, ')')
		} else {
			b = append(b, byte('1'+rnd(9)), byte('0'+rnd(10)))
		}
	}
	return b
}

func main() {
	n := flag.Int("n", 3000, "rounds of parsing the expressions")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()
	seed := uint64(88172645463325252)
	var exprs [][]byte
	for i := 0; i < 64; i++ {
		exprs = append(exprs, gen(nil, &seed, 12))
	}
	var p parser
	var sum int64
	for i := 0; i < *n; i++ {
		for _, e := range exprs {
			p.src, p.pos = e, 0
			sum += p.expr()
		}
	}
	fmt.Println("descent:", sum)
	rec.Add("main.main", 1)
	rec.Add("main.(*parser).expr", p.nExpr)
	rec.Add("main.(*parser).term", p.nTerm)
	rec.Add("main.(*parser).factor", p.nFactor)
	rec.Add("main.(*parser).next", p.nNext)
	rec.Finish()
}
