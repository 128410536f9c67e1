package tracepoint

import (
	"fmt"
	"math"
	"regexp"
	"sync"

	"github.com/meterio/meter/meter"
)

// MaxSample is the largest sample rate.
const MaxSample = 1 << 60

// never is the count of a probe that may not start traces: it would take
// 2^63 firings to run out.
const never = math.MaxInt64

// Tracepoint is the extension. Build it with New.
type Tracepoint struct {
	sample  int64
	include *regexp.Regexp // nil: every probe
	word    int
}

var (
	_ meter.Countdown = (*Tracepoint)(nil)
	_ meter.Registrar = (*Tracepoint)(nil)
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

// Registered implements meter.Registrar: it runs the include expression
// on p's name, once, and sets p's count to the sample rate, or to never.
func (t *Tracepoint) Registered(p *meter.Probe) {
	if t.include != nil && !t.include.MatchString(p.Name()) {
		p.Ext[t.word].Store(never)
		return
	}
	p.Ext[t.word].Store(t.sample)
}

// Countdown implements meter.Countdown: the engine decrements p's count,
// atomically, for every firing of p offered outside a trace.
func (t *Tracepoint) Countdown() (word int, perProbe bool) { return t.word, true }

// Expired implements meter.Countdown: the firing that is due by
// meter.Due (exactly one in the sample rate, across goroutines) starts a
// trace.
func (t *Tracepoint) Expired(g *meter.Goroutine, p *meter.Probe, left int64) bool {
	return meter.Due(&p.Ext[t.word], left, t.sample)
}

// Start implements meter.Gate for a chain that asks it directly: the
// same decrement the engine runs inline, then Expired.
func (t *Tracepoint) Start(g *meter.Goroutine, p *meter.Probe) bool {
	left := p.Ext[t.word].Add(-1)
	return left <= 0 && t.Expired(g, p, left)
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
