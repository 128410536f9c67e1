//go:build !amd64 || race

package meter

// findMP leaves mpOffset at 0: off amd64 and under -race, begin is Go, and
// counts through procPin (count.go).
func findMP() {}

// Off amd64 and under -race no wait is seen, and own times are wall times
// (stretch.go).
func waitsSeen() bool                           { return false }
func marks() (left, reason uint8, sys bool)     { return 0, 0, false }
func peekMarks() (left, reason uint8, sys bool) { return 0, 0, false }
func isWaitReason(reason uint8) bool            { return false }
func isWorkReason(reason uint8) bool            { return false }

var assistReason uint8

// findWaits finds nothing here.
func findWaits() {}
