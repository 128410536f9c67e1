package report

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/meterio/meter/schema"
)

// Profile is the part of a pprof profile (profile.proto) the page draws:
// sample types and samples with their stacks resolved to function names.
type Profile struct {
	SampleTypes       []ValueType
	DefaultSampleType string
	Samples           []Sample
	TimeNanos         int64
	Comments          []string
}

// ValueType is a sample type: "inherent" in "nanoseconds".
type ValueType struct {
	Type, Unit string
}

// Sample is one sample: its stack, leaf first, with inlined frames
// expanded; one value per sample type; its string labels.
type Sample struct {
	Stack  []string
	Values []int64
	Labels map[string][]string
}

// Index returns the position of sample type typ, or -1.
func (p *Profile) Index(typ string) int {
	for i, t := range p.SampleTypes {
		if t.Type == typ {
			return i
		}
	}
	return -1
}

// maxProfile bounds what ReadProfile reads, compressed or not, so that a
// wrong file fails instead of filling memory.
const maxProfile = 1 << 30

// ReadProfile decodes a pprof profile, gzip-compressed or not.
func ReadProfile(r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxProfile+1))
	if err != nil {
		return nil, err
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("not a pprof profile: %v", err)
		}
		data, err = io.ReadAll(io.LimitReader(zr, maxProfile+1))
		if err != nil {
			return nil, fmt.Errorf("not a pprof profile: %v", err)
		}
	}
	if len(data) > maxProfile {
		return nil, errors.New("profile larger than 1 GiB")
	}
	return decodeProfile(data)
}

// field is one decoded protobuf field: a number for varint and fixed
// wire types, bytes for length-delimited ones.
type field struct {
	num  int
	wire int
	n    uint64
	b    []byte
}

