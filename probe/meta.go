package probe

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
)

// MetaSuffix names the file written next to the CSV model: the CSV's
// columns are fixed, so what produced the model (the extensions and their
// settings, the clock) and the engine's counters go beside it, one
// "key: value" line each.
const MetaSuffix = ".meta"

// writeMeta writes the model's metadata to path, atomically.
func writeMeta(path string, s meter.Snapshot) error {
	var b strings.Builder
	fmt.Fprintf(&b, "taken: %s\n", s.Taken.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "clock: %s\n", s.Clock)
	fmt.Fprintf(&b, "extensions: %s\n", strings.Join(s.Extensions, " "))
	fmt.Fprintf(&b, "probes: %d\n", s.Probes)
	fmt.Fprintf(&b, "traces: %d\n", s.Traces)
	fmt.Fprintf(&b, "truncated_traces: %d\n", s.TruncatedTraces)
	fmt.Fprintf(&b, "dropped_spans: %d\n", s.Dropped)
	fmt.Fprintf(&b, "clamped_durations: %d\n", s.Clamped)
	var reenabled int64
	for _, r := range s.Rows {
		reenabled += r.Reenabled
	}
	fmt.Fprintf(&b, "reenabled: %d\n", reenabled)
	return export.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}
