package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/schema"
)

// writeMeta writes the .meta sidecar (schema.MetaSuffix): the CSV's
// columns are fixed, so what produced the model goes beside it, one
// "key: value" line each (the keys are schema's Meta constants): when it
// was taken, the clock, the extensions and their settings, and the
// counters of probes, traces, truncated traces, spans dropped on the way
// to an exporter, clamped durations and re-enabled probes.
func writeMeta(w io.Writer, s meter.Snapshot) error {
	bw := bufio.NewWriter(w)
	line := func(key, val string) {
		bw.WriteString(key)
		bw.WriteString(": ")
		bw.WriteString(val)
		bw.WriteByte('\n')
	}
	num := func(key string, n int64) { line(key, strconv.FormatInt(n, 10)) }
	line(schema.MetaTaken, s.Taken.UTC().Format(time.RFC3339Nano))
	if !s.Started.IsZero() {
		line(schema.MetaStarted, s.Started.UTC().Format(time.RFC3339Nano))
	}
	line(schema.MetaFinal, strconv.FormatBool(s.Final))
	if cpu := processCPU(); cpu > 0 {
		num(schema.MetaCPU, cpu)
	}
	if wait, ok := coreWait(); ok {
		num(schema.MetaCoreWait, wait)
	}
	line(schema.MetaClock, s.Clock)
	if s.ClockFallback != "" {
		line(schema.MetaClockFallback, s.ClockFallback)
	}
	line(schema.MetaExtensions, strings.Join(s.Extensions, " "))
	num(schema.MetaProbes, int64(s.Probes))
	num(schema.MetaTraces, s.Traces)
	num(schema.MetaTruncatedTraces, s.TruncatedTraces)
	num(schema.MetaDroppedSpans, s.Dropped)
	num(schema.MetaClampedDurations, int64(s.Clamped))
	var reenabled int64
	for _, r := range s.Rows {
		reenabled += r.Reenabled
	}
	num(schema.MetaReenabled, reenabled)
	num(schema.MetaUnwound, s.Unwound)
	var open int64
	for _, r := range s.Rows {
		open += r.Open
	}
	num(schema.MetaOpen, open)
	num(schema.MetaDisturbed, s.Disturbed)
	num(schema.MetaSyscallStretches, s.SyscallStretches)
	num(schema.MetaDescheduled, s.Descheduled)
	num(schema.MetaUnfollowed, s.Unfollowed)
	if s.WaitsSeen {
		line(schema.MetaWaits, "seen")
	} else {
		line(schema.MetaWaits, "not seen")
	}
	if s.Sampler > 0 {
		line(schema.MetaSampler, time.Duration(s.Sampler).String())
	} else {
		line(schema.MetaSampler, "off")
	}
	num(schema.MetaInterrupted, s.Interrupted)
	num(schema.MetaOvercharged, s.Overcharged)
	if o := s.Overheads; o != [3][2]int64{} {
		line(schema.MetaOverhead, fmt.Sprintf("inner=%d outer=%d selected_inner=%d selected_outer=%d forced_inner=%d forced_outer=%d selected_residual=%d forced_residual=%d clock_gap=%d unmetered=%d bracket=%d mark=%d",
			o[0][0], o[0][1], o[1][0], o[1][1], o[2][0], o[2][1], s.Residual[1], s.Residual[2], s.ClockGap, s.Unmetered, s.Bracket, s.StretchMark))
	}
	num(schema.MetaUntimedLimit, s.UntimedLimit)
	if len(s.Roots) > 0 {
		line(schema.MetaRoots, strings.Join(s.Roots, " "))
	}
	return bw.Flush()
}

// writeStats writes the .stats sidecar (schema.StatsSuffix): what
// comparing two models needs beyond the CSV. Under the header
// schema.StatsHeader, one line per row of s: the standard deviation of the
// probe's metered firings' inclusive times, how many were metered (a
// sampled probe's times in the CSV are estimates from those), the probes
// an untimed or disabled row's time is in, and the wall time of the
// stretches of its own time left out for a wait.
func writeStats(w io.Writer, s meter.Snapshot) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(schema.StatsHeader)
	bw.WriteByte('\n')
	var b []byte
	for _, r := range s.Rows {
		b = appendField(b[:0], r.Probe)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.SD, 'f', 1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Metered, 10)
		b = append(b, ',')
		b = appendField(b, strings.Join(r.TimeIn, " "))
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Waited, 10)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// writeStatsFile writes the sidecar to path as WriteFile does.
func writeStatsFile(path string, s meter.Snapshot) error {
	return WriteFile(path, func(w io.Writer) error { return writeStats(w, s) })
}

// writeMetaFile writes the metadata to path as WriteFile does.
func writeMetaFile(path string, s meter.Snapshot) error {
	return WriteFile(path, func(w io.Writer) error { return writeMeta(w, s) })
}
