package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meterio/meter/schema"
)

// Row is one probe of the performance model, as the CSV holds it. Times
// are nanoseconds.
type Row struct {
	Probe         string
	Count         int64 // calls (a disabled or budget row: up to where it was switched off)
	Total         int64 // inclusive time of those calls; 0 for an untimed row
	Avg           int64
	InherentTotal int64 // inclusive minus the timed callees nested directly in it
	InherentAvg   int64
	Min           int64
	Max           int64
	Label         string // "", one of schema's Label constants, or a label from a newer runtime
}

// Field is one "key: value" line of the .meta file, in file order.
type Field struct {
	Key, Value string
	Line       int // in the file, for errors; 0 when not read from a file
}

// Spread is the standard deviation of one probe's metered firings, in ns,
// from the .stats file, and how many firings were metered when the file
// says (a sampled probe's count is an estimate of all its firings).
type Spread struct {
	Inclusive, Inherent float64
	Metered             int64    // 0: not given; the count is the number metered
	TimeIn              []string // an untimed or disabled row: the probes whose own time holds its time
	Waited              int64    // ns of stretches of its own time left out because its goroutine parked in them
}

// Model is what a page shows and what compare reads: the rows of one
// performance model and what is known beside them. Everything but Rows is
// optional.
type Model struct {
	Name    string            // where it came from: a file name, or "live"
	Rows    []Row             // in the model's order: largest inherent total first
	Meta    []Field           // the .meta file, or the live chain's state
	Spreads map[string]Spread // by probe; nil when there is no .stats file
	Roots   []string          // entry probes (units of work), when known
	Wall    time.Duration     // the process's wall time when the model was taken; 0: unknown
	CPU     time.Duration     // the process's CPU time (user and system) then; 0: unknown
	// CoreWait is the time the process's threads had waited for a core
	// then (core_wait_ns): wall time holds it, and so do own times, where
	// it fell; 0: none, or unknown.
	CoreWait time.Duration
	Profile  *Profile // the pprof export, when there is one
	Refresh  int      // seconds between reloads of a live page; 0: none
}

// MetaValue returns the value of key in the .meta fields, and whether the
// key is there.
func (m *Model) MetaValue(key string) (string, bool) {
	for _, f := range m.Meta {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// FileError is an error in one of the files a model is read from. It
// prints as "file:line: message", or "file: message" when it is not about
// one line.
type FileError struct {
	File string
	Line int // 1-based; 0 when the error is about the whole file
	Err  error
}

// Error prints "file:line: message".
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the error without the file and line.
func (e *FileError) Unwrap() error { return e.Err }

func fileErr(file string, line int, format string, args ...any) error {
	return &FileError{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}

// defaultProfilePath returns where the runtime's pprof export of a model
// usually is: next to the CSV, with the extension .pprof (model.csv →
// model.pprof).
func defaultProfilePath(csvPath string) string {
	return strings.TrimSuffix(csvPath, filepath.Ext(csvPath)) + ".pprof"
}

// LoadModel reads the model CSV at path and its sidecars: path+".meta"
// and path+".stats". A missing sidecar is not an error; one that cannot be
// parsed is. Process times and entry probes come from the .meta keys
// started, cpu_ns and roots when it has them.
func LoadModel(path string) (*Model, error) {
	m := &Model{Name: path}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathErr(path, err)
	}
	m.Rows, err = ReadModel(f, path)
	f.Close()
	if err != nil {
		return nil, err
	}
	if f, err := openSidecar(path + schema.MetaSuffix); err != nil {
		return nil, err
	} else if f != nil {
		m.Meta, err = readMeta(f, path+schema.MetaSuffix)
		f.Close()
		if err != nil {
			return nil, err
		}
		if err := m.applyMeta(path + schema.MetaSuffix); err != nil {
			return nil, err
		}
	}
	if f, err := openSidecar(path + schema.StatsSuffix); err != nil {
		return nil, err
	} else if f != nil {
		m.Spreads, err = readStats(f, path+schema.StatsSuffix)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Load is LoadModel and the pprof profile. profilePath names the
// profile; when it is empty, the profile beside the model (model.csv → model.pprof) is read if it exists. A
// profile named explicitly must be there.
func Load(path, profilePath string) (*Model, error) {
	m, err := LoadModel(path)
	if err != nil {
		return nil, err
	}
	explicit := profilePath != ""
	if !explicit {
		profilePath = defaultProfilePath(path)
	}
	pf, err := os.Open(profilePath)
	switch {
	case err == nil:
		m.Profile, err = ReadProfile(pf)
		pf.Close()
		if err != nil {
			return nil, &FileError{File: profilePath, Err: err}
		}
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return nil, pathErr(profilePath, err)
	}
	return m, nil
}

// openSidecar opens a file that may be missing: (nil, nil) when it is.
func openSidecar(path string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, pathErr(path, err)
	}
	return f, nil
}

// pathErr names the file once: an *fs.PathError already carries the path.
func pathErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &FileError{File: path, Err: err}
}

// Timed reports whether the row has times of its own: it is not untimed,
// and some call of it was timed.
func (r *Row) Timed() bool { return r.Label != schema.LabelUntimed && r.Count > 0 }
