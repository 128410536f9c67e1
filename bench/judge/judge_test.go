package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meterio/meter/report"
)

// pb builds protobuf bytes by hand, field by field, as report's tests
// do, so that the profile goes through report.ReadProfile as a real one.
type pb []byte

func (b pb) key(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }
func (b pb) varint(field int, v uint64) pb {
	return binary.AppendUvarint(b.key(field, 0), v)
}
func (b pb) msg(field int, m []byte) pb {
	return append(binary.AppendUvarint(b.key(field, 2), uint64(len(m))), m...)
}
func (b pb) packed(field int, vs ...uint64) pb {
	var m []byte
	for _, v := range vs {
		m = binary.AppendUvarint(m, v)
	}
	return b.msg(field, m)
}

// cpuProfile encodes a CPU profile as runtime/pprof writes one: sample
// types samples/count and cpu/nanoseconds; each location's lines list the
// functions inlined there, innermost first. Stacks are leaf first, each a
// list of locations.
func cpuProfile(locations [][]string, samples []struct {
	stack []int // indexes into locations
	ns    int64
}) []byte {
	strs := []string{"", "samples", "count", "cpu", "nanoseconds"}
	str := func(s string) uint64 {
		for i, t := range strs {
			if t == s {
				return uint64(i)
			}
		}
		strs = append(strs, s)
		return uint64(len(strs) - 1)
	}
	var p pb
	p = p.msg(1, pb{}.varint(1, str("samples")).varint(2, str("count")))
	p = p.msg(1, pb{}.varint(1, str("cpu")).varint(2, str("nanoseconds")))
	for _, s := range samples {
		var ids []uint64
		for _, l := range s.stack {
			ids = append(ids, uint64(l+1))
		}
		p = p.msg(2, pb{}.packed(1, ids...).packed(2, uint64(s.ns/10_000_000), uint64(s.ns)))
	}
	funcs := map[string]uint64{}
	for i, fns := range locations {
		l := pb{}.varint(1, uint64(i+1))
		for _, fn := range fns {
			if funcs[fn] == 0 {
				funcs[fn] = uint64(len(funcs) + 1)
			}
			l = l.msg(4, pb{}.varint(1, funcs[fn]).varint(2, 7))
		}
		p = p.msg(4, l)
	}
	for fn, id := range funcs {
		p = p.msg(5, pb{}.varint(1, id).varint(2, str(fn)))
	}
	for _, s := range strs {
		p = p.msg(6, []byte(s))
	}
	return p
}

const ms = int64(time.Millisecond)

