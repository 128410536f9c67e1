package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// What every instrumented program links must be the standard library and
// this module only, with nothing that stops the linker dropping unused
// methods: these tests build a hello world, plain and with a probe, in a
// module of its own that requires this checkout, as a user's would.

const plainHello = `package main

import "fmt"

func main() { fmt.Println("hello") }
`

const instrumentedHello = `package main

import (
	"fmt"

	"github.com/meterio/meter/probe"
)

var probes [1]probe.Probe

func init() { probe.Register(probes[:], "example.com/hello.main") }

func main() {
	defer probe.Shutdown()
	probe.Main()
	f := probes[0].Unmetered()
	if probes[0].On() && probes[0].Begin(&f) {
		defer probes[0].End(&f)
	}
	fmt.Println("hello")
}
`

// helloModule writes a module holding main.go and returns its folder.
func helloModule(t *testing.T, src string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module example.com/hello\n\ngo 1.22\n\nrequire github.com/meterio/meter v0.0.0\n\nreplace github.com/meterio/meter => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestInstrumentedProgramLinksStdOnly: go list -deps of an instrumented
// hello world names the standard library and this module only, and none
// of the packages that must be opt-in (runtime/pprof, net/http) or that
// stop dead-method elimination.
func TestInstrumentedProgramLinksStdOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir := helloModule(t, instrumentedHello)
	out := goCmd(t, dir, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
	for _, p := range strings.Fields(out) {
		if p != "example.com/hello" && !strings.HasPrefix(p, "github.com/meterio/meter/") {
			t.Errorf("an instrumented program links %s", p)
		}
	}
	std := goCmd(t, dir, "list", "-deps", "-f", "{{if .Standard}}{{.ImportPath}}{{end}}", ".")
	for _, p := range strings.Fields(std) {
		switch p {
		case "runtime/pprof", "net/http", "text/template", "html/template", "crypto/tls", "encoding/json":
			t.Errorf("an instrumented program links %s", p)
		}
	}
	if mods := goCmd(t, dir, "list", "-m", "all"); strings.TrimSpace(mods) != "example.com/hello\ngithub.com/meterio/meter v0.0.0 => "+filepath.Dir(mustAbs(t, ".")) {
		t.Errorf("the program's module graph:\n%s", mods)
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestInstrumentedProgramSize: the stripped hello world grows by at most
// 1.5 MB when instrumented (the aim is under 1 MB).
func TestInstrumentedProgramSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	size := func(src string) int64 {
		dir := helloModule(t, src)
		bin := filepath.Join(dir, "hello")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		goCmd(t, dir, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
		fi, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	plain, inst := size(plainHello), size(instrumentedHello)
	t.Logf("stripped hello world: plain %d B, instrumented %d B, +%d B (+%.2f MB)", plain, inst, inst-plain, float64(inst-plain)/(1<<20))
	if inst-plain > 3<<19 {
		t.Errorf("an instrumented hello world is %d B bigger than plain (%d B): more than 1.5 MB", inst-plain, plain)
	}
}

const methodsHello = `package main

import (
	"fmt"

	"github.com/meterio/meter/probe"
)

var probes [1]probe.Probe

func init() { probe.Register(probes[:], "example.com/hello.main") }

type greeter struct{ name string }

func (g greeter) String() string { return "hello, " + g.name }
func (g greeter) Unused() string { return "never called: " + g.name }

func main() {
	defer probe.Shutdown()
	probe.Main()
	f := probes[0].Unmetered()
	if probes[0].On() && probes[0].Begin(&f) {
		defer probes[0].End(&f)
	}
	fmt.Println(greeter{"you"})
}
`

// TestUnusedMethodsDropped: the linker drops an exported method nothing
// calls, in an instrumented program as in a plain one. A package that
// looks methods up by name (reflect's MethodByName, text/template) would
// keep every exported method of every type that reaches an interface.
func TestUnusedMethodsDropped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := helloModule(t, methodsHello)
	bin := filepath.Join(dir, "hello")
	goCmd(t, dir, "build", "-o", bin, ".")
	syms := goCmd(t, dir, "tool", "nm", bin)
	if !strings.Contains(syms, "main.greeter.String") {
		t.Fatalf("main.greeter.String missing from the symbols: the test reads the wrong binary")
	}
	if strings.Contains(syms, "main.greeter.Unused") {
		t.Errorf("the instrumented program keeps main.greeter.Unused: something it links disables dead-method elimination")
	}
}

// TestTidyAddsTheRuntimeOnly: go mod tidy in a module whose code imports
// the probes adds this module and nothing else, and keeps the go line.
func TestTidyAddsTheRuntimeOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	dir := helloModule(t, instrumentedHello)
	gomod := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(gomod, []byte("module example.com/hello\n\ngo 1.22\n\nreplace github.com/meterio/meter => "+filepath.Dir(mustAbs(t, "."))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd(t, dir, "mod", "tidy")
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []string
	goLine := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "go":
			goLine = f[1]
		case len(f) >= 3 && f[0] == "require":
			reqs = append(reqs, f[1])
		case len(f) >= 2 && strings.Contains(f[0], ".") && !strings.HasPrefix(line, "replace") && !strings.HasPrefix(line, "module"):
			reqs = append(reqs, f[0])
		}
	}
	if goLine != "1.22" || len(reqs) != 1 || reqs[0] != "github.com/meterio/meter" {
		t.Errorf("after go mod tidy: go line %q, requirements %v; want 1.22 and the runtime alone:\n%s", goLine, reqs, b)
	}
}
