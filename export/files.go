package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Every export file (CSV, .meta, pprof) is written the same way, so that a
// reader never sees half a file and nothing but a regular file is ever
// replaced:
//
//   - the path must name a regular file, nothing yet, or a symbolic link
//     to a regular file (which is then written, and the link kept); a
//     directory, a device, a FIFO, a socket or a link to anything else is
//     refused;
//   - the file is written to a new temporary file in the same folder,
//     created with mode 0644 less the umask, given the permissions of the
//     file it replaces, if any, then renamed over the path.
//
// checkPath applies the first rule when exports start, and also finds a
// folder that is missing or not writable, so that the user hears of a bad
// path once, at start, rather than at every write.

// checkPath reports why path cannot take an export file, or nil. It
// creates and removes a temporary file in the folder to learn whether it
// is writable. Errors name the path as given.
func checkPath(path string) error {
	target, err := resolve(path)
	if err != nil {
		return err
	}
	f, tmp, err := createTemp(target)
	if err != nil {
		return fileError(path, target, err)
	}
	f.Close()
	os.Remove(tmp)
	return nil
}

// WriteFile writes a file the way every export does (see checkPath):
// write to a temporary file in the same folder, then rename it over path,
// so a reader never sees half a file. A path that is not a regular file,
// nor a link to one, is refused and left alone. Errors name the path.
func WriteFile(path string, write func(io.Writer) error) error {
	target, err := resolve(path)
	if err != nil {
		return err
	}
	f, tmp, err := createTemp(target)
	if err != nil {
		return fileError(path, target, err)
	}
	err = write(f)
	if fi, serr := os.Stat(target); err == nil && serr == nil {
		err = f.Chmod(fi.Mode().Perm()) // a replaced file keeps its permissions
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Once more, right before the rename: the path may have changed
		// since resolve, and only a regular file may be replaced.
		if fi, lerr := os.Lstat(target); lerr == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("it is now %s, not a regular file", kind(fi.Mode()))
		} else {
			err = os.Rename(tmp, target)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// resolve returns the file to write for path: path itself, or the regular
// file a symbolic link points at. Anything else is an error.
func resolve(path string) (string, error) {
	if path == "" {
		return "", errors.New("no path given")
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	case err != nil:
		return "", fileError(path, path, err)
	case fi.Mode().IsRegular():
		return path, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", fmt.Errorf("cannot write %s: a symbolic link that does not point at a regular file (%v)", path, err)
		}
		if ti, err := os.Stat(target); err != nil || !ti.Mode().IsRegular() {
			return "", fmt.Errorf("cannot write %s: a symbolic link to %s, which is not a regular file", path, target)
		}
		return target, nil
	default:
		return "", fmt.Errorf("cannot write %s: it is %s, not a regular file", path, kind(fi.Mode()))
	}
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + m.String() + ")"
}

// createTemp creates a new file beside target, with mode 0644 less the
// umask (the kernel applies it), under a name nobody else uses.
func createTemp(target string) (*os.File, string, error) {
	dir, base := filepath.Split(target)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64()>>16, 36))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", errors.New("cannot find a free temporary name")
}

// fileError explains why a temporary file could not be made beside
// target, naming the user's path, not the temporary file's.
func fileError(path, target string, err error) error {
	dir := filepath.Dir(target)
	fi, serr := os.Stat(dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: the folder %s does not exist", path, dir)
	case serr == nil && !fi.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a folder", path, dir)
	case errors.Is(err, fs.ErrPermission) || readOnlyFS(err):
		return fmt.Errorf("cannot write %s: the folder %s is not writable", path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the temporary file's name means nothing to the user
	}
	return fmt.Errorf("cannot write %s: %w", path, err)
}
