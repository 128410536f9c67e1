package inject

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Run instruments, removes or overlays the packages o names, and returns
// what it did.
func Run(o *Options) (*Summary, error) {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	sum := &Summary{Skipped: map[string]int{}}
	var model map[string]bool
	if o.Model != "" && !o.Remove {
		m, err := readModel(o.Model)
		if err != nil {
			return nil, err
		}
		model = m
	}
	mod, err := loadMainModule(o)
	if err != nil {
		return nil, moduleError(err)
	}
	var rt *runtimeInfo
	var lines *goLines
	leftOut := map[string]string{}
	if !o.Remove {
		if rt, err = findRuntime(o); err != nil {
			return nil, err
		}
		if rt != nil {
			if lines, err = planGoLines(o, rt, mod); err != nil {
				return nil, err
			}
			if leftOut, err = rt.imports(o); err != nil {
				return nil, err
			}
		}
	}
	if o.Overlay != "" && !o.Remove {
		if err := overlayRun(o, sum, mod, rt, lines, leftOut, model); err != nil {
			return nil, err
		}
		return sum, nil
	}
	jobs, outside, err := load(o, sum, leftOut, mod)
	if err != nil {
		return nil, err
	}
	sum.name(jobs)
	if o.Overlay == "" {
		if err := refuseModCache(jobs); err != nil {
			return nil, err
		}
	}
	if !o.Remove {
		inl := inlineSet{}
		if !o.All {
			if inl, err = inlinable(o, mod, jobs, outside); err != nil {
				return nil, err
			}
		}
		roots, err := outsideRoots(o, mod, paths(jobs), outside)
		if err != nil {
			return nil, err
		}
		decide(o, jobs, inl, model, sum, mod, roots)
	}
	for _, j := range jobs {
		sum.Packages++
		for _, g := range j.groups {
			sum.Files += len(g.files)
			sum.Instrumented += len(g.sites)
		}
	}
	cs := plan(o, jobs)
	if mod != nil {
		if cs, err = lines.changes(o, mod, cs, true); err != nil {
			return nil, err
		}
	}
	sum.Removed = o.Remove
	sum.Changed = len(cs)
	if o.DryRun {
		return sum, printDiff(o.Stdout, cs)
	}
	if err := apply(cs); err != nil {
		return sum, err
	}
	if !o.Remove && len(cs) > 0 {
		hintRequire(o, rt)
	}
	return sum, nil
}

// refuseModCache stops in-place rewriting of the module cache.
func refuseModCache(jobs []*pkgJob) error {
	for _, j := range jobs {
		if j.module != nil && !j.module.Main && j.module.Replace == nil {
			return fmt.Errorf("%s: in the module cache (module %s), which is never written: instrument it with meterinject -deps %s/... go build|test|run ..., or with -overlay", j.dir, j.module.Path, j.module.Path)
		}
	}
	return nil
}

// plural writes n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// name names the packages in the summary when go generate runs
// meterinject (it sets $GOPACKAGE), where many lines may follow one
// another: the import path of the one package, or the longest path that
// holds them all, with "/...".
func (s *Summary) name(jobs []*pkgJob) {
	if os.Getenv("GOPACKAGE") == "" || len(jobs) == 0 {
		return
	}
	common := jobs[0].path
	for _, j := range jobs[1:] {
		for common != "" && j.path != common && !strings.HasPrefix(j.path, common+"/") {
			i := strings.LastIndexByte(common, '/')
			if i < 0 {
				common = ""
				break
			}
			common = common[:i]
		}
	}
	switch {
	case len(jobs) == 1:
		s.Name = common
	case common != "":
		s.Name = common + "/..."
	}
}

// String is the one-line summary.
func (s *Summary) String() string {
	var b strings.Builder
	b.WriteString("meterinject: ")
	pkgs := plural(s.Packages, "package") + ", "
	if s.Name != "" {
		b.WriteString(s.Name + ": ")
		if s.Packages == 1 {
			pkgs = ""
		}
	}
	if s.Removed {
		fmt.Fprintf(&b, "%s%s: instrumentation removed, %s changed",
			pkgs, plural(s.Files, "file"), plural(s.Changed, "file"))
		return b.String()
	}
	if s.Cached > 0 {
		pkgs = strings.TrimSuffix(pkgs, ", ") + fmt.Sprintf(" (%d from the cache), ", s.Cached)
	}
	fmt.Fprintf(&b, "%s%s, %s instrumented",
		pkgs, plural(s.Files, "file"), plural(s.Instrumented, "function"))
	var rs []string
	for r := range s.Skipped {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	if len(rs) > 0 {
		b.WriteString("; skipped:")
		for i, r := range rs {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d %s", s.Skipped[r], r)
		}
	}
	return b.String()
}
