//go:build !linux || !amd64 || race

package meter

// threadCPU reads no thread clock here: a stretch that holds a system
// call is left out, as one that parked is (stretch.go).
func threadCPU() int64 { return 0 }

const threadCPUOK = false
