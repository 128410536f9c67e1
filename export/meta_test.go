package export

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/meterio/meter/meter"
)

func TestMetaAndStats(t *testing.T) {
	s := meter.Snapshot{
		Taken:   time.Date(2026, 11, 23, 10, 0, 1, 0, time.UTC),
		Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Final:   true,
		Roots:   []string{"example.com/app.handle", "example.com/app.worker"},
		Clock:   "tsc",
		Unwound: 3,
		Rows: []meter.Row{
			{Probe: "example.com/app.handle", Count: 10, Metered: 10, SD: 1234.56, Waited: 52000},
			{Probe: `example.com/app."odd,name"`, Count: 6400, Metered: 100, Label: meter.LabelSampled},
			{Probe: "example.com/app.small", Count: 9000, Metered: 1000, Label: meter.LabelUntimed, TimeIn: []string{"example.com/app.handle", "example.com/app.main"}},
		},
	}
	var meta, stats bytes.Buffer
	if err := writeMeta(&meta, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"taken: 2026-11-23T10:00:01Z\n", "started: 2026-11-23T10:00:00Z\n", "final: true\n",
		"unwound: 3\n", "roots: example.com/app.handle example.com/app.worker\n"} {
		if !strings.Contains(meta.String(), want) {
			t.Errorf("meta has no line %q:\n%s", want, meta.String())
		}
	}
	if strings.Contains(meta.String(), "clock_fallback") {
		t.Errorf("meta names a clock fallback where the clock is tsc:\n%s", meta.String())
	}
	s.Clock, s.ClockFallback = "mono", "clock: the kernel's clocksource is \"kvm-clock\", not tsc"
	meta.Reset()
	if err := writeMeta(&meta, s); err != nil {
		t.Fatal(err)
	}
	if want := "clock: mono\nclock_fallback: clock: the kernel's clocksource is \"kvm-clock\", not tsc\n"; !strings.Contains(meta.String(), want) {
		t.Errorf("meta has no lines %q:\n%s", want, meta.String())
	}
	if err := writeStats(&stats, s); err != nil {
		t.Fatal(err)
	}
	want := "probe,inclusive_sd_ns,metered,time_in,waited_ns\n" +
		"example.com/app.handle,1234.6,10,,52000\n" +
		"\"example.com/app.\"\"odd,name\"\"\",0.0,100,,0\n" +
		"example.com/app.small,0.0,1000,example.com/app.handle example.com/app.main,0\n"
	if stats.String() != want {
		t.Errorf("stats:\n%s\nwant:\n%s", stats.String(), want)
	}
}
