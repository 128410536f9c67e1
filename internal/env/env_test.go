package env

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func load(kv ...string) (Config, string) {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	var errs bytes.Buffer
	c := Load(func(k string) (string, bool) { v, ok := m[k]; return v, ok }, &errs)
	return c, errs.String()
}

func TestDefaults(t *testing.T) {
	c, errs := load()
	if errs != "" {
		t.Fatalf("complaints with no properties set: %q", errs)
	}
	d := Defaults()
	if c.Enabled != true || c.Clock != "auto" || !c.HotspotEnabled || c.HotspotThreshold != 10_000 ||
		c.HotspotThresholdInherent != 2_000 || c.HotspotInitial != 1000 || c.BudgetEnabled || c.BudgetPercent != 10 ||
		c.BudgetUnit != 1_000 || c.TracepointEnabled || c.TracepointSample != 100 || c.TracepointInclude != nil ||
		c.FlowcheckEnabled || c.FlowcheckLower != 0 || c.FlowcheckUpper != 100 || c.SpotcheckEnabled ||
		c.SpotcheckInterval != 10000 || c.TraceMax != 10000 || c.ExportCSV != "" || c.ExportPprof != "" ||
		c.ExportOTLP || c.ExportInterval != 0 || c.HotspotInitial != d.HotspotInitial || c.PprofLabels ||
		c.HotspotUntimed != 2 || c.HotspotCost != 0.02 {
		t.Fatalf("defaults differ from docs/design.md: %+v", c)
	}
}

func TestGoodValues(t *testing.T) {
	c, errs := load(
		"METER_ENABLED", "false", "METER_CLOCK", "MONO",
		"METER_HOTSPOT_ENABLED", "0", "METER_HOTSPOT_THRESHOLD", "2.5", "METER_HOTSPOT_THRESHOLD_INHERENT", "0",
		"METER_HOTSPOT_INITIAL", "7", "METER_BUDGET_ENABLED", "true", "METER_BUDGET_PERCENT", "100",
		"METER_BUDGET_UNIT", "0.5", "METER_TRACEPOINT_ENABLED", "1", "METER_TRACEPOINT_SAMPLE", "3",
		"METER_TRACEPOINT_INCLUDE", `^bolt\.`, "METER_FLOWCHECK_ENABLED", "true", "METER_FLOWCHECK_LOWER", "250",
		"METER_FLOWCHECK_UPPER", "250", "METER_SPOTCHECK_ENABLED", "true", "METER_SPOTCHECK_INTERVAL", "9",
		"METER_TRACE_MAX", "11", "METER_EXPORT_CSV", "/tmp/m.csv", "METER_EXPORT_PPROF", "/tmp/m.pb.gz",
		"METER_EXPORT_OTLP", "true", "METER_EXPORT_INTERVAL", "1m30s", "METER_PPROF_LABELS", "true",
		"METER_HOTSPOT_UNTIMED", "0", "METER_HOTSPOT_COST", "5",
	)
	if errs != "" {
		t.Fatalf("complaints about good values: %q", errs)
	}
	if c.Enabled || c.Clock != "mono" || c.HotspotEnabled || c.HotspotThreshold != 2_500 || c.HotspotThresholdInherent != 0 ||
		c.HotspotInitial != 7 || !c.BudgetEnabled || c.BudgetPercent != 100 || c.BudgetUnit != 500 ||
		!c.TracepointEnabled || c.TracepointSample != 3 || !c.TracepointInclude.MatchString("bolt.(*DB).Update") ||
		!c.FlowcheckEnabled || c.FlowcheckLower != 250 || c.FlowcheckUpper != 250 || !c.SpotcheckEnabled ||
		c.SpotcheckInterval != 9 || c.TraceMax != 11 || c.ExportCSV != "/tmp/m.csv" || c.ExportPprof != "/tmp/m.pb.gz" ||
		!c.ExportOTLP || c.ExportInterval != 90*time.Second || !c.PprofLabels || c.HotspotUntimed != 0 ||
		c.HotspotCost != 0.05 {
		t.Fatalf("parsed %+v", c)
	}
}

