// Command phases runs three phases of about a second each, and different
// functions dominate each: a compute phase that allocates nothing
// (crunch, fold), then an allocating phase (makeRecord, indexRecords),
// then compute again (checksum, scramble). A clock or an estimate that
// follows allocation sees only the middle phase.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and most are small, so meterinject's default selection
// leaves them out: instrument with -all.
//
//	go run ./bench/adversarial/phases [-scale 1] [-cpuprofile cpu.pprof]
package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

// Work of each phase at -scale 1.
const (
	crunchCalls  = 8_000_000 // compute: crunch, each calling fold foldsPer times
	foldsPer     = 4
	recordCalls  = 4_500_000 // allocate: makeRecord, indexed in batches
	batch        = 1000
	checksumRuns = 10_000_000 // compute again: checksum over a block, scrambling each word
	blockWords   = 32
)

var sink uint64

//go:noinline
func fold(x uint64) uint64 {
	for i := 0; i < 6; i++ {
		x = x*0x9E3779B97F4A7C15 + uint64(i)
		x ^= x >> 31
	}
	return x
}

//go:noinline
func crunch(x uint64) uint64 {
	for i := 0; i < foldsPer; i++ {
		x = fold(x)
	}
	for i := 0; i < 80; i++ {
		x = x*0xBF58476D1CE4E5B9 ^ x>>27
	}
	return x
}

// record is what the allocating phase builds.
type record struct {
	key   string
	tags  []string
	score int
}

//go:noinline
func makeRecord(i int) *record {
	r := &record{key: "rec-" + strconv.Itoa(i), score: i % 97}
	for t := 0; t < 3; t++ {
		r.tags = append(r.tags, r.key+"/"+strconv.Itoa(t))
	}
	return r
}

//go:noinline
func indexRecords(rs []*record) map[string]int {
	m := make(map[string]int, len(rs))
	for i, r := range rs {
		m[r.key] = i
	}
	return m
}

//go:noinline
func scramble(w uint64) uint64 {
	return (w ^ w>>33) * 0xFF51AFD7ED558CCD
}

//go:noinline
func checksum(block []uint64) uint64 {
	var h uint64 = 14695981039346656037
	for _, w := range block {
		h = (h ^ scramble(w)) * 1099511628211
	}
	return h
}

//go:noinline
func computePhase(n int) uint64 {
	x := uint64(7)
	for i := 0; i < n; i++ {
		x = crunch(x)
	}
	return x
}

//go:noinline
func allocPhase(n int) uint64 {
	var sum uint64
	rs := make([]*record, 0, batch)
	for i := 0; i < n; i++ {
		rs = append(rs, makeRecord(i))
		if len(rs) == batch {
			sum += uint64(len(indexRecords(rs)))
			rs = rs[:0]
		}
	}
	return sum
}

//go:noinline
func checksumPhase(n int) uint64 {
	block := make([]uint64, blockWords)
	for i := range block {
		block[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	var x uint64
	for i := 0; i < n; i++ {
		block[i%blockWords] ^= x
		x = checksum(block)
	}
	return x
}

// scaled is n times scale, at least 1.
//
//meter:ignore
func scaled(n int, scale float64) int { return max(1, int(float64(n)*scale)) }

func main() {
	scale := flag.Float64("scale", 1, "scale of every phase's work")
	flag.Parse()
	rec := truth.Start()
	rec.CPUBound()

	crunches, records, runs := scaled(crunchCalls, *scale), scaled(recordCalls, *scale), scaled(checksumRuns, *scale)
	sink = computePhase(crunches)
	sink += allocPhase(records)
	sink += checksumPhase(runs)
	fmt.Println("phases:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.computePhase", 1)
	rec.Add("main.allocPhase", 1)
	rec.Add("main.checksumPhase", 1)
	rec.Add("main.crunch", int64(crunches))
	rec.Add("main.fold", int64(crunches)*foldsPer)
	rec.Add("main.makeRecord", int64(records))
	rec.Add("main.indexRecords", int64(records/batch))
	rec.Add("main.checksum", int64(runs))
	rec.Add("main.scramble", int64(runs)*blockWords)
	rec.Finish()
}
