package inject

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, ok := files["go.mod"]; !ok {
		files["go.mod"] = "module example.com/m\n\ngo " + runtimeGoLine(t) + "\n"
	}
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		}
		return nil
	})
	return m
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			t.Errorf("%s: %s changed or went", what, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s was written", what, p)
		}
	}
}

const simpleSrc = "package p\n\nimport \"fmt\"\n\nfunc F(x int) int {\n\tfmt.Println(x)\n\treturn x\n}\n"

// TestErrorLeavesFilesAlone: a file that does not parse stops the run
// with file:line:col, and no file is written.
func TestErrorLeavesFilesAlone(t *testing.T) {
	bad := "package p\n\nfunc G( {\n"
	dir := writeModule(t, map[string]string{"a.go": simpleSrc, "b.go": bad})
	before := snapshot(t, dir)
	_, err := Run(&Options{Dir: dir, All: true, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "b.go:3:") {
		t.Fatalf("want an error at b.go:3:col, got %v", err)
	}
	sameTree(t, "after an error", before, snapshot(t, dir))
}

// TestDryRun prints a diff and writes nothing.
func TestDryRun(t *testing.T) {
	dir := writeModule(t, map[string]string{"a.go": simpleSrc})
	before := snapshot(t, dir)
	var out bytes.Buffer
	sum, err := Run(&Options{Dir: dir, DryRun: true, Runtime: repoRoot(t), Stdout: &out, Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "+\t_ = meter__probes[0].On() && meter__probes[0].Begin(&meter__f)") || !strings.Contains(out.String(), "meter_probes_gen.go") {
		t.Errorf("diff lacks the probe or the generated file:\n%s", out.String())
	}
	sameTree(t, "-n", before, snapshot(t, dir))
	if sum.Instrumented != 1 || !strings.Contains(sum.String(), "1 function instrumented") {
		t.Errorf("summary: %s", sum)
	}
}

// TestOverlayWritesNothingOfTheUsers: -overlay writes nothing in the
// user's folders (no binary from the inlining analysis, no registration
// file, no go.mod change), keeps the user's go line in the overlaid
// go.mod, and two runs that produce different text write to different
// places, so each overlay builds what its own run wrote.
func TestOverlayWritesNothingOfTheUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	files := map[string]string{
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc F(x int) int {\n\tos.Stdout.WriteString(fmt.Sprintln(x))\n\treturn x\n}\n\nfunc G() { os.Stdout.WriteString(\"g\\n\") }\n\nfunc main() { F(1); G() }\n",
	}
	dir := writeModule(t, files)
	before := snapshot(t, dir)
	cache := t.TempDir()
	tmp := t.TempDir()
	var overlays []string
	for i, exclude := range []string{"", `\.G$`} {
		o := &Options{Dir: dir, Runtime: repoRoot(t), Cache: cache, Stderr: &bytes.Buffer{},
			Overlay: filepath.Join(tmp, "o"+string(rune('a'+i))+".json")}
		if exclude != "" {
			o.Exclude = regexpMust(exclude)
		}
		if _, err := Run(o); err != nil {
			t.Fatal(err)
		}
		overlays = append(overlays, o.Overlay)
	}
	sameTree(t, "-overlay", before, snapshot(t, dir))
	var gens []string
	for _, ov := range overlays {
		b, _ := os.ReadFile(ov)
		var m struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		gen, err := os.ReadFile(m.Replace[filepath.Join(dir, "meter_probes_gen.go")])
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, string(gen))
		gm, _ := os.ReadFile(m.Replace[filepath.Join(dir, "go.mod")])
		if l, _ := goLineOf("go.mod", gm); l != runtimeGoLine(t) {
			t.Errorf("the overlaid go.mod has go %s, the user's go %s", l, runtimeGoLine(t))
		}
		cmd := exec.Command("go", "build", "-overlay", ov, "-o", filepath.Join(tmp, "bin"), ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", ov, err, out)
		}
	}
	if !strings.Contains(gens[0], `"main.G"`) || strings.Contains(gens[1], `"main.G"`) {
		t.Errorf("the first overlay must still have main.G's probe, the second not:\n%s\n%s", gens[0], gens[1])
	}
	sameTree(t, "builds", before, snapshot(t, dir))
}

// TestCycleLeftOut: a package the runtime imports is left out with one
// line saying why.
func TestCycleLeftOut(t *testing.T) {
	dir := writeModule(t, map[string]string{"a.go": simpleSrc})
	var stderr bytes.Buffer
	o := &Options{Dir: dir, Runtime: repoRoot(t), Overlay: filepath.Join(t.TempDir(), "o.json"), Cache: t.TempDir(),
		Stderr: &stderr, Patterns: []string{".", "sync"}}
	sum, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := "meterinject: sync left out: the runtime imports it"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if sum.Packages != 1 || sum.Skipped[skipCycle] != 1 {
		t.Errorf("summary: %s", sum)
	}
}

// TestUntidy: a module that does not require the runtime (or whose go.sum
// lacks it) is instrumented in place with one line saying what to run,
// instrumented again, and -remove gives it back; go's own error is never
// shown.
func TestUntidy(t *testing.T) {
	dir := writeModule(t, map[string]string{"a.go": simpleSrc})
	before := snapshot(t, dir)
	for i := 0; i < 2; i++ {
		var stderr bytes.Buffer
		if _, err := Run(&Options{Dir: dir, Runtime: repoRoot(t), Stderr: &stderr}); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if s := stderr.String(); i == 0 && (!strings.Contains(s, "go mod tidy") || strings.Contains(s, "no required module")) {
			t.Errorf("run %d: want one line saying what to run, got:\n%s", i, s)
		}
	}
	if _, err := Run(&Options{Dir: dir, Remove: true, Stderr: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "in place, then -remove", before, snapshot(t, dir))
}

// TestTestOnlyMain: a package main that has only test files (as in
// github.com/expr-lang/expr) is instrumented with -tests, through the
// inlining analysis, which does not link.
func TestTestOnlyMain(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"lib/lib.go":          simpleSrc,
		"tonly/main_test.go":  "package main\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc helper(x int) int {\n\tos.Stdout.WriteString(\"x\\n\")\n\treturn x\n}\n\nfunc TestX(t *testing.T) { helper(1) }\n",
		"tonly/other_test.go": "package main_test\n\nimport \"testing\"\n\nfunc TestY(t *testing.T) {}\n",
	})
	sum, err := Run(&Options{Dir: dir, Tests: true, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}, Patterns: []string{"./..."}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Instrumented < 2 {
		t.Errorf("summary: %s", sum)
	}
	if _, err := os.Stat(filepath.Join(dir, "tonly", "meter_probes_gen_test.go")); err != nil {
		t.Errorf("no registration file for the test-only package: %v", err)
	}
	for _, f := range []string{"tonly/tonly", "lib/lib.test", "tonly/tonly.test"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was left behind", f)
		}
	}
}

func TestParseModel(t *testing.T) {
	csv := "probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n" +
		"a.F,1,1,1,1,1,1,1,hotspot\n" +
		"a.G,1,1,1,1,1,1,1,disabled\n" +
		"\"a.(*T).M\",1,1,1,1,1,1,1,budget\n" +
		"a.H,1,1,1,1,1,1,1,\n"
	m, err := parseModel(strings.NewReader(csv), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || !m["a.G"] || !m["a.(*T).M"] {
		t.Errorf("got %v", m)
	}
	if _, err := parseModel(strings.NewReader("x,y\n"), "m.csv"); err == nil {
		t.Error("a CSV without probe and label columns was accepted")
	}
}

func TestSummary(t *testing.T) {
	s := &Summary{Packages: 2, Files: 3, Instrumented: 4, Skipped: map[string]int{skipInline: 5, skipGenerated: 1}}
	want := "meterinject: 2 packages, 3 files, 4 functions instrumented; skipped: 1 in generated files, 5 inlinable"
	if s.String() != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestIsRuntime(t *testing.T) {
	for path, want := range map[string]bool{
		"github.com/meterio/meter/probe":                  true,
		"github.com/meterio/meter":                        true,
		"github.com/meterio/meter/example":                false,
		"github.com/meterio/meter/bench/adversarial/tiny": false,
		"github.com/meterio/meter/bench/adversarialx":     true,
		"github.com/meterio/meterx":                       false,
		"github.com/yuin/goldmark/parser":                 false,
		"github.com/meterio/meter/meter/deep":             true,
	} {
		if isRuntime(path) != want {
			t.Errorf("isRuntime(%s) = %v", path, !want)
		}
	}
}

func TestPathToPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"gopkg.in/yaml.v3":          "gopkg.in/yaml%2ev3",
		"github.com/yuin/goldmark":  "github.com/yuin/goldmark",
		"example.com/a.b/c.d":       "example.com/a.b/c%2ed",
		"example.com/100%":          "example.com/100%25",
		"example.com/x/lib.v2_test": "example.com/x/lib%2ev2_test",
	} {
		if got := pathToPrefix(in); got != want {
			t.Errorf("pathToPrefix(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestChooseNames(t *testing.T) {
	for _, c := range []struct {
		idents []string
		want   string
	}{
		{nil, "meter__"},
		{[]string{"meter", "meter_x", "meterx"}, "meter__"},
		{[]string{"meter__f"}, "meterx__"},
		{[]string{"meter__f", "meterx__probes"}, "meterxx__"},
	} {
		m := map[string]bool{}
		for _, id := range c.idents {
			m[id] = true
		}
		if got := chooseNames(m); got != c.want {
			t.Errorf("%v: %s, want %s", c.idents, got, c.want)
		}
	}
}

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// TestRequiredNotTidy: a module that requires the runtime but whose go.sum
// lacks its requirements is instrumented, with one line saying to run go
// mod tidy; one whose own imports are not required is refused with what
// to run, not the go command's error.
func TestRequiredNotTidy(t *testing.T) {
	gomod := "module example.com/m\n\ngo " + runtimeGoLine(t) + "\n\nrequire " + runtimeModule + " v0.0.0\n\nreplace " + runtimeModule + " => " + repoRoot(t) + "\n"
	dir := writeModule(t, map[string]string{"a.go": simpleSrc, "go.mod": gomod})
	var stderr bytes.Buffer
	if _, err := Run(&Options{Dir: dir, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	// A runtime that links only the standard library needs no go.sum
	// entries: then there is nothing to say.
	deps, err := goCmd(repoRoot(t), "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", probePkg)
	if err != nil {
		t.Fatal(err)
	}
	needsSum := false
	for _, p := range strings.Fields(string(deps)) {
		needsSum = needsSum || !isRuntime(p)
	}
	s := stderr.String()
	if strings.Contains(s, "missing go.sum entry") || needsSum != strings.Contains(s, "is not tidy: run `go mod tidy`") {
		t.Errorf("runtime needs go.sum entries: %v; want one line saying to run go mod tidy exactly then, got:\n%s", needsSum, s)
	}

	dir = writeModule(t, map[string]string{"a.go": "package p\n\nimport \"golang.org/x/mod/semver\"\n\nvar V = semver.IsValid(\"v1\")\n"})
	_, err = Run(&Options{Dir: dir, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "run `go mod tidy`") || strings.Contains(err.Error(), "no required module") {
		t.Errorf("want what to run, got %v", err)
	}
}

// TestSummaryNamesPackageUnderGoGenerate: run by go generate ($GOPACKAGE
// set), the summary names its package, or the path that holds its
// packages; run by hand, it does not.
func TestSummaryNamesPackageUnderGoGenerate(t *testing.T) {
	dir := writeModule(t, map[string]string{"pkg/a.go": simpleSrc, "b/b.go": strings.Replace(simpleSrc, "package p", "package b", 1)})
	sum, err := Run(&Options{Dir: filepath.Join(dir, "pkg"), DryRun: true, Runtime: repoRoot(t), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if s := sum.String(); !strings.HasPrefix(s, "meterinject: 1 package, 1 file, 1 function instrumented") {
		t.Errorf("by hand: %s", s)
	}
	t.Setenv("GOPACKAGE", "p")
	for _, c := range []struct{ dir, pattern, want string }{
		{"pkg", ".", "meterinject: example.com/m/pkg: 1 file, 1 function instrumented"},
		{".", "./...", "meterinject: example.com/m/...: 2 packages, 2 files, 2 functions instrumented"},
	} {
		sum, err := Run(&Options{Dir: filepath.Join(dir, c.dir), DryRun: true, Runtime: repoRoot(t), Patterns: []string{c.pattern},
			Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		if s := sum.String(); s != c.want {
			t.Errorf("under go generate in %s: %q, want %q", c.dir, s, c.want)
		}
	}
}

// TestTypeErrorOnce: a type error is reported once, at its file:line:col,
// and nothing is written.
func TestTypeErrorOnce(t *testing.T) {
	dir := writeModule(t, map[string]string{"p.go": "package p\n\nfunc F() int {\n\treturn \"x\"\n}\n"})
	before := snapshot(t, dir)
	_, err := Run(&Options{Dir: dir, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}})
	if err == nil {
		t.Fatal("a type error was not reported")
	}
	msg := err.Error()
	if strings.Count(msg, "p.go:4:9") != 1 || strings.Contains(msg, "-:") || strings.Contains(msg, "# ") || !strings.HasPrefix(msg, filepath.Join(dir, "p.go")+":4:9: ") {
		t.Errorf("want the error once, at p.go:4:9, got:\n%s", msg)
	}
	sameTree(t, "a type error", before, snapshot(t, dir))
}

// TestNotRegularFilesNotReplaced: a source file that is a symbolic link
// is refused in place, with its path, before anything is written; an
// -overlay path that is not a regular file is refused too.
func TestNotRegularFilesNotReplaced(t *testing.T) {
	dir := writeModule(t, map[string]string{"a.go": simpleSrc})
	target := filepath.Join(t.TempDir(), "b.go")
	os.WriteFile(target, []byte(strings.Replace(simpleSrc, "F(", "G(", 1)), 0o644)
	if err := os.Symlink(target, filepath.Join(dir, "b.go")); err != nil {
		t.Skip(err)
	}
	before := snapshot(t, dir)
	_, err := Run(&Options{Dir: dir, All: true, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.go")+": a symbolic link") {
		t.Errorf("want b.go refused as a symbolic link, got %v", err)
	}
	sameTree(t, "refused", before, snapshot(t, dir))
	if b, _ := os.ReadFile(target); strings.Contains(string(b), "meter__") {
		t.Error("the link's target was written")
	}
	os.Remove(filepath.Join(dir, "b.go"))
	ovDir := t.TempDir()
	_, err = Run(&Options{Dir: dir, All: true, Runtime: repoRoot(t), Overlay: ovDir, Cache: t.TempDir(), Stderr: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("-overlay DIR: want a refusal, got %v", err)
	}
}

// TestModCacheRefused: in place, a package in the module cache is refused
// with what works instead, and nothing is written.
func TestModCacheRefused(t *testing.T) {
	sums, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	var sum []string
	for _, l := range strings.Split(string(sums), "\n") {
		if strings.HasPrefix(l, "golang.org/x/mod ") {
			sum = append(sum, l)
		}
	}
	gomod, _ := os.ReadFile("../../go.mod")
	version := regexp.MustCompile(`golang.org/x/mod (v\S+)`).FindSubmatch(gomod)
	if version == nil || len(sum) == 0 {
		t.Fatal("cmd/meterinject no longer requires golang.org/x/mod")
	}
	dir := writeModule(t, map[string]string{
		"a.go":   "package p\n\nimport \"golang.org/x/mod/semver\"\n\n// V is valid.\nvar V = semver.IsValid(\"v1.0.0\")\n",
		"go.mod": "module example.com/m\n\ngo " + runtimeGoLine(t) + "\n\nrequire golang.org/x/mod " + string(version[1]) + "\n",
		"go.sum": strings.Join(sum, "\n") + "\n",
	})
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOPROXY=off")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy, from the module cache: %v\n%s", err, out)
	}
	before := snapshot(t, dir)
	_, err = Run(&Options{Dir: dir, All: true, Runtime: repoRoot(t), Stderr: &bytes.Buffer{}, Patterns: []string{".", "golang.org/x/mod/semver"}})
	if err == nil || !strings.Contains(err.Error(), "in the module cache") || !strings.Contains(err.Error(), "meterinject -deps golang.org/x/mod/... go build") {
		t.Errorf("want a refusal that says what works, got %v", err)
	}
	sameTree(t, "refused", before, snapshot(t, dir))
}
