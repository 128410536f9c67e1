package export

import (
	"io"
	"os"
	"path/filepath"

	"github.com/meterio/meter/meter"
)

// Sample types of the pprof profile, in this order.
const (
	SampleCount     = "count"     // metered firings
	SampleInclusive = "inclusive" // ns: End − Begin of those firings
	SampleInherent  = "inherent"  // ns: inclusive minus metered children; the default
)

// Field numbers of profile.proto (github.com/google/pprof/proto/profile.proto).
const (
	profSampleType        = 1
	profSample            = 2
	profMapping           = 3
	profLocation          = 4
	profFunction          = 5
	profStringTable       = 6
	profTimeNanos         = 9
	profPeriodType        = 11
	profPeriod            = 12
	profComment           = 13
	profDefaultSampleType = 14

	valueTypeType = 1
	valueTypeUnit = 2

	sampleLocationID = 1
	sampleValue      = 2
	sampleLabel      = 3

	labelKey = 1
	labelStr = 2

	mappingID           = 1
	mappingFilename     = 5
	mappingHasFunctions = 7

	locationID        = 1
	locationMappingID = 2
	locationLine      = 4

	lineFunctionID = 1

	functionID         = 1
	functionName       = 2
	functionSystemName = 3
)

// WriteProfile writes the model and the call paths as a pprof profile
// (profile.proto, uncompressed: pprof reads it as it reads gzipped ones)
// with the sample types count, inclusive and inherent (ns); inherent is the
// default, so a flame graph of it shows where time goes, and a frame's
// cumulative inherent time is its inclusive time.
//
// Every traced firing is a sample whose stack is its call path (root →
// leaf), labelled source=trace. What the model holds beyond the traced
// firings (firings outside traces, or traced ones not exported yet) is one
// sample per probe with the probe alone on its stack, labelled
// source=model. So for each probe, the samples it is the leaf of add up to
// its row in the model: count, total and inherent total. paths may be nil.
func WriteProfile(w io.Writer, s meter.Snapshot, paths *CallPaths) error {
	_, err := w.Write(encodeProfile(s, paths))
	return err
}

// WritePprofFile writes the profile to path as WriteFile does.
func WritePprofFile(path string, s meter.Snapshot, paths *CallPaths) error {
	return WriteFile(path, func(w io.Writer) error { return WriteProfile(w, s, paths) })
}

// profileBuilder holds the tables of a profile being encoded: strings,
// and one function and one location per probe name (ids from 1).
type profileBuilder struct {
	strings []string
	strIdx  map[string]int64
	funcs   []int64          // string index of each function's name; id = index + 1
	locs    map[string]int64 // probe name → location (= function) id
	samples protobuf         // the encoded samples
	scratch protobuf
	ids     []uint64
}

func (b *profileBuilder) str(s string) int64 {
	if i, ok := b.strIdx[s]; ok {
		return i
	}
	i := int64(len(b.strings))
	b.strings = append(b.strings, s)
	b.strIdx[s] = i
	return i
}

func (b *profileBuilder) loc(name string) uint64 {
	if id, ok := b.locs[name]; ok {
		return uint64(id)
	}
	b.funcs = append(b.funcs, b.str(name))
	id := int64(len(b.funcs))
	b.locs[name] = id
	return uint64(id)
}

// sample adds one sample: its stack (location ids, leaf first), its three
// values and its source label.
func (b *profileBuilder) sample(stack []uint64, count, inclusive, inherent int64, source string) {
	key, val := b.str("source"), b.str(source)
	b.samples.message(profSample, &b.scratch, func(m *protobuf) {
		m.packedUint64(sampleLocationID, stack)
		m.packedInt64(sampleValue, []int64{count, inclusive, inherent})
		// Label is a sub-message of Sample: encode it in place, it is
		// two small varints.
		m.key(sampleLabel, wireBytes)
		var l protobuf
		l.int64(labelKey, key)
		l.int64(labelStr, val)
		m.varint(uint64(len(l.b)))
		m.b = append(m.b, l.b...)
	})
}

func encodeProfile(s meter.Snapshot, paths *CallPaths) []byte {
	b := &profileBuilder{strings: []string{""}, strIdx: map[string]int64{"": 0}, locs: map[string]int64{}}
	traced := map[string]pathTotals{}
	probes := meter.Probes()
	name := func(id int32) string {
		if int(id) < len(probes) {
			return probes[id].Name()
		}
		return ""
	}
	if paths != nil {
		paths.mu.Lock()
		for i := 1; i < len(paths.nodes); i++ {
			n := &paths.nodes[i]
			if n.count == 0 {
				continue
			}
			b.ids = b.ids[:0] // leaf first
			for j := int32(i); j > 0; j = paths.nodes[j].parent {
				b.ids = append(b.ids, b.loc(name(paths.nodes[j].probe)))
			}
			b.sample(b.ids, n.count, n.inclusive, n.inherent, "trace")
		}
		for pr, t := range paths.byPrb {
			tt := traced[name(pr)]
			tt.count += t.count
			tt.inclusive += t.inclusive
			tt.inherent += t.inherent
			traced[name(pr)] = tt
		}
		paths.mu.Unlock()
	}
	for _, r := range s.Rows {
		t := traced[r.Probe]
		c, in, inh := r.Count-t.count, r.Total-t.inclusive, r.InherentTotal-t.inherent
		if c <= 0 && in <= 0 && inh <= 0 {
			continue
		}
		b.sample([]uint64{b.loc(r.Probe)}, max(c, 0), max(in, 0), max(inh, 0), "model")
	}

	var p, m, line protobuf
	valueType := func(field int, typ, unit string) {
		t, u := b.str(typ), b.str(unit)
		p.message(field, &m, func(m *protobuf) {
			m.int64(valueTypeType, t)
			m.int64(valueTypeUnit, u)
		})
	}
	valueType(profSampleType, SampleCount, "count")
	valueType(profSampleType, SampleInclusive, "nanoseconds")
	valueType(profSampleType, SampleInherent, "nanoseconds")
	p.b = append(p.b, b.samples.b...)
	// One mapping for the program, already symbolized: the locations are
	// probes, named, without addresses.
	exe, _ := os.Executable()
	file := b.str(filepath.Base(exe))
	p.message(profMapping, &m, func(m *protobuf) {
		m.uint64(mappingID, 1)
		m.int64(mappingFilename, file)
		m.bool(mappingHasFunctions, true)
	})
	for i := range b.funcs {
		id := uint64(i + 1)
		p.message(profLocation, &m, func(m *protobuf) {
			m.uint64(locationID, id)
			m.uint64(locationMappingID, 1)
			m.message(locationLine, &line, func(l *protobuf) { l.uint64(lineFunctionID, id) })
		})
	}
	for i, name := range b.funcs {
		id := uint64(i + 1)
		p.message(profFunction, &m, func(m *protobuf) {
			m.uint64(functionID, id)
			m.int64(functionName, name)
			m.int64(functionSystemName, name)
		})
	}
	valueType(profPeriodType, SampleCount, "count")
	p.int64(profPeriod, 1)
	p.int64(profTimeNanos, s.Taken.UnixNano())
	comment := b.str("meter: metered call paths and the performance model; clock " + s.Clock)
	p.int64(profComment, comment)
	p.int64(profDefaultSampleType, b.str(SampleInherent))
	for _, str := range b.strings { // last: every index is known now
		p.string(profStringTable, str)
	}
	return p.b
}
