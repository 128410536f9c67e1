//go:build linux && (amd64 || arm64 || ppc64le || s390x || riscv64 || loong64)

package meter

import (
	"syscall"
	"unsafe"
)

// The tallies' region: address space reserved without swap
// (MAP_NORESERVE), whose pages the kernel gives as they are first written.
func init() {
	b, err := syscall.Mmap(-1, 0, tallyRegion, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err == nil {
		tallyBase = unsafe.Pointer(&b[0])
	}
}
