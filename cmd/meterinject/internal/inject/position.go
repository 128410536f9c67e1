package inject

import (
	"bytes"
	"go/ast"
	"sort"
	"strconv"
	"strings"
)

// A lineBase is what one line directive of a file sets, as the compiler
// reads it (cmd/compile/internal/syntax: a //line comment at column 1, a
// /*line */ comment anywhere; the text is read from the back, so a file
// name may hold colons).
type lineBase struct {
	at   int    // offset of the first byte the directive applies to
	file string // the file name as written; "" with col > 0: inherited
	line int
	col  int // 0: the column is unknown until the next directive
}

// lines answers, for any offset of one file's original text, the position
// the compiler gives that byte: file, line and column, with the line
// directives the file already holds.
type lines struct {
	src   []byte
	bases []lineBase // by at
	nl    []int      // offsets of '\n'
}

func newLines(src []byte, f *ast.File) *lines {
	l := &lines{src: src}
	for i, b := range src {
		if b == '\n' {
			l.nl = append(l.nl, i)
		}
	}
	if f == nil {
		return l
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			off := int(c.Slash - f.FileStart)
			if off < 0 || off >= len(src) {
				continue
			}
			if b, ok := l.parseDirective(off, c.Text); ok {
				l.bases = append(l.bases, b)
			}
		}
	}
	sort.SliceStable(l.bases, func(a, b int) bool { return l.bases[a].at < l.bases[b].at })
	return l
}

// parseDirective reads a comment at off as the compiler does.
func (l *lines) parseDirective(off int, text string) (lineBase, bool) {
	var b lineBase
	var body string
	switch {
	case strings.HasPrefix(text, "//line "):
		if off > 0 && l.src[off-1] != '\n' {
			return b, false // //line directives start a line
		}
		body = strings.TrimSuffix(text[len("//line "):], "\r")
		nl := bytes.IndexByte(l.src[off:], '\n')
		if nl < 0 {
			return b, false
		}
		b.at = off + nl + 1
	case strings.HasPrefix(text, "/*line "):
		if strings.Contains(text, "\n") {
			return b, false
		}
		body = strings.TrimSuffix(text[len("/*line "):], "*/")
		b.at = off + len(text)
	default:
		return b, false
	}
	i, n, ok := trailingNumber(body)
	if i < 0 || !ok {
		return b, false
	}
	if i2, n2, ok2 := trailingNumber(body[:i]); i2 >= 0 && ok2 {
		if n == 0 || n2 == 0 {
			return b, false
		}
		b.line, b.col, b.file = n2, n, body[:i2]
		return b, true
	}
	if n == 0 {
		return b, false
	}
	b.line, b.file = n, body[:i]
	return b, true
}

// trailingNumber splits "text:N": the index of the colon, N, and whether
// N is a number; -1 without a colon.
func trailingNumber(s string) (int, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return -1, 0, false
	}
	n, err := strconv.ParseUint(s[i+1:], 10, 30)
	return i, int(n), err == nil
}

// physical returns the 1-based line and column of off in the text itself.
func (l *lines) physical(off int) (line, col int) {
	i := sort.SearchInts(l.nl, off) // newlines before off
	start := 0
	if i > 0 {
		start = l.nl[i-1] + 1
	}
	return i + 1, off - start + 1
}

// pos is a position as the compiler reports it. file is set only where
// the column is unknown: such a position comes from a directive that
// names its file (see spec).
type pos struct {
	file      string
	line, col int // col 0: unknown
}

// at returns the compiler's position of the byte at off.
func (l *lines) at(off int) pos {
	i := sort.Search(len(l.bases), func(i int) bool { return l.bases[i].at > off }) - 1
	pl, pc := l.physical(off)
	if i < 0 {
		return pos{line: pl, col: pc}
	}
	b := l.bases[i]
	bl, bc := l.physical(b.at)
	p := pos{line: b.line + pl - bl}
	if b.col == 0 {
		p.file = b.file
		return p
	}
	p.col = pc
	if pl == bl {
		p.col = b.col + pc - bc
	}
	return p
}

// spec is the text of a directive that gives p to the byte after it,
// shifted back by back columns (the directive then names a byte that
// precedes the one at p). Where the column is known, the file name is
// left out, so the directive keeps the file name in force (the file's
// own, or an earlier directive's), as the original byte had it; where it
// is unknown, it must be written out.
func (p pos) spec(back int) string {
	if p.col == 0 {
		return p.file + ":" + strconv.Itoa(p.line)
	}
	return ":" + strconv.Itoa(p.line) + ":" + strconv.Itoa(p.col-back)
}

// lineDirective is a //line directive giving the next line's first byte,
// at off in the original text, its position; it ends with a newline.
func (l *lines) lineDirective(off int) string {
	return "//line " + l.at(off).spec(0) + "\n"
}

// prefixDirective is inserted right before the token at off, after
// generated text on the same line: " /*line P*/ ", whose last space
// stands one column before the token. ok is false if the token is in
// the first column, where that space has no column to stand in.
func (l *lines) prefixDirective(off int) (string, bool) {
	p := l.at(off)
	if p.col == 1 {
		return "", false
	}
	return " /*line " + p.spec(1) + "*/ ", true
}

// suffixDirective is inserted after generated text, right before the
// original byte at off that is not a line end: " /*line P*/".
func (l *lines) suffixDirective(off int) string {
	return " /*line " + l.at(off).spec(0) + "*/"
}

// closeDirective returns text to insert at off, right after an original
// token: a directive, then close (generated closing text, such as ")"),
// placed so that the original byte at off keeps its position: " /*line
// P*/)" (gofmt keeps a comment before a closing parenthesis, where it
// would move one placed after it, before a comma). At a line end no
// directive is needed. ok is false where the columns do not allow it.
func (l *lines) closeDirective(off int, close string) (string, bool) {
	if isLineEnd(l.src, off) {
		return close, true
	}
	back := len(close)
	if strings.HasPrefix(close, "( ") {
		// "( /*line P*/ )...": the directive names the blank after it
		back--
		p := l.at(off)
		if p.col != 0 && p.col-back < 1 {
			return "", false
		}
		return "( /*line " + p.spec(back) + "*/" + close[1:], true
	}
	p := l.at(off)
	if p.col != 0 && p.col-back < 1 {
		return "", false
	}
	return " /*line " + p.spec(back) + "*/" + close, true
}

// newlineDirective is inserted after generated text, right before the
// original line end at off: "\n//line P", which that line end closes.
// P is the position of the next line's first byte.
func (l *lines) newlineDirective(off int) string {
	next := off + 1
	if l.src[off] == '\r' {
		next++
	}
	return "\n//line " + l.at(next).spec(0)
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// atLineStart reports whether only blanks precede off on its line.
func atLineStart(src []byte, off int) bool {
	for i := off - 1; i >= 0 && src[i] != '\n'; i-- {
		if src[i] != ' ' && src[i] != '\t' {
			return false
		}
	}
	return true
}

// isLineEnd reports whether off starts a line end ("\n" or "\r\n").
func isLineEnd(src []byte, off int) bool {
	return off < len(src) && (src[off] == '\n' || src[off] == '\r' && off+1 < len(src) && src[off+1] == '\n')
}

// directiveIn reports whether a line directive lies in src[from:to].
func (l *lines) directiveIn(from, to int) bool {
	for _, b := range l.bases {
		if b.at > from && b.at <= to {
			return true
		}
	}
	return false
}
