package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// GoCommands are the go subcommands that meterinject go runs
// instrumented.
var GoCommands = []string{"build", "test", "run", "install", "vet"}

// goValueFlags are the go command's flags (build, test and vet) that take
// a value as the next argument when written without "=".
var goValueFlags = map[string]bool{
	"o": true, "p": true, "asmflags": true, "buildmode": true, "compiler": true, "gccgoflags": true,
	"gcflags": true, "installsuffix": true, "ldflags": true, "mod": true, "modfile": true, "overlay": true,
	"pgo": true, "pkgdir": true, "tags": true, "toolexec": true, "covermode": true, "coverpkg": true,
	"exec": true, "bench": true, "benchtime": true, "blockprofile": true, "blockprofilerate": true,
	"count": true, "coverprofile": true, "cpu": true, "cpuprofile": true, "fuzz": true,
	"fuzzminimizetime": true, "fuzztime": true, "list": true, "memprofile": true, "memprofilerate": true,
	"mutexprofile": true, "mutexprofilefraction": true, "outputdir": true, "parallel": true, "run": true,
	"skip": true, "shuffle": true, "timeout": true, "trace": true, "vet": true, "C": true,
}

// goInvocation is a go command line, as meterinject go reads it.
type goInvocation struct {
	sub     string
	args    []string // the go command's arguments after sub, -overlay taken out
	overlay string   // an -overlay the command line gave
	tags    []string // -tags values
}

// parseGo reads "go [-C dir] sub [flags] [packages] [args]". Flags are read
// up to the first argument that is not one (for test, up to -args): what
// follows is the go command's or the program's.
func parseGo(args []string) (*goInvocation, string, error) {
	if len(args) == 0 || args[0] != "go" {
		return nil, "", errors.New("want go <" + strings.Join(GoCommands, "|") + "> ...")
	}
	args = args[1:]
	dir := ""
	if len(args) >= 2 && args[0] == "-C" {
		dir, args = args[1], args[2:]
	} else if len(args) >= 1 && strings.HasPrefix(args[0], "-C=") {
		dir, args = args[0][len("-C="):], args[1:]
	}
	if len(args) == 0 {
		return nil, "", errors.New("go: want a command: " + strings.Join(GoCommands, ", "))
	}
	g := &goInvocation{sub: args[0]}
	known := false
	for _, c := range GoCommands {
		known = known || c == g.sub
	}
	if !known {
		return nil, "", fmt.Errorf("go %s: meterinject runs go %s only", g.sub, strings.Join(GoCommands, ", go "))
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" || a == "-args" || !strings.HasPrefix(a, "-") || a == "-" {
			if g.sub == "test" && a != "-args" && a != "--" {
				g.args = append(g.args, a) // go test takes flags after packages too
				continue
			}
			g.args = append(g.args, rest[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && goValueFlags[name] && i+1 < len(rest) {
			i++
			value, hasValue = rest[i], true
			a = a + "=" + value
		}
		switch name {
		case "overlay":
			g.overlay = value
			continue
		case "modfile":
			return nil, "", errors.New("go " + g.sub + " -modfile: meterinject go builds with an overlaid go.mod of its own; run it without -modfile")
		case "tags":
			g.tags = append(g.tags, value)
		case "C":
			return nil, "", errors.New("go " + g.sub + ": -C must come first, as in go -C dir " + g.sub)
		}
		g.args = append(g.args, a)
	}
	return g, dir, nil
}

// Go instruments the main module's packages (and deps, more patterns)
// into the cache, then runs the go command g names with the overlay, and
// returns its exit status. Sources, go.mod and go.sum are never written.
func Go(o *Options, deps []string, args []string) (int, error) {
	g, dir, err := parseGo(args)
	if err != nil {
		return 2, err
	}
	if dir != "" {
		if o.Dir, err = filepath.Abs(dir); err != nil {
			return 2, err
		}
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	for _, t := range g.tags {
		o.BuildFlags = append(o.BuildFlags, "-tags="+t)
	}
	gomod, err := goEnv(o.Dir, "GOMOD")
	if err != nil {
		return 1, err
	}
	if gomod == "" || gomod == os.DevNull {
		return 1, errors.New("go " + g.sub + ": no go.mod here or above: meterinject go instruments a module")
	}
	// The user's own overlay: from the command line, or GOFLAGS.
	userOverlay := g.overlay
	goenv, err := goEnvFor(o.Dir)
	if err != nil {
		return 1, err
	}
	for _, f := range strings.Fields(goenv["GOFLAGS"]) {
		if v, ok := strings.CutPrefix(strings.TrimLeft(f, "-"), "overlay="); ok && userOverlay == "" {
			userOverlay = v
		}
	}
	cache, err := cacheDir(o)
	if err != nil {
		return 1, err
	}
	if err := os.MkdirAll(filepath.Join(cache, "tmp"), 0o755); err != nil {
		return 1, err
	}
	tmp, err := os.MkdirTemp(filepath.Join(cache, "tmp"), "run-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(tmp)
	o.Cache = cache
	o.Overlay = filepath.Join(tmp, "overlay.json")
	o.Patterns = append([]string{filepath.Dir(gomod) + string(filepath.Separator) + "..."}, deps...)
	sum, err := Run(o)
	if err != nil {
		return 1, err
	}
	fmt.Fprintln(o.Stderr, sum)
	if userOverlay != "" {
		cwd := o.Dir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		if err := mergeOverlay(o.Overlay, userOverlay, cwd); err != nil {
			return 1, err
		}
	}
	cmd := exec.Command("go", append([]string{g.sub, "-overlay=" + o.Overlay}, g.args...)...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, o.Stdout, o.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	// The go command gets the terminal's signals itself; one sent to
	// meterinject alone is passed on. Either way its status is reported.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			if code := ee.ExitCode(); code > 0 {
				return code, nil
			}
			return 1, nil // ended by a signal
		}
		return 1, err
	}
	return 0, nil
}

// mergeOverlay adds the entries of the user's overlay file to ours (the
// go command takes one overlay: ours, on the command line, wins over
// GOFLAGS). An entry for a file of a package meterinject changed, or for
// the main module's go.mod or go.sum, is refused: meterinject read those
// from disk. Relative paths are relative to cwd, as for the go command.
func mergeOverlay(ours, theirs, cwd string) error {
	read := func(p string) (map[string]string, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &ov); err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		return ov.Replace, nil
	}
	mine, err := read(ours)
	if err != nil {
		return err
	}
	user, err := read(theirs)
	if err != nil {
		return fmt.Errorf("the overlay in GOFLAGS or on the command line: %v", err)
	}
	dirs := map[string]bool{}
	for p := range mine {
		dirs[filepath.Dir(p)] = true
	}
	for p, to := range user {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, p)
		}
		if _, clash := mine[abs]; clash || dirs[filepath.Dir(abs)] && strings.HasSuffix(abs, ".go") {
			return fmt.Errorf("the overlay %s replaces %s, in a package meterinject instruments from the file on disk: build with meterinject -overlay FILE and join the two overlays yourself", theirs, p)
		}
		mine[abs] = to
	}
	data, err := json.MarshalIndent(map[string]any{"Replace": mine}, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(ours, append(data, '\n'))
}
