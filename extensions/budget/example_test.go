package budget_test

import (
	"fmt"

	"github.com/meterio/meter/extensions/budget"
)

// A function whose metered firings take 1 ms on average may cause 100
// measurements per call at 10% of a 1 µs unit; one of 9 µs cannot afford
// its own and is disabled.
func ExampleBudget_Of() {
	b := budget.New(10, 1000)
	fmt.Println(b.Of(1_000_000), b.Of(9_000))
	// Output: 100 0
}
