//go:build !amd64 || race

package meter

// writeRow adds one firing to r, whose only writer is the caller: in Go,
// with atomics (under -race, so that the detector sees the seqlock; and on
// other architectures, whose stores may be seen out of order).
func writeRow(r *row, incl, own, w int64) { writeRowGo(r, incl, own, w) }
