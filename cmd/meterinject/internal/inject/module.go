package inject

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The selection of a function must not depend on the route that
// instruments it: the whole module at once (meterinject ./..., -overlay,
// meterinject go), or one package at a time (a //go:generate line in each
// package, run in place one after the other). So what a package's
// selection reads of the rest of its module is the module as the user
// wrote it, whatever the run holds:
//
//   - a call into another package of the same module counts as a call
//     into instrumented code (inScope), as a call into the run does;
//   - a go statement anywhere in the main module makes the function it
//     starts a root (outsideRoots), not only one in the run;
//   - the analyses (type-checking, the compiler's inlining report) see the
//     module's other packages without the instrumentation an earlier run
//     put into them (analysisOverlay), and with the user's go.mod.

// mainModule is the module around Options.Dir.
type mainModule struct {
	root   string // its directory
	path   string // its module path
	gomod  []byte // go.mod as it is
	plain  []byte // go.mod without what meterinject changed in it
	line   string // the go line of plain ("1.16" without one, as the go command reads it)
	noLine bool   // plain has no go line
	pkgs   map[string]*packages.Package
}

// loadMainModule finds the main module and lists its packages (names and
// files). It returns nil outside a module.
func loadMainModule(o *Options) (*mainModule, error) {
	gomod, err := goEnv(o.Dir, "GOMOD")
	if err != nil {
		return nil, err
	}
	if gomod == "" || gomod == os.DevNull {
		return nil, nil
	}
	m := &mainModule{root: filepath.Dir(gomod), pkgs: map[string]*packages.Package{}}
	if m.gomod, err = os.ReadFile(gomod); err != nil {
		return nil, err
	}
	m.path = modPath(m.gomod)
	if m.plain, err = plainGoMod(gomod, m.gomod); err != nil {
		return nil, err
	}
	if m.line, m.noLine, err = goLineOfMod(gomod, m.plain); err != nil {
		return nil, err
	}
	cfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedModule,
		Dir:        m.root,
		Env:        append(os.Environ(), "GOWORK=off"),
		BuildFlags: o.BuildFlags,
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		if p.PkgPath != "" && (p.Module == nil || p.Module.Main) {
			m.pkgs[p.PkgPath] = p
		}
	}
	return m, nil
}

// dirOf returns the directory of a listed package.
func dirOf(p *packages.Package) string {
	if p.Dir != "" {
		return p.Dir
	}
	for _, f := range append(append([]string{}, p.GoFiles...), p.IgnoredFiles...) {
		return filepath.Dir(f)
	}
	return ""
}

// inScope returns what counts as instrumented for the selection of j's
// functions: the packages of the run, and the packages of j's own module.
func inScope(mod *mainModule, run map[string]bool, j *pkgJob) func(string) bool {
	return func(path string) bool {
		if run[path] {
			return true
		}
		if j.module == nil || j.module.Main {
			return mod != nil && mod.pkgs[path] != nil
		}
		return path == j.module.Path || strings.HasPrefix(path, j.module.Path+"/")
	}
}

// paths returns the import paths of jobs.
func paths(jobs []*pkgJob) map[string]bool {
	run := map[string]bool{}
	for _, j := range jobs {
		run[j.path] = true
	}
	return run
}

// outside returns the packages of the main module that run (import paths)
// does not hold, but for the runtime's own (when the main module is the
// runtime's): they are never instrumented.
func (m *mainModule) outside(run map[string]bool) []*packages.Package {
	if m == nil {
		return nil
	}
	var out []*packages.Package
	for path, p := range m.pkgs {
		if !run[path] && !isRuntime(path) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].PkgPath < out[b].PkgPath })
	return out
}

