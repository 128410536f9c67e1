package meter

import (
	"fmt"
	"sync"
	"testing"
)

// Over whole rounds exactly one firing in n is due, however the firings
// spread over stripes and goroutines.
func TestCountdownWholeRounds(t *testing.T) {
	for _, n := range []int64{1, 2, 7, 16, 100, 1000, 4096} {
		for _, spread := range []int{1, 2, procStripes, stripeCount} {
			t.Run(fmt.Sprintf("n=%d/spread=%d", n, spread), func(t *testing.T) {
				var c Countdown
				c.reset(n, spread)
				const goroutines = 8
				each := int(3*n) + 5
				var wg sync.WaitGroup
				var mu sync.Mutex
				due := int64(0)
				for i := range goroutines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						s := uint(i*2) % uint(2*spread) % stripeCount // as many stripes as spread
						d := int64(0)
						for range each {
							if c.Take(s) {
								d++
							}
						}
						mu.Lock()
						due += d
						mu.Unlock()
					}()
				}
				wg.Wait()
				fired := int64(goroutines * each)
				if got := c.Counted(); got != fired {
					t.Fatalf("counted %d, fired %d", got, fired)
				}
				for ; fired%n != 0; fired++ {
					if c.Take(0) {
						due++
					}
				}
				if due != fired/n {
					t.Fatalf("%d firings, %d due; want %d", fired, due, fired/n)
				}
			})
		}
	}
}

// One goroutine on one stripe: one due per round of n firings, none after
// its round's nth firing (a due comes at most a lease early, never late).
func TestCountdownLoneStripe(t *testing.T) {
	for _, n := range []int64{1, 3, 100, 1000} {
		var c Countdown
		c.reset(n, 2)
		last, dues := int64(0), int64(0)
		for i := int64(1); i <= 50*n; i++ {
			if c.Take(2) {
				if gap := i - last; gap > n+c.lease.Load()-1 || i > (dues+1)*n {
					t.Fatalf("n=%d: due at firing %d, previous %d: late", n, i, last)
				}
				last = i
				dues++
			}
		}
		if dues != 50 {
			t.Fatalf("n=%d: %d due in 50 rounds", n, dues)
		}
	}
}
