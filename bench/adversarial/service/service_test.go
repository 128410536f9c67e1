package main

import (
	"strings"
	"testing"

	"github.com/meterio/meter/bench/adversarial/internal/runinst"
)

// The service's middleware closures, returned by functions that are not
// instrumented under the default selection, keep every call: with every
// firing metered and at default properties, with either selection, each
// row holds exactly the calls the program counted, and no firing is
// unwound (nothing panics).
func TestMiddlewareCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		all  bool
		env  []string
	}{
		{"default/every", false, []string{"METER_HOTSPOT_ENABLED=false", "METER_HOTSPOT_UNTIMED=0"}},
		{"all/every", true, []string{"METER_HOTSPOT_ENABLED=false", "METER_HOTSPOT_UNTIMED=0"}},
		{"default/default", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runinst.Instrumented(t, "service", tc.all, tc.env, "-n", "2000")
			r.CheckCounts(t, tc.all)
			for _, mw := range []string{"main.trim.func1", "main.auth.func1", "main.requestID.func1", "main.recoverer.func1"} {
				if r.Rows[mw] == 0 {
					t.Errorf("%s: no calls in the model", mw)
				}
			}
			if !strings.Contains(r.Meta, "unwound: 0\n") {
				t.Errorf("firings unwound with nothing panicking:\n%s", r.Meta)
			}
		})
	}
}
