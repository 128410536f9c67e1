package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// The cache of an overlay run (-overlay, meterinject go).
//
// What a run makes of a package is kept under <cache>/pkg/<key>.json:
// the stored copies of its changed files (themselves content-addressed,
// under <cache>/files), the functions its go statements start, and its
// summary counts. The key hashes everything the package's text depends
// on:
//
//   - meterinject itself (its executable), the go command's version and
//     target (GOOS, GOARCH, CGO_ENABLED, GOFLAGS, GOEXPERIMENT, …), the
//     options, the model's content and the packages the runtime imports;
//   - the main module's go.mod and go.sum, which fix every dependency's
//     version, and the files of modules replaced by a directory;
//   - the package's import path, directory and .go files;
//   - the .go files of every package of the main module it imports,
//     directly or not: their declarations decide its type information,
//     and their bodies what the compiler inlines into it.
//
// A package whose key is found is not loaded, type-checked nor compiled
// for the inlining analysis: a second run over an unchanged module
// instruments nothing again. One more thing reaches a package from
// outside: a go statement elsewhere that starts one of its functions makes
// that function a root. An entry keeps the roots its selection saw; where
// the module's go statements now say otherwise, the package is
// instrumented again.

// pkgEntry is what the cache keeps of one package.
type pkgEntry struct {
	Path         string
	Files        map[string]string // base name in the package's directory → stored copy ("": deleted)
	Targets      []string          // what the package's go statements start (funcKey)
	Roots        []string          // roots among its functions, of all go statements the run saw
	NumFiles     int
	Instrumented int
	Skipped      map[string]int
}

// cacheRun is one overlay run's view of the cache.
type cacheRun struct {
	dir  string
	env  string              // hash of what every key shares
	hash map[string]string   // directory → hash of its .go files, tests included
	api  map[string]string   // directory → hash of its .go files but tests
	imps map[string][]string // directory → import paths of its files but tests
	timp map[string][]string // directory → import paths of its test files
}

var selfHash = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

// goEnvFor returns the go command's settings that builds and analyses
// depend on, as the user's go command sees them (GOFLAGS included).
func goEnvFor(dir string) (map[string]string, error) {
	vars := []string{"GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "GOROOT",
		"GOAMD64", "GOARM", "GOARM64", "GO386", "GOPPC64", "GORISCV64", "GOMIPS", "GOMIPS64", "GOWASM"}
	cmd := exec.Command("go", append([]string{"env", "-json"}, vars...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("go env: %v\n%s", err, msg)
	}
	m := map[string]string{}
	return m, json.Unmarshal(out, &m)
}

// newCacheRun hashes what every package's key shares.
func newCacheRun(o *Options, cache string, mod *mainModule, goenv map[string]string, leftOut map[string]string) (*cacheRun, error) {
	self, err := selfHash()
	if err != nil {
		return nil, err
	}
	parts := []string{"meterinject cache 1", self}
	var keys []string
	for k := range goenv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+goenv[k])
	}
	re := func(r interface{ String() string }, set bool) string {
		if !set {
			return ""
		}
		return r.String()
	}
	parts = append(parts,
		fmt.Sprintf("all=%v tests=%v shape=%s small=%d otlp=%v live=%v", o.All, o.Tests, o.shape(), o.smallMax(), o.OTLP, o.Live),
		"include="+re(o.Include, o.Include != nil), "exclude="+re(o.Exclude, o.Exclude != nil),
		"flags="+strings.Join(o.BuildFlags, "\x00"))
	if o.Model != "" {
		b, err := os.ReadFile(o.Model)
		if err != nil {
			return nil, err
		}
		parts = append(parts, "model", string(b))
	}
	var left []string
	for p := range leftOut {
		left = append(left, p)
	}
	sort.Strings(left)
	parts = append(parts, "leftout="+strings.Join(left, ","))
	if mod != nil {
		sum, _ := os.ReadFile(filepath.Join(mod.root, "go.sum"))
		parts = append(parts, "root="+mod.root, "go.mod", string(mod.gomod), "go.sum", string(sum))
		// Modules replaced by a directory change without a version.
		f, err := modfile.ParseLax("go.mod", mod.gomod, nil)
		if err != nil {
			return nil, err
		}
		for _, r := range f.Replace {
			if r.New.Version != "" {
				continue
			}
			dir := r.New.Path
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(mod.root, dir)
			}
			h, err := treeHash(dir)
			if err != nil {
				return nil, fmt.Errorf("%s: replace %s => %s: %v", filepath.Join(mod.root, "go.mod"), r.Old.Path, r.New.Path, err)
			}
			parts = append(parts, "replace="+r.Old.Path+"="+dir, h)
		}
	}
	return &cacheRun{dir: cache, env: hashOf(parts...), hash: map[string]string{}, api: map[string]string{},
		imps: map[string][]string{}, timp: map[string][]string{}}, nil
}

