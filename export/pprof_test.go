package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/schema"
)

// TestPprof writes the call paths of traced requests and the model, then
// reads the file back: each probe's leaf samples add up to its row, and
// the traced paths are there with their counts. The bench/export module
// reads the same kind of file with github.com/google/pprof/profile.
func TestPprof(t *testing.T) {
	a := newApp(t)
	paths := newCallPaths()
	p := newPipeline(config{paths: paths, delay: time.Hour})
	defer p.Shutdown(context.Background())
	a.configure(t, p)
	const requests = 5
	for range requests {
		a.request()
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Firings outside traces: the model has them, no path does.
	meter.Configure(meter.Chain{Enabled: true, Clock: a.clk})
	for range 3 {
		f := a.lex.Begin()
		a.clk.Advance(7)
		a.lex.End(&f)
	}
	file := filepath.Join(t.TempDir(), "meter.pprof")
	frozen := paths.Frozen()
	s := meter.Take()
	if err := writePprofFile(file, s, frozen); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := decodeProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(prof.sampleTypes, " "); got != "count/count inclusive/nanoseconds inherent/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	if prof.defaultType != schema.SampleInherent || prof.periodType != "count/count" || prof.period != 1 {
		t.Errorf("default sample type %q, period %s × %d", prof.defaultType, prof.periodType, prof.period)
	}
	if prof.timeNanos != s.Taken.UnixNano() || len(prof.comments) != 1 || !strings.Contains(prof.comments[0], "clock "+s.Clock) {
		t.Errorf("time %d (taken %d), comments %q", prof.timeNanos, s.Taken.UnixNano(), prof.comments)
	}
	leaf := map[string][3]int64{}
	stacks := map[string][3]int64{}
	for _, smp := range prof.samples {
		names := make([]string, len(smp.stack))
		for i, n := range smp.stack { // root first
			names[len(names)-1-i] = n
		}
		v := leaf[smp.stack[0]]
		for i := range v {
			v[i] += smp.values[i]
		}
		leaf[smp.stack[0]] = v
		key := smp.source + ":" + strings.Join(names, ";")
		stacks[key] = [3]int64{smp.values[0], smp.values[1], smp.values[2]}
	}
	for _, pr := range []*meter.Probe{a.handle, a.parse, a.lex} {
		r := row(t, s, pr.Name())
		if got, want := leaf[pr.Name()], [3]int64{r.Count, r.Total, r.InherentTotal}; got != want {
			t.Errorf("%s: samples add up to %v, the model says %v", pr.Name(), got, want)
		}
	}
	h, ps, l := a.handle.Name(), a.parse.Name(), a.lex.Name()
	for key, want := range map[string][3]int64{
		"trace:" + h:                      {requests, requests * handleIncl, requests * handleInh},
		"trace:" + h + ";" + ps:           {2 * requests, requests * (parse1Incl + parse2Incl), requests * (parse1Inh + parse2Incl)},
		"trace:" + h + ";" + ps + ";" + l: {requests, requests * lexIncl, requests * lexIncl},
		"model:" + l:                      {3, 21, 21},
	} {
		if got := stacks[key]; got != want {
			t.Errorf("sample %s: %v, want %v", key, got, want)
		}
	}

	// go tool pprof reads it, uncompressed as it is.
	if goTool, err := exec.LookPath("go"); err == nil {
		out, err := exec.Command(goTool, "tool", "pprof", "-top", "-nodefraction=0", file).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(a.parse.Name())) || !bytes.Contains(out, []byte(a.lex.Name())) {
			t.Errorf("go tool pprof -top: %v\n%s", err, out)
		}
		out, err = exec.Command(goTool, "tool", "pprof", "-traces", "-sample_index=count", "-tagfocus=source=trace", file).CombinedOutput()
		want := fmt.Sprintf("%d   %s\n%s%s\n%s%s\n", requests, l, strings.Repeat(" ", 13), ps, strings.Repeat(" ", 13), h)
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("go tool pprof -traces: %v\n%s\nwant a sample\n%s", err, out, want)
		}
	}
}

