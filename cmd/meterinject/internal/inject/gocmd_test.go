package inject

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// routesModule has functions whose selection depends on the rest of the
// module: a.Twice is small and calls only b (another package of the
// module, not inlined), a.Call only a method of an interface of b: both
// are left out as small; c.Worker is small, but a go statement in main
// starts it: a root, kept.
var routesModule = map[string]string{
	"b/b.go":  "package b\n\nimport \"fmt\"\n\n// Work prints.\n//\n//go:noinline\nfunc Work(x int) int {\n\tfmt.Println(x)\n\treturn x\n}\n\n// Doer does.\ntype Doer interface{ Do() int }\n",
	"a/a.go":  "package a\n\nimport \"example.com/routes/b\"\n\n// Twice calls b.\nfunc Twice(x int) int {\n\ty := b.Work(x)\n\tif y > 10 {\n\t\ty--\n\t}\n\treturn y + b.Work(x)\n}\n\n// Call calls d.\nfunc Call(d b.Doer) int {\n\tn := d.Do()\n\tn += d.Do()\n\treturn n\n}\n",
	"c/c.go":  "package c\n\nimport \"example.com/routes/b\"\n\n// Worker works.\nfunc Worker(ch chan int) {\n\tx := b.Work(1)\n\tx += b.Work(2)\n\t_ = x\n}\n",
	"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/routes/a\"\n\t\"example.com/routes/c\"\n)\n\nfunc main() {\n\tch := make(chan int)\n\tgo c.Worker(ch)\n\tfmt.Println(a.Twice(2))\n}\n",
}

var registered = regexp.MustCompile(`(?m)^\t\t"([^"]+)"[,)]`)
var rootsCall = regexp.MustCompile(`Roots\([a-z_]+\[:\]((?:, \d+)+)\)`)

// selection reads the probes (and roots, marked "root ") a registration
// file registers.
func selection(gen []byte) []string {
	var names []string
	for _, m := range registered.FindAllSubmatch(gen, -1) {
		names = append(names, string(m[1]))
	}
	var out []string
	out = append(out, names...)
	if m := rootsCall.FindSubmatch(gen); m != nil {
		for _, f := range strings.Split(strings.TrimPrefix(string(m[1]), ", "), ", ") {
			i, _ := strconv.Atoi(f)
			out = append(out, "root "+names[i])
		}
	}
	return out
}

// genSelection reads every registration file under dir.
func genSelection(t *testing.T, dir string) []string {
	var out []string
	for p, b := range snapshot(t, dir) {
		if filepath.Base(p) == genFiles[""] {
			out = append(out, selection([]byte(b))...)
		}
	}
	sort.Strings(out)
	return out
}

