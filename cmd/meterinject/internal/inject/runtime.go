package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

const runtimeModule = "github.com/meterio/meter"

// runtimeInfo is the runtime module instrumented code will be built with.
type runtimeInfo struct {
	dir    string // its directory
	goLine string // its go line
	inMod  bool   // found as a requirement of the user's module
}

// findRuntime locates the runtime. In place, the module the user's go.mod
// requires wins (that is what the build will use); then, as for -overlay,
// -runtime, $METER_RUNTIME, the checkout this binary was built from, and
// the module around the current directory. In place, a runtime that
// cannot be found is not an error: the checks that need it are skipped,
// with one line saying so.
func findRuntime(o *Options) (*runtimeInfo, error) {
	if o.Overlay == "" && o.Runtime == "" {
		if dir, ok := requiredRuntime(o.Dir); ok {
			return readRuntime(dir, true)
		}
	}
	dir, err := runtimeDir(o)
	if err != nil {
		if o.Overlay == "" {
			fmt.Fprintf(o.Stderr, "meterinject: %v; the go line and import-cycle checks are skipped\n", err)
			return nil, nil
		}
		return nil, err
	}
	return readRuntime(dir, false)
}

func readRuntime(dir string, inMod bool) (*runtimeInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	line, err := goLineOf(filepath.Join(dir, "go.mod"), b)
	if err != nil {
		return nil, err
	}
	return &runtimeInfo{dir: dir, goLine: line, inMod: inMod}, nil
}

// requiredRuntime returns the directory of the runtime module that the
// module around dir requires, if it does.
func requiredRuntime(dir string) (string, bool) {
	out, err := goCmd(dir, "list", "-m", "-json", runtimeModule)
	if err != nil {
		return "", false
	}
	var m struct{ Dir string }
	if json.Unmarshal(out, &m) != nil || m.Dir == "" {
		return "", false
	}
	return m.Dir, true
}

// goLineOf returns a go.mod's go line; a go.mod without one is go 1.16
// to the go command.
func goLineOf(path string, b []byte) (string, error) {
	f, err := modfile.ParseLax(path, b, nil)
	if err != nil {
		return "", err
	}
	if f.Go == nil {
		return "1.16", nil
	}
	return f.Go.Version, nil
}

// imports returns the packages that instrumented programs link from the
// runtime: probe, the engine, and the exports asked for (-otlp, -live),
// with what they import. Instrumenting one of them would make an import
// cycle (or fire probes inside the runtime), so they are left out, with
// the reason.
func (rt *runtimeInfo) imports(o *Options) (map[string]string, error) {
	why := "the runtime imports it; instrumenting it would make an import cycle"
	out := map[string]string{}
	list := func(dir string, pkgs ...string) error {
		b, err := goCmd(dir, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
		if err != nil {
			return err
		}
		for _, p := range strings.Fields(string(b)) {
			if !isRuntime(p) {
				out[p] = why
			}
		}
		return nil
	}
	pkgs := []string{probePkg, enginePkg}
	if o.Live {
		pkgs = append(pkgs, livePkg)
	}
	if err := list(rt.dir, pkgs...); err != nil {
		if o.Live {
			return nil, fmt.Errorf("-live: the runtime at %s lacks %s, or does not build: %v", rt.dir, livePkg, err)
		}
		return nil, fmt.Errorf("the runtime at %s does not build: %v", rt.dir, err)
	}
	if o.OTLP {
		if err := list(filepath.Join(rt.dir, "otlp"), "."); err != nil {
			return nil, fmt.Errorf("-otlp: the runtime at %s lacks the module %s, or it does not build: %v", rt.dir, otlpPkg, err)
		}
	}
	return out, nil
}

// hintRequire tells the user, in one line, what to run when the module
// instrumented in place cannot build the generated files yet: it does
// not require the runtime, or its go.sum lacks the runtime's
// requirements. It never shows the go command's own error.
func hintRequire(o *Options, rt *runtimeInfo) {
	pkgs := []string{probePkg, enginePkg}
	if o.OTLP {
		pkgs = append(pkgs, otlpPkg)
	}
	if o.Live {
		pkgs = append(pkgs, livePkg)
	}
	out, err := goCmd(o.Dir, append([]string{"list", "-e", "-deps", "-f", "{{with .Error}}{{.Err}}{{end}}"}, pkgs...)...)
	if err != nil {
		return
	}
	msg := string(out)
	local := "a copy of it"
	if rt != nil {
		local = rt.dir
	}
	switch {
	case strings.Contains(msg, "no required module provides"), strings.Contains(msg, "is not in std"), strings.Contains(msg, "cannot find module"):
		fmt.Fprintf(o.Stderr, "meterinject: the module does not require %s yet: run `go mod edit -require=%s@v0.0.0 -replace=%s=%s && go mod tidy` before building\n",
			runtimeModule, runtimeModule, runtimeModule, local)
	case strings.Contains(msg, "missing go.sum entry"), strings.Contains(msg, "updates to go.mod needed"):
		fmt.Fprintf(o.Stderr, "meterinject: the module requires %s but is not tidy: run `go mod tidy` before building\n", runtimeModule)
	}
}

// moduleError turns the go command's errors about a module's
// requirements into what to run.
func moduleError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "missing go.sum entry"), strings.Contains(msg, "updates to go.mod needed"):
		return errors.New("the module is not tidy (its go.sum or go.mod lacks requirements of the packages to instrument): run `go mod tidy`, then meterinject again")
	case strings.Contains(msg, "no required module provides package"):
		return errors.New("the module does not require every package its code imports: run `go mod tidy`, then meterinject again")
	}
	return err
}

// runtimeDir finds the runtime module's directory: -runtime, then
// $METER_RUNTIME, then the module this binary was built from (its source
// path, when built without -trimpath), then the module around the current
// directory.
func runtimeDir(o *Options) (string, error) {
	isRuntimeDir := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		return err == nil && modPath(b) == runtimeModule
	}
	var tried []string
	for _, d := range []string{o.Runtime, os.Getenv("METER_RUNTIME")} {
		if d != "" {
			if isRuntimeDir(d) {
				return filepath.Abs(d)
			}
			return "", fmt.Errorf("%s: not the %s module", d, runtimeModule)
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		// This file is cmd/meterinject/internal/inject/runtime.go in a
		// checkout of the runtime.
		d := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))))
		if isRuntimeDir(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	if gomod, err := goEnv(o.Dir, "GOMOD"); err == nil && gomod != "" {
		for d := filepath.Dir(gomod); ; d = filepath.Dir(d) {
			if isRuntimeDir(d) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the %s module (tried %v): give its directory with -runtime", runtimeModule, tried)
}
