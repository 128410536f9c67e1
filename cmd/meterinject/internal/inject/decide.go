package inject

import (
	"go/ast"
	"go/types"
)

// nameSites lists and names the function bodies of each file of j, and
// what to reroute in them.
func nameSites(j *pkgJob) {
	for _, g := range j.groups {
		nm := &namer{prefix: g.prefix}
		for _, fj := range g.files {
			fj.lines = newLines(fj.src, fj.file)
			fj.aligned, fj.trailing = alignedLayout(fj.fset, fj.file, fj.src)
			fj.sites = nm.fileSites(fj.file)
			for _, s := range fj.sites {
				d := s.decl
				if d == nil || d.Recv != nil {
					continue
				}
				if d.Name.Name == "main" && j.name == "main" && g.kind == "" {
					s.isMain, s.isProgramMain = true, true
				}
				if d.Name.Name == "TestMain" && g.kind != "" {
					s.isMain = true
				}
			}
			fj.calls = findCalls(fj)
		}
	}
}

// decide marks each site instrumented or skipped, and numbers the
// instrumented ones.
// roots holds what go statements outside the run start (outsideRoots);
// calls into mod's packages count as calls into instrumented code
// (inScope).
func decide(o *Options, jobs []*pkgJob, inl inlineSet, model map[string]bool, sum *Summary, mod *mainModule, roots map[string]bool) {
	inSet := map[string]bool{}
	for _, j := range jobs {
		inSet[j.path] = true
	}
	src := newSources()
	// Roots: what go statements start, in any package of the run or of
	// the main module.
	goLits := map[*ast.FuncLit]bool{}
	goFuncs := map[string]bool{}
	for k := range roots {
		goFuncs[k] = true
	}
	for _, j := range jobs {
		for _, g := range j.groups {
			for _, fj := range g.files {
				goTargets(fj, goLits, goFuncs)
			}
		}
	}
	for _, j := range jobs {
		isIn := inScope(mod, inSet, j)
		values := valueFuncs(j)
		var services []*types.Interface
		servicesDone := false
		for _, g := range j.groups {
			for _, fj := range g.files {
				if fj.pkg != nil && !servicesDone {
					services, servicesDone = grpcServices(fj.pkg), true
				}
				for _, s := range fj.sites {
					s.handler = isHandler(fj, s, services)
					s.root = s.handler || s.lit != nil && goLits[s.lit] || goFuncs[siteKey(fj, s)]
					if s.root {
						s.request = requestArgs(fj, s)
					}
					switch {
					case s.ignored:
						s.skip = skipIgnore
					case compilerDirective(s.doc) != "":
						s.skip = skipDirective
					case !layoutOK(fj, s):
						s.skip = skipLayout
					case o.Include != nil && !o.Include.MatchString(s.name),
						o.Exclude != nil && o.Exclude.MatchString(s.name):
						s.skip = skipFilter
					case model[s.name]:
						s.skip = skipModel
					case o.All || s.isMain || s.root:
					case inl.has(fj, s):
						if out := callsOut(fj, s, isIn, inl, src); out == callsNone || out == callsWork && inlinedOnly(fj, s, values) {
							s.skip = skipInline
						}
					case isSmall(s.body, o.smallMax()) && callsOut(fj, s, isIn, inl, src) == callsNone:
						s.skip = skipSmall
					}
					if s.skip != "" {
						j.skip(sum, s.skip)
						continue
					}
					s.index = len(g.sites)
					g.sites = append(g.sites, s)
				}
			}
		}
	}
}

// requestArgs returns the arguments that the probe of s, a root, hands
// the trace it starts (probe.Probe.Within, Serving): its *http.Request
// parameter, after its http.ResponseWriter or nil, or else its
// context.Context parameter; "" when it has none of them with a name.
func requestArgs(fj *fileJob, s *site) string {
	sig := signatureOf(fj, s)
	if sig == nil {
		return ""
	}
	var names []string
	for _, f := range s.funcType().Params.List {
		if len(f.Names) == 0 {
			names = append(names, "_")
		}
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	if len(names) != sig.Params().Len() {
		return ""
	}
	w, r, ctx := "", "", ""
	for i := 0; i < sig.Params().Len(); i++ {
		if names[i] == "_" {
			continue
		}
		t := sig.Params().At(i).Type()
		switch {
		case w == "" && isNamed(t, "net/http", "ResponseWriter"):
			w = names[i]
		case r == "" && isPointerTo(t, "net/http", "Request"):
			r = names[i]
		case ctx == "" && isNamed(t, "context", "Context"):
			ctx = names[i]
		}
	}
	switch {
	case r != "" && w != "":
		return "http:" + w + ", " + r
	case r != "":
		return "http:nil, " + r
	case ctx != "":
		return "ctx:" + ctx
	}
	return ""
}

// isHandler reports whether s is a request handler: net/http's shape, or
// a method of a gRPC service (see grpcServices).
func isHandler(fj *fileJob, s *site, services []*types.Interface) bool {
	sig := signatureOf(fj, s)
	if sig == nil {
		return fj.info == nil && untypedHandler(s)
	}
	if isHTTPHandler(sig) {
		return true
	}
	if s.decl != nil && s.decl.Recv != nil && len(services) > 0 {
		if f, ok := fj.info.Defs[s.decl.Name].(*types.Func); ok {
			return isGRPCMethod(f, services)
		}
	}
	return false
}