// TestCallPathsParts: spans whose parents arrive in a later part wait for
// them, then take their full paths; what waits for a parent that never
// comes is let go when the trace's final part arrives.
func TestCallPathsParts(t *testing.T) {
	a := newApp(t)
	c := newCallPaths()
	add := func(final bool, recs ...record) {
		for i := range recs {
			if final && i == len(recs)-1 {
				recs[i].flags |= flagFinal
			}
		}
		slots := make([]slot, len(recs))
		for i := range recs {
			slots[i].rec = recs[i]
		}
		c.add(slots, nil)
	}
	rec := func(trace uint64, p *meter.Probe, index, parent int32, inh int64) record {
		return record{trace: trace, probe: int32(p.ID()), index: index, parent: parent, start: 1, end: 1 + inh, inherent: inh}
	}
	// Trace 1: handle(0) → parse(1) → lex(2), lex(3). The lexes ended
	// while the root ran; another trace's span comes in between.
	add(false, rec(1, a.lex, 2, 1, 10), rec(1, a.lex, 3, 1, 20))
	add(true, rec(2, a.handle, 0, -1, 1))
	add(true, rec(1, a.handle, 0, -1, 100), rec(1, a.parse, 1, 0, 50))
	// Trace 3: a span whose parent was dropped; the final part ends the trace.
	add(false, rec(3, a.lex, 5, 4, 7))
	add(true, rec(3, a.handle, 0, -1, 1))
	if c.waiting != 0 || len(c.open) != 0 {
		t.Errorf("%d spans still wait, %d traces open", c.waiting, len(c.open))
	}
	got := map[string][2]int64{} // path → count, inherent
	for i := 1; i < len(c.nodes); i++ {
		var names []string
		for j := int32(i); j > 0; j = c.nodes[j].parent {
			names = append([]string{meter.Probes()[c.nodes[j].probe].Name()}, names...)
		}
		got[strings.Join(names, ";")] = [2]int64{c.nodes[i].count, c.nodes[i].inherent}
	}
	h, ps, l := a.handle.Name(), a.parse.Name(), a.lex.Name()
	want := map[string][2]int64{h: {3, 102}, h + ";" + ps: {1, 50}, h + ";" + ps + ";" + l: {2, 30}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("paths %v, want %v", got, want)
	}
	if tl := c.byPrb[int32(a.lex.ID())]; tl == nil || tl.count != 2 {
		t.Errorf("lex's traced totals %+v: the span whose parent never came must not count", tl)
	}
}

// TestCallPathsBounded: traces whose final part never arrives are let go
// past maxOpenTraces, and spans waiting for parents past maxWaiting.
func TestCallPathsBounded(t *testing.T) {
	a := newApp(t)
	c := newCallPaths()
	for i := range 3 * maxOpenTraces {
		slots := []slot{{rec: record{trace: uint64(i + 1), probe: int32(a.lex.ID()), index: 1, parent: 0}}}
		c.add(slots, nil)
	}
	if len(c.open) > maxOpenTraces || c.waiting > maxOpenTraces || len(c.order) > 2*maxOpenTraces+1 {
		t.Errorf("%d open traces, %d waiting spans, %d ids kept", len(c.open), c.waiting, len(c.order))
	}
}

// decodedProfile is what the tests read back from a profile.
type decodedProfile struct {
	sampleTypes []string // type/unit
	defaultType string
	periodType  string
	period      int64
	timeNanos   int64
	comments    []string
	samples     []decodedSample
}

type decodedSample struct {
	stack  []string // function names, leaf first
	values []int64
	source string // the source label
}

