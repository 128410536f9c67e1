package inject

import (
	"bytes"
	"go/parser"
	"go/scanner"
	"go/token"
	"testing"
)

// tokenPositions scans src as the compiler does, line directives applied
// (go/scanner follows the same rules), and returns each token's position
// with its text. Automatic semicolons are left out: they are not written.
func tokenPositions(t testing.TB, name string, src []byte) map[string]int {
	fset := token.NewFileSet()
	f := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, func(p token.Position, msg string) { t.Fatalf("%s: %s", p, msg) }, 0)
	out := map[string]int{}
	for {
		p, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		if lit == "" {
			lit = tok.String()
		}
		out[fset.Position(p).String()+" "+lit]++
	}
}

// checkPositions asserts that every token of plain has, in instrumented,
// a token with the same text at the same position: file, line and column
// as the compiler, panics, runtime.Caller, coverage and vet see them.
func checkPositions(t *testing.T, name string, plain, instrumented []byte) {
	t.Helper()
	want := tokenPositions(t, name, plain)
	got := tokenPositions(t, name, instrumented)
	n := 0
	for k, c := range want {
		if got[k] < c {
			if n++; n <= 10 {
				t.Errorf("%s: token %q is not at its place in the instrumented file", name, k)
			}
		}
	}
}

// TestLinesAt: the position newLines computes for a byte is go/scanner's
// (the compiler's): directives with and without a file name or a column.
func TestLinesAt(t *testing.T) {
	src := []byte("package p\n//line a.y:10\nvar x = 1\n/*line b.y:5:7*/var y = 2\n//line :20:3\nvar z = 3\nvar w = 4\n")
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	l := newLines(src, f)
	for _, c := range []struct {
		at   string
		want pos
	}{
		{"package", pos{line: 1, col: 1}},
		{"x =", pos{file: "a.y", line: 10}},
		{"y =", pos{line: 5, col: 11}},
		{"z =", pos{line: 20, col: 7}},
		{"w =", pos{line: 21, col: 5}},
	} {
		if got := l.at(bytes.Index(src, []byte(c.at))); got != c.want {
			t.Errorf("at(%q) = %+v, want %+v", c.at, got, c.want)
		}
	}
	// The same through go/scanner: b.y keeps its file name in z's ":20:3".
	want := map[string]bool{"/x/b.y:20:7 z": true, "/x/b.y:5:11 y": true, "/x/a.y:10 x": true}
	for k := range tokenPositions(t, "/x/p.go", src) {
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("go/scanner does not agree: %v", want)
	}
}
