package inject

import (
	"bytes"
	"errors"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/version"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// Go lines.
//
// The runtime declares the lowest go line it can, but a main module may
// declare a lower one, or none (go 1.16 to the go command). Building the
// runtime needs its line, and a higher line changes what the module's code
// means: loop variables per iteration from go 1.22, and the GODEBUG
// defaults (panic(nil), timers, http.ServeMux patterns, TLS and x509
// settings) of the new line. So meterinject raises the go line only as far
// as the runtime needs, and keeps the rest as it was:
//
//   - each .go file of the module (instrumented or not: generated, cgo,
//     test files, files for other platforms) gets a header whose
//     //go:build constraint gives the file its old language version (since
//     Go 1.21 a file's constraint sets its version, also downward; the type
//     checker takes go1.21 for anything older, which keeps loop variables
//     per loop), ANDed with the file's own constraint, whose lines are
//     disabled where they stand. A //line directive after the header gives
//     the file's first line its number back, so positions stay the user's
//     and //line directives of the file keep their meaning;
//   - go.mod gets a godebug default=go1.N line: the GODEBUG defaults of
//     the old line;
//   - below go 1.17, whose module graphs were not pruned, go.mod also
//     requires every module of the old build list at the version it had, so
//     that graph pruning selects the same versions.
//
// Every line meterinject adds to go.mod carries "meterinject:" in its
// comment, and the raised go line the text it replaced, so -remove (and the
// next run) can give go.mod back; the header of a source file is
// recognised by its //meter:lang line.

// The header's marker: the line before its //line directive.
const (
	langMarker    = "//meter:lang "
	langMarkerEnd = " (meterinject: the module's go line before it was raised)"
	langMarkerSep = " (meterinject: the module's go line before it was raised; the // above is meterinject's)"
)

// headerTop matches the first lines of a header: the constraint, a blank
// line.
var headerTop = regexp.MustCompile(`^//go:build [^\n]*\n\n`)

// headerMarker matches the marker and the //line directive after it.
var headerMarker = regexp.MustCompile(`(?m)^//meter:lang go[0-9][^\n]*\n//line [^\n]*\n`)

const bom = "\ufeff"

// langTag is the build tag of a go line: "1.21.3" → "go1.21".
func langTag(line string) string {
	return version.Lang("go" + line)
}

// constraintLines finds the build constraint lines of src as go/build
// reads them: the //go:build line, before the first line of code, and the
// // +build lines, in the leading run of comments that a blank line ends.
// It returns the offsets of their first bytes (after blanks), and the
// //go:build line's.
func constraintLines(src []byte) (goBuild int, plus []int, goBuildText string, plusText []string) {
	goBuild = -1
	end := 0
	ended, inSlashStar := false, false
	type line struct {
		off  int
		text string
	}
	var cand []line
	for off := 0; off < len(src); {
		raw := src[off:]
		next := len(src)
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw, next = raw[:i], off+i+1
		}
		lead := len(raw) - len(bytes.TrimLeft(raw, " \t\r"))
		l := bytes.TrimSpace(raw)
		if len(l) == 0 && !ended {
			end = next
			off = next
			continue
		}
		if !bytes.HasPrefix(l, []byte("//")) {
			ended = true
		}
		if !inSlashStar && !ended && isGoBuildLine(l) {
			if goBuild < 0 {
				goBuild, goBuildText = off+lead, string(l)
			}
		}
		if !inSlashStar && bytes.HasPrefix(l, []byte("//")) && constraint.IsPlusBuild(string(l)) {
			cand = append(cand, line{off + lead, string(l)})
		}
		rest := l
		stop := false
	comments:
		for len(rest) > 0 {
			if inSlashStar {
				if i := bytes.Index(rest, []byte("*/")); i >= 0 {
					inSlashStar = false
					rest = bytes.TrimSpace(rest[i+2:])
					continue comments
				}
				break comments
			}
			if bytes.HasPrefix(rest, []byte("//")) {
				break comments
			}
			if bytes.HasPrefix(rest, []byte("/*")) {
				inSlashStar = true
				rest = bytes.TrimSpace(rest[2:])
				continue comments
			}
			stop = true
			break comments
		}
		if stop {
			break
		}
		off = next
	}
	for _, c := range cand {
		if c.off < end {
			plus = append(plus, c.off)
			plusText = append(plusText, c.text)
		}
	}
	return goBuild, plus, goBuildText, plusText
}

func isGoBuildLine(l []byte) bool {
	if !bytes.HasPrefix(l, []byte("//go:build")) {
		return false
	}
	rest := l[len("//go:build"):]
	return len(rest) == 0 || len(bytes.TrimSpace(rest)) < len(rest)
}

