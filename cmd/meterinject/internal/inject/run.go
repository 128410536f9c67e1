package inject

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Skip reasons, as the summary prints them.
const (
	skipInline    = "inlinable"
	skipIgnore    = "meter:ignore"
	skipFilter    = "filtered"
	skipModel     = "model"
	skipDirective = "compiler directive"
	skipGenerated = "generated file"
	skipCgo       = "cgo file"
	skipRuntime   = "runtime package"
	skipSmall     = "small"
)

// isRuntime reports whether an import path belongs to the meter runtime
// itself (its example workload excepted).
func isRuntime(path string) bool {
	if path == runtimeModule+"/example" || strings.HasPrefix(path, runtimeModule+"/example/") {
		return false
	}
	return path == runtimeModule || strings.HasPrefix(path, runtimeModule+"/")
}

// group is a set of files that share one probe array: a package's own
// files, its in-package test files, or its external test package.
type group struct {
	kind     string // "", "test" or "xtest"
	pkgName  string
	prefix   string
	array    string
	genFile  string
	files    []*fileJob
	sites    []*site
	shutdown bool // declare the flush function
}

// pkgJob is one loaded package.
type pkgJob struct {
	path   string
	name   string
	dir    string
	module *packages.Module
	groups []*group
}

func newGroup(kind, name, prefix string) *group {
	g := &group{kind: kind, pkgName: name, prefix: prefix}
	switch kind {
	case "":
		g.array, g.genFile = "meter__probes", "meter_probes_gen.go"
	case "test":
		g.array, g.genFile = "meter__testprobes", "meter_probes_gen_test.go"
	case "xtest":
		g.array, g.genFile = "meter__xprobes", "meter_xprobes_gen_test.go"
	}
	return g
}

// PosError is an error at a position in a source file.
type PosError struct {
	Pos token.Position
	Msg string
}

func (e *PosError) Error() string { return e.Pos.String() + ": " + e.Msg }

// load lists the packages and reads, strips and parses their files.
func load(o *Options, sum *Summary) ([]*pkgJob, error) {
	patterns := o.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedModule,
		Dir:  o.Dir,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var errs []error
	var jobs []*pkgJob
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, errors.New(e.Error()))
		}
		if len(p.Errors) > 0 {
			continue
		}
		if isRuntime(p.PkgPath) {
			// Probes in the runtime would fire inside Begin and End.
			sum.Skipped[skipRuntime]++
			continue
		}
		files := map[string]bool{}
		for _, f := range append(append([]string{}, p.GoFiles...), p.IgnoredFiles...) {
			if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
				files[f] = true
			}
		}
		dir := ""
		for f := range files {
			dir = filepath.Dir(f)
		}
		if dir == "" {
			continue
		}
		if o.Tests {
			tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
			for _, t := range tests {
				files[t] = true
			}
		}
		j := &pkgJob{path: p.PkgPath, name: p.Name, dir: dir, module: p.Module}
		// Compiled files first, so init.N and init.funcN number as the
		// compiler numbers them for this platform.
		var names []string
		compiled := map[string]bool{}
		for _, f := range p.GoFiles {
			compiled[f] = true
		}
		for f := range files {
			names = append(names, f)
		}
		sort.Slice(names, func(a, b int) bool {
			if compiled[names[a]] != compiled[names[b]] {
				return compiled[names[a]]
			}
			return names[a] < names[b]
		})
		groups := map[string]*group{}
		namers := map[string]*namer{}
		for _, path := range names {
			base := filepath.Base(path)
			if base == "meter_probes_gen.go" || base == "meter_probes_gen_test.go" || base == "meter_xprobes_gen_test.go" {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			kind := ""
			switch {
			case f.Name.Name == p.Name && strings.HasSuffix(path, "_test.go"):
				kind = "test"
			case f.Name.Name == p.Name:
			case f.Name.Name == p.Name+"_test" && strings.HasSuffix(path, "_test.go"):
				kind = "xtest"
			default:
				continue // a //go:build ignore program, say
			}
			if ast.IsGenerated(f) {
				sum.Skipped[skipGenerated]++
				continue
			}
			if importsC(f) {
				sum.Skipped[skipCgo]++
				continue
			}
			if hasDirective(f.Doc, "//meter:ignore") {
				sum.Skipped[skipIgnore]++
				continue
			}
			stripped := src
			if instrumented(src) {
				stripped = strip(fset, f, src)
				fset = token.NewFileSet()
				f, err = parser.ParseFile(fset, path, stripped, parser.ParseComments)
				if err != nil {
					errs = append(errs, fmt.Errorf("%v (after removing instrumentation)", err))
					continue
				}
			}
			g := groups[kind]
			if g == nil {
				prefix := probePrefix(p.PkgPath, p.Name)
				if kind == "xtest" {
					prefix = p.PkgPath + "_test."
				}
				g = newGroup(kind, f.Name.Name, prefix)
				g.shutdown = kind == "xtest" || p.Name == "main" && kind == "" || p.Name != "main" && kind == "test"
				groups[kind] = g
				namers[kind] = &namer{prefix: prefix}
				j.groups = append(j.groups, g)
			}
			fj := &fileJob{path: path, src: stripped, orig: src, fset: fset, file: f, array: g.array}
			fj.sites = namers[kind].fileSites(f)
			for _, s := range fj.sites {
				if s.decl != nil && s.decl.Recv == nil && (s.decl.Name.Name == "main" && p.Name == "main" && kind == "" || s.decl.Name.Name == "TestMain" && kind != "") {
					s.isMain = true
				}
			}
			g.files = append(g.files, fj)
		}
		sort.Slice(j.groups, func(a, b int) bool { return j.groups[a].kind < j.groups[b].kind })
		jobs = append(jobs, j)
	}
	return jobs, errors.Join(errs...)
}