// Every bad value gets exactly one line naming the property, the value and
// what is accepted, and the default stands.
func TestBadValuesGetOneLineAndTheDefault(t *testing.T) {
	d := Defaults()
	for _, tc := range []struct {
		name, value, accepted string
		check                 func(Config) bool
	}{
		{"METER_ENABLED", "yes please", "true or false", func(c Config) bool { return c.Enabled == d.Enabled }},
		{"METER_CLOCK", "hpet", "one of auto, tsc, mono", func(c Config) bool { return c.Clock == "auto" }},
		{"METER_HOTSPOT_THRESHOLD", "ten", "microseconds", func(c Config) bool { return c.HotspotThreshold == d.HotspotThreshold }},
		{"METER_HOTSPOT_THRESHOLD_INHERENT", "-1", "microseconds", func(c Config) bool { return c.HotspotThresholdInherent == d.HotspotThresholdInherent }},
		{"METER_HOTSPOT_INITIAL", "0", "from 1 to 2147483647", func(c Config) bool { return c.HotspotInitial == d.HotspotInitial }},
		{"METER_BUDGET_PERCENT", "101", "from 1 to 100", func(c Config) bool { return c.BudgetPercent == d.BudgetPercent }},
		{"METER_BUDGET_PERCENT", "10%", "from 1 to 100", func(c Config) bool { return c.BudgetPercent == d.BudgetPercent }},
		{"METER_BUDGET_UNIT", "0", "at least 0.001", func(c Config) bool { return c.BudgetUnit == d.BudgetUnit }},
		{"METER_TRACEPOINT_SAMPLE", "0", "from 1 to 1099511627776", func(c Config) bool { return c.TracepointSample == d.TracepointSample }},
		{"METER_TRACEPOINT_INCLUDE", "bolt.(", "regular expression", func(c Config) bool { return c.TracepointInclude == nil }},
		{"METER_FLOWCHECK_LOWER", "-5", "from 0 to 2147483647", func(c Config) bool { return c.FlowcheckLower == d.FlowcheckLower }},
		{"METER_SPOTCHECK_INTERVAL", "1e4", "from 1 to 1099511627776", func(c Config) bool { return c.SpotcheckInterval == d.SpotcheckInterval }},
		{"METER_TRACE_MAX", "many", "from 1 to 100000", func(c Config) bool { return c.TraceMax == d.TraceMax }},
		{"METER_TRACE_MAX", "2147483648", "from 1 to 100000", func(c Config) bool { return c.TraceMax == d.TraceMax }},
		{"METER_TRACE_MAX", "100001", "from 1 to 100000", func(c Config) bool { return c.TraceMax == d.TraceMax }},
		{"METER_PPROF_LABELS", "on", "true or false", func(c Config) bool { return !c.PprofLabels }},
		{"METER_EXPORT_OTLP", "grpc", "true or false", func(c Config) bool { return !c.ExportOTLP }},
		{"METER_EXPORT_INTERVAL", "10", "Go duration", func(c Config) bool { return c.ExportInterval == 0 }},
		{"METER_HOTSPOT_SAMPLE", "-1", "from 0 to 1073741824", func(c Config) bool { return c.HotspotSample == d.HotspotSample }},
		{"METER_HOTSPOT_SAMPLE_SHARE", "0.5%", "percentage from 0 to 100", func(c Config) bool { return c.HotspotSampleShare == d.HotspotSampleShare }},
		{"METER_HOTSPOT_COST", "101", "percentage from 0 to 100", func(c Config) bool { return c.HotspotCost == d.HotspotCost }},
		{"METER_HOTSPOT_UNTIMED", "-1", "from 0 to 1000", func(c Config) bool { return c.HotspotUntimed == d.HotspotUntimed }},
		{"METER_HOTSPOT_UNTIMED", "4.5", "from 0 to 1000", func(c Config) bool { return c.HotspotUntimed == d.HotspotUntimed }},
	} {
		c, errs := load(tc.name, tc.value)
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if len(lines) != 1 || !strings.Contains(errs, tc.name) || !strings.Contains(errs, tc.value) || !strings.Contains(errs, tc.accepted) {
			t.Errorf("%s=%q: stderr %q, want one line naming the property, the value and %q", tc.name, tc.value, errs, tc.accepted)
		}
		if !tc.check(c) {
			t.Errorf("%s=%q: default not kept: %+v", tc.name, tc.value, c)
		}
	}
}

func TestFlowcheckUpperBelowLowerIsRefused(t *testing.T) {
	c, errs := load("METER_FLOWCHECK_LOWER", "500", "METER_FLOWCHECK_UPPER", "250")
	if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "METER_FLOWCHECK_UPPER=250") || !strings.Contains(errs, "LOWER") {
		t.Fatalf("stderr %q", errs)
	}
	if c.FlowcheckLower != 0 || c.FlowcheckUpper != 100 {
		t.Fatalf("bounds %d..%d, want the defaults 0..100", c.FlowcheckLower, c.FlowcheckUpper)
	}
}

func TestUnknownNamesTheNearestProperty(t *testing.T) {
	var errs bytes.Buffer
	Unknown([]string{"PATH=/bin", "METER_CLOCK=tsc", "METER_RUNTIME=/src/meter", "METER_TRACEPOINT_SAMPLES=5", "METER_EXPORT_CVS=m.csv", "METERX=1"}, &errs)
	want := "meter: METER_TRACEPOINT_SAMPLES is not a property (did you mean METER_TRACEPOINT_SAMPLE?); it is ignored\n" +
		"meter: METER_EXPORT_CVS is not a property (did you mean METER_EXPORT_CSV?); it is ignored\n"
	if errs.String() != want {
		t.Fatalf("stderr %q\nwant %q", errs.String(), want)
	}
}

// TestDocsQuoteProperties: each property is described once, in
// Properties; probe's package doc and docs/chain.md quote the table as
// Table renders it.
func TestDocsQuoteProperties(t *testing.T) {
	for _, q := range []struct{ file, prefix string }{
		{"../../probe/doc.go", "//\t"},
		{"../../docs/chain.md", ""},
	} {
		b, err := os.ReadFile(q.file)
		if err != nil {
			t.Fatal(err)
		}
		if want := Table(q.prefix); !strings.Contains(string(b), want) {
			t.Errorf("%s does not quote the properties as Properties describes them; want:\n%s", q.file, want)
		}
	}
	if len(Names) != len(Properties) {
		t.Fatalf("%d names for %d properties", len(Names), len(Properties))
	}
}
