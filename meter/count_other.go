//go:build !amd64 || race

package meter

// findMP leaves mpOffset at 0: off amd64 and under -race, begin is Go, and
// counts through procPin (count.go).
func findMP() {}
