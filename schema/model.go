package schema

// Columns of the performance model CSV, in the order ModelHeader gives.
// Times are integers in nanoseconds.
const (
	ColumnProbe         = "probe"             // the probe's name, as the Go toolchain names the function
	ColumnCount         = "count"             // calls
	ColumnTotal         = "total_ns"          // inclusive time of those calls
	ColumnAvg           = "avg_ns"            // total_ns / count
	ColumnInherentTotal = "inherent_total_ns" // inclusive time less that of the timed callees nested directly in it
	ColumnInherentAvg   = "inherent_avg_ns"   // inherent_total_ns / count
	ColumnMin           = "min_ns"            // shortest metered firing
	ColumnMax           = "max_ns"            // longest metered firing
	ColumnLabel         = "label"             // "" or one of the Label constants
)

// ModelHeader is the header row of the performance model CSV.
const ModelHeader = ColumnProbe + "," + ColumnCount + "," + ColumnTotal + "," + ColumnAvg + "," +
	ColumnInherentTotal + "," + ColumnInherentAvg + "," + ColumnMin + "," + ColumnMax + "," + ColumnLabel

// ModelColumns returns the columns of the performance model CSV, in order.
// A newer runtime may add columns after these, never between them.
func ModelColumns() []string {
	return []string{ColumnProbe, ColumnCount, ColumnTotal, ColumnAvg, ColumnInherentTotal, ColumnInherentAvg,
		ColumnMin, ColumnMax, ColumnLabel}
}

// Labels of the model's label column. A row with no label is metered at
// every call.
const (
	LabelNone     = ""         // metered at every call
	LabelHotspot  = "hotspot"  // metered at every call, with mean inclusive and inherent times at or above hotspot's thresholds
	LabelSampled  = "sampled"  // count exact; times estimated from a sample of its calls
	LabelUntimed  = "untimed"  // count exact; calls too short to time: no times of its own, its time is in its callers' inherent time
	LabelTraced   = "traced"   // count exact; times from its firings in traces only (tracepoint or flowcheck on)
	LabelDisabled = "disabled" // hotspot switched it off: count and times up to then only
	LabelBudget   = "budget"   // budget switched it off: it can never afford its own measurement
)

// SwitchedOff reports whether label says the probe was switched off
// (disabled or budget): its count and times stop where that happened.
func SwitchedOff(label string) bool { return label == LabelDisabled || label == LabelBudget }