func importsC(f *ast.File) bool {
	for _, i := range f.Imports {
		if i.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

// decide marks each site instrumented or skipped, and numbers the
// instrumented ones.
func decide(o *Options, jobs []*pkgJob, inl inlineSet, model map[string]bool, sum *Summary) {
	for _, j := range jobs {
		for _, g := range j.groups {
			for _, fj := range g.files {
				for _, s := range fj.sites {
					switch {
					case hasDirective(s.doc, "//meter:ignore"):
						s.skip = skipIgnore
					case compilerDirective(s.doc) != "":
						s.skip = skipDirective
					case o.Include != nil && !o.Include.MatchString(s.name),
						o.Exclude != nil && o.Exclude.MatchString(s.name):
						s.skip = skipFilter
					case model[s.name]:
						s.skip = skipModel
					case !o.All && !s.isMain && inl.has(fj, s):
						s.skip = skipInline
					case !o.All && !s.isMain && isSmall(s.body, o.smallMax()):
						s.skip = skipSmall
					}
					if s.skip != "" {
						sum.Skipped[s.skip]++
						continue
					}
					s.index = len(g.sites)
					g.sites = append(g.sites, s)
				}
			}
		}
	}
}

// generated returns the registration file of g, or nil if g needs none.
func (g *group) generated() []byte {
	if len(g.sites) == 0 && !g.needsShutdown() {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by meterinject. DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\n", g.pkgName)
	// The engine is imported for the compiler's sake: Firing is the
	// engine's type, and Go inlines its methods (Active, Reenter) only in a
	// package that imports the engine itself, not just probe's alias of it.
	b.WriteString("import (\n\tmeter__probe \"github.com/meterio/meter/probe\"\n\n")
	b.WriteString("\t// The engine: without it among the imports, Firing's methods are not inlined.\n")
	b.WriteString("\t_ \"github.com/meterio/meter/meter\"\n)\n\n")
	b.WriteString("// " + g.array + " holds one probe per instrumented function.\n")
	fmt.Fprintf(&b, "var %s [%d]meter__probe.Probe\n\n", g.array, len(g.sites))
	fmt.Fprintf(&b, "// %s is what Begin returns, for the twins' parameter.\n", firingType(g.array))
	fmt.Fprintf(&b, "type %s = meter__probe.Firing\n\n", firingType(g.array))
	b.WriteString("func init() {\n")
	fmt.Fprintf(&b, "\tmeter__probe.Register(%s[:]", g.array)
	for _, s := range g.sites {
		fmt.Fprintf(&b, ",\n\t\t%q", s.name)
	}
	b.WriteString(")\n}\n")
	if g.shutdown {
		b.WriteString("\n// " + shutdownFunc + " writes the exports when main returns.\n")
		b.WriteString("func " + shutdownFunc + "() { meter__probe.Shutdown() }\n")
	}
	return b.Bytes()
}

// needsShutdown reports whether some file of g calls the flush function.
func (g *group) needsShutdown() bool {
	for _, f := range g.files {
		for _, s := range f.sites {
			if s.isMain {
				return true
			}
		}
	}
	return false
}
