package inject

import (
	"go/ast"
	"strconv"
	"strings"
)

// A site is one function body that may carry a probe.
type site struct {
	name          string        // probe name, as the toolchain names the function
	decl          *ast.FuncDecl // nil for a literal
	lit           *ast.FuncLit  // nil for a declaration
	body          *ast.BlockStmt
	doc           *ast.CommentGroup
	ignored       bool   // //meter:ignore on it or on a function it is in
	isMain        bool   // func main of package main, or TestMain: flushes the exports
	isProgramMain bool   // func main of package main: also calls probe.Main
	handler       bool   // a request handler: always kept
	root          bool   // a handler or a goroutine's function: where traces start
	request       string // for a root: what its probe hands the trace it starts ("ctx", "w, r": requestArgs); "" for nothing
	skip          string
	index         int // index in the probe array, when instrumented
	plan          *sitePlan
}

func (s *site) funcType() *ast.FuncType {
	if s.decl != nil {
		return s.decl.Type
	}
	return s.lit.Type
}

// namer numbers what the toolchain numbers across a package's files:
// init functions (init.0, init.1, …) and literals in package-level
// initialisers (init.func1, …).
type namer struct {
	prefix  string // "importpath." or "main."
	inits   int
	globals int
}

// recvName gives the receiver part of a method's name: T, (*T), List[...]
// or (*List[...]).
func recvName(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	star := false
	if p, ok := t.(*ast.StarExpr); ok {
		star = true
		t = p.X
	}
	for {
		if p, ok := t.(*ast.ParenExpr); ok {
			t = p.X
			continue
		}
		break
	}
	name := ""
	switch x := t.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.IndexExpr:
		name = identName(x.X) + "[...]"
	case *ast.IndexListExpr:
		name = identName(x.X) + "[...]"
	}
	if star {
		return "(*" + name + ")"
	}
	return name
}

func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// funcName is the toolchain's name for a declared function, without the
// package prefix.
func (n *namer) funcName(d *ast.FuncDecl) string {
	if d.Recv != nil {
		return recvName(d.Recv) + "." + d.Name.Name
	}
	if d.Name.Name == "init" {
		s := "init." + strconv.Itoa(n.inits)
		n.inits++
		return s
	}
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		return d.Name.Name + "[...]"
	}
	return d.Name.Name
}

// fileSites lists every function body in f in source order, named. Literals
// directly in a function are parent.funcN; literals nested in a literal are
// parent.N, as the compiler names them when it does not inline.
func (n *namer) fileSites(f *ast.File) []*site {
	var sites []*site
	var lits func(node ast.Node, parent string, nested bool)
	ignored := false
	lits = func(node ast.Node, parent string, nested bool) {
		k := 0
		ast.Inspect(node, func(x ast.Node) bool {
			lit, ok := x.(*ast.FuncLit)
			if !ok {
				return true
			}
			var name string
			if nested {
				k++
				name = parent + "." + strconv.Itoa(k)
			} else if parent == "init" {
				n.globals++
				name = "init.func" + strconv.Itoa(n.globals)
			} else {
				k++
				name = parent + ".func" + strconv.Itoa(k)
			}
			sites = append(sites, &site{name: n.prefix + name, lit: lit, body: lit.Body, ignored: ignored})
			lits(lit.Body, name, true)
			return false
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := n.funcName(d)
			if d.Body == nil || d.Name.Name == "_" {
				continue // never compiled
			}
			ignored = hasDirective(d.Doc, "//meter:ignore")
			sites = append(sites, &site{name: n.prefix + name, decl: d, body: d.Body, doc: d.Doc, ignored: ignored})
			lits(d.Body, name, false)
			ignored = false
		case *ast.GenDecl:
			lits(d, "init", false)
		}
	}
	return sites
}

// probePrefix is what the toolchain puts before a function name: the import
// path, escaped as the linker writes symbol names, or "main" for a command.
func probePrefix(importPath, pkgName string) string {
	if pkgName == "main" {
		return "main."
	}
	return pathToPrefix(importPath) + "."
}

// pathToPrefix escapes an import path as the toolchain does in symbol
// names (cmd/internal/objabi.PathToPrefix), which stack traces, pprof and
// runtime.FuncForPC show: control characters, space, '%', '"' and bytes
// from 0x7f up anywhere, and '.' in the last element, become %xx. So
// gopkg.in/yaml.v3 is gopkg.in/yaml%2ev3.
func pathToPrefix(s string) string {
	slash := strings.LastIndexByte(s, '/')
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || i > slash && c == '.' || c == '%' || c == '"' || c >= 0x7F {
			b.WriteString("%" + strconv.FormatUint(uint64(c)|0x100, 16)[1:])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hasDirective reports whether a doc comment holds the comment line want.
func hasDirective(doc *ast.CommentGroup, want string) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.TrimSpace(c.Text) == want {
			return true
		}
	}
	return false
}

// compilerDirective returns the first //go: directive other than
// //go:noinline in doc, or "".
func compilerDirective(doc *ast.CommentGroup) string {
	if doc == nil {
		return ""
	}
	for _, c := range doc.List {
		if strings.HasPrefix(c.Text, "//go:") && !strings.HasPrefix(c.Text, "//go:noinline") {
			return c.Text
		}
	}
	return ""
}
