package live

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// program is a module in a temporary directory whose main package is
// source, built against this checkout through a replace.
type program struct {
	dir string
	bin string
}

// checkout is the root of the runtime module this test belongs to.
func checkout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func newProgram(t *testing.T, source string) *program {
	t.Helper()
	root := checkout(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go [0-9.]+$`).FindString(string(mod))
	dir := t.TempDir()
	gomod := "module example.com/livetest\n\n" + goLine + "\n\nrequire github.com/meterio/meter v0.0.0\n\nreplace github.com/meterio/meter => " + root + "\n"
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	for name, content := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(source)} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &program{dir: dir, bin: filepath.Join(dir, "prog")}
}

// goCmd runs the go command in the program's module.
func (p *program) goCmd(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// build builds the program, with the race detector if race.
func (p *program) build(t *testing.T, race bool) {
	t.Helper()
	args := []string{"build", "-o", p.bin}
	if race {
		args = append(args, "-race")
	}
	p.goCmd(t, append(args, ".")...)
}

// deps lists the packages the program links.
func (p *program) deps(t *testing.T) map[string]bool {
	t.Helper()
	deps := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(p.goCmd(t, "list", "-deps", ".")))
	for sc.Scan() {
		deps[sc.Text()] = true
	}
	return deps
}
