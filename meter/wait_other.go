//go:build !(amd64 || arm64) || race

package meter

import "github.com/meterio/meter/clock"

// Off amd64 and arm64, and under -race, no wait is seen, and own times
// are wall times (stretch.go).
func waitsSeen() bool                           { return false }
func marks() (left, reason uint8, sys bool)     { return 0, 0, false }
func peekMarks() (left, reason uint8, sys bool) { return 0, 0, false }
func isWaitReason(reason uint8) bool            { return false }
func isWorkReason(reason uint8) bool            { return false }

var assistReason uint8

// findWaits finds nothing here.
func findWaits() {}

// stamp is the clock, and no marks, here.
func stamp() (t int64, left, reason uint8, sys bool) { return stampOther() }

// stampOther is stamp.
func stampOther() (t int64, left, reason uint8, sys bool) {
	if m := engine.manual; m != nil {
		t = m.Now()
		left, reason, sys = engine.manualMarks()
		return
	}
	return clock.Now(), 0, 0, false
}
