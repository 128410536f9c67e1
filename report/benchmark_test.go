package report

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/meterio/meter/schema"
)

// bigModel is a model of n probes and a profile of n traced paths, three
// to six frames deep, as a large service might have.
func bigModel(n int) (*Model, []byte) {
	m := &Model{Name: "big.csv", Meta: []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000)"}}}
	var p pb
	for _, t := range [][2]uint64{{1, 1}, {2, 3}, {3, 3}} {
		p = p.msg(schema.ProfileSampleType, pb{}.varint(schema.ValueTypeType, t[0]).varint(schema.ValueTypeUnit, t[1]))
	}
	strs := []string{"", "count", "inclusive", "nanoseconds", "source", "trace"}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("example.com/service/pkg%d.(*Type%d).Method%d", i%17, i%31, i)
		m.Rows = append(m.Rows, Row{Probe: name, Count: int64(1000 + i), Total: int64(1e6 + i*997), Avg: 1000,
			InherentTotal: int64(5e5 + i*331), InherentAvg: 500, Min: 10, Max: 1e5})
		strs = append(strs, name)
		id := uint64(i + 1)
		p = p.msg(schema.ProfileFunction, pb{}.varint(schema.FunctionID, id).varint(schema.FunctionName, uint64(len(strs)-1)))
		p = p.msg(schema.ProfileLocation, pb{}.varint(schema.LocationID, id).msg(schema.LocationLine, pb{}.varint(schema.LineFunctionID, id)))
	}
	for i := 0; i < n; i++ {
		depth := 3 + i%4
		locs := make([]uint64, depth)
		for d := range locs {
			locs[d] = uint64((i*7+d*13)%n + 1)
		}
		p = p.msg(schema.ProfileSample, pb{}.packed(schema.SampleLocationID, locs...).packed(schema.SampleValue, 3, 3000, 1000).msg(schema.SampleLabel, label(4, 5)))
	}
	for _, s := range strs {
		p = p.msg(schema.ProfileStringTable, []byte(s))
	}
	return m, p
}

func BenchmarkReadProfile(b *testing.B) {
	_, data := bigModel(2000)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := ReadProfile(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteHTML is what one request of the live page costs beyond
// the snapshot, for 2,000 probes and 2,000 traced paths.
func BenchmarkWriteHTML(b *testing.B) {
	m, data := bigModel(2000)
	var err error
	if m.Profile, err = ReadProfile(bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := WriteHTML(io.Discard, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompare compares five runs against five, of 2000 probes each.
func BenchmarkCompare(b *testing.B) {
	var old, cur Runs
	for range 5 {
		m, _ := bigModel(2000)
		old.Models = append(old.Models, m)
		m, _ = bigModel(2000)
		cur.Models = append(cur.Models, m)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := Compare(io.Discard, &old, &cur, CompareOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
