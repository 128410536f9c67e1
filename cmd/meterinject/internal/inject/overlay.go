package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// cacheDir returns the directory of instrumented copies: -cache, or the
// user cache dir's meterinject.
func cacheDir(o *Options) (string, error) {
	cache := o.Cache
	if cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(c, "meterinject")
	}
	return filepath.Abs(cache)
}

// hashOf names content in the cache.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// storeFile writes data to <cache>/files/<hash>/name, unless it is there.
func storeFile(cache, name string, data []byte) (string, error) {
	dir := filepath.Join(cache, "files", hashOf(name, string(data)))
	p := filepath.Join(dir, name)
	if b, err := os.ReadFile(p); err == nil && string(b) == string(data) {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return p, writeAtomic(p, data)
}

// depModule is a dependency module with instrumented packages.
type depModule struct {
	path, version, dir string
	local              bool     // a directory, not a version
	changes            []change // of its instrumented packages
}

// copyDeps makes, for each dependency module, an instrumented copy under
// <cache>/mod/<path>@<version>-<hash>, where the hash covers the module's
// identity and every file meterinject changes in it. It returns module
// path → copy. Copies are content-addressed too: never changed once
// complete.
func copyDeps(cache string, mods []*depModule) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range mods {
		parts := []string{m.path, m.version}
		if m.local {
			// A directory, not an immutable version: its files count.
			sum, err := treeHash(m.dir)
			if err != nil {
				return nil, err
			}
			parts = append(parts, m.dir, sum)
		}
		sort.Slice(m.changes, func(a, b int) bool { return m.changes[a].path < m.changes[b].path })
		for _, c := range m.changes {
			rel, err := filepath.Rel(m.dir, c.path)
			if err != nil {
				return nil, err
			}
			parts = append(parts, rel, string(c.new))
		}
		name := strings.ReplaceAll(m.path, "/", "_") + "@" + m.version + "-" + hashOf(parts...)
		dst := filepath.Join(cache, "mod", name)
		out[m.path] = dst
		if fileExists(filepath.Join(dst, ".meterinject-complete")) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dst), name+".tmp-")
		if err != nil {
			return nil, err
		}
		if err := fillCopy(m.dir, tmp, m.path, m.changes); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.RemoveAll(tmp) // another run made the same copy meanwhile
			if !fileExists(filepath.Join(dst, ".meterinject-complete")) {
				return nil, err
			}
		}
	}
	return out, nil
}

// fillCopy copies a module into dir, applies the changes (paths under
// from), gives it a go.mod if it had none, and marks it complete.
func fillCopy(from, dir, path string, changes []change) error {
	if err := copyTree(from, dir); err != nil {
		return err
	}
	for _, c := range changes {
		rel, _ := filepath.Rel(from, c.path)
		p := filepath.Join(dir, rel)
		if c.new == nil {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.WriteFile(p, c.new, 0o644); err != nil {
			return err
		}
	}
	if !fileExists(filepath.Join(dir, "go.mod")) {
		// The go command reads a module without go.mod as go 1.16; so
		// does it a go.mod without a go line.
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+path+"\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, ".meterinject-complete"), nil, 0o644)
}

// treeHash hashes the names and contents of the files under dir.
func treeHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%d:%s%d:", len(rel), rel, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// overlayGoMod makes the go.mod and go.sum the overlay gives the main
// module, from src (the user's go.mod, its go line raised where the
// runtime needs it: goLines): they require the runtime (and, with -otlp,
// its OTLP module), replace it by its directory, and replace each
// instrumented dependency by its copy; go list -mod=mod completes them in
// a scratch module. If completing them would raise the go line further,
// that is an error.
func overlayGoMod(o *Options, cache string, mm *mainModule, src []byte, rt string, deps map[string]string, replace map[string]string) error {
	modRoot := mm.root
	userLine, err := goLineOf("go.mod", src)
	if err != nil {
		return err
	}
	if modPath(src) == runtimeModule && len(deps) == 0 {
		// The runtime's own workloads (bench/adversarial): the module
		// holds the runtime and needs nothing more.
		return nil
	}
	if err := os.MkdirAll(filepath.Join(cache, "tmp"), 0o755); err != nil {
		return err
	}
	mod, err := os.MkdirTemp(filepath.Join(cache, "tmp"), "gomod-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mod)
	if err := os.MkdirAll(filepath.Join(mod, "meterstub"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), src, 0o644); err != nil {
		return err
	}
	sum, _ := os.ReadFile(filepath.Join(modRoot, "go.sum"))
	rtSum, _ := os.ReadFile(filepath.Join(rt, "go.sum"))
	if o.OTLP {
		otlpSum, _ := os.ReadFile(filepath.Join(rt, "otlp", "go.sum"))
		rtSum = append(rtSum, otlpSum...)
	}
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
	imports := []string{probePkg, enginePkg}
	if modPath(src) != runtimeModule {
		args = append(args, "-require="+runtimeModule+"@v0.0.0-00010101000000-000000000000",
			"-replace="+runtimeModule+"="+rt)
		if o.Live {
			imports = append(imports, livePkg)
		}
		if o.OTLP {
			// The otlp module's own programs need no requirement of it
			// (one would have the go command look for the main module
			// among its requirements, for ever).
			if modPath(src) != otlpPkg {
				args = append(args, "-require="+otlpPkg+"@v0.0.0-00010101000000-000000000000",
					"-replace="+otlpPkg+"="+filepath.Join(rt, "otlp"))
				imports = append(imports, otlpPkg)
			}
		}
	}
	for p, cp := range deps {
		args = append(args, "-replace="+p+"="+cp)
	}
	if _, err := goCmd(mod, args...); err != nil {
		return err
	}
	var stub strings.Builder
	stub.WriteString("package meterstub\n\nimport (\n")
	for _, p := range imports {
		stub.WriteString("\t_ \"" + p + "\"\n")
	}
	stub.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(mod, "meterstub", "stub.go"), []byte(stub.String()), 0o644); err != nil {
		return err
	}
	if _, err := goCmd(mod, "list", "-mod=mod", "-deps", "./meterstub"); err != nil {
		return fmt.Errorf("completing the overlaid go.mod: %w", err)
	}
	gm, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	if err != nil {
		return err
	}
	gs, err := os.ReadFile(filepath.Join(mod, "go.sum"))
	if err != nil {
		return err
	}
	if l, err := goLineOf("go.mod", gm); err != nil || l != userLine {
		return fmt.Errorf("%s: completing the overlaid go.mod raised its go line from %s to %s: a requirement of the runtime (%s) needs a higher go line than the runtime declares", filepath.Join(modRoot, "go.mod"), userLine, l, rt)
	}
	if replace[filepath.Join(modRoot, "go.mod")], err = storeFile(cache, "go.mod", gm); err != nil {
		return err
	}
	if replace[filepath.Join(modRoot, "go.sum")], err = storeFile(cache, "go.sum", gs); err != nil {
		return err
	}
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