// scanDir reads the .go files of dir once: their hashes (with and
// without tests) and their imports.
func (c *cacheRun) scanDir(dir string) error {
	if _, ok := c.hash[dir]; ok {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	sort.Strings(names)
	var all, api []string
	imps, timp := map[string]bool{}, map[string]bool{}
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		base := filepath.Base(p)
		all = append(all, base, string(b))
		isTest := strings.HasSuffix(base, "_test.go")
		if !isTest {
			api = append(api, base, string(b))
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, b, parser.ImportsOnly)
		if err != nil {
			continue // the load reports it
		}
		for _, i := range f.Imports {
			if path, err := strconv.Unquote(i.Path.Value); err == nil {
				if isTest {
					timp[path] = true
				} else {
					imps[path] = true
				}
			}
		}
	}
	c.hash[dir] = hashOf(all...)
	c.api[dir] = hashOf(api...)
	c.imps[dir], c.timp[dir] = sortedKeys(imps), sortedKeys(timp)
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// key is the cache key of the listed package p.
func (c *cacheRun) key(o *Options, mod *mainModule, p *packages.Package) (string, error) {
	dir := dirOf(p)
	if err := c.scanDir(dir); err != nil {
		return "", err
	}
	parts := []string{c.env, p.PkgPath, dir, c.hash[dir]}
	// The main module's packages it imports, directly or not (its tests'
	// too, when they are instrumented).
	seen := map[string]bool{p.PkgPath: true}
	queue := append([]string{}, c.imps[dir]...)
	if o.Tests {
		queue = append(queue, c.timp[dir]...)
	}
	var deps []string
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] || mod == nil || mod.pkgs[path] == nil {
			continue
		}
		seen[path] = true
		d := dirOf(mod.pkgs[path])
		if err := c.scanDir(d); err != nil {
			return "", err
		}
		deps = append(deps, path+"="+c.api[d])
		queue = append(queue, c.imps[d]...)
	}
	sort.Strings(deps)
	return hashOf(append(parts, deps...)...), nil
}

func (c *cacheRun) entryPath(key string) string {
	return filepath.Join(c.dir, "pkg", key[:2], key+".json")
}

// lookup returns the entry of key, if it is there whole.
func (c *cacheRun) lookup(key string) *pkgEntry {
	b, err := os.ReadFile(c.entryPath(key))
	if err != nil {
		return nil
	}
	var e pkgEntry
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	for _, stored := range e.Files {
		if stored != "" && !fileExists(stored) {
			return nil // the cache was cleaned in part
		}
	}
	return &e
}

func (c *cacheRun) store(key string, e *pkgEntry) error {
	b, err := json.MarshalIndent(e, "", "\t")
	if err != nil {
		return err
	}
	p := c.entryPath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeAtomic(p, b)
}

// belongs reports whether the function key (funcKey) is declared in the
// package path.
func belongs(key, path string) bool {
	k := strings.TrimPrefix(strings.TrimPrefix(key, "("), "*")
	rest, ok := strings.CutPrefix(k, path+".")
	return ok && !strings.Contains(rest, "/")
}