// TestRoutesPickTheSameFunctions: in place on the whole module, in place
// one package at a time (as //go:generate lines in each package run, in
// either order), through -overlay and through meterinject go, the same
// functions get probes, and the same are roots.
func TestRoutesPickTheSameFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the module")
	}
	files := map[string]string{"go.mod": "module example.com/routes\n\ngo " + runtimeGoLine(t) + "\n"}
	for k, v := range routesModule {
		files[k] = v
	}
	dir := writeModule(t, files)
	before := snapshot(t, dir)
	opts := func(d string, patterns ...string) *Options {
		return &Options{Dir: d, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}, Patterns: patterns}
	}
	remove := func() {
		t.Helper()
		if _, err := Run(&Options{Dir: dir, Remove: true, Stderr: &bytes.Buffer{}, Patterns: []string{"./..."}}); err != nil {
			t.Fatal(err)
		}
		sameTree(t, "-remove", before, snapshot(t, dir))
	}
	routes := map[string][]string{}

	if _, err := Run(opts(dir, "./...")); err != nil {
		t.Fatal(err)
	}
	routes["in place, ./..."] = genSelection(t, dir)
	remove()

	for name, order := range map[string][]string{
		"in place, one package at a time":           {"b", "c", "a", "."},
		"in place, one package at a time, reversed": {".", "a", "c", "b"},
	} {
		for _, pkg := range order {
			if _, err := Run(opts(filepath.Join(dir, pkg), ".")); err != nil {
				t.Fatalf("%s: %s: %v", name, pkg, err)
			}
		}
		routes[name] = genSelection(t, dir)
		remove()
	}

	ov := filepath.Join(t.TempDir(), "o.json")
	o := opts(dir, "./...")
	o.Overlay, o.Cache = ov, t.TempDir()
	if _, err := Run(o); err != nil {
		t.Fatal(err)
	}
	var m struct{ Replace map[string]string }
	b, _ := os.ReadFile(ov)
	json.Unmarshal(b, &m)
	var sel []string
	for from, to := range m.Replace {
		if filepath.Base(from) == genFiles[""] {
			gen, _ := os.ReadFile(to)
			sel = append(sel, selection(gen)...)
		}
	}
	sort.Strings(sel)
	routes["-overlay"] = sel

	cache := t.TempDir()
	o = opts(dir)
	o.Cache, o.Stdout = cache, &bytes.Buffer{}
	if code, err := Go(o, nil, []string{"go", "build", "./..."}); code != 0 || err != nil {
		t.Fatalf("meterinject go build: %d %v\n%s", code, err, o.Stderr)
	}
	sel = nil
	entries, _ := filepath.Glob(filepath.Join(cache, "pkg", "*", "*.json"))
	for _, p := range entries {
		var e pkgEntry
		b, _ := os.ReadFile(p)
		json.Unmarshal(b, &e)
		if to := e.Files[genFiles[""]]; to != "" {
			gen, _ := os.ReadFile(to)
			sel = append(sel, selection(gen)...)
		}
	}
	sort.Strings(sel)
	routes["meterinject go"] = sel
	sameTree(t, "overlays", before, snapshot(t, dir))

	want := routes["in place, ./..."]
	for _, must := range []string{"root example.com/routes/c.Worker", "example.com/routes/b.Work", "main.main"} {
		if i := sort.SearchStrings(want, must); i == len(want) || want[i] != must {
			t.Errorf("the selection lacks %q: %v", must, want)
		}
	}
	for _, not := range []string{"example.com/routes/a.Twice", "example.com/routes/a.Call"} {
		if i := sort.SearchStrings(want, not); i < len(want) && want[i] == not {
			t.Errorf("the selection holds %q: %v", not, want)
		}
	}
	for name, got := range routes {
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s picks\n\t%s\nin place on ./... picks\n\t%s", name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
}

// TestGoCommand: meterinject go runs the go command on the instrumented
// module: its flags pass through (-run, -count, -v, -o, -tags), its exit
// status is returned, and nothing of the user's is written.
func TestGoCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	dir := writeModule(t, map[string]string{
		"main.go":      "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc greet(s string) string {\n\tfmt.Fprintln(os.Stderr, \"greeting\")\n\treturn \"hello \" + s\n}\n\nfunc main() { fmt.Println(greet(tagged)) }\n",
		"tag_on.go":    "//go:build shout\n\npackage main\n\nconst tagged = \"LOUD\"\n",
		"tag_off.go":   "//go:build !shout\n\npackage main\n\nconst tagged = \"quiet\"\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif greet(\"a\") != \"hello a\" {\n\t\tt.Fatal(\"greet\")\n\t}\n}\n\nfunc TestB(t *testing.T) { t.Fatal(\"B fails\") }\n",
	})
	before := snapshot(t, dir)
	cache := t.TempDir()
	goCmd := func(args ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		o := &Options{Dir: dir, Runtime: repoRoot(t), Cache: cache, Stdout: &stdout, Stderr: &stderr}
		code, err := Go(o, nil, append([]string{"go"}, args...))
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, stderr.String())
		}
		return code, stdout.String(), stderr.String()
	}
	if code, out, errs := goCmd("test", "-count=1", "-v", "-run", "TestA", "."); code != 0 || !strings.Contains(out, "--- PASS: TestA") || strings.Contains(out, "TestB") {
		t.Errorf("go test -run TestA: %d\n%s%s", code, out, errs)
	}
	if code, out, _ := goCmd("test", "-count", "1", "."); code != 1 || !strings.Contains(out, "B fails") {
		t.Errorf("go test with a failing test: exit %d, want 1\n%s", code, out)
	}
	bin := filepath.Join(t.TempDir(), "app")
	if code, _, errs := goCmd("build", "-tags", "shout", "-o", bin, "."); code != 0 {
		t.Fatalf("go build -o: %d\n%s", code, errs)
	}
	if out, _ := run(t, bin, nil); !strings.Contains(out, "hello LOUD") {
		t.Errorf("the built program: %s", out)
	}
	if code, out, errs := goCmd("run", ".", "-count"); code != 0 || out != "hello quiet\n" || !strings.Contains(errs, "functions instrumented") {
		t.Errorf("go run: %d\n%s%s", code, out, errs)
	}
	if code, _, errs := goCmd("vet", "."); code != 0 {
		t.Errorf("go vet: %d\n%s", code, errs)
	}
	if code, _, _ := goCmd("build", "-o", bin, "./nowhere"); code == 0 {
		t.Error("go build of a missing package: exit 0")
	}
	sameTree(t, "meterinject go", before, snapshot(t, dir))
	if fileExists(filepath.Join(dir, "app")) {
		t.Error("a binary was left in the module")
	}
	if runs, _ := filepath.Glob(filepath.Join(cache, "tmp", "run-*")); len(runs) > 0 {
		t.Errorf("run directories left behind: %v", runs)
	}
}

