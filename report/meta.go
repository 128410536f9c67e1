package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/schema"
)

// readMeta reads a .meta file: one "key: value" per line. Blank lines
// and lines starting with # are skipped; any other line without a colon
// is an error. Keys are kept in file order, unknown ones included.
func readMeta(r io.Reader, name string) ([]Field, error) {
	var fields []Field
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // roots may make a long line
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(text, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fileErr(name, line, "%q: want key: value", text)
		}
		fields = append(fields, Field{Key: k, Value: strings.TrimSpace(v), Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, &FileError{File: name, Err: err}
	}
	return fields, nil
}

// applyMeta takes the process times and the entry probes from the .meta
// fields, where the runtime wrote them.
func (m *Model) applyMeta(name string) error {
	var taken, started time.Time
	for _, f := range m.Meta {
		var err error
		switch f.Key {
		case schema.MetaTaken:
			taken, err = time.Parse(time.RFC3339Nano, f.Value)
		case schema.MetaStarted:
			started, err = time.Parse(time.RFC3339Nano, f.Value)
		case schema.MetaCPU, schema.MetaCoreWait:
			var n int64
			if n, err = strconv.ParseInt(f.Value, 10, 64); err != nil || n < 0 {
				return fileErr(name, f.Line, "%s %q is not a whole number of ns", f.Key, f.Value)
			}
			if f.Key == schema.MetaCPU {
				m.CPU = time.Duration(n)
			} else {
				m.CoreWait = time.Duration(n)
			}
		case schema.MetaRoots:
			m.Roots = strings.Fields(f.Value)
		}
		if err != nil {
			return fileErr(name, f.Line, "%s %q is not an RFC 3339 time", f.Key, f.Value)
		}
	}
	if !taken.IsZero() && !started.IsZero() && !taken.Before(started) {
		m.Wall = taken.Sub(started)
	}
	return nil
}

// Extension is one extension of the chain as the .meta file names it.
type Extension struct {
	Name     string // hotspot, budget, ...
	Settings string // "threshold=10000ns inherent=2000ns initial=1000"
}

// ParseExtensions splits the value of the extensions key,
// "hotspot(threshold=10000ns …) budget(percent=10 …)", into its
// extensions. Settings may hold spaces, parentheses and quoted strings (a
// tracepoint's include expression); only spaces outside them separate.
func ParseExtensions(v string) []Extension {
	var exts []Extension
	depth, quoted, start := 0, false, 0
	flush := func(end int) {
		if s := strings.TrimSpace(v[start:end]); s != "" {
			e := Extension{Name: s}
			if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
				e.Name, e.Settings = s[:i], s[i+1:len(s)-1]
			}
			exts = append(exts, e)
		}
		start = end
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ' ' && depth == 0:
			flush(i)
		}
	}
	flush(len(v))
	return exts
}

// Setting returns the value of key=value in an extension's settings.
func (e Extension) Setting(key string) (string, bool) {
	for _, kv := range strings.Fields(e.Settings) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
