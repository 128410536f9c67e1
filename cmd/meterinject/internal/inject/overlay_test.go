package inject

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const panicky = `package main

import "fmt"

func boom(n int) int {
	if n > 2 {
		panic(fmt.Sprint("boom ", n))
	}
	return boom(n+1) + 1
}

func main() {
	fmt.Println(boom(0))
}
`

// TestOverlayPanicLines: through -overlay, in a module that does not
// require the runtime, the program builds, its sources are not written,
// and a panic names the original file and line, disabled or metered.
func TestOverlayPanicLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	work := t.TempDir()
	gomod := "module example.com/panicky\n\ngo 1.26\n"
	os.WriteFile(filepath.Join(work, "go.mod"), []byte(gomod), 0o644)
	os.WriteFile(filepath.Join(work, "main.go"), []byte(panicky), 0o644)
	ov := filepath.Join(t.TempDir(), "overlay.json")
	_, err := Run(&Options{Dir: work, All: true, Overlay: ov, Cache: t.TempDir(), Runtime: repoRoot(t), Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "main.go")); string(b) != panicky {
		t.Fatal("main.go was written")
	}
	if b, _ := os.ReadFile(filepath.Join(work, "go.mod")); string(b) != gomod {
		t.Fatal("go.mod was written")
	}
	if _, err := os.Stat(filepath.Join(work, "meter_probes_gen.go")); err == nil {
		t.Fatal("the generated file was written into the sources")
	}
	exe := filepath.Join(t.TempDir(), "panicky")
	build := exec.Command("go", "build", "-overlay", ov, "-o", exe, ".")
	build.Dir = work
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -overlay: %v\n%s", err, out)
	}
	src := filepath.Join(work, "main.go")
	for _, c := range []struct {
		env          string
		want, absent []string
	}{
		{"METER_ENABLED=false", []string{"main.boom(", src + ":7 "}, []string{"metered__"}},
		{"METER_ENABLED=true", []string{"main.metered__boom(", src + ":7 ", "main.boom(", src + ":5 "}, nil},
	} {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), c.env)
		out, _ := cmd.CombinedOutput()
		s := string(out)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: trace lacks %q:\n%s", c.env, w, s)
			}
		}
		for _, a := range c.absent {
			if strings.Contains(s, a) {
				t.Errorf("%s: trace has %q:\n%s", c.env, a, s)
			}
		}
	}
}
