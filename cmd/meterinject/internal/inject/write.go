package inject

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// change is one file's new content; nil content deletes the file.
type change struct {
	path string
	old  []byte // nil if the file does not exist
	new  []byte
}

// plan computes every file's new content. Nothing is written.
func plan(o *Options, jobs []*pkgJob) []change {
	var cs []change
	for _, j := range jobs {
		for _, g := range j.groups {
			for _, fj := range g.files {
				var out []byte
				if o.Remove {
					out = fj.src
				} else {
					out = instrument(fj, o.shape())
				}
				if !bytes.Equal(out, fj.orig) {
					cs = append(cs, change{path: fj.path, old: fj.orig, new: out})
				}
			}
			gen := filepath.Join(j.dir, g.genFile)
			old, err := os.ReadFile(gen)
			if err != nil {
				old = nil
			}
			var new []byte
			if !o.Remove {
				new = g.generated(o)
			}
			if !bytes.Equal(old, new) || (old == nil) != (new == nil) {
				cs = append(cs, change{path: gen, old: old, new: new})
			}
		}
		// A generated file of a group that has no files left.
		if o.Remove {
			for _, name := range []string{genFiles[""], genFiles["test"], genFiles["xtest"]} {
				p := filepath.Join(j.dir, name)
				if old, err := os.ReadFile(p); err == nil && !hasChange(cs, p) {
					cs = append(cs, change{path: p, old: old})
				}
			}
		}
	}
	return cs
}

func hasChange(cs []change, p string) bool {
	for _, c := range cs {
		if c.path == p {
			return true
		}
	}
	return false
}

func (o *Options) shape() Shape {
	if o.Shape == "" {
		return ShapeEnd
	}
	return o.Shape
}

// apply writes the changes: each file to a temporary file in its directory,
// then renamed over the original, so no file is ever half-written. A path
// that is not a regular file (a symbolic link, a directory, a device) is
// never replaced: that is an error before anything is written.
func apply(cs []change) error {
	for _, c := range cs {
		if err := replaceable(c.path); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if c.new == nil {
			if err := os.Remove(c.path); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := writeAtomic(c.path, c.new); err != nil {
			return err
		}
	}
	return nil
}

// replaceable reports, as an error, why path must not be replaced: it
// exists and is not a regular file.
func replaceable(path string) error {
	st, err := os.Lstat(path)
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		what = "a symbolic link"
	case st.IsDir():
		what = "a directory"
	}
	return fmt.Errorf("%s: %s: meterinject replaces regular files only (through meterinject go or -overlay, nothing of the user's is written)", path, what)
}

// writeAtomic writes data to a temporary file next to path and renames it
// over path; a path that is not a regular file is refused.
func writeAtomic(path string, data []byte) error {
	if err := replaceable(path); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".meterinject-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// printDiff writes a unified diff of the changes, using diff(1).
func printDiff(w io.Writer, cs []change) error {
	tmp, err := os.MkdirTemp("", "meterinject-diff")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for i, c := range cs {
		a, b := filepath.Join(tmp, fmt.Sprint(i, ".old")), filepath.Join(tmp, fmt.Sprint(i, ".new"))
		if err := os.WriteFile(a, c.old, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(b, c.new, 0o644); err != nil {
			return err
		}
		la, lb := c.path, c.path
		if c.old == nil {
			la = "/dev/null"
		}
		if c.new == nil {
			lb = "/dev/null"
		}
		out, _ := exec.Command("diff", "-u", "--label", la, "--label", lb, a, b).Output()
		w.Write(out)
	}
	return nil
}
