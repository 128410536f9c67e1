package inject

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// instrumentAll instruments every body of one file, numbering probes in
// order, as Run would with -all and no filters, without type information.
func instrumentAll(src []byte, shape Shape) ([]byte, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "fuzz.go", src, parser.ParseComments)
	if err != nil {
		return nil, false
	}
	idents := map[string]bool{}
	collectIdents(src, idents)
	g := &group{names: newNames(chooseNames(idents), "")}
	j := &fileJob{path: "fuzz.go", src: src, orig: src, fset: fset, file: f, group: g}
	j.lines = newLines(src, f)
	j.aligned, j.trailing = alignedLayout(fset, f, src)
	j.sites = (&namer{prefix: "fuzz."}).fileSites(f)
	j.calls = findCalls(j)
	for _, s := range j.sites {
		if !layoutOK(j, s) {
			s.skip = skipLayout
			continue
		}
		s.index = len(g.sites)
		g.sites = append(g.sites, s)
		if s.decl != nil && s.decl.Recv == nil && s.decl.Name.Name == "main" {
			s.isMain, s.isProgramMain = true, true
		}
	}
	return instrument(j, shape), true
}

// FuzzRoundTrip: instrumenting, then removing, gives back the input, and
// the instrumented text still parses. The seeds are the golden inputs.
func FuzzRoundTrip(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/in/*.go.txt")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("package p\n\nfunc f() {}"))
	f.Add([]byte("package p\r\n\r\nfunc f(x int) int {\r\n\treturn x\r\n}\r\n"))
	f.Add([]byte("package p\nfunc f(x int) int { // c\n\treturn func() int { return x }()\n}\nvar v = func() {}\n"))
	f.Add([]byte("package p\nimport \"os\"\nfunc f(x int) int {\n\tos.Exit(g(x))\n\treturn g(x)\n}\n"))
	f.Add([]byte("package p\n//line a.y:10\nfunc f(x int) (int, error) {\n//line a.y:20:3\n\treturn g(x), nil\n}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, shape := range []Shape{ShapeEnd, ShapeDefer} {
			out, ok := instrumentAll(src, shape)
			if !ok {
				return
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "fuzz.go", out, parser.ParseComments)
			if err != nil {
				t.Fatalf("%s: instrumented text does not parse: %v\n%s", shape, err, out)
			}
			back, err := strip(fset, f, out)
			if err != nil {
				t.Fatalf("%s: %v\n%s", shape, err, out)
			}
			if !bytes.Equal(back, src) {
				t.Fatalf("%s: round trip differs:\n--- in\n%q\n--- out\n%q\n--- back\n%q", shape, src, out, back)
			}
			// Idempotent through strip.
			again, _ := instrumentAll(back, shape)
			if !bytes.Equal(again, out) {
				t.Fatalf("%s: second instrumentation differs", shape)
			}
		}
	})
}
