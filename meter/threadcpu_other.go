//go:build !linux || !(amd64 || arm64) || race

package meter

// threadCPU reads no thread clock here, where no stretch is seen to hold
// a system call either (syscall_other.go, wait_other.go).
func threadCPU() int64 { return 0 }

const threadCPUOK = false
