package export

import (
	"io"
	"os"
	"path/filepath"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/schema"
)

// WriteProfile writes the model and the call paths as a pprof profile
// (profile.proto, uncompressed: pprof reads it as it reads gzipped ones)
// with the sample types count, inclusive and inherent (ns, package schema
// names them); inherent is the default, so a flame graph of it shows where time goes, and a frame's
// cumulative inherent time is its inclusive time.
//
// Every traced firing is a sample whose stack is its call path (root →
// leaf), labelled source=trace (schema.SourceLabel, schema.SourceTrace). What the model holds beyond the traced
// firings (firings outside traces, or traced ones not exported yet) is one
// sample per probe with the probe alone on its stack, labelled
// source=model (schema.SourceModel). So for each probe, the samples it is the leaf of add up to
// its row in the model: count, total and inherent total. paths may be nil.
func WriteProfile(w io.Writer, s meter.Snapshot, paths *CallPaths) error {
	_, err := w.Write(encodeProfile(s, paths))
	return err
}

// writePprofFile writes the profile to path as WriteFile does.
func writePprofFile(path string, s meter.Snapshot, paths *CallPaths) error {
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
	key, val := b.str(schema.SourceLabel), b.str(source)
	b.samples.message(schema.ProfileSample, &b.scratch, func(m *protobuf) {
		m.packedUint64(schema.SampleLocationID, stack)
		m.packedInt64(schema.SampleValue, []int64{count, inclusive, inherent})
		// Label is a sub-message of Sample: encode it in place, it is
		// two small varints.
		m.key(schema.SampleLabel, schema.WireBytes)
		var l protobuf
		l.int64(schema.LabelKey, key)
		l.int64(schema.LabelStr, val)
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
			b.sample(b.ids, n.count, n.inclusive, n.inherent, schema.SourceTrace)
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
		b.sample([]uint64{b.loc(r.Probe)}, max(c, 0), max(in, 0), max(inh, 0), schema.SourceModel)
	}

	var p, m, line protobuf
	valueType := func(field int, typ, unit string) {
		t, u := b.str(typ), b.str(unit)
		p.message(field, &m, func(m *protobuf) {
			m.int64(schema.ValueTypeType, t)
			m.int64(schema.ValueTypeUnit, u)
		})
	}
	valueType(schema.ProfileSampleType, schema.SampleCount, schema.UnitCount)
	valueType(schema.ProfileSampleType, schema.SampleInclusive, schema.UnitNanoseconds)
	valueType(schema.ProfileSampleType, schema.SampleInherent, schema.UnitNanoseconds)
	p.b = append(p.b, b.samples.b...)
	// One mapping for the program, already symbolized: the locations are
	// probes, named, without addresses.
	exe, _ := os.Executable()
	file := b.str(filepath.Base(exe))
	p.message(schema.ProfileMapping, &m, func(m *protobuf) {
		m.uint64(schema.MappingID, 1)
		m.int64(schema.MappingFilename, file)
		m.bool(schema.MappingHasFunctions, true)
	})
	for i := range b.funcs {
		id := uint64(i + 1)
		p.message(schema.ProfileLocation, &m, func(m *protobuf) {
			m.uint64(schema.LocationID, id)
			m.uint64(schema.LocationMappingID, 1)
			m.message(schema.LocationLine, &line, func(l *protobuf) { l.uint64(schema.LineFunctionID, id) })
		})
	}
	for i, name := range b.funcs {
		id := uint64(i + 1)
		p.message(schema.ProfileFunction, &m, func(m *protobuf) {
			m.uint64(schema.FunctionID, id)
			m.int64(schema.FunctionName, name)
			m.int64(schema.FunctionSystemName, name)
		})
	}
	valueType(schema.ProfilePeriodType, schema.SampleCount, schema.UnitCount)
	p.int64(schema.ProfilePeriod, 1)
	p.int64(schema.ProfileTimeNanos, s.Taken.UnixNano())
	comment := b.str("meter: metered call paths and the performance model; clock " + s.Clock)
	p.int64(schema.ProfileComment, comment)
	p.int64(schema.ProfileDefaultSampleType, b.str(schema.SampleInherent))
	for _, str := range b.strings { // last: every index is known now
		p.string(schema.ProfileStringTable, str)
	}
	return p.b
}