// TestGoCommandCache: a second meterinject go instruments nothing again;
// after a change in one package, it instruments that package and the
// module's packages that import it, and takes the rest from the cache.
func TestGoCommandCache(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the module")
	}
	files := map[string]string{"go.mod": "module example.com/routes\n\ngo " + runtimeGoLine(t) + "\n"}
	for k, v := range routesModule {
		files[k] = v
	}
	dir := writeModule(t, files)
	cache := t.TempDir()
	summary := func() *Summary {
		t.Helper()
		o := &Options{Dir: dir, Runtime: repoRoot(t), Cache: cache, Overlay: filepath.Join(t.TempDir(), "o.json"), Stderr: &bytes.Buffer{}}
		o.Patterns = []string{dir + "/..."}
		sum, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	first := summary()
	if first.Packages != 4 || first.Cached != 0 {
		t.Fatalf("first run: %s", first)
	}
	second := summary()
	if second.Cached != 4 || second.String() != strings.Replace(first.String(), "4 packages", "4 packages (4 from the cache)", 1) {
		t.Errorf("second run: %s\nfirst: %s", second, first)
	}
	// c: main imports it; a and b are taken from the cache.
	os.WriteFile(filepath.Join(dir, "c", "c.go"), []byte(strings.Replace(routesModule["c/c.go"], "x += b.Work(2)", "x += b.Work(3)", 1)), 0o644)
	if s := summary(); s.Cached != 2 {
		t.Errorf("after a change in c: %s", s)
	}
	if s := summary(); s.Cached != 4 {
		t.Errorf("unchanged since: %s", s)
	}
	// b: a, c and main import it.
	os.WriteFile(filepath.Join(dir, "b", "b.go"), []byte(strings.Replace(routesModule["b/b.go"], "return x", "return x + 0", 1)), 0o644)
	if s := summary(); s.Cached != 0 {
		t.Errorf("after a change in b: %s", s)
	}
	// main no longer starts c.Worker: c's root goes, c is instrumented
	// again, and main.
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(strings.Replace(routesModule["main.go"], "go c.Worker(ch)", "c.Worker(ch)", 1)), 0o644)
	if s := summary(); s.Cached != 2 {
		t.Errorf("after main stopped starting c.Worker: %s", s)
	}
	// With other options, nothing is taken from the cache.
	o := &Options{Dir: dir, All: true, Runtime: repoRoot(t), Cache: cache, Overlay: filepath.Join(t.TempDir(), "o.json"), Stderr: &bytes.Buffer{}, Patterns: []string{"./..."}}
	if s, err := Run(o); err != nil || s.Cached != 0 {
		t.Errorf("-all after the default selection: %v %v", s, err)
	}
}

