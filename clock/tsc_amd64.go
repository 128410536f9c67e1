package clock

// rdtscp reads the time-stamp counter with RDTSCP, which waits until every
// earlier instruction has executed, so the read cannot drift ahead of the
// code it brackets.
//
//go:noescape
func rdtscp() int64

// rdtscFenced reads the counter with LFENCE;RDTSC: the same ordering as
// RDTSCP by another route. Kept for the benchmark that chose RDTSCP and for
// CPUs without RDTSCP.
//
//go:noescape
func rdtscFenced() int64

// rdtsc reads the counter with a bare RDTSC, which the CPU may execute
// early. Benchmarks only: it shows what the ordering costs.
//
//go:noescape
func rdtsc() int64

//go:noescape
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// cpuTSC reports what CPUID says about the counter: whether RDTSCP exists
// (leaf 0x80000001 EDX bit 27) and whether the TSC is invariant, i.e. ticks
// at a constant rate in every P-, C- and T-state (leaf 0x80000007 EDX bit 8).
func cpuTSC() (hasRDTSCP, invariant bool) {
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if maxExt >= 0x80000001 {
		_, _, _, edx := cpuid(0x80000001, 0)
		hasRDTSCP = edx&(1<<27) != 0
	}
	if maxExt >= 0x80000007 {
		_, _, _, edx := cpuid(0x80000007, 0)
		invariant = edx&(1<<8) != 0
	}
	return hasRDTSCP, invariant
}
