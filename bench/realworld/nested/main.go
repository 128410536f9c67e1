// Command nested writes an overlay file for go commands that tests start
// inside an instrumented dependency's copy.
//
// meterinject -overlay reaches a dependency through a replace, in the
// overlaid go.mod of the main module, by a copy of the dependency whose
// code imports the runtime. A test that runs the go command in its own
// directory (testify's failfast suite, x/text's linking test) makes that
// copy the main module, whose own go.mod does not require the runtime. For
// each copy, nested adds to meterinject's overlay a go.mod that also
// requires the runtime and replaces it by its directory (and the OTLP
// module, with -otlp), completed by go mod tidy, and its go.sum.
//
// A main module below the runtime's go line cannot build the runtime, so
// that go.mod also raises the copy's go line to -go where it is lower. The
// new overlay is for the nested commands only (run.sh passes it in GOFLAGS,
// and meterinject's on the command line, which wins): the outer test run
// builds the module as a dependency with its own go.mod, at its own
// language version; a nested command compiles it at -go, as after the
// change a user makes before instrumenting in place. The copies themselves
// are not written: they belong to meterinject's cache.
//
//	nested -overlay in.json -runtime DIR -out DIR -go 1.22 [-otlp] > out.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/version"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	runtimeModule = "github.com/meterio/meter"
	otlpModule    = runtimeModule + "/otlp"
	// zeroVersion is the version meterinject requires the runtime at: the
	// replace gives it a directory.
	zeroVersion = "v0.0.0-00010101000000-000000000000"
)

func main() {
	in := flag.String("overlay", "", "the overlay file meterinject wrote")
	rt := flag.String("runtime", "", "the runtime module's directory")
	out := flag.String("out", "", "a directory for the new go.mod and go.sum files")
	otlp := flag.Bool("otlp", false, "also require the OTLP module")
	goLine := flag.String("go", "", "the lowest go line that builds the runtime")
	flag.Parse()
	if *in == "" || *rt == "" || *out == "" || *goLine == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *rt, *out, *goLine, *otlp); err != nil {
		fmt.Fprintln(os.Stderr, "nested:", err)
		os.Exit(1)
	}
}

func run(in, rt, out, goLine string, otlp bool) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		return fmt.Errorf("%s: %v", in, err)
	}
	// The main module's overlaid go.mod is the one entry named go.mod
	// whose replacement replaces the runtime.
	var mainMod, mainSum string
	var copies []string
	for from, to := range ov.Replace {
		if filepath.Base(from) != "go.mod" || to == "" {
			continue
		}
		reps, err := replaces(to)
		if err != nil {
			return err
		}
		if _, ok := reps[runtimeModule]; !ok {
			continue
		}
		mainMod, mainSum = from, ov.Replace[filepath.Join(filepath.Dir(from), "go.sum")]
		for path, dir := range reps {
			if path != runtimeModule && path != otlpModule && filepath.IsAbs(dir) {
				copies = append(copies, dir)
			}
		}
	}
	if mainMod == "" {
		return fmt.Errorf("%s: no overlaid go.mod requires the runtime", in)
	}
	sort.Strings(copies)
	var sums []byte
	if mainSum != "" {
		if sums, err = os.ReadFile(mainSum); err != nil {
			return err
		}
	}
	for i, c := range copies {
		dir := filepath.Join(out, strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		mod, err := os.ReadFile(filepath.Join(c, "go.mod"))
		if err != nil {
			return err
		}
		gm := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(gm, mod, 0o644); err != nil {
			return err
		}
		args := []string{"mod", "edit",
			"-require=" + runtimeModule + "@" + zeroVersion, "-replace=" + runtimeModule + "=" + rt}
		if l := modGoLine(mod); version.Compare("go"+l, "go"+goLine) < 0 {
			args = append(args, "-go="+goLine)
		}
		if otlp {
			args = append(args, "-require="+otlpModule+"@"+zeroVersion, "-replace="+otlpModule+"="+filepath.Join(rt, "otlp"))
		}
		if o, err := exec.Command("go", append(args, gm)...).CombinedOutput(); err != nil {
			return fmt.Errorf("go mod edit %s: %v: %s", gm, err, o)
		}
		own, _ := os.ReadFile(filepath.Join(c, "go.sum"))
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), union(own, sums), 0o644); err != nil {
			return err
		}
		if err := tidy(c, dir); err != nil {
			return err
		}
		ov.Replace[filepath.Join(c, "go.mod")] = gm
		ov.Replace[filepath.Join(c, "go.sum")] = filepath.Join(dir, "go.sum")
	}
	b, err = json.MarshalIndent(ov, "", "\t")
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(b, '\n'))
	return err
}

// replaces gives the replace directives of a go.mod file: module path →
// replacement path.
func replaces(gomod string) (map[string]string, error) {
	o, err := exec.Command("go", "mod", "edit", "-json", gomod).Output()
	if err != nil {
		return nil, fmt.Errorf("go mod edit -json %s: %v", gomod, err)
	}
	var m struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(o, &m); err != nil {
		return nil, err
	}
	r := map[string]string{}
	for _, x := range m.Replace {
		if x.New.Version == "" {
			r[x.Old.Path] = x.New.Path
		}
	}
	return r, nil
}

// tidy completes the go.mod and go.sum in dir, made for the module copy
// c, as go mod tidy does in a scratch copy of c. If tidy fails, they stay
// as they are, and the nested commands report what they lack.
func tidy(c, dir string) error {
	scratch := filepath.Join(dir, "scratch")
	if err := copyTree(c, scratch); err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if err := copyModFiles(dir, scratch); err != nil {
		return err
	}
	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if o, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "nested: go mod tidy in a copy of %s: %v: %s", c, err, o)
		return nil
	}
	return copyModFiles(scratch, dir)
}

// copyModFiles copies go.mod and go.sum from the directory from to to.
func copyModFiles(from, to string) error {
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies the directories and regular files under from to to.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		}
		return nil
	})
}

// modGoLine gives the go line of a go.mod file's text; 1.16 without one,
// as the go command reads it.
func modGoLine(mod []byte) string {
	for _, l := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "go" {
			return f[1]
		}
	}
	return "1.16"
}

// union gives the lines of a, then those of b that a lacks.
func union(a, b []byte) []byte {
	have := map[string]bool{}
	var buf bytes.Buffer
	for _, src := range [][]byte{a, b} {
		for _, l := range strings.Split(string(src), "\n") {
			if l == "" || have[l] {
				continue
			}
			have[l] = true
			buf.WriteString(l + "\n")
		}
	}
	return buf.Bytes()
}
