package inject

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestNamesMatchToolchain runs testdata/naming and checks that every
// function it reports is named by fileSites exactly as the toolchain names
// it at run time (with inlining off, which is when the names are stable).
func TestNamesMatchToolchain(t *testing.T) {
	cmd := exec.Command("go", "run", "-gcflags=-l", "./testdata/naming")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "testdata/naming/main.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	byLine := map[int]string{}
	for _, s := range (&namer{prefix: "main."}).fileSites(f) {
		var p token.Pos
		if s.decl != nil {
			p = s.decl.Pos()
		} else {
			p = s.lit.Pos()
		}
		byLine[fset.Position(p).Line] = s.name
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line, name, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		l, _ := strconv.Atoi(line)
		n++
		if got := byLine[l]; got != name {
			t.Errorf("line %d: toolchain says %s, meterinject says %q", l, name, got)
		}
	}
	if n < 15 {
		t.Errorf("only %d functions reported:\n%s", n, out)
	}
}

func TestRecvName(t *testing.T) {
	for src, want := range map[string]string{
		"func (T) M()":            "T.M",
		"func (t *T) M()":         "(*T).M",
		"func (l *List[T]) M()":   "(*List[...]).M",
		"func (p Pair[K, V]) M()": "Pair[...].M",
		"func G[T any]()":         "G[...]",
		"func init()":             "init.0",
		"func F()":                "F",
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\n"+src+" {}\n", 0)
		if err != nil {
			t.Fatal(err)
		}
		s := (&namer{prefix: "p."}).fileSites(f)
		if len(s) != 1 || s[0].name != "p."+want {
			t.Errorf("%s: got %v, want p.%s", src, s[0].name, want)
		}
	}
}
