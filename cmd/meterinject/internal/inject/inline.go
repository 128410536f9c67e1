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
	"strconv"
	"strings"
)

// inlineSet holds the positions (file:line:col) where the compiler said
// "can inline".
type inlineSet map[string]bool

func posKey(file string, line, col int) string {
	return file + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col)
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
		pp := fj.fset.Position(p)
		if in[posKey(fj.path, pp.Line, pp.Column)] {
			return true
		}
	}
	return false
}

// inlinable builds the packages with -gcflags=-m and collects what the
// compiler can inline. Instrumented files are seen through an overlay of
// their stripped text, so a second run decides as the first did.
func inlinable(o *Options, jobs []*pkgJob) (inlineSet, error) {
	set := inlineSet{}
	tmp, err := os.MkdirTemp("", "meterinject-inl")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	replace := map[string]string{}
	var paths, testPaths []string
	n := 0
	for _, j := range jobs {
		paths = append(paths, j.path)
		hasTests := false
		for _, g := range j.groups {
			hasTests = hasTests || g.kind != ""
			if _, err := os.Stat(filepath.Join(j.dir, g.genFile)); err == nil {
				replace[filepath.Join(j.dir, g.genFile)] = ""
			}
			for _, fj := range g.files {
				if !bytes.Equal(fj.src, fj.orig) {
					n++
					p := filepath.Join(tmp, strconv.Itoa(n)+".go")
					if err := os.WriteFile(p, fj.src, 0o644); err != nil {
						return nil, err
					}
					replace[fj.path] = p
				}
			}
		}
		if hasTests {
			testPaths = append(testPaths, j.path)
		}
	}
	if len(paths) == 0 {
		return set, nil
	}
	args := []string{"build", "-gcflags=-m"}
	if len(replace) > 0 {
		ov, _ := json.Marshal(map[string]any{"Replace": replace})
		p := filepath.Join(tmp, "overlay.json")
		if err := os.WriteFile(p, ov, 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-overlay", p)
	}
	run := func(args []string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir = o.Dir
		out, err := cmd.CombinedOutput()
		dir := o.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		parseInline(out, dir, replace, set)
		if err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run(append(args, paths...)); err != nil {
		return nil, err
	}
	for _, p := range testPaths {
		a := append([]string{"test", "-c", "-o", os.DevNull}, args[1:]...)
		if err := run(append(a, p)); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// parseInline reads "file:line:col: can inline F" lines.
func parseInline(out []byte, dir string, replace map[string]string, set inlineSet) {
	back := map[string]string{}
	for k, v := range replace {
		back[v] = k
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, ": can inline ")
		if i < 0 {
			continue
		}
		pos := line[:i]
		// file:line:col
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
			file = filepath.Join(dir, file)
		}
		if orig, ok := back[file]; ok {
			file = orig
		}
		l, err1 := strconv.Atoi(pos[c1+1 : c2])
		c, err2 := strconv.Atoi(pos[c2+1:])
		if err1 != nil || err2 != nil {
			continue
		}
		set[posKey(file, l, c)] = true
	}
}
