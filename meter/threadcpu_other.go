//go:build !linux || !amd64 || race

package meter

// threadCPU reads no thread clock here, where no stretch is seen to hold
// a system call either (syscall_other_amd64.go, count_other.go).
func threadCPU() int64 { return 0 }

const threadCPUOK = false