// TestParseGo: the go command line is read as the go command reads it:
// meterinject takes -overlay out (to merge it) and reads -tags; -modfile
// and unknown subcommands are refused; program and test binary arguments
// are left alone.
func TestParseGo(t *testing.T) {
	for _, c := range []struct {
		args    []string
		dir     string
		want    []string
		overlay string
		tags    []string
		err     string
	}{
		{args: []string{"go", "test", "-run", "X", "./...", "-count=1", "-args", "-overlay", "y"}, want: []string{"-run=X", "./...", "-count=1", "-args", "-overlay", "y"}},
		{args: []string{"go", "build", "-o", "bin/app", "-tags", "a,b", "-overlay=o.json", "./cmd/app"}, want: []string{"-o=bin/app", "-tags=a,b", "./cmd/app"}, overlay: "o.json", tags: []string{"a,b"}},
		{args: []string{"go", "run", "-race", ".", "-tags", "x"}, want: []string{"-race", ".", "-tags", "x"}},
		{args: []string{"go", "-C", "sub", "vet", "./..."}, dir: "sub", want: []string{"./..."}},
		{args: []string{"go", "build", "-modfile=x.mod", "."}, err: "-modfile"},
		{args: []string{"go", "mod", "tidy"}, err: "go mod"},
		{args: []string{"go"}, err: "want a command"},
	} {
		g, dir, err := parseGo(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if dir != c.dir || strings.Join(g.args, " ") != strings.Join(c.want, " ") || g.overlay != c.overlay || strings.Join(g.tags, ",") != strings.Join(c.tags, ",") {
			t.Errorf("%v: dir %q args %q overlay %q tags %q", c.args, dir, g.args, g.overlay, g.tags)
		}
	}
}

// TestGoCommandUserOverlay: an overlay in GOFLAGS is merged into
// meterinject's where it replaces files meterinject does not instrument,
// and refused, with a message, where it replaces one it does.
func TestGoCommandUserOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	dir := writeModule(t, map[string]string{
		"main.go":    "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/gen\"\n)\n\nfunc main() { fmt.Println(gen.Word) }\n",
		"gen/gen.go": "package gen\n\n// Word is replaced by the overlay.\nconst Word = \"disk\"\n",
	})
	tmp := t.TempDir()
	word := filepath.Join(tmp, "gen.go")
	os.WriteFile(word, []byte("package gen\n\n// Word is replaced by the overlay.\nconst Word = \"overlay\"\n"), 0o644)
	user := filepath.Join(tmp, "user.json")
	b, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(dir, "gen", "gen.go"): word}})
	os.WriteFile(user, b, 0o644)
	t.Setenv("GOFLAGS", "-overlay="+user)
	var stdout, stderr bytes.Buffer
	o := &Options{Dir: dir, Runtime: repoRoot(t), Cache: t.TempDir(), Stdout: &stdout, Stderr: &stderr}
	if code, err := Go(o, nil, []string{"go", "run", "."}); code != 0 || err != nil || stdout.String() != "overlay\n" {
		t.Errorf("merged overlay: %d %v\n%s%s", code, err, stdout.String(), stderr.String())
	}
	// An entry for main.go, which meterinject instruments.
	b, _ = json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(dir, "main.go"): word}})
	os.WriteFile(user, b, 0o644)
	stdout.Reset()
	o = &Options{Dir: dir, Runtime: repoRoot(t), Cache: t.TempDir(), Stdout: &stdout, Stderr: &stderr}
	code, err := Go(o, nil, []string{"go", "run", "."})
	if code == 0 || err == nil || !strings.Contains(err.Error(), "main.go") || !strings.Contains(err.Error(), "meterinject -overlay") || stdout.Len() > 0 {
		t.Errorf("a clashing overlay: %d %v\n%s", code, err, stdout.String())
	}
}
