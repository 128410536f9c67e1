package flowcheck

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/meter"
)

// Flowcheck is the extension. Build it with New.
type Flowcheck struct {
	lower, span uint64 // gaps are lower + [0, span)
	seed        uint64
	seeded      atomic.Uint64 // goroutines seeded so far
	random      func() uint64 // injected source, or nil for per-goroutine wyrand
	countdown   int           // goroutine word: skips left; < 0 after the last, none drawn
	state       int           // goroutine word: wyrand state; 0 = not seeded
}

var (
	_ meter.Countdown = (*Flowcheck)(nil)
	_ meter.Extension = (*Flowcheck)(nil)
)

var (
	wordsOnce        sync.Once
	countdown, state int
)

// MaxGap is the largest upper bound.
const MaxGap = 1<<31 - 1

// Option configures a Flowcheck.
type Option interface{ apply(*Flowcheck) }

type optionFunc func(*Flowcheck)

func (f optionFunc) apply(fc *Flowcheck) { f(fc) }

// WithSeed seeds the per-goroutine generators (by default from the time
// the extension is built).
func WithSeed(seed uint64) Option {
	return optionFunc(func(f *Flowcheck) { f.seed = seed })
}

// WithRandom replaces the per-goroutine generators with random, which must
// be safe to call from any goroutine. Each draw calls it once; tests use it
// to make every countdown known in advance.
func WithRandom(random func() uint64) Option {
	return optionFunc(func(f *Flowcheck) { f.random = random })
}

// New returns the extension for gaps in [lower, upper). The bounds are
// clamped to [0, MaxGap], and an upper below lower counts as lower.
func New(lower, upper int64, opts ...Option) *Flowcheck {
	wordsOnce.Do(func() { countdown, state = meter.NewGoroutineWord(), meter.NewGoroutineWord() })
	lower = min(max(lower, 0), MaxGap)
	upper = min(max(upper, lower), MaxGap)
	f := &Flowcheck{
		lower:     uint64(lower),
		span:      uint64(upper - lower),
		seed:      uint64(time.Now().UnixNano()),
		countdown: countdown,
		state:     state,
	}
	for _, o := range opts {
		o.apply(f)
	}
	return f
}

// Countdown implements meter.Countdown: the engine decrements this
// goroutine word for each firing offered outside a trace. The word holds
// the skips left; a new chain, or the end of a trace, leaves it at zero,
// which the next firing takes below zero: none drawn.
func (f *Flowcheck) Countdown() (word int, perProbe bool) { return f.countdown, false }

// Expired implements meter.Countdown. At zero the countdown has run out
// and the firing starts a trace; below zero none was drawn, so this firing
// draws the gap, counts as its first, and starts a trace only on a gap of
// zero.
func (f *Flowcheck) Expired(g *meter.Goroutine, p *meter.Probe, left int64) bool {
	if left == 0 {
		return true
	}
	d := int64(f.draw(g))
	g.Ext[f.countdown] = d
	return d == 0
}

// Start implements meter.Gate for a chain that asks it directly: the
// same decrement the engine runs inline, then Expired.
func (f *Flowcheck) Start(g *meter.Goroutine, p *meter.Probe) bool {
	g.Ext[f.countdown]--
	left := g.Ext[f.countdown]
	return left <= 0 && f.Expired(g, p, left)
}

// Ended draws the next countdown lazily: the goroutine's next offered
// firing draws it.
func (f *Flowcheck) Ended(g *meter.Goroutine) { g.Ext[f.countdown] = 0 }

// draw returns a gap in [lower, upper).
func (f *Flowcheck) draw(g *meter.Goroutine) uint64 {
	if f.span == 0 {
		return f.lower
	}
	var r uint64
	if f.random != nil {
		r = f.random()
	} else {
		s := uint64(g.Ext[f.state])
		if s == 0 {
			s = splitmix(f.seed + f.seeded.Add(1)*0x9E3779B97F4A7C15)
		}
		s += 0xa0761d6478bd642f
		g.Ext[f.state] = int64(s)
		hi, lo := bits.Mul64(s, s^0xe7037ed1a0b428db)
		r = hi ^ lo
	}
	hi, _ := bits.Mul64(r, f.span) // uniform in [0, span) without division
	return f.lower + hi
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	x ^= x >> 31
	if x == 0 {
		x = 1
	}
	return x
}

// Name implements meter.Extension.
func (f *Flowcheck) Name() string { return "flowcheck" }

// Settings implements meter.Extension.
func (f *Flowcheck) Settings() string {
	return fmt.Sprintf("lower=%d upper=%d", f.lower, f.lower+f.span)
}
