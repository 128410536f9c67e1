package inject

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
)

// DefaultSmallMax is the largest loop-free body, in statements, that the
// default selection leaves out as small (see isSmall).
const DefaultSmallMax = 25

// bodyStats counts the statements of a function body (blocks are not
// counted, and function literals are left out: each is a site of its own)
// and reports whether the body can repeat or wait by itself: a for or
// range loop, a goto, a select, a channel send or receive.
func bodyStats(body *ast.BlockStmt) (stmts int, loops bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			return true
		case *ast.ForStmt, *ast.RangeStmt, *ast.SelectStmt, *ast.SendStmt:
			loops = true
		case *ast.BranchStmt:
			if x.Tok == token.GOTO {
				loops = true
			}
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				loops = true
			}
		}
		if _, ok := n.(ast.Stmt); ok {
			stmts++
		}
		return true
	})
	return stmts, loops
}

// isSmall reports whether a body is small: at most max statements and
// nothing that repeats or waits (bodyStats). What such a function does by
// itself is bounded, as for a function the compiler inlines: a probe
// would cost as much as the few statements it measures, and its time
// shows in its caller's inherent time, while what it calls keeps its own
// probes. max < 0 turns the rule off.
func isSmall(body *ast.BlockStmt, max int) bool {
	if max < 0 {
		return false
	}
	n, loops := bodyStats(body)
	return !loops && n <= max
}

func (o *Options) smallMax() int {
	if o.SmallMax == 0 {
		return DefaultSmallMax
	}
	return o.SmallMax
}

// An outCall says what the main path of a body calls beyond the run.
type outCall int

const (
	callsNone outCall = iota // nothing, or only what is instrumented or an inlined leaf
	callsWork                // a function outside the run that never waits (crypto, strconv)
	callsWait                // something that may wait (mayWait), or a dynamic call outside the run
)

// callsOut reports what the body of s, on its main path, calls beyond
// what is instrumented: a function of a package that is not being
// instrumented (the standard library, a driver), unless the compiler
// inlined that call, the callee calls nothing more itself (sources.leaf:
// strings.HasPrefix, not fmt.Println) and its package never waits
// (mayWait); or a method of an interface, or a function value of a named
// type, declared outside the run (dynamicOut), which may do anything,
// wait included. The main path is the body without the branches of its
// if, switch and select statements: what every call runs (conditions
// included). A call in a branch (formatting an error, a rare slow path)
// leaves a small function small. Such a function is not cheap, however
// short: without a probe, the time of what it calls would land in its
// caller. Builtins and conversions do not count. Without type information
// (files built only on other platforms) every call but a builtin's or one
// of a function declared in the package counts, as one that may wait.
func callsOut(j *fileJob, s *site, inSet func(path string) bool, inl inlineSet, src *sources) outCall {
	found := callsNone
	visit := func(c *ast.CallExpr) {
		found = max(found, callOut(j, c, inSet, inl, src))
	}
	ast.Inspect(s.body, func(n ast.Node) bool {
		if found == callsWait {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false // a site of its own
		case *ast.IfStmt:
			// The condition runs every time; the branches are the
			// function's side roads (an error's formatting).
			walkCalls(x.Init, visit)
			walkCalls(x.Cond, visit)
			return false
		case *ast.SwitchStmt:
			walkCalls(x.Init, visit)
			walkCalls(x.Tag, visit)
			return false
		case *ast.TypeSwitchStmt:
			walkCalls(x.Init, visit)
			walkCalls(x.Assign, visit)
			return false
		case *ast.SelectStmt:
			return false
		case *ast.CallExpr:
			visit(x)
		}
		return true
	})
	return found
}

// walkCalls calls visit on each call in n, outside function literals.
func walkCalls(n ast.Node, visit func(*ast.CallExpr)) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(x ast.Node) bool {
		switch y := x.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			visit(y)
		}
		return true
	})
}

