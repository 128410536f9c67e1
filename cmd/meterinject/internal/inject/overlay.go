package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

const runtimeModule = "github.com/meterio/meter"

// overlay writes instrumented copies and the overlay file. Packages of the
// main module are overlaid file by file. A dependency module is copied to
// our cache, instrumented there in place, and reached through a replace in
// an overlaid go.mod: Go refuses overlays beneath GOMODCACHE.
func overlay(o *Options, jobs []*pkgJob) error {
	gomod, err := goEnv(o.Dir, "GOMOD")
	if err != nil {
		return err
	}
	if gomod == "" || gomod == os.DevNull {
		return errors.New("-overlay needs a module: no go.mod found")
	}
	modRoot := filepath.Dir(gomod)
	rt, err := runtimeDir(o)
	if err != nil {
		return err
	}
	cache := o.Cache
	if cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(c, "meterinject")
	}
	h := sha256.Sum256([]byte(modRoot))
	key := hex.EncodeToString(h[:8])
	work := filepath.Join(cache, "overlay", key)
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	replace := map[string]string{}
	// Dependency modules: copy, then instrument the copy in place.
	deps := map[string]string{} // module path → copy
	for _, j := range jobs {
		if j.module == nil || j.module.Main {
			continue
		}
		m := j.module
		if m.Replace != nil {
			m = m.Replace
		}
		cp, ok := deps[j.module.Path]
		if !ok {
			cp = filepath.Join(cache, "mod", strings.ReplaceAll(j.module.Path, "/", "_")+"@"+j.module.Version)
			if err := os.RemoveAll(cp); err != nil {
				return err
			}
			if err := copyTree(m.Dir, cp); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(cp, "go.mod")); err != nil {
				if err := os.WriteFile(filepath.Join(cp, "go.mod"), []byte("module "+j.module.Path+"\n"), 0o644); err != nil {
					return err
				}
			}
			deps[j.module.Path] = cp
		}
		rebase := func(p string) string {
			rel, err := filepath.Rel(m.Dir, p)
			if err != nil {
				return p
			}
			return filepath.Join(cp, rel)
		}
		j.dir = rebase(j.dir)
		for _, g := range j.groups {
			for _, fj := range g.files {
				fj.path = rebase(fj.path)
			}
		}
	}
	var mainJobs, depJobs []*pkgJob
	for _, j := range jobs {
		if j.module == nil || j.module.Main {
			mainJobs = append(mainJobs, j)
		} else {
			depJobs = append(depJobs, j)
		}
	}
	if err := apply(plan(o, depJobs)); err != nil {
		return err
	}
	for _, c := range plan(o, mainJobs) {
		if c.new == nil {
			replace[c.path] = ""
			continue
		}
		rel, err := filepath.Rel(modRoot, c.path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Join("_abs", c.path)
		}
		dst := filepath.Join(work, "src", rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, c.new, 0o644); err != nil {
			return err
		}
		replace[c.path] = dst
	}
	if err := overlayGoMod(o, modRoot, rt, work, deps, replace); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"Replace": replace}, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(o.Overlay, append(data, '\n'))
}

// overlayGoMod writes a go.mod and go.sum that require the runtime, replace
// it by its local directory, and replace each instrumented dependency by
// its copy; go list -mod=mod completes them, in a scratch module.
func overlayGoMod(o *Options, modRoot, rt, work string, deps map[string]string, replace map[string]string) error {
	mod := filepath.Join(work, "mod")
	if err := os.MkdirAll(filepath.Join(mod, "meterstub"), 0o755); err != nil {
		return err
	}
	src, err := os.ReadFile(filepath.Join(modRoot, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), src, 0o644); err != nil {
		return err
	}
	sum, _ := os.ReadFile(filepath.Join(modRoot, "go.sum"))
	rtSum, _ := os.ReadFile(filepath.Join(rt, "go.sum"))
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), append(sum, rtSum...), 0o644); err != nil {
		return err
	}
	// Relative replacements are relative to the user's module root.
	var cur struct {
		Replace []struct {
			Old struct{ Path, Version string }
			New struct{ Path, Version string }
		}
	}
	out, err := goCmd(mod, "mod", "edit", "-json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, &cur); err != nil {
		return err
	}
	args := []string{"mod", "edit"}
	for _, r := range cur.Replace {
		if r.New.Version == "" && (strings.HasPrefix(r.New.Path, "./") || strings.HasPrefix(r.New.Path, "../")) {
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			args = append(args, "-replace="+old+"="+filepath.Join(modRoot, r.New.Path))
		}
	}
	if modPath(src) != runtimeModule {
		args = append(args, "-require="+runtimeModule+"@v0.0.0-00010101000000-000000000000",
			"-replace="+runtimeModule+"="+rt)
	}
	for p, cp := range deps {
		args = append(args, "-replace="+p+"="+cp)
	}
	if _, err := goCmd(mod, args...); err != nil {
		return err
	}
	stub := "package meterstub\n\nimport _ \"" + runtimeModule + "/probe\"\n"
	if err := os.WriteFile(filepath.Join(mod, "meterstub", "stub.go"), []byte(stub), 0o644); err != nil {
		return err
	}
	if _, err := goCmd(mod, "list", "-mod=mod", "-deps", "./meterstub"); err != nil {
		return err
	}
	replace[filepath.Join(modRoot, "go.mod")] = filepath.Join(mod, "go.mod")
	replace[filepath.Join(modRoot, "go.sum")] = filepath.Join(mod, "go.sum")
	return nil
}

func modPath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "module ") {
			return strings.Trim(strings.TrimSpace(l[len("module "):]), `"`)
		}
	}
	return ""
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, msg)
	}
	return out, nil
}

func goEnv(dir, name string) (string, error) {
	out, err := goCmd(dir, "env", name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// runtimeDir finds the runtime module's directory: -runtime, then
// $METER_RUNTIME, then the module this binary was built from (its source
// path, when built without -trimpath), then the module around the current
// directory.
func runtimeDir(o *Options) (string, error) {
	isRuntime := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		return err == nil && modPath(b) == runtimeModule
	}
	var tried []string
	for _, d := range []string{o.Runtime, os.Getenv("METER_RUNTIME")} {
		if d != "" {
			if isRuntime(d) {
				return filepath.Abs(d)
			}
			return "", fmt.Errorf("%s: not the %s module", d, runtimeModule)
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		// This file is cmd/meterinject/internal/inject/overlay.go in a
		// checkout of the runtime.
		d := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))))
		if isRuntime(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	if gomod, err := goEnv(o.Dir, "GOMOD"); err == nil && gomod != "" {
		for d := filepath.Dir(gomod); ; d = filepath.Dir(d) {
			if isRuntime(d) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the %s module (tried %v): give its directory with -runtime", runtimeModule, tried)
}

// copyTree copies a module directory, writable.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