// decodeProfile reads a profile.proto message: just what WriteProfile
// writes, independently of its encoder.
func decodeProfile(b []byte) (*decodedProfile, error) {
	type vt struct{ typ, unit int64 }
	var (
		strs        []string
		types       []vt
		period      vt
		defType     int64
		comments    []int64
		rawSamples  [][]byte
		locFunc     = map[uint64]uint64{}
		funcName    = map[uint64]int64{}
		out         = &decodedProfile{}
		parseFields func([]byte, func(field int, v uint64, data []byte) error) error
	)
	parseFields = func(b []byte, f func(int, uint64, []byte) error) error {
		for len(b) > 0 {
			key, n := uvarint(b)
			if n <= 0 {
				return errors.New("bad key")
			}
			b = b[n:]
			field, wire := int(key>>3), key&7
			switch wire {
			case 0:
				v, n := uvarint(b)
				if n <= 0 {
					return errors.New("bad varint")
				}
				b = b[n:]
				if err := f(field, v, nil); err != nil {
					return err
				}
			case 2:
				l, n := uvarint(b)
				if n <= 0 || uint64(len(b)-n) < l {
					return errors.New("bad length")
				}
				if err := f(field, 0, b[n:n+int(l)]); err != nil {
					return err
				}
				b = b[n+int(l):]
			default:
				return fmt.Errorf("wire type %d", wire)
			}
		}
		return nil
	}
	valueType := func(data []byte) (vt, error) {
		var v vt
		err := parseFields(data, func(f int, x uint64, _ []byte) error {
			switch f {
			case 1:
				v.typ = int64(x)
			case 2:
				v.unit = int64(x)
			}
			return nil
		})
		return v, err
	}
	err := parseFields(b, func(f int, x uint64, data []byte) error {
		var err error
		switch f {
		case schema.ProfileSampleType:
			var v vt
			v, err = valueType(data)
			types = append(types, v)
		case schema.ProfileSample:
			rawSamples = append(rawSamples, data)
		case schema.ProfileLocation:
			var id, fn uint64
			err = parseFields(data, func(f int, x uint64, d []byte) error {
				switch f {
				case schema.LocationID:
					id = x
				case schema.LocationLine:
					return parseFields(d, func(f int, x uint64, _ []byte) error {
						if f == schema.LineFunctionID {
							fn = x
						}
						return nil
					})
				}
				return nil
			})
			locFunc[id] = fn
		case schema.ProfileFunction:
			var id uint64
			var name int64
			err = parseFields(data, func(f int, x uint64, _ []byte) error {
				switch f {
				case schema.FunctionID:
					id = x
				case schema.FunctionName:
					name = int64(x)
				}
				return nil
			})
			funcName[id] = name
		case schema.ProfileStringTable:
			strs = append(strs, string(data))
		case schema.ProfilePeriodType:
			period, err = valueType(data)
		case schema.ProfilePeriod:
			out.period = int64(x)
		case schema.ProfileTimeNanos:
			out.timeNanos = int64(x)
		case schema.ProfileComment:
			comments = append(comments, int64(x))
		case schema.ProfileDefaultSampleType:
			defType = int64(x)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	str := func(i int64) string {
		if i < 0 || int(i) >= len(strs) {
			return fmt.Sprintf("<bad string %d>", i)
		}
		return strs[i]
	}
	if len(strs) == 0 || strs[0] != "" {
		return nil, errors.New("the string table does not start with \"\"")
	}
	for _, v := range types {
		out.sampleTypes = append(out.sampleTypes, str(v.typ)+"/"+str(v.unit))
	}
	out.defaultType = str(defType)
	out.periodType = str(period.typ) + "/" + str(period.unit)
	for _, c := range comments {
		out.comments = append(out.comments, str(c))
	}
	for _, raw := range rawSamples {
		var s decodedSample
		err := parseFields(raw, func(f int, x uint64, data []byte) error {
			switch f {
			case schema.SampleLocationID:
				for len(data) > 0 {
					v, n := uvarint(data)
					data = data[n:]
					fn, ok := locFunc[v]
					if !ok {
						return fmt.Errorf("sample names location %d, which is not in the profile", v)
					}
					s.stack = append(s.stack, str(funcName[fn]))
				}
			case schema.SampleValue:
				for len(data) > 0 {
					v, n := uvarint(data)
					data = data[n:]
					s.values = append(s.values, int64(v))
				}
			case schema.SampleLabel:
				var k, v int64
				parseFields(data, func(f int, x uint64, _ []byte) error {
					switch f {
					case schema.LabelKey:
						k = int64(x)
					case schema.LabelStr:
						v = int64(x)
					}
					return nil
				})
				if str(k) == "source" {
					s.source = str(v)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(s.values) != len(types) || len(s.stack) == 0 {
			return nil, fmt.Errorf("sample %+v", s)
		}
		out.samples = append(out.samples, s)
	}
	return out, nil
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
