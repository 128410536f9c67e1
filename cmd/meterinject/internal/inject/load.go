package inject

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
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
	skipGenerated = "in generated files"
	skipCgo       = "in cgo files"
	skipRuntime   = "runtime package"
	skipSmall     = "small"
	skipLayout    = "one-line layout"
	skipCycle     = "imported by the runtime"
)

// Registration files, by group kind.
var genFiles = map[string]string{
	"":      "meter_probes_gen.go",
	"test":  "meter_probes_gen_test.go",
	"xtest": "meter_xprobes_gen_test.go",
}

// isRuntime reports whether an import path belongs to the meter runtime
// itself. Its workloads are excepted: the example and the adversarial
// programs (bench/adversarial), which exist to be instrumented.
func isRuntime(path string) bool {
	for _, w := range []string{runtimeModule + "/example", runtimeModule + "/bench/adversarial"} {
		if path == w || strings.HasPrefix(path, w+"/") {
			return false
		}
	}
	return path == runtimeModule || strings.HasPrefix(path, runtimeModule+"/")
}

// group is a set of files that share one probe array: a package's own
// files, its in-package test files, or its external test package.
type group struct {
	kind    string // "", "test" or "xtest"
	pkgName string
	prefix  string // of probe names
	names   names
	genFile string
	files   []*fileJob
	sites   []*site
}

// pkgJob is one loaded package.
type pkgJob struct {
	path   string
	name   string
	dir    string
	module *packages.Module
	groups []*group
	idents map[string]bool // every identifier of the package's files, tests included
	// skipped counts what the package leaves out, by reason (the
	// summary's counts, kept with the package in the cache)
	skipped map[string]int
}

// skip counts one thing j leaves out.
func (j *pkgJob) skip(sum *Summary, reason string) {
	sum.Skipped[reason]++
	j.skipped[reason]++
}

// PosError is an error at a position in a source file.
type PosError struct {
	Pos token.Position
	Msg string
}

func (e *PosError) Error() string { return e.Pos.String() + ": " + e.Msg }

// load lists the packages, reads their files, takes out what an earlier
// run added, and (unless removing) type-checks them as they were before
// instrumentation.
//
// It also returns what the analyses must see in place of the main
// module's other packages (analysisOverlay).
func load(o *Options, sum *Summary, leftOut map[string]string, mod *mainModule) ([]*pkgJob, map[string][]byte, error) {
	pkgs, err := list(o, sum, leftOut)
	if err != nil {
		return nil, nil, err
	}
	return readJobs(o, sum, pkgs, o.patterns(), mod)
}

func (o *Options) patterns() []string {
	if len(o.Patterns) == 0 {
		return []string{"."}
	}
	return o.Patterns
}

// list lists the packages o names (names, files, modules), without those
// left out: the runtime's own, and those it imports (leftOut), each with
// one line saying why.
func list(o *Options, sum *Summary, leftOut map[string]string) ([]*packages.Package, error) {
	cfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedModule,
		Dir:        o.Dir,
		Env:        append(os.Environ(), "GOWORK=off"),
		BuildFlags: o.BuildFlags,
	}
	pkgs, err := packages.Load(cfg, o.patterns()...)
	if err != nil {
		return nil, err
	}
	var errs []error
	var out []*packages.Package
	for _, p := range pkgs {
		if why, ok := leftOut[p.PkgPath]; ok {
			fmt.Fprintf(o.Stderr, "meterinject: %s left out: %s\n", p.PkgPath, why)
			sum.Skipped[skipCycle]++
			continue
		}
		if isRuntime(p.PkgPath) {
			// Probes in the runtime would fire inside Begin and End.
			sum.Skipped[skipRuntime]++
			continue
		}
		// Imports of the runtime from registration files an earlier run
		// wrote do not count: the module may not require it yet, and
		// type-checking sees the package without them.
		var perrs []error
		for _, e := range packageErrors(p) {
			if !strings.Contains(e.Error(), runtimeModule+"/") {
				perrs = append(perrs, e)
			}
		}
		if len(perrs) > 0 && (!o.Remove || len(p.GoFiles)+len(p.IgnoredFiles) == 0 && p.Dir == "") {
			errs = append(errs, perrs...)
			continue
		}
		out = append(out, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, moduleError(err)
	}
	return out, nil
}