// analysisOverlay returns what the analyses must see in place of the
// files of the main module's packages outside the run: each file without
// what an earlier run added, and each registration file reduced to its
// package clause. go.mod stays as it is: once the go line is raised (and
// the user required the runtime), the old line cannot build; the inlining
// analysis compiles at the old language version instead (langFlags).
func analysisOverlay(m *mainModule, jobs []*pkgJob) (map[string][]byte, error) {
	ov := map[string][]byte{}
	if m == nil {
		return ov, nil
	}
	var errs []error
	for _, p := range m.outside(paths(jobs)) {
		dir := dirOf(p)
		if dir == "" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, path := range files {
			base := filepath.Base(path)
			switch base {
			case genFiles[""], genFiles["test"]:
				ov[path] = []byte("package " + p.Name + "\n")
				continue
			case genFiles["xtest"]:
				ov[path] = []byte("package " + p.Name + "_test\n")
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			plain, err := plainSource(path, src)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if string(plain) != string(src) {
				ov[path] = plain
			}
		}
	}
	return ov, errors.Join(errs...)
}

// langFlags returns the go build flags that compile the main module's
// packages at the language version of its go line as the user wrote it,
// where meterinject raised it: the sources the analyses see have no
// header (see golines.go).
func (m *mainModule) langFlags(base string) []string {
	if m == nil || string(m.plain) == string(m.gomod) {
		return nil
	}
	return []string{"-gcflags=" + m.path + "/...=" + base + " -lang=" + langTag(m.line)}
}

// plainSource returns src without anything meterinject adds: the
// language version header and the instrumentation.
func plainSource(path string, src []byte) ([]byte, error) {
	plain, _ := stripHeader(src)
	if !instrumented(plain) {
		return plain, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, plain, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	return strip(fset, f, plain)
}

// fileSkip returns why a file of a package gets no probes (generated, cgo,
// //meter:ignore on its package clause), or "".
func fileSkip(f *ast.File) string {
	switch {
	case ast.IsGenerated(f):
		return skipGenerated
	case importsC(f):
		return skipCgo
	case hasDirective(f.Doc, "//meter:ignore"):
		return skipIgnore
	}
	return ""
}

// startsNamed reports whether f holds a go statement that starts a
// function other than a literal: the cheap test before type-checking.
func startsNamed(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			if _, lit := ast.Unparen(g.Call.Fun).(*ast.FuncLit); !lit {
				found = true
			}
		}
		return !found
	})
	return found
}

// outsideRoots returns the functions (by funcKey) that go statements in
// the main module's packages outside the run start: roots, as those that
// go statements in the run start. Only packages with such a statement are
// type-checked.
func outsideRoots(o *Options, m *mainModule, run map[string]bool, overlay map[string][]byte) (map[string]bool, error) {
	roots := map[string]bool{}
	var candidates []string
	for _, p := range m.outside(run) {
		dir := dirOf(p)
		if dir == "" {
			continue
		}
		names := append([]string{}, p.GoFiles...)
		if o.Tests {
			tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
			names = append(names, tests...)
		}
		for _, path := range names {
			src, ok := overlay[path]
			if !ok {
				var err error
				if src, err = os.ReadFile(path); err != nil {
					return nil, err
				}
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			if fileSkip(f) == "" && startsNamed(f) {
				candidates = append(candidates, p.PkgPath)
				break
			}
		}
	}
	if len(candidates) == 0 {
		return roots, nil
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax,
		Dir:        m.root,
		Tests:      o.Tests,
		Overlay:    overlay,
		Env:        append(os.Environ(), "GOWORK=off"),
		BuildFlags: o.BuildFlags,
	}
	pkgs, err := packages.Load(cfg, candidates...)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		if p.TypesInfo == nil {
			continue
		}
		for _, f := range p.Syntax {
			name := p.Fset.File(f.FileStart).Name()
			if strings.HasSuffix(name, "_test.go") && !o.Tests || fileSkip(f) != "" {
				continue
			}
			goTargetsIn(f, p.TypesInfo, name, map[*ast.FuncLit]bool{}, roots)
		}
	}
	return roots, nil
}

// moduleGoFiles lists the .go files of the module at root as the go
// command sees them: not under testdata, vendor, or a directory whose
// name starts with "." or "_", nor in a nested module; registration files
// left out.
func moduleGoFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			name := d.Name()
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if fileExists(filepath.Join(p, "go.mod")) {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		if name == genFiles[""] || name == genFiles["test"] || name == genFiles["xtest"] {
			return nil
		}
		out = append(out, p)
		return nil
	})
	return out, err
}