func callOut(j *fileJob, c *ast.CallExpr, inSet func(string) bool, inl inlineSet, src *sources) outCall {
	if j.info == nil {
		id, ok := ast.Unparen(c.Fun).(*ast.Ident)
		if !ok {
			return callsWait
		}
		if id.Obj == nil {
			if builtins[id.Name] {
				return callsNone
			}
			return callsWait
		}
		if _, isFunc := id.Obj.Decl.(*ast.FuncDecl); isFunc {
			return callsNone
		}
		return callsWait
	}
	if tv, ok := j.info.Types[c.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return callsNone
	}
	f := staticCallee(j.info, c)
	if f == nil {
		if dynamicOut(j.info, c, inSet) {
			return callsWait
		}
		return callsNone
	}
	switch {
	case f.Pkg() == nil:
		return callsWait
	case inSet(f.Pkg().Path()):
		return callsNone
	case mayWait(f.Pkg().Path()):
		return callsWait
	}
	if names := inl.inlinedAt(j, c.Lparen); names != nil && src.leaf(j.fset, f, names) {
		return callsNone
	}
	return callsWork
}

// inlinedOnly reports whether s, a function the compiler can inline, runs
// only inlined into its callers in the package, which are instrumented or
// pass its time on to theirs: an unexported function (not a method, which
// an interface may call), or an exported one of package main, that the
// package only calls, never uses as a value (values lists those used so).
// Its probe would cost it its inlining: a call, and a frame that each
// copy of a growing goroutine stack walks.
func inlinedOnly(j *fileJob, s *site, values map[string]bool) bool {
	if s.decl == nil || s.decl.Recv != nil || values == nil || j.info == nil {
		return false
	}
	if s.decl.Name.IsExported() && j.file.Name.Name != "main" {
		return false
	}
	f, ok := j.info.Defs[s.decl.Name].(*types.Func)
	return ok && !values[funcKey(f)]
}

// valueFuncs returns the functions of package j that it uses other than
// by calling them: passed, stored, converted, or started by a go
// statement; by funcKey, the same in a package and its test variant. nil
// where a file of j was not type-checked: then nothing is known to run
// only inlined.
func valueFuncs(j *pkgJob) map[string]bool {
	values := map[string]bool{}
	for _, g := range j.groups {
		for _, fj := range g.files {
			if fj.info == nil {
				return nil
			}
			called := map[*ast.Ident]bool{}
			ast.Inspect(fj.file, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id := calledIdent(c.Fun); id != nil {
						called[id] = true
					}
				}
				return true
			})
			for id, obj := range fj.info.Uses {
				if f, ok := obj.(*types.Func); ok && f.Pkg() != nil && f.Pkg().Path() == j.path && !called[id] {
					values[funcKey(f)] = true
				}
			}
		}
	}
	return values
}

// calledIdent returns the identifier a call's function names, through
// parentheses and type arguments: f(x), (f)(x), f[int](x); nil for
// anything else.
func calledIdent(fun ast.Expr) *ast.Ident {
	for {
		switch x := fun.(type) {
		case *ast.ParenExpr:
			fun = x.X
		case *ast.IndexExpr:
			fun = x.X
		case *ast.IndexListExpr:
			fun = x.X
		case *ast.Ident:
			return x
		default:
			return nil
		}
	}
}

// sources reads the bodies of functions outside the run, to see what an
// inlined call brings along.
type sources struct {
	goroot string
	fset   *token.FileSet
	files  map[string]*ast.File // nil: not readable
}

func newSources() *sources {
	root, _ := goEnv("", "GOROOT")
	return &sources{goroot: root, fset: token.NewFileSet(), files: map[string]*ast.File{}}
}