// readJobs reads the listed packages and, unless removing, type-checks
// them (loaded again by patterns).
func readJobs(o *Options, sum *Summary, pkgs []*packages.Package, patterns []string, mod *mainModule) ([]*pkgJob, map[string][]byte, error) {
	var errs []error
	var jobs []*pkgJob
	for _, p := range pkgs {
		j, err := readPackage(o, p, sum)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if j != nil {
			jobs = append(jobs, j)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, moduleError(err)
	}
	var ov map[string][]byte
	if !o.Remove {
		var err error
		if ov, err = analysisOverlay(mod, jobs); err != nil {
			return nil, nil, err
		}
		if err := typeCheck(o, jobs, patterns, ov); err != nil {
			return nil, nil, moduleError(err)
		}
	}
	for _, j := range jobs {
		nameSites(j)
	}
	return jobs, ov, nil
}

// readPackage reads and parses the files of p and strips what an earlier
// run added. Test files are read too (their identifiers count for the
// generated names), and kept as jobs with -tests.
func readPackage(o *Options, p *packages.Package, sum *Summary) (*pkgJob, error) {
	dir := p.Dir
	if dir == "" {
		for _, f := range append(append([]string{}, p.GoFiles...), p.IgnoredFiles...) {
			dir = filepath.Dir(f)
		}
	}
	if dir == "" {
		return nil, nil
	}
	files := map[string]bool{}
	for _, f := range append(append([]string{}, p.GoFiles...), p.IgnoredFiles...) {
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
			files[f] = true
		}
	}
	tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, t := range tests {
		files[t] = true
	}
	j := &pkgJob{path: p.PkgPath, name: p.Name, dir: dir, module: p.Module, idents: map[string]bool{}, skipped: map[string]int{}}
	// Compiled files first, so init.N and init.funcN number as the
	// compiler numbers them for this platform.
	compiled := map[string]bool{}
	for _, f := range p.GoFiles {
		compiled[f] = true
	}
	var names []string
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
	var errs []error
	for _, path := range names {
		base := filepath.Base(path)
		if base == genFiles[""] || base == genFiles["test"] || base == genFiles["xtest"] {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plain, _ := stripHeader(src)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, plain, parser.ParseComments)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		stripped := plain
		if instrumented(plain) {
			if stripped, err = strip(fset, f, plain); err != nil {
				errs = append(errs, err)
				continue
			}
			fset = token.NewFileSet()
			f, err = parser.ParseFile(fset, path, stripped, parser.ParseComments)
			if err != nil {
				errs = append(errs, fmt.Errorf("%v (after removing instrumentation)", err))
				continue
			}
		}
		collectIdents(stripped, j.idents)
		isTest := strings.HasSuffix(path, "_test.go")
		if isTest && !o.Tests {
			continue
		}
		kind := ""
		pkgName := p.Name
		if pkgName == "" {
			pkgName = strings.TrimSuffix(f.Name.Name, "_test")
		}
		switch {
		case f.Name.Name == pkgName && isTest:
			kind = "test"
		case f.Name.Name == pkgName:
		case f.Name.Name == pkgName+"_test" && isTest:
			kind = "xtest"
		default:
			continue // a //go:build ignore program, say
		}
		if why := fileSkip(f); why != "" {
			j.skip(sum, why)
			continue
		}
		g := groups[kind]
		if g == nil {
			prefix := probePrefix(p.PkgPath, pkgName)
			if kind == "xtest" {
				prefix = pathToPrefix(p.PkgPath+"_test") + "."
			}
			g = &group{kind: kind, pkgName: f.Name.Name, prefix: prefix, genFile: genFiles[kind]}
			groups[kind] = g
			j.groups = append(j.groups, g)
		}
		fj := &fileJob{path: path, src: stripped, orig: src, fset: fset, file: f, group: g}
		g.files = append(g.files, fj)
	}
	if j.name == "" {
		for _, g := range j.groups {
			if g.kind != "xtest" {
				j.name = g.pkgName
			}
		}
	}
	sort.Slice(j.groups, func(a, b int) bool { return j.groups[a].kind < j.groups[b].kind })
	prefix := chooseNames(j.idents)
	for _, g := range j.groups {
		g.names = newNames(prefix, map[string]string{"": "", "test": "test", "xtest": "x"}[g.kind])
	}
	return j, errors.Join(errs...)
}

// collectIdents adds every identifier of src to set. A file that does not
// scan adds what it can: the parse that follows reports the error.
func collectIdents(src []byte, set map[string]bool) {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), src, func(token.Position, string) {}, 0)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return
		}
		if tok == token.IDENT && strings.HasPrefix(lit, "meter") {
			set[lit] = true
		}
	}
}

