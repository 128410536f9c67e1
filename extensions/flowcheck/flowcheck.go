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
	tag         int64         // this Flowcheck's mark on the countdowns it draws
	countdown   int           // goroutine word: tag | remaining skips + 1
	state       int           // goroutine word: wyrand state; 0 = not seeded
}

var (
	_ meter.Gate      = (*Flowcheck)(nil)
	_ meter.Extension = (*Flowcheck)(nil)
)

var (
	wordsOnce        sync.Once
	countdown, state int
	built            atomic.Int64
)

// A countdown word holds the drawing Flowcheck's tag in its high half and
// the skips left plus one in its low half (0: none drawn). The tag makes a
// countdown left on a goroutine by an earlier chain (tests wire several)
// read as none drawn.
const low = 1<<32 - 1

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
		tag:       built.Add(1) << 32,
		countdown: countdown,
		state:     state,
	}
	for _, o := range opts {
		o.apply(f)
	}
	return f
}

// Start counts one firing outside a trace down, and reports whether it is
// the one that starts a trace. Only g's own goroutine calls it. The common
// case, this Flowcheck's countdown with more than one skip left, is one
// compare.
func (f *Flowcheck) Start(g *meter.Goroutine, p *meter.Probe) bool {
	w := &g.Ext[f.countdown]
	if c := *w; uint64(c-f.tag-2) < low-1 {
		*w = c - 1
		return false
	}
	return f.last(g, w)
}

// last handles a countdown at its last firing, or none drawn (by this
// Flowcheck).
func (f *Flowcheck) last(g *meter.Goroutine, w *int64) bool {
	c := *w
	if c&^low != f.tag || c&low == 0 {
		if c&^low != f.tag {
			g.Ext[f.state] = 0 // drawn by an earlier chain: seed afresh
		}
		c = f.tag | int64(f.draw(g)+1)
	}
	c--
	*w = c
	return c&low == 0
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
