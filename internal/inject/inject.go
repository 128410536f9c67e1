package inject

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	jobs, err := load(o, sum)
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
		return sum, overlay(o, jobs)
	}
	cs := plan(o, jobs)
	if o.DryRun {
		return sum, printDiff(o.Stdout, cs)
	}
	return sum, apply(cs)
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

// String is the one-line summary.
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "meterinject: %d packages, %d files, %d functions instrumented", s.Packages, s.Files, s.Instrumented)
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

var _ = io.Discard
var _ = filepath.Join