// chooseNames picks the prefix of generated identifiers for a package:
// "meter__", or "meterx__", "meterxx__", … if some identifier of the
// package starts with it (a parameter, a label, a field, anything).
// Generated code then declares no name the user could have written.
func chooseNames(idents map[string]bool) string {
	for p := basePrefix; ; p = p[:len(p)-2] + "x__" {
		taken := false
		for id := range idents {
			if strings.HasPrefix(id, p) {
				taken = true
				break
			}
		}
		if !taken {
			return p
		}
	}
}

func importsC(f *ast.File) bool {
	for _, i := range f.Imports {
		if i.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

// typeCheck loads the packages again, type-checked, through an overlay
// of their text without instrumentation (registration files reduced to
// their package clause), and gives each file built on this platform its
// syntax tree and type information. Files built only elsewhere keep
// their own parse, without types.
func typeCheck(o *Options, jobs []*pkgJob, patterns []string, outside map[string][]byte) error {
	byPath := map[string]*fileJob{}
	overlay := map[string][]byte{}
	for p, b := range outside {
		overlay[p] = b
	}
	for _, j := range jobs {
		for _, g := range j.groups {
			if gen := filepath.Join(j.dir, g.genFile); fileExists(gen) {
				overlay[gen] = []byte("package " + g.pkgName + "\n")
			}
			for _, fj := range g.files {
				byPath[fj.path] = fj
				if string(fj.src) != string(fj.orig) {
					overlay[fj.path] = fj.src
				}
			}
		}
		for _, kind := range []string{"", "test", "xtest"} {
			gen := filepath.Join(j.dir, genFiles[kind])
			if _, ok := overlay[gen]; !ok && fileExists(gen) {
				name := j.name
				if kind == "xtest" {
					name += "_test"
				}
				overlay[gen] = []byte("package " + name + "\n")
			}
		}
	}
	if len(byPath) == 0 {
		return nil
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedModule,
		Dir:        o.Dir,
		Tests:      o.Tests,
		Overlay:    overlay,
		Env:        append(os.Environ(), "GOWORK=off"),
		BuildFlags: o.BuildFlags,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return err
	}
	var errs []error
	seen := map[string]bool{}
	// A package's own variants only: "p", then "p [p.test]" and "p_test
	// [p.test]" (a test variant holds the package's files too, and wins).
	// Variants of p rebuilt for another package's test ("p [q.test]") are
	// left out: their files are the same, their information not theirs.
	own := func(p *packages.Package) (ok, test bool) {
		id, variant, found := strings.Cut(p.ID, " [")
		if !found {
			return true, false
		}
		of := strings.TrimSuffix(variant, ".test]")
		return id == of || id == of+"_test", true
	}
	var plain, tests []*packages.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if seen[p.ID] {
			return
		}
		seen[p.ID] = true
		for _, e := range ownErrors(p) {
			if e.Kind == packages.ListError {
				errs = append(errs, errorOf(e)) // a dependency the module cannot resolve
			}
		}
		if ok, test := own(p); ok && p.TypesInfo != nil {
			if test {
				tests = append(tests, p)
			} else {
				plain = append(plain, p)
			}
		}
	})
	for _, p := range append(plain, tests...) {
		for _, f := range p.Syntax {
			fj := byPath[p.Fset.File(f.FileStart).Name()]
			if fj == nil {
				continue
			}
			errs = append(errs, packageErrors(p)...)
			fj.fset, fj.file, fj.info, fj.pkg = p.Fset, f, p.TypesInfo, p.Types
		}
	}
	if len(errs) > 0 {
		return typeErrors(errs)
	}
	return nil
}

// packageErrors returns p's errors (ownErrors), as file:line:col: msg.
func packageErrors(p *packages.Package) []error {
	var out []error
	for _, e := range ownErrors(p) {
		out = append(out, errorOf(e))
	}
	return out
}

// ownErrors returns p's errors but the go command's report of a package
// that does not compile ("# path" and the compiler's lines, a ListError
// without a position), where the type checker found something: it
// repeats what the type checker found.
func ownErrors(p *packages.Package) []packages.Error {
	typed := false
	for _, e := range p.Errors {
		typed = typed || e.Kind != packages.ListError
	}
	var out []packages.Error
	for _, e := range p.Errors {
		if !(e.Kind == packages.ListError && typed && strings.HasPrefix(e.Msg, "# ")) {
			out = append(out, e)
		}
	}
	return out
}

// errorOf formats e as file:line:col: msg, or as msg alone where it has
// no position.
func errorOf(e packages.Error) error {
	if e.Pos == "" || e.Pos == "-" {
		return errors.New(e.Msg)
	}
	return errors.New(e.Pos + ": " + e.Msg)
}

// typeErrors reports the packages' own errors once each.
func typeErrors(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}
