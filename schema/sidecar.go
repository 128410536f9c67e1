package schema

// Sidecar files, written next to the model CSV: path + suffix.
const (
	MetaSuffix  = ".meta"  // what produced the model, one "key: value" a line
	StatsSuffix = ".stats" // the spread of each probe's metered firings, for compare
)

// Keys of the .meta file, in the order the runtime writes them. A reader
// keeps keys it does not know, in file order.
const (
	MetaTaken            = "taken"                 // RFC 3339 time the model was taken
	MetaStarted          = "started"               // RFC 3339 time the chain was first wired with metering on
	MetaFinal            = "final"                 // true: the last model of the run
	MetaCPU              = "cpu_ns"                // the process's CPU time, user and system, in ns, when the model was taken
	MetaCoreWait         = "core_wait_ns"          // the time its threads were ready to run and waited for a core, in ns, then (Linux's schedstat): wall time, and so own time, holds it, CPU time does not
	MetaClock            = "clock"                 // the tick source: tsc, mono or manual
	MetaClockFallback    = "clock_fallback"        // why METER_CLOCK=auto chose mono: what made the TSC unusable; only then
	MetaExtensions       = "extensions"            // the chain: name(settings) for each extension, in order, separated by spaces
	MetaProbes           = "probes"                // probes registered
	MetaTraces           = "traces"                // traces that ended
	MetaTruncatedTraces  = "truncated_traces"      // of which cut short
	MetaDroppedSpans     = "dropped_spans"         // spans lost on the way to an exporter
	MetaClampedDurations = "clamped_durations"     // negative clock differences counted as zero
	MetaReenabled        = "reenabled"             // times a spot check re-enabled a probe
	MetaUnwound          = "unwound"               // metered firings a panic or runtime.Goexit unwound before their end
	MetaOpen             = "open"                  // calls still running when the model was taken: their rows hold their time so far
	MetaDisturbed        = "disturbed_stretches"   // stretches of own time dropped because the goroutine parked in them, or waited in a system call
	MetaSyscallStretches = "syscall_stretches"     // of those, stretches timed by the wall clock that held a system call; the probe's stretches are timed by the thread's CPU clock from then on
	MetaDescheduled      = "descheduled_stretches" // stretches charged their wall time less run-queue waits: the goroutine was taken off its P in them
	MetaUnfollowed       = "unfollowed_marks"      // trace parts, and firings in them, that found the pool of marks dry: goroutines started there did not join the trace
	MetaWaits            = "waits"                 // "seen": stretches in which a goroutine parked are left out of own time; "not seen": own time holds waits
	MetaSampler          = "sampler"               // the sampler's mean interval (a Go duration): a stretch left out keeps the CPU time it saw there; "off": it keeps none
	MetaInterrupted      = "interrupted"           // selected firings whose own time was suspect of a pause: over the threshold and 64 times their probe's mean
	MetaOvercharged      = "overcharged_stretches" // stretches shorter than the estimate of the sampled calls in them: the excess was taken off the probe
	MetaOverhead         = "overhead_ns"           // the engine's own cost per metered firing, as key=value pairs
	MetaUntimedLimit     = "untimed_limit_ns"      // own time per call under which a cold probe is untimed
	MetaRoots            = "roots"                 // entry probes (units of work), separated by spaces
	MetaLabels           = "labels"                // label=rows for each label, separated by spaces (the live page)
)

// Columns of the .stats sidecar. Its first columns are StatsHeader's;
// readers find the later ones by name.
const (
	StatsProbe       = ColumnProbe
	StatsInclusiveSD = "inclusive_sd_ns" // standard deviation of the metered firings' inclusive times, ns
	StatsMetered     = "metered"         // how many firings were metered
	StatsTimeIn      = "time_in"         // for an untimed or disabled row, the probes whose own time holds its time, separated by spaces
	StatsInherentSD  = "inherent_sd_ns"  // standard deviation of their inherent times: sidecars of earlier runtimes have it
	StatsWaited      = "waited_ns"       // wall time of the stretches of its own time left out because its goroutine parked in them, ns, scaled to the count as its times are
)

// StatsHeader is the header row the runtime writes in the .stats sidecar.
const StatsHeader = StatsProbe + "," + StatsInclusiveSD + "," + StatsMetered + "," + StatsTimeIn + "," + StatsWaited

// StatsColumns returns the columns every .stats sidecar starts with.
func StatsColumns() []string { return []string{StatsProbe, StatsInclusiveSD} }