// rootsIn returns the keys of roots that belong to path, sorted.
func rootsIn(roots map[string]bool, path string) []string {
	var out []string
	for k := range roots {
		if belongs(k, path) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// jobTargets returns what the go statements of j's files start, but
// literals and functions of the same file (known without types).
func jobTargets(j *pkgJob) []string {
	funcs := map[string]bool{}
	for _, g := range j.groups {
		for _, fj := range g.files {
			goTargets(fj, map[*ast.FuncLit]bool{}, funcs)
		}
	}
	var out []string
	for k := range funcs {
		if !strings.HasPrefix(k, "untyped:") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// overlayRun instruments the packages o names into the cache, reusing
// what the cache holds, and writes the overlay file.
func overlayRun(o *Options, sum *Summary, mod *mainModule, rt *runtimeInfo, lines *goLines, leftOut map[string]string, model map[string]bool) error {
	if mod == nil {
		return errors.New("-overlay needs a module: no go.mod found")
	}
	cache, err := cacheDir(o)
	if err != nil {
		return err
	}
	goenv, err := goEnvFor(o.Dir)
	if err != nil {
		return err
	}
	c, err := newCacheRun(o, cache, mod, goenv, leftOut)
	if err != nil {
		return err
	}
	listed, err := list(o, sum, leftOut)
	if err != nil {
		return err
	}
	type pkgState struct {
		p     *packages.Package
		key   string
		entry *pkgEntry
	}
	var states []*pkgState
	byPath := map[string]*pkgState{}
	for _, p := range listed {
		if dirOf(p) == "" {
			continue
		}
		k, err := c.key(o, mod, p)
		if err != nil {
			return err
		}
		st := &pkgState{p: p, key: k, entry: c.lookup(k)}
		states = append(states, st)
		byPath[p.PkgPath] = st
	}
	run := map[string]bool{}
	for _, st := range states {
		run[st.p.PkgPath] = true
	}
	// Roots from go statements outside the listed packages, and from the
	// listed ones the cache holds.
	var outside map[string][]byte
	external := func() (map[string]bool, error) {
		roots, err := outsideRoots(o, mod, run, outside)
		if err != nil {
			return nil, err
		}
		for _, st := range states {
			if st.entry != nil {
				for _, k := range st.entry.Targets {
					roots[k] = true
				}
			}
		}
		return roots, nil
	}
	var jobs []*pkgJob
	var roots map[string]bool
	for {
		var dirty []*packages.Package
		var patterns []string
		for _, st := range states {
			if st.entry == nil {
				dirty = append(dirty, st.p)
				patterns = append(patterns, st.p.PkgPath)
			}
		}
		if len(dirty) > 0 {
			jsum := &Summary{Skipped: map[string]int{}}
			if jobs, outside, err = readJobs(o, jsum, dirty, patterns, mod); err != nil {
				return err
			}
		} else if outside, err = analysisOverlay(mod, nil); err != nil {
			return err
		}
		if roots, err = external(); err != nil {
			return err
		}
		for _, j := range jobs {
			for _, k := range jobTargets(j) {
				roots[k] = true
			}
		}
		// An entry whose roots are no longer the module's is stale.
		stale := false
		for _, st := range states {
			if st.entry != nil && strings.Join(rootsIn(roots, st.p.PkgPath), "\n") != strings.Join(st.entry.Roots, "\n") {
				st.entry = nil
				stale = true
			}
		}
		if !stale {
			break
		}
	}
	if len(jobs) > 0 {
		inl := inlineSet{}
		if !o.All {
			if inl, err = inlinable(o, mod, jobs, outside); err != nil {
				return err
			}
		}
		dsum := &Summary{Skipped: map[string]int{}}
		decide(o, jobs, inl, model, dsum, mod, roots)
		for _, j := range jobs {
			e := &pkgEntry{Path: j.path, Files: map[string]string{}, Targets: jobTargets(j), Roots: rootsIn(roots, j.path), Skipped: j.skipped}
			for _, g := range j.groups {
				e.NumFiles += len(g.files)
				e.Instrumented += len(g.sites)
			}
			for _, ch := range plan(o, []*pkgJob{j}) {
				if ch.new == nil {
					e.Files[filepath.Base(ch.path)] = ""
					continue
				}
				stored, err := storeFile(cache, filepath.Base(ch.path), ch.new)
				if err != nil {
					return err
				}
				e.Files[filepath.Base(ch.path)] = stored
			}
			st := byPath[j.path]
			if err := c.store(st.key, e); err != nil {
				return err
			}
			st.entry = e
		}
	}
	// The overlay: main module's files by path, dependencies through
	// copies of their modules.
	var mainChanges []change
	deps := map[string]*depModule{}
	var depOrder []string
	for _, st := range states {
		e := st.entry
		if e == nil {
			return fmt.Errorf("%s: not instrumented (a bug)", st.p.PkgPath)
		}
		sum.Packages++
		sum.Files += e.NumFiles
		sum.Instrumented += e.Instrumented
		for r, n := range e.Skipped {
			sum.Skipped[r] += n
		}
		if byPathJob(jobs, st.p.PkgPath) == nil {
			sum.Cached++
		}
		var cs []change
		names := make([]string, 0, len(e.Files))
		for name := range e.Files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ch := change{path: filepath.Join(dirOf(st.p), name)}
			if stored := e.Files[name]; stored != "" {
				if ch.new, err = os.ReadFile(stored); err != nil {
					return err
				}
			}
			cs = append(cs, ch)
		}
		m := st.p.Module
		if m == nil || m.Main {
			mainChanges = append(mainChanges, cs...)
			continue
		}
		d := deps[m.Path]
		if d == nil {
			src := m
			if src.Replace != nil {
				src = src.Replace
			}
			d = &depModule{path: m.Path, version: m.Version, dir: src.Dir, local: src.Version == ""}
			deps[m.Path] = d
			depOrder = append(depOrder, m.Path)
		}
		d.changes = append(d.changes, cs...)
	}
	var mods []*depModule
	for _, p := range depOrder {
		mods = append(mods, deps[p])
	}
	copies, err := copyDeps(cache, mods)
	if err != nil {
		return err
	}
	cs, err := lines.changes(o, mod, mainChanges, false)
	if err != nil {
		return err
	}
	replace := map[string]string{}
	for _, ch := range cs {
		if ch.new == nil {
			replace[ch.path] = ""
			continue
		}
		p, err := storeFile(cache, filepath.Base(ch.path), ch.new)
		if err != nil {
			return err
		}
		replace[ch.path] = p
	}
	gomod, err := lines.goMod(o, mod)
	if err != nil {
		return err
	}
	if err := overlayGoModCached(o, cache, mod, gomod, rt.dir, copies, replace); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"Replace": replace}, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(o.Overlay, append(data, '\n'))
}

func byPathJob(jobs []*pkgJob, path string) *pkgJob {
	for _, j := range jobs {
		if j.path == path {
			return j
		}
	}
	return nil
}

// overlayGoModCached is overlayGoMod, kept in the cache by what it reads.
func overlayGoModCached(o *Options, cache string, mod *mainModule, src []byte, rt string, deps map[string]string, replace map[string]string) error {
	sum, _ := os.ReadFile(filepath.Join(mod.root, "go.sum"))
	parts := []string{"gomod 1", mod.root, string(src), string(sum), rt, fmt.Sprint(o.OTLP, o.Live)}
	for _, f := range []string{"go.mod", "go.sum", "otlp/go.mod", "otlp/go.sum"} {
		b, _ := os.ReadFile(filepath.Join(rt, f))
		parts = append(parts, f, string(b))
	}
	var ds []string
	for p, cp := range deps {
		ds = append(ds, p+"="+cp)
	}
	sort.Strings(ds)
	parts = append(parts, ds...)
	entry := filepath.Join(cache, "gomod", hashOf(parts...)+".json")
	var e struct{ GoMod, GoSum string }
	if b, err := os.ReadFile(entry); err == nil && json.Unmarshal(b, &e) == nil && fileExists(e.GoMod) && fileExists(e.GoSum) {
		replace[filepath.Join(mod.root, "go.mod")] = e.GoMod
		replace[filepath.Join(mod.root, "go.sum")] = e.GoSum
		return nil
	}
	if err := overlayGoMod(o, cache, mod, src, rt, deps, replace); err != nil {
		return err
	}
	e.GoMod, e.GoSum = replace[filepath.Join(mod.root, "go.mod")], replace[filepath.Join(mod.root, "go.sum")]
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return err
	}
	return writeAtomic(entry, b)
}
