package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/meter"
)

// MetaSuffix names the file written next to the CSV model: the CSV's
// columns are fixed, so what produced the model (the extensions and their
// settings, the clock) and the engine's counters go beside it, one
// "key: value" line each.
const MetaSuffix = ".meta"

// WriteMeta writes the model's metadata: when it was taken, the clock, the
// extensions, and the counters of probes, traces, truncated traces, spans
// dropped on the way to an exporter, clamped durations and re-enabled
// probes.
func WriteMeta(w io.Writer, s meter.Snapshot) error {
	bw := bufio.NewWriter(w)
	line := func(key, val string) {
		bw.WriteString(key)
		bw.WriteString(": ")
		bw.WriteString(val)
		bw.WriteByte('\n')
	}
	num := func(key string, n int64) { line(key, strconv.FormatInt(n, 10)) }
	line("taken", s.Taken.UTC().Format(time.RFC3339Nano))
	if !s.Started.IsZero() {
		line("started", s.Started.UTC().Format(time.RFC3339Nano))
	}
	line("final", strconv.FormatBool(s.Final))
	if cpu := processCPU(); cpu > 0 {
		num("cpu_ns", cpu)
	}
	line("clock", s.Clock)
	line("extensions", strings.Join(s.Extensions, " "))
	num("probes", int64(s.Probes))
	num("traces", s.Traces)
	num("truncated_traces", s.TruncatedTraces)
	num("dropped_spans", s.Dropped)
	num("clamped_durations", int64(s.Clamped))
	var reenabled int64
	for _, r := range s.Rows {
		reenabled += r.Reenabled
	}
	num("reenabled", reenabled)
	num("unwound", s.Unwound)
	num("disturbed_stretches", s.Disturbed)
	num("interrupted", s.Interrupted)
	if o := s.Overheads; o != [3][2]int64{} {
		line("overhead_ns", fmt.Sprintf("inner=%d outer=%d selected_inner=%d selected_outer=%d forced_inner=%d forced_outer=%d",
			o[0][0], o[0][1], o[1][0], o[1][1], o[2][0], o[2][1]))
	}
	num("untimed_limit_ns", s.UntimedLimit)
	if len(s.Roots) > 0 {
		line("roots", strings.Join(s.Roots, " "))
	}
	return bw.Flush()
}

// StatsSuffix names the file written next to the CSV model with what
// comparing two models needs beyond it: per probe, the standard deviation
// of its metered firings' inclusive times, and how many were metered (a
// sampled probe's times in the CSV are estimates from those).
const StatsSuffix = ".stats"

// WriteStats writes the sidecar: header probe,inclusive_sd_ns,metered,time_in,
// one row per row of s; time_in, for an untimed or disabled row, the
// probes whose own time holds its time, separated by spaces.
func WriteStats(w io.Writer, s meter.Snapshot) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("probe,inclusive_sd_ns,metered,time_in\n")
	var b []byte
	for _, r := range s.Rows {
		b = appendField(b[:0], r.Probe)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.SD, 'f', 1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Metered, 10)
		b = append(b, ',')
		b = appendField(b, strings.Join(r.TimeIn, " "))
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// WriteStatsFile writes the sidecar to path as WriteFile does.
func WriteStatsFile(path string, s meter.Snapshot) error {
	return WriteFile(path, func(w io.Writer) error { return WriteStats(w, s) })
}

// WriteMetaFile writes the metadata to path as WriteFile does.
func WriteMetaFile(path string, s meter.Snapshot) error {
	return WriteFile(path, func(w io.Writer) error { return WriteMeta(w, s) })
}
