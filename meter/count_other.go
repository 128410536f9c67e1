//go:build !amd64 || race

package meter

// findMP leaves mpOffset at 0: off amd64 and under -race, begin is Go, and
// counts through procPin (count.go).
func findMP() {}

// waitMark and waited: off amd64 and under -race no wait is seen, and own
// times are wall times (stretch.go).
func waitMark() uint8   { return 0 }
func waited() bool      { return false }
func otherReason() bool { return false }
func waitsSeen() bool   { return false }
func timesLeft() uint8  { return 0 }

// findWaits finds nothing here.
func findWaits() {}