// leaf reports whether the body of f, inlined at a call together with the
// functions named in inlined, calls nothing more: every call in it is a
// builtin, a conversion to a basic type, or one of inlined. An inlined
// wrapper around a real call (fmt.Println around Fprintln) is no leaf.
// A body that cannot be read is no leaf.
func (s *sources) leaf(fset *token.FileSet, f *types.Func, inlined map[string]bool) bool {
	p := fset.Position(f.Pos())
	name := p.Filename
	if rest, ok := strings.CutPrefix(name, "$GOROOT"); ok {
		name = s.goroot + rest
	}
	file, seen := s.files[name]
	if !seen {
		file, _ = parser.ParseFile(s.fset, name, nil, parser.SkipObjectResolution)
		s.files[name] = file
	}
	if file == nil {
		return false
	}
	var body *ast.BlockStmt
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fd.Name.Name == f.Name() && fd.Body != nil && s.fset.Position(fd.Pos()).Line <= p.Line && p.Line <= s.fset.Position(fd.End()).Line {
			body = fd.Body
		}
	}
	if body == nil {
		return false
	}
	calls := false
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || calls {
			return !calls
		}
		switch x := ast.Unparen(c.Fun).(type) {
		case *ast.Ident:
			calls = !builtins[x.Name] && !basicTypes[x.Name] && !inlined[x.Name]
		case *ast.SelectorExpr:
			calls = !inlined[x.Sel.Name]
		case *ast.ArrayType, *ast.StarExpr:
			// a conversion
		default:
			calls = true
		}
		return !calls
	})
	return !calls
}

var basicTypes = map[string]bool{
	"bool": true, "byte": true, "rune": true, "string": true, "uintptr": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true,
}

// dynamicOut reports whether a call through an interface or a function
// value leaves what is instrumented: an interface (or a named function
// type) declared outside the run (io.Writer, http.Handler, a driver's)
// may call anything; one declared in a package of the run is, as a rule,
// implemented there too (goldmark's ast.Node and its node types), and its
// implementations have their own probes.
func dynamicOut(info *types.Info, c *ast.CallExpr, inSet func(string) bool) bool {
	fun := ast.Unparen(c.Fun)
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodVal {
			if m := s.Obj(); m.Pkg() != nil && types.IsInterface(s.Recv()) {
				return !inSet(m.Pkg().Path())
			}
		}
	}
	if n, ok := types.Unalias(info.TypeOf(fun)).(*types.Named); ok && n.Obj().Pkg() != nil {
		return !inSet(n.Obj().Pkg().Path())
	}
	return true
}

// mayWait reports whether functions of a standard package may wait (a
// lock, I/O, a timer, the scheduler), however cheap their inlined fast
// path looks: sync.Mutex.Lock is inlined, and it blocks.
func mayWait(path string) bool {
	switch path {
	case "sync", "net", "os", "io", "syscall", "time", "context", "runtime":
		return true
	}
	for _, p := range []string{"net/", "os/", "io/", "database/", "syscall/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

var builtins = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true,
	"copy": true, "delete": true, "imag": true, "len": true, "make": true,
	"max": true, "min": true, "new": true, "panic": true, "print": true,
	"println": true, "real": true, "recover": true,
}

// isHTTPHandler reports whether sig is net/http's handler shape:
// func(http.ResponseWriter, *http.Request), as ServeHTTP methods and
// HandlerFunc values have it.
func isHTTPHandler(sig *types.Signature) bool {
	if sig == nil || sig.Params().Len() != 2 || sig.Results().Len() != 0 {
		return false
	}
	return isNamed(sig.Params().At(0).Type(), "net/http", "ResponseWriter") &&
		isPointerTo(sig.Params().At(1).Type(), "net/http", "Request")
}

func isNamed(t types.Type, pkg, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}

func isPointerTo(t types.Type, pkg, name string) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamed(p.Elem(), pkg, name)
}

// grpcServices returns the gRPC service interfaces that pkg can
// implement: the interfaces I, declared in pkg or in a package it
// imports, for which I's package declares RegisterIServer-style
// registration, func Register<I>(s grpc.ServiceRegistrar or *grpc.Server,
// srv I). That is what protoc-gen-go-grpc generates for every service,
// and nothing else has that shape, so a method of a type implementing I
// whose name is one of I's is a request handler.
func grpcServices(pkg *types.Package) []*types.Interface {
	if pkg == nil {
		return nil
	}
	var out []*types.Interface
	for _, p := range append([]*types.Package{pkg}, pkg.Imports()...) {
		sc := p.Scope()
		for _, name := range sc.Names() {
			tn, ok := sc.Lookup(name).(*types.TypeName)
			if !ok {
				continue
			}
			iface, ok := tn.Type().Underlying().(*types.Interface)
			if !ok {
				continue
			}
			reg, ok := sc.Lookup("Register" + name).(*types.Func)
			if !ok {
				continue
			}
			sig := reg.Type().(*types.Signature)
			if sig.Params().Len() != 2 || !types.Identical(sig.Params().At(1).Type(), tn.Type()) {
				continue
			}
			s := sig.Params().At(0).Type()
			if isNamed(s, "google.golang.org/grpc", "ServiceRegistrar") || isPointerTo(s, "google.golang.org/grpc", "Server") {
				out = append(out, iface)
			}
		}
	}
	return out
}

