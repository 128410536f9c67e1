package schema

// Sample types of the runtime's pprof profile, in this order; inherent is
// the default.
const (
	SampleCount     = "count"     // metered firings
	SampleInclusive = "inclusive" // ns: End − Begin of those firings
	SampleInherent  = "inherent"  // ns: inclusive minus metered children
)

// Units of those sample types.
const (
	UnitCount       = "count"
	UnitNanoseconds = "nanoseconds"
)

// Every sample of the profile carries the label SourceLabel: SourceTrace
// for a traced call path, SourceModel for what the model holds of a probe
// beyond its traced firings (the probe alone on its stack).
const (
	SourceLabel = "source"
	SourceTrace = "trace"
	SourceModel = "model"
)

// Field numbers of profile.proto (github.com/google/pprof, proto/profile.proto)
// that the runtime writes or the report reads.
const (
	ProfileSampleType        = 1
	ProfileSample            = 2
	ProfileMapping           = 3
	ProfileLocation          = 4
	ProfileFunction          = 5
	ProfileStringTable       = 6
	ProfileTimeNanos         = 9
	ProfilePeriodType        = 11
	ProfilePeriod            = 12
	ProfileComment           = 13
	ProfileDefaultSampleType = 14

	ValueTypeType = 1
	ValueTypeUnit = 2

	SampleLocationID = 1
	SampleValue      = 2
	SampleLabel      = 3

	LabelKey = 1
	LabelStr = 2

	MappingID           = 1
	MappingFilename     = 5
	MappingHasFunctions = 7

	LocationID        = 1
	LocationMappingID = 2
	LocationAddress   = 3
	LocationLine      = 4

	LineFunctionID = 1

	FunctionID         = 1
	FunctionName       = 2
	FunctionSystemName = 3
)
