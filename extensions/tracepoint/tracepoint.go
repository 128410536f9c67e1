package tracepoint

import (
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/meterio/meter/meter"
)

// MaxSample is the largest sample rate: the counter shares its word with
// two flag bits.
const MaxSample = 1 << 60

// Bits of a probe's word: the include decision, once made, and the count of
// offered firings since the last one that started a trace.
const (
	known    = 1 << 62 // the include decision is made
	excluded = 1 << 61 // the probe may not start traces
	count    = 1<<61 - 1
)

// Tracepoint is the extension. Build it with New.
type Tracepoint struct {
	sample  int64
	include *regexp.Regexp // nil: every probe
	word    int
}

var (
	_ meter.Gate      = (*Tracepoint)(nil)
	_ meter.Extension = (*Tracepoint)(nil)
)

var (
	wordOnce sync.Once
	word     int
)

// New returns the extension: every sample-th offered firing of a probe
// (clamped to 1..MaxSample) starts a trace, for the probes whose names
// include matches (every probe when include is nil).
func New(sample int64, include *regexp.Regexp) *Tracepoint {
	wordOnce.Do(func() { word = meter.NewProbeWord() })
	return &Tracepoint{sample: min(max(sample, 1), MaxSample), include: include, word: word}
}

// Start counts one firing of p outside a trace and reports whether it is
// the one that starts a trace. The common case is one load, one compare
// and one compare-and-swap.
func (t *Tracepoint) Start(g *meter.Goroutine, p *meter.Probe) bool {
	w := &p.Ext[t.word]
	v := w.Load()
	// Included, decided, and short of the sample: count and go on.
	if v&(known|excluded) == known && v&count+1 < t.sample && w.CompareAndSwap(v, v+1) {
		return false
	}
	return t.count(p, w)
}

// count is Start's general case: a first sight, the firing that starts a
// trace, an excluded probe, or a lost compare-and-swap.
func (t *Tracepoint) count(p *meter.Probe, w *atomic.Int64) bool {
	for {
		v := w.Load()
		if v&known == 0 {
			v = t.decide(p, w)
		}
		if v&excluded != 0 {
			return false
		}
		n := v&count + 1
		start := n >= t.sample
		if start {
			n = 0
		}
		if w.CompareAndSwap(v, v&^count|n) {
			return start
		}
	}
}

// decide runs the include expression once for p and caches the answer.
// The answer belongs to the probe, not to this Tracepoint: a process wires
// one.
func (t *Tracepoint) decide(p *meter.Probe, w *atomic.Int64) int64 {
	flags := int64(known)
	if t.include != nil && !t.include.MatchString(p.Name()) {
		flags |= excluded
	}
	for {
		v := w.Load()
		if v&known != 0 || w.CompareAndSwap(v, v|flags) {
			return w.Load()
		}
	}
}

// Ended implements meter.Gate; the counters need nothing when a trace ends.
func (t *Tracepoint) Ended(g *meter.Goroutine) {}

// Name implements meter.Extension.
func (t *Tracepoint) Name() string { return "tracepoint" }

// Settings implements meter.Extension.
func (t *Tracepoint) Settings() string {
	s := fmt.Sprintf("sample=%d", t.sample)
	if t.include != nil {
		s += fmt.Sprintf(" include=%q", t.include.String())
	}
	return s
}