// fields calls fn for each field of a message.
func fields(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		key, k := binary.Uvarint(b)
		if k <= 0 {
			return errors.New("bad field key")
		}
		b = b[k:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		if f.num == 0 || key>>3 > math.MaxInt32 {
			return fmt.Errorf("bad field number %d", key>>3)
		}
		switch f.wire {
		case schema.WireVarint:
			f.n, k = binary.Uvarint(b)
			if k <= 0 {
				return fmt.Errorf("field %d: bad varint", f.num)
			}
			b = b[k:]
		case schema.WireFixed64:
			if len(b) < 8 {
				return fmt.Errorf("field %d: truncated", f.num)
			}
			f.n, b = binary.LittleEndian.Uint64(b), b[8:]
		case schema.WireFixed32:
			if len(b) < 4 {
				return fmt.Errorf("field %d: truncated", f.num)
			}
			f.n, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case schema.WireBytes:
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) {
				return fmt.Errorf("field %d: truncated", f.num)
			}
			f.b, b = b[k:k+int(n)], b[k+int(n):]
		default:
			return fmt.Errorf("field %d: wire type %d is not used by profile.proto", f.num, f.wire)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// numbers appends a repeated integer field, packed or not.
func numbers(dst []uint64, f field) ([]uint64, error) {
	switch f.wire {
	case schema.WireVarint:
		return append(dst, f.n), nil
	case schema.WireBytes:
		for b := f.b; len(b) > 0; {
			n, k := binary.Uvarint(b)
			if k <= 0 {
				return dst, fmt.Errorf("field %d: bad packed varint", f.num)
			}
			dst, b = append(dst, n), b[k:]
		}
		return dst, nil
	}
	return dst, fmt.Errorf("field %d: wire type %d for an integer", f.num, f.wire)
}

// rawSample and rawLocation hold ids and string indexes until the string
// table and the locations, which may come after them, are read.
type rawSample struct {
	locs   []uint64
	values []uint64
	labels [][2]uint64 // key, str
}

type rawLocation struct {
	address uint64
	funcs   []uint64 // function ids of its lines, innermost first
}

func decodeProfile(data []byte) (*Profile, error) {
	var (
		types     [][2]uint64
		samples   []rawSample
		locations = map[uint64]rawLocation{}
		functions = map[uint64]uint64{} // id → name index
		strs      []string
		comments  []uint64
		defType   uint64
		p         = &Profile{}
	)
	err := fields(data, func(f field) error {
		if f.wire != schema.WireBytes && (f.num == schema.ProfileSampleType || f.num == schema.ProfileSample || f.num == schema.ProfileLocation ||
			f.num == schema.ProfileFunction || f.num == schema.ProfileStringTable) {
			return fmt.Errorf("field %d: wire type %d for a message", f.num, f.wire)
		}
		switch f.num {
		case schema.ProfileSampleType:
			var t [2]uint64
			err := fields(f.b, func(g field) error {
				if g.num == schema.ValueTypeType || g.num == schema.ValueTypeUnit {
					t[g.num-1] = g.n
				}
				return nil
			})
			types = append(types, t)
			return err
		case schema.ProfileSample:
			var s rawSample
			err := fields(f.b, func(g field) (err error) {
				switch g.num {
				case schema.SampleLocationID:
					s.locs, err = numbers(s.locs, g)
				case schema.SampleValue:
					s.values, err = numbers(s.values, g)
				case schema.SampleLabel:
					var l [2]uint64
					if g.wire != schema.WireBytes {
						return errors.New("sample label: not a message")
					}
					err = fields(g.b, func(h field) error {
						if h.num == schema.LabelKey || h.num == schema.LabelStr {
							l[h.num-1] = h.n
						}
						return nil
					})
					s.labels = append(s.labels, l)
				}
				return err
			})
			samples = append(samples, s)
			return err
		case schema.ProfileLocation:
			var id uint64
			var l rawLocation
			err := fields(f.b, func(g field) error {
				switch g.num {
				case schema.LocationID:
					id = g.n
				case schema.LocationAddress:
					l.address = g.n
				case schema.LocationLine:
					if g.wire != schema.WireBytes {
						return errors.New("location line: not a message")
					}
					return fields(g.b, func(h field) error {
						if h.num == schema.LineFunctionID {
							l.funcs = append(l.funcs, h.n)
						}
						return nil
					})
				}
				return nil
			})
			locations[id] = l
			return err
		case schema.ProfileFunction:
			var id, name uint64
			err := fields(f.b, func(g field) error {
				switch g.num {
				case schema.FunctionID:
					id = g.n
				case schema.FunctionName:
					name = g.n
				}
				return nil
			})
			functions[id] = name
			return err
		case schema.ProfileStringTable:
			strs = append(strs, string(f.b))
		case schema.ProfileTimeNanos:
			p.TimeNanos = int64(f.n)
		case schema.ProfileComment:
			var err error
			comments, err = numbers(comments, f)
			return err
		case schema.ProfileDefaultSampleType:
			defType = f.n
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile: %v", err)
	}
	if len(strs) == 0 || strs[0] != "" {
		return nil, errors.New("not a pprof profile: its string table does not start with the empty string")
	}
	str := func(i uint64) (string, error) {
		if i >= uint64(len(strs)) {
			return "", fmt.Errorf("not a pprof profile: string index %d out of range (%d strings)", i, len(strs))
		}
		return strs[i], nil
	}
	var errs []error
	must := func(s string, err error) string {
		if err != nil {
			errs = append(errs, err)
		}
		return s
	}
	for _, t := range types {
		p.SampleTypes = append(p.SampleTypes, ValueType{Type: must(str(t[0])), Unit: must(str(t[1]))})
	}
	p.DefaultSampleType = must(str(defType))
	for _, c := range comments {
		p.Comments = append(p.Comments, must(str(c)))
	}
	// A stack's names are resolved once per location, not once per sample.
	frames := make(map[uint64][]string, len(locations))
	for id, l := range locations {
		var names []string
		for _, fid := range l.funcs {
			ni, ok := functions[fid]
			if !ok {
				return nil, fmt.Errorf("not a pprof profile: location %d names function %d, which is not in the profile", id, fid)
			}
			names = append(names, must(str(ni)))
		}
		if len(names) == 0 {
			names = []string{"0x" + strconv.FormatUint(l.address, 16)}
		}
		frames[id] = names
	}
	p.Samples = make([]Sample, 0, len(samples))
	for _, s := range samples {
		if len(s.values) != len(p.SampleTypes) {
			return nil, fmt.Errorf("not a pprof profile: a sample has %d values for %d sample types", len(s.values), len(p.SampleTypes))
		}
		out := Sample{Values: make([]int64, len(s.values))}
		for i, v := range s.values {
			out.Values[i] = int64(v)
		}
		for _, id := range s.locs {
			names, ok := frames[id]
			if !ok {
				return nil, fmt.Errorf("not a pprof profile: a sample names location %d, which is not in the profile", id)
			}
			out.Stack = append(out.Stack, names...)
		}
		for _, l := range s.labels {
			if out.Labels == nil {
				out.Labels = map[string][]string{}
			}
			k := must(str(l[0]))
			if l[1] != 0 { // numeric labels have no string
				out.Labels[k] = append(out.Labels[k], must(str(l[1])))
			}
		}
		p.Samples = append(p.Samples, out)
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return p, nil
}
