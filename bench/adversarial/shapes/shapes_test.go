package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/meterio/meter/bench/adversarial/internal/runinst"
)

// The table of call shapes: this program instrumented by meterinject, with
// every function (-all) and with its default selection, run with every
// firing metered and at default properties. Each row holds exactly the
// calls the program counted of its function; with every firing metered,
// the firings a panic unwound are exactly those: mayPanic's at every
// fourth round and deep's four frames at each crash. quit, which calls
// runtime.Goexit itself, has its End deferred (meterinject's defer shape),
// so Goexit ends its firing, and none of its firings is unwound.
func TestCallShapes(t *testing.T) {
	const rounds = 4000
	every := (rounds + 15) / 16
	for _, tc := range []struct {
		name string
		all  bool
		env  []string
	}{
		{"all/every", true, []string{"METER_HOTSPOT_ENABLED=false", "METER_HOTSPOT_UNTIMED=0"}},
		{"default/every", false, []string{"METER_HOTSPOT_ENABLED=false", "METER_HOTSPOT_UNTIMED=0"}},
		{"all/default", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runinst.Instrumented(t, "shapes", tc.all, tc.env, "-n", strconv.Itoa(rounds))
			r.CheckCounts(t, tc.all)
			if !tc.all || tc.env == nil {
				return
			}
			want := fmt.Sprintf("unwound: %d\n", (rounds+3)/4+every*4)
			if !strings.Contains(r.Meta, want) {
				t.Errorf(".meta has not %q:\n%s", want, r.Meta)
			}
		})
	}
}