// isGRPCMethod reports whether the method f implements a method of one
// of the services.
func isGRPCMethod(f *types.Func, services []*types.Interface) bool {
	sig, _ := f.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil || !f.Exported() {
		return false
	}
	recv := sig.Recv().Type()
	if p, ok := types.Unalias(recv).(*types.Pointer); ok {
		recv = p.Elem()
	}
	for _, s := range services {
		has := false
		for i := 0; i < s.NumMethods(); i++ {
			if s.Method(i).Name() == f.Name() {
				has = true
			}
		}
		if has && (types.Implements(recv, s) || types.Implements(types.NewPointer(recv), s)) {
			return true
		}
	}
	return false
}

// funcKey names a function across packages (type-checked separately):
// its full name, of the generic origin.
func funcKey(f *types.Func) string {
	return f.Origin().FullName()
}

// goTargets records, for every go statement in the file, what it starts:
// a function literal (by node), or a function known at compile time (by
// funcKey).
func goTargets(j *fileJob, lits map[*ast.FuncLit]bool, funcs map[string]bool) {
	goTargetsIn(j.file, j.info, j.path, lits, funcs)
}

// goTargetsIn is goTargets for a file f at path, with its type
// information (nil where it was not type-checked: then only functions
// of the same file are known, by an "untyped:" key).
func goTargetsIn(f *ast.File, info *types.Info, path string, lits map[*ast.FuncLit]bool, funcs map[string]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		g, ok := n.(*ast.GoStmt)
		if !ok {
			return true
		}
		switch fn := ast.Unparen(g.Call.Fun).(type) {
		case *ast.FuncLit:
			lits[fn] = true
		default:
			if info != nil {
				if callee := staticCallee(info, g.Call); callee != nil {
					funcs[funcKey(callee)] = true
				}
			} else if id, ok := fn.(*ast.Ident); ok && id.Obj != nil {
				if d, ok := id.Obj.Decl.(*ast.FuncDecl); ok {
					funcs["untyped:"+path+":"+d.Name.Name] = true
				}
			}
		}
		return true
	})
}

// siteKey is the key of a declared function for goTargets.
func siteKey(j *fileJob, s *site) string {
	if s.decl == nil {
		return ""
	}
	if j.info != nil {
		if f, ok := j.info.Defs[s.decl.Name].(*types.Func); ok {
			return funcKey(f)
		}
	}
	if s.decl.Recv == nil {
		return "untyped:" + j.path + ":" + s.decl.Name.Name
	}
	return ""
}

// signatureOf returns the type of the function s.
func signatureOf(j *fileJob, s *site) *types.Signature {
	if j.info == nil {
		return nil
	}
	var t types.Type
	if s.decl != nil {
		if f, ok := j.info.Defs[s.decl.Name].(*types.Func); ok {
			t = f.Type()
		}
	} else {
		t = j.info.TypeOf(s.lit)
	}
	sig, _ := t.(*types.Signature)
	return sig
}

// untypedHandler is isHTTPHandler without type information: the two
// parameters spelled http.ResponseWriter and *http.Request.
func untypedHandler(s *site) bool {
	ps := s.funcType().Params.List
	var ts []string
	for _, f := range ps {
		t := types.ExprString(f.Type)
		for range max(1, len(f.Names)) {
			ts = append(ts, t)
		}
	}
	r := s.funcType().Results
	return len(ts) == 2 && strings.HasSuffix(ts[0], "http.ResponseWriter") && strings.HasSuffix(ts[1], "*http.Request") && (r == nil || len(r.List) == 0)
}
