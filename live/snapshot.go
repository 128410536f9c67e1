package live

// This file is the page's only contact with the engine's snapshot and
// the export writers; the rest of the package reads report's types.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/probe"
	"github.com/meterio/meter/report"
	"github.com/meterio/meter/schema"
)

// snapshot is the model and the chain's state at one moment.
type snapshot struct {
	s     meter.Snapshot
	roots []string
	cpu   time.Duration // 0: not known on this system
}

func state() snapshot {
	st := snapshot{s: meter.Take(), cpu: processCPU()}
	for _, p := range meter.Probes() {
		if p.Root() {
			st.roots = append(st.roots, p.Name())
		}
	}
	return st
}

func (st snapshot) reenabled() int64 {
	var n int64
	for _, r := range st.s.Rows {
		n += r.Reenabled
	}
	return n
}

func (st snapshot) labels() map[string]int {
	l := map[string]int{}
	for _, r := range st.s.Rows {
		if r.Label != "" {
			l[r.Label]++
		}
	}
	return l
}

// fields are the chain's state as the .meta file names it, with the
// process's start and CPU time and the entry probes.
func (st snapshot) fields() []report.Field {
	s := st.s
	f := []report.Field{
		{Key: schema.MetaTaken, Value: s.Taken.UTC().Format(time.RFC3339Nano)},
		{Key: schema.MetaStarted, Value: started.UTC().Format(time.RFC3339Nano)},
	}
	if st.cpu > 0 {
		f = append(f, report.Field{Key: schema.MetaCPU, Value: strconv.FormatInt(int64(st.cpu), 10)})
	}
	var labels []string
	for l, n := range st.labels() {
		labels = append(labels, l+"="+strconv.Itoa(n))
	}
	sort.Strings(labels)
	f = append(f,
		report.Field{Key: schema.MetaClock, Value: s.Clock},
		report.Field{Key: schema.MetaExtensions, Value: strings.Join(s.Extensions, " ")},
		report.Field{Key: schema.MetaProbes, Value: strconv.Itoa(s.Probes)},
		report.Field{Key: schema.MetaTraces, Value: strconv.FormatInt(s.Traces, 10)},
		report.Field{Key: schema.MetaTruncatedTraces, Value: strconv.FormatInt(s.TruncatedTraces, 10)},
		report.Field{Key: schema.MetaUnwound, Value: strconv.FormatInt(s.Unwound, 10)},
		report.Field{Key: schema.MetaDroppedSpans, Value: strconv.FormatInt(s.Dropped, 10)},
		report.Field{Key: schema.MetaClampedDurations, Value: strconv.FormatUint(s.Clamped, 10)},
		report.Field{Key: schema.MetaReenabled, Value: strconv.FormatInt(st.reenabled(), 10)},
		report.Field{Key: schema.MetaLabels, Value: strings.Join(labels, " ")},
		report.Field{Key: schema.MetaRoots, Value: strings.Join(st.roots, " ")},
	)
	return f
}

func (st snapshot) json() chainState {
	s := st.s
	c := chainState{
		Taken:      s.Taken.UTC().Format(time.RFC3339Nano),
		Started:    started.UTC().Format(time.RFC3339Nano),
		Clock:      s.Clock,
		Extensions: []extensionState{},
		Counters: map[string]int64{
			schema.MetaProbes:           int64(s.Probes),
			"rows":                      int64(len(s.Rows)),
			schema.MetaTraces:           s.Traces,
			schema.MetaTruncatedTraces:  s.TruncatedTraces,
			schema.MetaUnwound:          s.Unwound,
			schema.MetaDroppedSpans:     s.Dropped,
			schema.MetaClampedDurations: int64(s.Clamped),
			schema.MetaReenabled:        st.reenabled(),
		},
		Labels: st.labels(),
		Roots:  append([]string{}, st.roots...),
	}
	if st.cpu > 0 {
		c.Counters[schema.MetaCPU] = int64(st.cpu)
	}
	for _, e := range report.ParseExtensions(strings.Join(s.Extensions, " ")) {
		c.Extensions = append(c.Extensions, extensionState{Name: e.Name, Settings: e.Settings})
	}
	return c
}

func writeCSV(b *bytes.Buffer) error { return export.WriteCSV(b, meter.Take()) }

// current is the model as the page shows it: the rows as the CSV export
// writes them, read back, so that the page and the file never differ.
func current() (*report.Model, error) {
	st := state()
	var csv bytes.Buffer
	if err := export.WriteCSV(&csv, st.s); err != nil {
		return nil, err
	}
	rows, err := report.ReadModel(&csv, "model.csv")
	if err != nil {
		return nil, err
	}
	m := &report.Model{
		Name:  fmt.Sprintf("live: %s (pid %d)", filepath.Base(os.Args[0]), os.Getpid()),
		Rows:  rows,
		Meta:  st.fields(),
		Roots: st.roots,
		Wall:  st.s.Taken.Sub(started),
		CPU:   st.cpu,
	}
	var prof bytes.Buffer
	if err := probe.WriteProfile(&prof); err != nil {
		return nil, err
	}
	if m.Profile, err = report.ReadProfile(&prof); err != nil {
		return nil, fmt.Errorf("reading back the profile: %v", err)
	}
	return m, nil
}
