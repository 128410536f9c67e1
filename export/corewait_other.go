//go:build !linux

package export

// coreWait is not known here: the .meta file leaves core_wait_ns out.
func coreWait() (int64, bool) { return 0, false }