// The disabled forms of a file's own constraint lines: //go:build X
// becomes //meter:go:build X, and // +build X becomes //meter: -build X
// (no "+build" left, which vet would take for a misplaced constraint).
const (
	disabledGoBuild = "//meter:go:build"
	disabledPrefix  = "//meter:"
)

// addHeader gives src, a file of a module whose go line was lang, its
// language version back: see the comment at the top of this file. path
// is for errors.
//
// The header is gofmt-clean where the file was: the constraint comes
// first, followed by a blank line (gofmt's place for it); the marker and
// the //line directive follow, or, where the file starts with its package
// doc comment, they end that comment, after a "//" line (gofmt moves
// directives to the end of a doc comment).
func addHeader(path string, src []byte, lang string) ([]byte, error) {
	body := src
	lead := ""
	if bytes.HasPrefix(body, []byte(bom)) {
		body, lead = body[len(bom):], bom
	}
	gb, plus, gbText, plusText := constraintLines(body)
	var own constraint.Expr
	switch {
	case gb >= 0:
		x, err := constraint.Parse(gbText)
		if err != nil {
			return nil, posError(path, body, gb, "parsing //go:build line: "+err.Error())
		}
		own = x
	default:
		for _, t := range plusText {
			x, err := constraint.Parse(t)
			if err != nil {
				continue // ignored by the go command too
			}
			if own == nil {
				own = x
			} else {
				own = &constraint.AndExpr{X: own, Y: x}
			}
		}
	}
	var x constraint.Expr = &constraint.TagExpr{Tag: langTag(lang)}
	if own != nil {
		x = &constraint.AndExpr{X: x, Y: own}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, body, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	ls := newLines(body, f)
	// Where the marker and the //line directive go, and what that
	// directive says.
	at, sep := 0, false
	line := ls.lineDirective(0)
	if lead != "" {
		line = "//line :1:" + strconv.Itoa(1+len(bom)) + "\n" // the compiler counts the BOM's bytes
	}
	if d := f.Doc; d != nil && fset.Position(d.Pos()).Line == 1 && strings.HasPrefix(d.List[0].Text, "//") {
		end := fset.Position(d.End()).Offset
		at = len(body)
		if i := bytes.IndexByte(body[end:], '\n'); i >= 0 {
			at = end + i + 1
		}
		text, last := false, false
		for _, c := range d.List {
			last = isDocDirective(c.Text)
			text = text || !last
		}
		sep = text && !last
		if at < len(body) {
			line = ls.lineDirective(at)
		}
	}
	var b bytes.Buffer
	b.WriteString(lead)
	b.WriteString("//go:build " + x.String() + "\n\n")
	insert := func() {
		if sep {
			b.WriteString("//\n" + langMarker + langTag(lang) + langMarkerSep + "\n")
		} else {
			b.WriteString(langMarker + langTag(lang) + langMarkerEnd + "\n")
		}
		b.WriteString(line)
	}
	if at == 0 {
		insert()
	}
	// The file's own constraint lines, disabled; the marker at its place.
	offs := append([]int{}, plus...)
	if gb >= 0 {
		offs = append(offs, gb)
	}
	sort.Ints(offs)
	last := 0
	inserted := at == 0
	for _, off := range offs {
		if !inserted && at <= off {
			b.Write(body[last:at])
			insert()
			last, inserted = at, true
		}
		b.Write(body[last:off])
		if off == gb {
			b.WriteString(disabledGoBuild)
			last = off + len("//go:build")
			continue
		}
		// "//" then blanks then "+build": keep the blanks, drop the '+'.
		i := bytes.Index(body[off:], []byte("+build"))
		b.WriteString(disabledPrefix + string(body[off+2:off+i]) + "-")
		last = off + i + 1
	}
	if !inserted {
		b.Write(body[last:at])
		insert()
		last = at
	}
	b.Write(body[last:])
	return b.Bytes(), nil
}

// isDocDirective reports whether a comment line is a directive to gofmt's
// doc comment formatting (go/printer's isDirective).
func isDocDirective(c string) bool {
	c, ok := strings.CutPrefix(c, "//")
	if !ok {
		return false
	}
	if strings.HasPrefix(c, "line ") || strings.HasPrefix(c, "extern ") || strings.HasPrefix(c, "export ") {
		return true
	}
	colon := strings.Index(c, ":")
	if colon <= 0 || colon+1 >= len(c) {
		return false
	}
	for i := 0; i <= colon+1; i++ {
		if i == colon {
			continue
		}
		if b := c[i]; !('a' <= b && b <= 'z' || '0' <= b && b <= '9') {
			return false
		}
	}
	return true
}

// stripHeader takes out the header addHeader wrote, and enables the file's
// own constraint lines again. ok is false if src has no header.
func stripHeader(src []byte) ([]byte, bool) {
	body, lead := src, []byte(nil)
	if bytes.HasPrefix(body, []byte(bom)) {
		body, lead = body[len(bom):], []byte(bom)
	}
	top := headerTop.Find(body)
	if top == nil {
		return src, false
	}
	m := headerMarker.FindIndex(body[len(top):])
	if m == nil {
		return src, false
	}
	from, to := len(top)+m[0], len(top)+m[1]
	marker, _, _ := strings.Cut(string(body[from:to]), "\n")
	switch {
	case strings.HasSuffix(marker, langMarkerSep):
		if !bytes.HasSuffix(body[:from], []byte("\n//\n")) {
			return src, false
		}
		from -= len("//\n")
	case strings.HasSuffix(marker, langMarkerEnd):
	default:
		return src, false
	}
	rest := append(append([]byte{}, body[len(top):from]...), body[to:]...)
	var b bytes.Buffer
	b.Write(lead)
	// The disabled lines are in the leading comments.
	off := 0
	for off < len(rest) {
		next := len(rest)
		if i := bytes.IndexByte(rest[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		l := rest[off:next]
		t := bytes.TrimLeft(l, " \t")
		indent := l[:len(l)-len(t)]
		trimmed := bytes.TrimSpace(t)
		switch {
		case bytes.HasPrefix(t, []byte(disabledGoBuild)):
			b.Write(indent)
			b.WriteString("//go:build")
			b.Write(t[len(disabledGoBuild):])
		case bytes.HasPrefix(t, []byte(disabledPrefix)) && bytes.HasPrefix(bytes.TrimLeft(t[len(disabledPrefix):], " \t"), []byte("-build")):
			r := t[len(disabledPrefix):]
			blanks := r[:len(r)-len(bytes.TrimLeft(r, " \t"))]
			b.Write(indent)
			b.WriteString("//")
			b.Write(blanks)
			b.WriteString("+")
			b.Write(r[len(blanks)+1:])
		case len(trimmed) == 0 || bytes.HasPrefix(trimmed, []byte("//")):
			b.Write(l)
		default:
			b.Write(rest[off:])
			return b.Bytes(), true
		}
		off = next
	}
	return b.Bytes(), true
}

// posError is an error at byte off of src.
func posError(path string, src []byte, off int, msg string) error {
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := off - (bytes.LastIndexByte(src[:off], '\n') + 1) + 1
	return &PosError{Pos: token.Position{Filename: path, Line: line, Column: col}, Msg: msg}
}

// go.mod

// The comments that mark what meterinject changed in a go.mod.
const (
	modAdded    = "// meterinject: added"
	modIndirect = "// indirect; meterinject: added"
	modWas      = " // meterinject: was "
)

// goLineOfMod returns a go.mod's go line, and whether it has none (then
// "1.16", as the go command reads it).
func goLineOfMod(path string, b []byte) (string, bool, error) {
	f, err := modfile.ParseLax(path, b, nil)
	if err != nil {
		return "", false, err
	}
	if f.Go == nil {
		return "1.16", true, nil
	}
	return f.Go.Version, false, nil
}

// plainGoMod returns go.mod as it was before meterinject raised its go
// line: the lines it added deleted, the go line it replaced restored.
func plainGoMod(path string, b []byte) ([]byte, error) {
	if !bytes.Contains(b, []byte("meterinject: ")) {
		return b, nil
	}
	var out bytes.Buffer
	for off := 0; off < len(b); {
		next := len(b)
		if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		l := b[off:next]
		body := strings.TrimRight(string(l), "\r\n")
		eol := string(l[len(body):])
		switch {
		case strings.HasSuffix(body, " "+modAdded), strings.HasSuffix(body, " "+modIndirect):
			// Added: dropped. Added as the last line, without a line end,
			// it followed a last line that had none.
			if eol == "" {
				t := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
				t = bytes.TrimSuffix(t, []byte("\r"))
				out.Truncate(len(t))
			}
		case strings.HasPrefix(strings.TrimSpace(body), "go ") && strings.Contains(body, modWas):
			q := body[strings.Index(body, modWas)+len(modWas):]
			orig, err := strconv.Unquote(q)
			if err != nil {
				return nil, fmt.Errorf("%s: %v: cannot read the go line meterinject replaced: %s", path, 1+bytes.Count(b[:off], []byte("\n")), body)
			}
			out.WriteString(orig + eol)
		default:
			out.Write(l)
		}
		off = next
	}
	return out.Bytes(), nil
}

// raiseGoMod returns plain (a go.mod without meterinject's lines) with its
// go line raised to need, its GODEBUG defaults kept, and, from below go
// 1.17, keep required (the old build list: see keepVersions).
func raiseGoMod(path string, plain []byte, need string, keep []string) ([]byte, error) {
	f, err := modfile.ParseLax(path, plain, nil)
	if err != nil {
		return nil, err
	}
	old := "1.16"
	if f.Go != nil {
		old = f.Go.Version
	}
	var lines []string
	// After the line it replaces or follows: (from, to) is what goes.
	from, to := 0, 0
	switch {
	case f.Go != nil:
		start := f.Go.Syntax.Start.Byte
		from = bytes.LastIndexByte(plain[:start], '\n') + 1
		to = len(plain)
		if i := bytes.IndexByte(plain[start:], '\n'); i >= 0 {
			to = start + i
		}
		orig := strings.TrimSuffix(string(plain[from:to]), "\r")
		lines = append(lines, "go "+need+modWas+strconv.Quote(orig))
	case f.Module != nil:
		end := f.Module.Syntax.End.Byte
		from = len(plain)
		if i := bytes.IndexByte(plain[end:], '\n'); i >= 0 {
			from = end + i + 1
		}
		to = from
		lines = append(lines, "go "+need+" "+modAdded)
	default:
		return nil, fmt.Errorf("%s: no module line", path)
	}
	lines = append(lines, "godebug default="+langTag(old)+" "+modAdded)
	for _, k := range keep {
		lines = append(lines, "require "+k+" "+modIndirect)
	}
	var b bytes.Buffer
	b.Write(plain[:from])
	rest := plain[to:]
	if from == len(plain) && from > 0 && plain[from-1] != '\n' {
		// After a last line without a line end: the added lines are last,
		// the last of them without one, as plainGoMod expects.
		b.WriteString("\n" + strings.Join(lines, "\n"))
		return b.Bytes(), nil
	}
	if f.Go != nil {
		// rest starts with the replaced line's end, if it had one.
		if len(rest) == 0 {
			b.WriteString(strings.Join(lines, "\n"))
			return b.Bytes(), nil
		}
		// rest starts with the '\n' of the replaced line's end.
		eol := "\n"
		if to > 0 && plain[to-1] == '\r' {
			eol = "\r\n"
		}
		b.WriteString(strings.Join(lines, eol) + strings.TrimSuffix(eol, "\n"))
		b.Write(rest)
		return b.Bytes(), nil
	}
	b.WriteString(strings.Join(lines, "\n") + "\n")
	b.Write(rest)
	return b.Bytes(), nil
}

// goLines is what a run does to the main module's go line.
type goLines struct {
	raise bool     // the module's line is below need
	need  string   // the runtime's go line, or its OTLP module's with -otlp
	lang  string   // the module's own line
	keep  []string // "path version" to require, from below go 1.17
}

// planGoLines compares the main module's go line with what the runtime
// needs.
func planGoLines(o *Options, rt *runtimeInfo, mod *mainModule) (*goLines, error) {
	if mod == nil {
		return nil, nil
	}
	need := rt.goLine
	if o.OTLP {
		if ob, err := os.ReadFile(filepath.Join(rt.dir, "otlp", "go.mod")); err == nil {
			if l, err := goLineOf("otlp/go.mod", ob); err == nil && version.Compare("go"+l, "go"+need) > 0 {
				need = l
			}
		}
	}
	l := &goLines{need: need, lang: mod.line}
	if version.Compare("go"+mod.line, "go"+need) >= 0 {
		return l, nil
	}
	l.raise = true
	if version.Compare("go"+mod.line, "go1.17") < 0 {
		keep, err := keepVersions(mod)
		if err != nil {
			return nil, err
		}
		l.keep = keep
	}
	return l, nil
}

// keepVersions returns "path version" for each module of the build list
// of mod's go.mod as the user wrote it (a go line below 1.17: the whole
// module graph) that go.mod does not require at that version already.
// Required, they keep their versions under graph pruning.
func keepVersions(mod *mainModule) ([]string, error) {
	tmp, err := os.MkdirTemp("", "meterinject-mod")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	alt := filepath.Join(tmp, "go.mod")
	if err := os.WriteFile(alt, mod.plain, 0o644); err != nil {
		return nil, err
	}
	if sum, err := os.ReadFile(filepath.Join(mod.root, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(tmp, "go.sum"), sum, 0o644); err != nil {
			return nil, err
		}
	}
	// The runtime, required since, was not in the old build list, and
	// its go line is above the old one.
	if _, err := goCmd(tmp, "mod", "edit", "-droprequire="+runtimeModule, "-dropreplace="+runtimeModule,
		"-droprequire="+otlpPkg, "-dropreplace="+otlpPkg, alt); err != nil {
		return nil, err
	}
	out, err := goCmd(mod.root, "list", "-modfile="+alt, "-m", "-f", "{{if not .Main}}{{.Path}} {{.Version}}{{end}}", "all")
	if err != nil {
		return nil, fmt.Errorf("%s says go %s: listing its build list, to keep its versions under the go line the runtime needs: %v",
			filepath.Join(mod.root, "go.mod"), mod.line, moduleError(err))
	}
	f, err := modfile.ParseLax("go.mod", mod.plain, nil)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, r := range f.Require {
		have[r.Mod.Path+" "+r.Mod.Version] = true
	}
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !have[l] && strings.Count(l, " ") == 1 {
			keep = append(keep, l)
		}
	}
	sort.Strings(keep)
	return keep, nil
}

// goMod returns the go.mod text the run gives the main module: raised, or
// as the user wrote it.
func (l *goLines) goMod(o *Options, mod *mainModule) ([]byte, error) {
	if l == nil || !l.raise || o.Remove {
		return mod.plain, nil
	}
	return raiseGoMod(filepath.Join(mod.root, "go.mod"), mod.plain, l.need, l.keep)
}

// changes completes cs, the changes of a run (in place or for an
// overlay), with the headers of every .go file of the module: added where
// the go line is raised, taken out where it is not (or no longer). A
// -remove run takes them out only if no instrumentation is left in the
// module. With withGoMod, go.mod's change is among them (in place; an
// overlay gets its own go.mod: see goMod).
func (l *goLines) changes(o *Options, mod *mainModule, cs []change, withGoMod bool) ([]change, error) {
	raise := l != nil && l.raise && !o.Remove
	if !raise && string(mod.plain) == string(mod.gomod) {
		return cs, nil // never raised: no header to take out
	}
	files, err := moduleGoFiles(mod.root)
	if err != nil {
		return nil, err
	}
	if o.Remove {
		left, err := instrumentationLeft(mod, files, cs)
		if err != nil || left {
			return cs, err
		}
	}
	idx := map[string]int{}
	for i, c := range cs {
		idx[c.path] = i
	}
	var errs []error
	for _, p := range files {
		i, planned := idx[p]
		var cur []byte
		if planned {
			if cs[i].new == nil {
				continue
			}
			cur = cs[i].new
		} else if cur, err = os.ReadFile(p); err != nil {
			errs = append(errs, err)
			continue
		}
		want, _ := stripHeader(cur)
		if raise {
			if want, err = addHeader(p, want, l.lang); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if planned {
			cs[i].new = want
		} else if !bytes.Equal(want, cur) {
			cs = append(cs, change{path: p, old: cur, new: want})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if withGoMod {
		gm, err := l.goMod(o, mod)
		if err != nil {
			return nil, err
		}
		cs = append(cs, change{path: filepath.Join(mod.root, "go.mod"), old: mod.gomod, new: gm})
	}
	// Files whose header made them what they were.
	out := cs[:0]
	for _, c := range cs {
		if c.old == nil || c.new == nil || !bytes.Equal(c.old, c.new) {
			out = append(out, c)
		}
	}
	return out, nil
}

// instrumentationLeft reports whether the module holds instrumentation
// once cs is applied: a registration file, or an instrumented file.
func instrumentationLeft(mod *mainModule, files []string, cs []change) (bool, error) {
	after := map[string]*change{}
	for i := range cs {
		after[cs[i].path] = &cs[i]
	}
	for _, p := range mod.pkgs {
		dir := dirOf(p)
		for _, g := range genFiles {
			path := filepath.Join(dir, g)
			if c, ok := after[path]; ok && c.new == nil {
				continue
			}
			if fileExists(path) {
				return true, nil
			}
		}
	}
	for _, p := range files {
		var b []byte
		if c, ok := after[p]; ok {
			b = c.new
		} else {
			var err error
			if b, err = os.ReadFile(p); err != nil {
				return false, err
			}
		}
		if instrumented(b) {
			return true, nil
		}
	}
	return false, nil
}
