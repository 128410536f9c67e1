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
	var rt *runtimeInfo
	leftOut := map[string]string{}
	if !o.Remove {
		var err error
		if rt, err = findRuntime(o); err != nil {
			return nil, err
		}
		if rt != nil {
			if err := checkGoLine(o, rt); err != nil {
				return nil, err
			}
			if leftOut, err = rt.imports(o); err != nil {
				return nil, err
			}
		}
	}
	jobs, err := load(o, sum, leftOut)
	if err != nil {
		return nil, err
	}
	if o.Overlay == "" {
		if err := refuseModCache(jobs); err != nil {
			return nil, err
		}
	}
	inl := inlineSet{}
	if !o.Remove && !o.All {
		if inl, err = inlinable(o, jobs); err != nil {
			return nil, err
		}
	}
	if !o.Remove {
		decide(o, jobs, inl, model, sum)
	}
	for _, j := range jobs {
		sum.Packages++
		for _, g := range j.groups {
			sum.Files += len(g.files)
			sum.Instrumented += len(g.sites)
		}
	}
	if o.Overlay != "" {
		return sum, overlay(o, rt, jobs)
	}
	cs := plan(o, jobs)
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
			return fmt.Errorf("%s: in the module cache (module %s); use -overlay", j.dir, j.module.Path)
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

// String is the one-line summary.
func (s *Summary) String() string {
	var b strings.Builder
	if s.Removed {
		fmt.Fprintf(&b, "meterinject: %s, %s: instrumentation removed, %s changed",
			plural(s.Packages, "package"), plural(s.Files, "file"), plural(s.Changed, "file"))
		return b.String()
	}
	fmt.Fprintf(&b, "meterinject: %s, %s, %s instrumented",
		plural(s.Packages, "package"), plural(s.Files, "file"), plural(s.Instrumented, "function"))
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
