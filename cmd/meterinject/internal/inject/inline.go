package inject

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// inlineSet holds what the compiler said, by position (file:line:col):
// where a function it "can inline" is declared, and, where it inlined a
// call, the names of the functions it inlined there (the callee, and what
// it inlined into it in turn).
type inlineSet struct {
	can   map[string]bool
	calls map[string]map[string]bool
}

func posKey(file string, line, col int) string {
	return file + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col)
}

func (in inlineSet) key(fj *fileJob, p token.Pos) string {
	pp := fj.fset.PositionFor(p, false)
	return posKey(fj.path, pp.Line, pp.Column)
}

// has reports whether the compiler can inline the function of s. The
// compiler names a function by its name (or a method by its receiver's
// opening parenthesis) and a literal by its func keyword.
func (in inlineSet) has(fj *fileJob, s *site) bool {
	var ps []token.Pos
	if s.decl != nil {
		ps = append(ps, s.decl.Name.Pos())
		if s.decl.Recv != nil {
			ps = append(ps, s.decl.Recv.Opening)
		}
	} else {
		ps = append(ps, s.lit.Type.Func)
	}
	for _, p := range ps {
		if in.can[in.key(fj, p)] {
			return true
		}
	}
	return false
}

// inlinedAt returns the names (the last element: "Lock" for
// sync.(*Mutex).Lock) of the functions the compiler inlined at the call
// whose '(' is at p; nil if it did not inline that call.
func (in inlineSet) inlinedAt(fj *fileJob, p token.Pos) map[string]bool {
	return in.calls[in.key(fj, p)]
}

// lineDirectiveText matches the start of a line directive, which the
// analysis build disables (same length) so that the compiler reports
// positions in the file as it is.
var lineDirectiveText = regexp.MustCompile(`(?m)^//line |/\*line `)

// inlinable compiles the packages with -gcflags=-m (go list -export: no
// linking, nothing written outside the build cache and a temporary
// directory) and collects what the compiler can inline and where it
// inlined calls. The compiler sees each file as the run does: without
// instrumentation and without registration files, and with line
// directives disabled, so that positions are the file's own.
//
// outside is what the compiler must see in place of the main module's
// other packages (analysisOverlay).
//
// It runs in root (the main module's directory, if not ""), so that the
// relative paths of the compiler's report, which the build cache replays
// as they were first written, are relative to the same directory in
// every run.
func inlinable(o *Options, mod *mainModule, jobs []*pkgJob, outside map[string][]byte) (inlineSet, error) {
	root := ""
	if mod != nil {
		root = mod.root
	}
	set := inlineSet{can: map[string]bool{}, calls: map[string]map[string]bool{}}
	tmp, err := os.MkdirTemp("", "meterinject-inl")
	if err != nil {
		return set, err
	}
	defer os.RemoveAll(tmp)
	replace := map[string]string{}
	var paths []string
	n := 0
	for path, b := range outside {
		n++
		p := filepath.Join(tmp, strconv.Itoa(n)+filepath.Ext(path))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return set, err
		}
		replace[path] = p
	}
	for _, j := range jobs {
		paths = append(paths, j.path)
		for _, g := range j.groups {
			if gen := filepath.Join(j.dir, g.genFile); fileExists(gen) {
				n++
				p := filepath.Join(tmp, strconv.Itoa(n)+".go")
				if err := os.WriteFile(p, []byte("package "+g.pkgName+"\n"), 0o644); err != nil {
					return set, err
				}
				replace[gen] = p
			}
			for _, fj := range g.files {
				src := fj.src
				if len(fj.lines.bases) > 0 {
					src = lineDirectiveText.ReplaceAllFunc(bytes.Clone(src), func(m []byte) []byte {
						return bytes.Replace(m, []byte("line "), []byte("lin_ "), 1)
					})
				}
				if !bytes.Equal(src, fj.orig) {
					n++
					p := filepath.Join(tmp, strconv.Itoa(n)+".go")
					if err := os.WriteFile(p, src, 0o644); err != nil {
						return set, err
					}
					replace[fj.path] = p
				}
			}
		}
	}
	if len(paths) == 0 {
		return set, nil
	}
	args := []string{"list", "-e", "-export", "-f", "{{if .Error}}{{.Error}}{{end}}{{range .DepsErrors}}{{.}}{{end}}", "-gcflags=-m"}
	args = append(args, mod.langFlags("-m")...)
	args = append(args, o.BuildFlags...)
	if o.Tests {
		args = append(args, "-test")
	}
	if len(replace) > 0 {
		ov, _ := json.Marshal(map[string]any{"Replace": replace})
		p := filepath.Join(tmp, "overlay.json")
		if err := os.WriteFile(p, ov, 0o644); err != nil {
			return set, err
		}
		args = append(args, "-overlay", p)
	}
	cmd := exec.Command("go", append(args, paths...)...)
	cmd.Dir = o.Dir
	if root != "" {
		cmd.Dir = root
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	dir := cmd.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dirs := map[string]string{}
	for _, j := range jobs {
		dirs[j.path] = j.dir
	}
	parseInline(stderr.Bytes(), dir, dirs, replace, set)
	if err != nil || strings.TrimSpace(stdout.String()) != "" {
		return set, fmt.Errorf("compiling for the inlining analysis (go %s): %v\n%s%s", strings.Join(args, " "), err, stdout.String(), compileErrors(stderr.Bytes()))
	}
	return set, nil
}

