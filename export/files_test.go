//go:build unix

package export

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeX(path string) error {
	return WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
}

// TestWriteFileNewAndRegular: a new file and a regular one are written, the
// new one with mode 0644 less the umask, the replaced one keeping its mode,
// and no temporary file is left.
func TestWriteFileNewAndRegular(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, name := range []string{"new.csv", "old.csv"} {
		path := filepath.Join(dir, name)
		if name == "old.csv" {
			if err := os.WriteFile(path, []byte("old contents"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := checkPath(path); err != nil {
			t.Fatalf("checkPath(%s): %v", name, err)
		}
		if err := writeX(path); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o640) // 0644 less umask 027
		if name == "old.csv" {
			want = 0o600
		}
		if b, _ := os.ReadFile(path); string(b) != "x" || fi.Mode().Perm() != want {
			t.Errorf("%s: %q, mode %v; want x, %v", name, b, fi.Mode().Perm(), want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestWriteFileThroughSymlink: a link to a regular file writes that file
// and keeps the link; a link to anything else is refused.
func TestWriteFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.csv")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeX(link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "x" {
		t.Errorf("target holds %q", b)
	}
	for name, to := range map[string]string{"dangling": filepath.Join(dir, "nothing"), "todir": dir, "todev": "/dev/null"} {
		l := filepath.Join(dir, name)
		if err := os.Symlink(to, l); err != nil {
			t.Fatal(err)
		}
		for _, f := range []func(string) error{checkPath, writeX} {
			if err := f(l); err == nil || !strings.Contains(err.Error(), l) || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%s: %v; want a refusal naming the path", name, err)
			}
		}
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced", name)
		}
	}
}

// TestWriteFileRefusesOtherKinds: a directory, a device and a FIFO are
// refused, named in the error, and left as they were.
func TestWriteFileRefusesOtherKinds(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for path, kind := range map[string]string{fifo: "a FIFO", sub: "a directory", "/dev/null": "a character device"} {
		before, _ := os.Lstat(path)
		for _, f := range []func(string) error{checkPath, writeX} {
			if err := f(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), kind) {
				t.Errorf("%s: %v; want a refusal naming the path and %q", path, err, kind)
			}
		}
		if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v → %v", path, before.Mode(), after.Mode())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestCheckFileFolders: a missing folder and one that is not writable are
// named, with the user's path and not a temporary file's.
func TestCheckFileFolders(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "m.csv")
	if err := checkPath(missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing folder: %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	path := filepath.Join(file, "m.csv")
	if err := checkPath(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("folder is a file: %v", err)
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	if os.Geteuid() == 0 {
		// Root writes into a mode-0555 folder; sysfs refuses even root.
		ro = "/sys"
	}
	path = filepath.Join(ro, "m.csv")
	err := checkPath(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not writable") || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("read-only folder: %v", err)
	}
}
