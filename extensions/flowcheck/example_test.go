package flowcheck_test

import (
	"fmt"

	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/meter"
)

// Wiring flowcheck by hand, as probe does from METER_FLOWCHECK_*: on each
// goroutine, skip 250 to 499 flows between two traces.
func ExampleNew() {
	f := flowcheck.New(250, 500, flowcheck.WithSeed(1))
	c := meter.Chain{Enabled: true, Gates: []meter.Gate{f}, Extensions: []meter.Extension{f}}
	fmt.Println(c.Extensions[0].Name() + "(" + c.Extensions[0].Settings() + ")")
	// Output: flowcheck(lower=250 upper=500)
}