// compileErrors keeps the lines of the compiler's output that are not
// -m's reports.
func compileErrors(out []byte) string {
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, ": can inline ") || strings.Contains(l, ": inlining call to ") ||
			strings.Contains(l, "escape") || strings.Contains(l, "leaking param") || strings.HasPrefix(l, "#") ||
			strings.Contains(l, ": devirtualizing ") || strings.Contains(l, "moved to heap") {
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// parseInline reads "file:line:col: can inline F" and "file:line:col:
// inlining call to F" lines. A relative file name is relative to dir,
// where the go command ran, unless the report was replayed from the build
// cache as a run from another directory wrote it: then it names a file of
// the package whose "# path" line precedes it (dirs: by import path).
func parseInline(out []byte, dir string, dirs map[string]string, replace map[string]string, set inlineSet) {
	back := map[string]string{}
	for k, v := range replace {
		back[v] = k
	}
	pkgDir := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "# "); ok {
			p, _, _ = strings.Cut(p, " [")
			pkgDir = dirs[p]
			continue
		}
		callee := ""
		i := strings.Index(line, ": can inline ")
		if i < 0 {
			if i = strings.Index(line, ": inlining call to "); i < 0 {
				continue
			}
			callee = line[i+len(": inlining call to "):]
			if k := strings.LastIndexAny(callee, ".)"); k >= 0 {
				callee = callee[k+1:]
			}
		}
		pos := line[:i]
		c2 := strings.LastIndexByte(pos, ':')
		if c2 < 0 {
			continue
		}
		c1 := strings.LastIndexByte(pos[:c2], ':')
		if c1 < 0 {
			continue
		}
		file := pos[:c1]
		if !filepath.IsAbs(file) {
			rel := file
			file = filepath.Join(dir, rel)
			if pkgDir != "" && !strings.HasPrefix(rel, "..") && !fileExists(file) {
				file = filepath.Join(pkgDir, filepath.Base(rel))
			}
		}
		if orig, ok := back[file]; ok {
			file = orig
		}
		l, err1 := strconv.Atoi(pos[c1+1 : c2])
		c, err2 := strconv.Atoi(pos[c2+1:])
		if err1 != nil || err2 != nil {
			continue
		}
		k := posKey(file, l, c)
		if callee == "" {
			set.can[k] = true
			continue
		}
		if set.calls[k] == nil {
			set.calls[k] = map[string]bool{}
		}
		set.calls[k][callee] = true
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