// testCase: main calls a (timed), which calls b (untimed, inlined into
// a at one location) and d (registered, but no row); main calls c
// (disabled), a generic function (named by its instantiation in the
// profile) and a closure of an inlined function (named after the
// inlining); the collector's worker has no probe. Measuring a takes
// 500 ms, which the judge leaves out.
func testCase(t *testing.T) (*report.Profile, []report.Row, *Truth, map[string]bool) {
	locations := [][]string{
		{"main.main"},              // 0
		{"main.a"},                 // 1
		{"main.b", "main.a"},       // 2: b inlined into a
		{"main.c"},                 // 3
		{"main.d"},                 // 4
		{"main.g[go.shape.int]"},   // 5
		{"main.main.f.func2"},      // 6
		{"runtime.memmove"},        // 7
		{"runtime.gcBgMarkWorker"}, // 8
		{"github.com/meterio/meter/clock.rdtscp", "github.com/meterio/meter/meter.(*Probe).Begin"}, // 9
	}
	samples := []struct {
		stack []int
		ns    int64
	}{
		{[]int{7, 1, 0}, 100 * ms},
		{[]int{2, 0}, 200 * ms},
		{[]int{3, 0}, 300 * ms},
		{[]int{4, 1, 0}, 50 * ms},
		{[]int{5, 0}, 150 * ms},
		{[]int{6, 0}, 120 * ms},
		{[]int{8}, 80 * ms},
		{[]int{9, 1, 0}, 500 * ms}, // metering a
	}
	whole, err := report.ReadProfile(bytes.NewReader(cpuProfile(locations, samples)))
	if err != nil {
		t.Fatal(err)
	}
	prof, left := WithoutMetering(whole, MeteringFrames, nil, nil)
	if left != float64(500*ms) || len(prof.Samples) != len(samples)-1 || len(whole.Samples) != len(samples) {
		t.Fatalf("WithoutMetering left out %.0f ns, kept %d samples of %d", left, len(prof.Samples), len(whole.Samples))
	}
	rows := []report.Row{
		{Probe: "main.main", Count: 1, InherentTotal: 400 * ms, Label: "hotspot"},
		{Probe: "main.a", Count: 1004, InherentTotal: 300 * ms},
		{Probe: "main.b", Count: 1_000_000, Label: "untimed"},
		{Probe: "main.c", Count: 400, InherentTotal: 50 * ms, Label: "disabled"},
		{Probe: "main.g[...]", Count: 10, InherentTotal: 200 * ms, Label: "sampled"},
		{Probe: "main.f.func1", Count: 21, InherentTotal: 100 * ms, Label: "sampled"},
	}
	truth, err := ReadTruth(strings.NewReader(`function,calls
#cpu_ns,1000000000
#cpubound,1
#wait_ns,0
#steal_ns,0
#alias,main.main.f.func2,main.f.func1
#future,whatever
main.main,1
main.a,1000
main.b,1000000
main.c,500
main.d,2
"main.g[...]",4
main.g[...],6
main.f.func1,20
`), "truth.csv")
	if err != nil {
		t.Fatal(err)
	}
	return prof, rows, truth, map[string]bool{"main.d": true}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestShares(t *testing.T) {
	prof, rows, truth, _ := testCase(t)
	got := Shares(rows, prof, truth.Aliases, DefaultLimits)
	// Timed: main, a, g[...], f.func1. b's samples go to a, c's to main;
	// d has no row, so its samples go to a; the collector's to none.
	const claimed = 920.0
	want := []ShareRow{
		{Probe: "main.a", Profile: 350 / claimed, Model: 0.3},
		{Probe: "main.main", Profile: 300 / claimed, Model: 0.4},
		{Probe: "main.g[...]", Profile: 150 / claimed, Model: 0.2},
		{Probe: "main.f.func1", Profile: 120 / claimed, Model: 0.1},
	}
	if len(got.Rows) != len(want) {
		t.Fatalf("rows %+v, want %d", got.Rows, len(want))
	}
	var sum, largest float64
	for i, w := range want {
		g := got.Rows[i]
		d := 100 * math.Abs(w.Profile-w.Model)
		sum += d
		largest = math.Max(largest, d)
		if g.Probe != w.Probe || !near(g.Profile, w.Profile) || !near(g.Model, w.Model) || !near(g.DiffPoints, d) {
			t.Errorf("row %d: %+v, want %s profile %.6f model %.6f", i, g, w.Probe, w.Profile, w.Model)
		}
	}
	if !near(got.Avg, sum/4) || !near(got.Max, largest) || !near(got.Claimed, claimed/1000) || got.OK {
		t.Errorf("mean %.4f largest %.4f claimed %.4f ok %v, want %.4f %.4f %.4f false", got.Avg, got.Max, got.Claimed, got.OK, sum/4, largest, claimed/1000)
	}
	// 8.04 points apart at most, 5.54 on average: within 9 and 6.
	lim := DefaultLimits
	lim.ShareAvg, lim.ShareMax = 6, 9
	if !Shares(rows, prof, truth.Aliases, lim).OK {
		t.Error("shares fail with limits they meet")
	}
}

func TestHidden(t *testing.T) {
	prof, rows, truth, registered := testCase(t)
	got := Hidden(rows, registered, prof, truth, DefaultLimits)
	want := []struct {
		probe string
		ns    float64
		own   float64
		why   string
	}{
		{"main.c", 300, 300 * 1e6 / 500, "disabled"},
		{"main.b", 200, 200, ""}, // untimed, 200 ns a call
		{"main.g[...]", 150, 150 * 1e6 / 10, ""},
		{"main.f.func1", 120, 120 * 1e6 / 20, "count"},
		{"main.a", 100, 100 * 1e6 / 1000, ""},
		{"main.d", 50, 50 * 1e6 / 2, "not in the model"},
	}
	if len(got.Rows) != len(want) || got.OK {
		t.Fatalf("rows %+v ok %v, want %d rows, not ok", got.Rows, got.OK, len(want))
	}
	for i, w := range want {
		g := got.Rows[i]
		if g.Probe != w.probe || !near(g.ProfileNS, w.ns*1e6) || !near(g.Share, w.ns/920) || !near(g.OwnPerCall, w.own) || g.Why != w.why {
			t.Errorf("row %d: %+v, want %s %.0f ms %.1f ns a call %q", i, g, w.probe, w.ns, w.own, w.why)
		}
	}
	// b's 200 ns a call rest on 20 samples: at 95%, over 132 ns.
	lim := DefaultLimits
	lim.UntimedLimit = 200 * time.Nanosecond
	if g := Hidden(rows, registered, prof, truth, lim).Rows[1]; g.Why != "" || !near(g.OwnLow, 200*poissonLow(20)/20) {
		t.Errorf("main.b at 200 ns a call on 20 samples, limit 200ns: %q, at least %.1f ns, want ok, at least %.1f", g.Why, g.OwnLow, 200*poissonLow(20)/20)
	}
	lim.UntimedLimit = 130 * time.Nanosecond
	if g := Hidden(rows, registered, prof, truth, lim).Rows[1]; g.Why != "untimed but long" {
		t.Errorf("main.b at 200 ns a call on 20 samples, limit 130ns: %q, want untimed but long", g.Why)
	}
	// Without the registered list, d's samples go to a.
	if g := Hidden(rows, nil, prof, truth, DefaultLimits).Rows; g[2].Probe != "main.a" || !near(g[2].ProfileNS, 150*1e6) {
		t.Errorf("without registered probes: %+v, want main.a third with 150 ms", g)
	}
}

func TestCounts(t *testing.T) {
	_, rows, truth, _ := testCase(t)
	got, ok := Counts(rows, truth, DefaultLimits)
	want := map[string]bool{
		"main.main":    true,
		"main.a":       true, // 0.4% over
		"main.b":       true,
		"main.c":       true, // disabled at 400 of 500
		"main.g[...]":  true, // 4 + 6 in the truth file
		"main.f.func1": false,
	}
	if ok {
		t.Error("counts ok with main.f.func1 5% over")
	}
	for _, c := range got {
		if c.OK != want[c.Probe] {
			t.Errorf("%s: ok %v, want %v", c.Probe, c.OK, want[c.Probe])
		}
	}
	if a := Absent(rows, map[string]bool{"main.d": true, "main.a": true, "main.z": true}, truth); len(a) != 1 || a[0] != "main.d" {
		t.Errorf("absent %v, want [main.d]", a)
	}
	rows = append(rows, report.Row{Probe: "main.e", Count: 3}, report.Row{Probe: "main.a2", Count: 2000, Label: "budget"})
	truth.Calls["main.a2"] = 1000
	got, _ = Counts(rows, truth, DefaultLimits)
	if e := got[len(got)-2]; e.Known || e.OK {
		t.Errorf("a row the truth does not name: %+v, want not known, not ok", e)
	}
	if b := got[len(got)-1]; b.OK {
		t.Errorf("a budget row counting more than the calls: %+v, want not ok", b)
	}
}

func TestCPU(t *testing.T) {
	prof, rows, truth, _ := testCase(t)
	got := CPU(rows, truth, nil, prof, false)
	if got.Inherent != 1050*time.Millisecond || got.CPU != time.Second || got.Source != "truth file" || !got.Checked || got.OK {
		t.Errorf("%+v, want 1.05s of 1s from the truth file, checked, not ok", got)
	}
	truth.Wait = 50 * time.Millisecond
	if got := CPU(rows, truth, nil, prof, false); !got.OK || got.Wait != truth.Wait {
		t.Errorf("%+v, want ok: 1.05s within 1s of CPU and 50ms of wait", got)
	}
	// The host's steal counts as the wait does.
	truth.Wait, truth.Steal = 30*time.Millisecond, 20*time.Millisecond
	if got := CPU(rows, truth, nil, prof, false); !got.OK || got.Steal != truth.Steal {
		t.Errorf("%+v, want ok: 1.05s within 1s of CPU, 30ms of wait and 20ms of steal", got)
	}
	truth.Steal = 19 * time.Millisecond
	if got := CPU(rows, truth, nil, prof, false); got.OK {
		t.Errorf("%+v, want not ok: 1.05s over 1s of CPU, 30ms of wait and 19ms of steal", got)
	}
	truth.Steal = 0
	// Without the truth file's wait, the model's .meta gives it.
	truth.Wait = 0
	if got := CPU(rows, truth, &report.Model{CoreWait: 60 * time.Millisecond}, prof, false); !got.OK || got.Wait != 60*time.Millisecond {
		t.Errorf("%+v, want ok: 1.05s within 1s of CPU and the model's 60ms of wait", got)
	}
	truth.CPUBound, truth.CPU = false, 0
	got = CPU(rows, truth, nil, prof, false)
	if got.CPU != time.Second || got.Source != "profile's samples" || got.Checked || !got.OK {
		t.Errorf("%+v, want 1s from the profile, not checked", got)
	}
}

func TestProbeName(t *testing.T) {
	alias := map[string]string{"main.main.trim.func3": "main.trim.func1"}
	for in, want := range map[string]string{
		"main.sum[go.shape.int]":                    "main.sum[...]",
		"main.(*stack[go.shape.[]int]).push":        "main.(*stack[...]).push",
		"main.m[go.shape.map[string]int,int].func1": "main.m[...].func1",
		"main.main.trim.func3":                      "main.trim.func1",
		"main.plain":                                "main.plain",
	} {
		if got := ProbeName(in, alias); got != want {
			t.Errorf("ProbeName(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestReadTruthErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"fn,count\nmain.a,1\n",
		"function,calls\nmain.a,x\n",
		"function,calls\nmain.a,-1\n",
		"function,calls\n#cpu_ns,x\n",
		"function,calls\n#steal_ns,-5\n",
		"function,calls\nmain.a,1,2\n",
	} {
		if _, err := ReadTruth(strings.NewReader(in), "t.csv"); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestMergeRuns(t *testing.T) {
	a := &report.Model{Name: "a", CPU: 2, Rows: []report.Row{
		{Probe: "m.f", Count: 10, Total: 100, InherentTotal: 60, Min: 5, Max: 20, Label: "sampled"},
		{Probe: "m.g", Count: 4, Label: "untimed"},
	}}
	b := &report.Model{Name: "b", CPU: 3, Rows: []report.Row{
		{Probe: "m.g", Count: 6, Label: "untimed"},
		{Probe: "m.f", Count: 30, Total: 200, InherentTotal: 140, Min: 3, Max: 15, Label: ""},
	}}
	c := &report.Model{Name: "c", Rows: []report.Row{{Probe: "m.f", Count: 1, Label: ""}}}
	m, differ := mergeModels([]*report.Model{a, b, c})
	want := []report.Row{
		{Probe: "m.f", Count: 41, Total: 300, Avg: 7, InherentTotal: 200, InherentAvg: 4, Min: 0, Max: 20, Label: ""},
		{Probe: "m.g", Count: 10, Label: "untimed"},
	}
	if !reflect.DeepEqual(m.Rows, want) || m.CPU != 5 || m.Name != "a" {
		t.Errorf("merged %+v (cpu %v), want %+v", m.Rows, m.CPU, want)
	}
	if len(differ) != 1 || !strings.HasPrefix(differ[0], "m.f:") {
		t.Errorf("labels that differ: %q", differ)
	}
	tr := mergeTruths([]*Truth{
		{Calls: map[string]int64{"m.f": 1}, CPU: 1, CPUBound: true},
		{Calls: map[string]int64{"m.f": 2, "m.g": 3}, CPU: 2, Aliases: map[string]string{"x": "y"}},
	})
	if tr.Calls["m.f"] != 3 || tr.Calls["m.g"] != 3 || tr.CPU != 3 || tr.CPUBound || tr.Aliases["x"] != "y" {
		t.Errorf("merged truth %+v", tr)
	}
	p1 := &report.Profile{SampleTypes: []report.ValueType{{Type: "cpu", Unit: "nanoseconds"}}, Samples: []report.Sample{{Stack: []string{"m.f"}, Values: []int64{1}}}}
	p2 := &report.Profile{SampleTypes: p1.SampleTypes, Samples: []report.Sample{{Stack: []string{"m.g"}, Values: []int64{2}}}}
	p, err := mergeProfiles([]*report.Profile{p1, p2})
	if err != nil || len(p.Samples) != 2 || len(p1.Samples) != 1 {
		t.Errorf("merged profile %+v, %v; first now %d samples", p, err, len(p1.Samples))
	}
	if _, err := mergeProfiles([]*report.Profile{p1, {SampleTypes: []report.ValueType{{Type: "alloc", Unit: "count"}}}}); err == nil {
		t.Error("profiles of different sample types merged")
	}
}

// A sample in the frames a counted firing runs is the program's; one in
// the engine's end, or a clock read, is metering.
func TestCountingFrames(t *testing.T) {
	const m = "github.com/meterio/meter/"
	for fn, counting := range map[string]bool{
		m + "meter.begin.abi0":       true,
		m + "meter.(*Probe).Begin":   true,
		m + "meter.(*Probe).End":     true,
		m + "probe.(*Probe).On":      true,
		m + "probe.(*Probe).Begin":   true,
		m + "probe.(*Probe).End":     true,
		m + "meter.(*Probe).end":     false,
		m + "meter.measure":          false,
		m + "clock.rdtscp":           false,
		m + "probe.(*Probe).Unknown": false,
	} {
		if got := CountingFrames.MatchString(fn); got != counting {
			t.Errorf("%s: counting %v, want %v", fn, got, counting)
		}
	}
}

// Begin's leaf and the probe calls inlined around it count a firing of an
// untimed or disabled probe, which the model keeps in its caller's own
// time: such a sample is the program's. In the firing of a timed probe
// they are metering, which the engine takes off: the sample is left out.
func TestCountingFramesOfTimedFiringsAreMetering(t *testing.T) {
	const begin, inline = "github.com/meterio/meter/meter.begin", "github.com/meterio/meter/probe.(*Probe).Begin"
	locations := [][]string{
		{"main.main"},                            // 0
		{"main.a"},                               // 1: timed
		{"main.b", "main.a"},                     // 2: untimed, inlined into a
		{begin},                                  // 3
		{inline},                                 // 4
		{"main.f.func2"},                         // 5: a closure the truth names main.f.func1, timed
		{"runtime.memmove"},                      // 6
		{"github.com/meterio/meter/meter.stamp"}, // 7
	}
	samples := []struct {
		stack []int
		ns    int64
	}{
		{[]int{3, 4, 1, 0}, 10 * ms},  // counting a: metering
		{[]int{3, 4, 2, 0}, 20 * ms},  // counting b: the program's
		{[]int{4, 5, 0}, 40 * ms},     // the closure, through its alias: metering
		{[]int{6, 1, 0}, 80 * ms},     // the program's
		{[]int{7, 4, 2, 0}, 160 * ms}, // a clock read: metering
	}
	whole, err := report.ReadProfile(bytes.NewReader(cpuProfile(locations, samples)))
	if err != nil {
		t.Fatal(err)
	}
	timed := map[string]bool{"main.main": true, "main.a": true, "main.f.func1": true}
	alias := map[string]string{"main.f.func2": "main.f.func1"}
	prof, left := WithoutMetering(whole, MeteringFrames, alias, func(fn string) bool { return timed[fn] })
	if left != float64(210*ms) || len(prof.Samples) != 2 {
		t.Fatalf("left out %.0f ns, kept %d samples; want 210 ms, 2", left, len(prof.Samples))
	}
	if _, left := WithoutMetering(whole, MeteringFrames, nil, nil); left != float64(160*ms) {
		t.Errorf("with no timed probe: left out %.0f ns, want 160 ms", left)
	}
}

// The lower bound of a Poisson mean from n seen, against the exact one
// (the chi-squared distribution's 5% point of 2n degrees, halved).
func TestPoissonLow(t *testing.T) {
	for _, c := range []struct{ n, want float64 }{{4, 1.3663}, {10, 5.4254}, {20, 13.2547}, {100, 84.1393}} {
		if got := poissonLow(c.n); math.Abs(got-c.want) > c.want/100 {
			t.Errorf("poissonLow(%v) = %.4f, want %.4f within 1%%", c.n, got, c.want)
		}
	}
	if poissonLow(0) != 0 {
		t.Error("poissonLow(0) is not 0")
	}
}
