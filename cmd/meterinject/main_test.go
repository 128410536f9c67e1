package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runtimeDirForTest is the runtime checkout the tests build against.
func runtimeDirForTest(t *testing.T) string {
	if d := os.Getenv("METERINJECT_TEST_RUNTIME"); d != "" {
		return d
	}
	d, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// goLine returns the go line of the go.mod in dir.
func goLine(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no go line")
	return ""
}

// TestCommand builds the command and runs it as a user would: -n on a
// small module prints a diff and the summary, writes nothing; a bad flag
// fails with a message; -h prints the usage with its examples.
func TestCommand(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "meterinject")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rt := runtimeDirForTest(t)
	dir := t.TempDir()
	src := "package p\n\nimport \"fmt\"\n\nfunc F(x int) int {\n\tfmt.Println(x)\n\treturn x\n}\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo "+goLine(t, rt)+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644)

	cmd := exec.Command(exe, "-n", "-runtime", rt, "./...")
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("meterinject -n: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "+\t_ = meter__probes[0].On() && meter__probes[0].Begin(&meter__f)") ||
		!strings.Contains(stdout.String(), "+\t_ = meter__f != 0 && meter__probes[0].End(&meter__f)") {
		t.Errorf("no diff on stdout:\n%s", stdout.String())
	}
	if want := "meterinject: 1 package, 1 file, 1 function instrumented"; !strings.Contains(stderr.String(), want) {
		t.Errorf("summary: got %q, want %q", stderr.String(), want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "p.go")); string(b) != src {
		t.Error("-n wrote p.go")
	}

	for _, bad := range [][]string{{"-shape", "twin"}, {"-include", "("}} {
		cmd = exec.Command(exe, bad...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), bad[0]) {
			t.Errorf("%v: err %v, output %s", bad, err, out)
		}
	}

	cmd = exec.Command(exe, "-h")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("-h: %v", err)
	}
	for _, want := range []string{"meterinject go test ./...", "-deps github.com/yuin/goldmark/... go build", "//go:generate meterinject ./...", "-overlay /tmp/o.json", "-model model.csv", "-otlp", "-live", "-shape", "-deps pattern"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-h lacks %q:\n%s", want, out)
		}
	}
}

// buildCommand builds meterinject into a directory of its own.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "meterinject"), ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestGoGenerate: one //go:generate meterinject ./... line at the module's
// root instruments every package, and its summary names them; a line in
// each package names its own package.
func TestGoGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go generate")
	}
	bin := buildCommand(t)
	rt := runtimeDirForTest(t)
	src := "package %s\n\nimport \"fmt\"\n\n// F prints.\nfunc F(x int) int {\n\tfmt.Println(x)\n\treturn x\n}\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"root", map[string]string{
			"gen.go":   "package m\n\n//go:generate meterinject ./...\n",
			"m.go":     fmt.Sprintf(src, "m"),
			"pkg/p.go": fmt.Sprintf(src, "pkg"),
		}, []string{"meterinject: example.com/m/...: 2 packages, 3 files, 2 functions instrumented"}},
		{"each", map[string]string{
			"m.go":     "//go:generate meterinject\n\n" + fmt.Sprintf(src, "m"),
			"pkg/p.go": "//go:generate meterinject\n\n" + fmt.Sprintf(src, "pkg"),
		}, []string{"meterinject: example.com/m: 1 file, 1 function instrumented", "meterinject: example.com/m/pkg: 1 file, 1 function instrumented"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.files["go.mod"] = "module example.com/m\n\ngo " + goLine(t, rt) + "\n"
			for name, b := range c.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644)
			}
			cmd := exec.Command("go", "generate", "./...")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "METER_RUNTIME="+rt, "GOWORK=off")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go generate: %v\n%s", err, out)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.Contains(l, "instrumented") {
					lines = append(lines, l)
				}
			}
			if strings.Join(lines, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("go generate printed\n%s\nwant\n%s", out, strings.Join(c.want, "\n"))
			}
			for _, gen := range []string{"meter_probes_gen.go", "pkg/meter_probes_gen.go"} {
				if _, err := os.Stat(filepath.Join(dir, gen)); err != nil {
					t.Errorf("%s: %v", gen, err)
				}
			}
		})
	}
}

// TestGoSubcommandStatus: meterinject go exits with the go command's
// status; a subcommand it does not run is a usage error.
func TestGoSubcommandStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	exe := filepath.Join(buildCommand(t), "meterinject")
	rt := runtimeDirForTest(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo "+goLine(t, rt)+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.go"), []byte("package p\n\nimport \"fmt\"\n\n// F prints.\nfunc F(x int) int {\n\tfmt.Println(x)\n\treturn x\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestF(t *testing.T) {\n\tif os.Getenv(\"FAIL\") != \"\" {\n\t\tt.Fatal(\"asked to\")\n\t}\n\tF(1)\n}\n"), 0o644)
	status := func(env string, args ...string) (int, string) {
		cmd := exec.Command(exe, append([]string{"-runtime", rt, "-cache", filepath.Join(dir, "..", "cache")}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", env)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := status("FAIL=", "go", "test", "-count=1", "./..."); code != 0 || !strings.Contains(out, "ok  \texample.com/p") {
		t.Errorf("passing tests: exit %d\n%s", code, out)
	}
	if code, out := status("FAIL=1", "go", "test", "-count=1", "./..."); code != 1 || !strings.Contains(out, "asked to") {
		t.Errorf("failing tests: exit %d, want 1\n%s", code, out)
	}
	if code, out := status("", "go", "generate", "./..."); code != 2 || !strings.Contains(out, "go generate") {
		t.Errorf("go generate: exit %d, want 2\n%s", code, out)
	}
	if code, out := status("", "-remove", "go", "build", "."); code != 1 || !strings.Contains(out, "-remove") {
		t.Errorf("-remove go build: exit %d, want 1\n%s", code, out)
	}
}
