//go:build race

package otlp

// raceEnabled: the tests run under the race detector, and so do the
// programs they build.
const raceEnabled = true
