//go:build !linux

package export

func threadCPU() int64 { return 0 }

// ThreadCPU returns 0 where per-thread CPU time is not supported.
func ThreadCPU() int64 { return 0 }

// ProcessCPU returns 0 where it is not supported.
func ProcessCPU() int64 { return 0 }

func (p *Pipeline) readCPU() {}
