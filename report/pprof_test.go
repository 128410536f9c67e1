package report

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/meterio/meter/schema"
)

// pb builds protobuf bytes by hand, field by field, so the decoder is
// checked against the wire format rather than against another decoder.
type pb []byte

func (b pb) key(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }
func (b pb) varint(field int, v uint64) pb {
	return binary.AppendUvarint(b.key(field, schema.WireVarint), v)
}
func (b pb) msg(field int, m []byte) pb {
	return append(binary.AppendUvarint(b.key(field, schema.WireBytes), uint64(len(m))), m...)
}
func (b pb) packed(field int, vs ...uint64) pb {
	var m []byte
	for _, v := range vs {
		m = binary.AppendUvarint(m, v)
	}
	return b.msg(field, m)
}

// Strings of the test profile, by index.
const (
	sEmpty = iota
	sCount
	sInclusive
	sNanos
	sInherent
	sMain
	sWork
	sLeaf
	sInl
	sSource
	sTrace
	sModel
	sComment
)

var testStrings = []string{"", "count", "inclusive", "nanoseconds", "inherent", "a.main", "a.work", "a.leaf", "a.inl", "source", "trace", "model", "made by hand"}

func label(k, v uint64) []byte { return pb{}.varint(schema.LabelKey, k).varint(schema.LabelStr, v) }

// testProfile: main → work → leaf (with inl inlined into it) traced,
// main → work traced, work alone from the model, and an unsymbolized
// location. Values are packed in one sample and not in another, as both
// encodings are legal.
func testProfile() []byte {
	var p pb
	for _, t := range [][2]uint64{{sCount, sCount}, {sInclusive, sNanos}, {sInherent, sNanos}} {
		p = p.msg(schema.ProfileSampleType, pb{}.varint(schema.ValueTypeType, t[0]).varint(schema.ValueTypeUnit, t[1]))
	}
	p = p.msg(schema.ProfileSample, pb{}.packed(schema.SampleLocationID, 3, 2, 1).packed(schema.SampleValue, 2, 300, 100).msg(schema.SampleLabel, label(sSource, sTrace)))
	p = p.msg(schema.ProfileSample, pb{}.varint(schema.SampleLocationID, 2).varint(schema.SampleLocationID, 1).
		varint(schema.SampleValue, 1).varint(schema.SampleValue, 500).varint(schema.SampleValue, 200).msg(schema.SampleLabel, label(sSource, sTrace)))
	p = p.msg(schema.ProfileSample, pb{}.packed(schema.SampleLocationID, 2).packed(schema.SampleValue, 5, 50, 50).msg(schema.SampleLabel, label(sSource, sModel)))
	p = p.msg(schema.ProfileSample, pb{}.packed(schema.SampleLocationID, 4).packed(schema.SampleValue, 1, 1, 1).msg(schema.SampleLabel, label(sSource, sTrace)))
	p = p.msg(3, pb{}.varint(1, 1).varint(5, sMain)) // a mapping, which the page does not need
	for id, fn := range map[uint64][]uint64{1: {sMain}, 2: {sWork}, 3: {sInl, sLeaf}} {
		l := pb{}.varint(schema.LocationID, id)
		for _, f := range fn {
			l = l.msg(schema.LocationLine, pb{}.varint(schema.LineFunctionID, f).varint(2, 42))
		}
		p = p.msg(schema.ProfileLocation, l)
	}
	p = p.msg(schema.ProfileLocation, pb{}.varint(schema.LocationID, 4).varint(schema.LocationAddress, 0x4000))
	for _, f := range []uint64{sMain, sWork, sLeaf, sInl} {
		p = p.msg(schema.ProfileFunction, pb{}.varint(schema.FunctionID, f).varint(schema.FunctionName, f).varint(3, f))
	}
	for _, s := range testStrings {
		p = p.msg(schema.ProfileStringTable, []byte(s))
	}
	p = p.varint(schema.ProfileTimeNanos, 1_700_000_000_000_000_000).varint(schema.ProfileComment, sComment).varint(schema.ProfileDefaultSampleType, sInherent)
	return p
}

func TestReadProfile(t *testing.T) {
	raw := testProfile()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	for name, data := range map[string][]byte{"raw": raw, "gzip": gz.Bytes()} {
		p, err := ReadProfile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantTypes := []ValueType{{"count", "count"}, {"inclusive", "nanoseconds"}, {"inherent", "nanoseconds"}}
		if !reflect.DeepEqual(p.SampleTypes, wantTypes) || p.DefaultSampleType != "inherent" ||
			p.TimeNanos != 1_700_000_000_000_000_000 || !reflect.DeepEqual(p.Comments, []string{"made by hand"}) {
			t.Fatalf("%s: header %+v %q %d %q", name, p.SampleTypes, p.DefaultSampleType, p.TimeNanos, p.Comments)
		}
		trace, model := []string{"trace"}, []string{"model"}
		want := []Sample{
			{Stack: []string{"a.inl", "a.leaf", "a.work", "a.main"}, Values: []int64{2, 300, 100}, Labels: map[string][]string{"source": trace}},
			{Stack: []string{"a.work", "a.main"}, Values: []int64{1, 500, 200}, Labels: map[string][]string{"source": trace}},
			{Stack: []string{"a.work"}, Values: []int64{5, 50, 50}, Labels: map[string][]string{"source": model}},
			{Stack: []string{"0x4000"}, Values: []int64{1, 1, 1}, Labels: map[string][]string{"source": trace}},
		}
		if !reflect.DeepEqual(p.Samples, want) {
			t.Fatalf("%s: samples\n%+v\nwant\n%+v", name, p.Samples, want)
		}
	}
}

func TestReadProfileErrors(t *testing.T) {
	good := testProfile()
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"empty":      {nil, "string table does not start with the empty string"},
		"truncated":  {good[:len(good)-1], "not a pprof profile"},
		"text":       {[]byte("probe,count\n"), "not a pprof profile"},
		"bad gzip":   {[]byte{0x1f, 0x8b, 1, 2, 3}, "not a pprof profile"},
		"string":     {append(append([]byte{}, good...), pb{}.varint(schema.ProfileComment, 99)...), "string index 99 out of range"},
		"location":   {append(append([]byte{}, good...), pb{}.msg(schema.ProfileSample, pb{}.packed(schema.SampleLocationID, 9).packed(schema.SampleValue, 1, 1, 1))...), "names location 9"},
		"values":     {append(append([]byte{}, good...), pb{}.msg(schema.ProfileSample, pb{}.packed(schema.SampleLocationID, 1).packed(schema.SampleValue, 1))...), "1 values for 3 sample types"},
		"wire group": {append(append([]byte{}, good...), pb{}.key(20, 3)...), "wire type 3"},
	} {
		if _, err := ReadProfile(bytes.NewReader(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

func TestFlame(t *testing.T) {
	p, err := ReadProfile(bytes.NewReader(testProfile()))
	if err != nil {
		t.Fatal(err)
	}
	root, typ := p.flame()
	if typ != "inherent" {
		t.Fatalf("width type %q", typ)
	}
	// Only source=trace samples: the model's a.work sample (50) is left out.
	type flat struct {
		path                    string
		value, count, incl, inh int64
	}
	var got []flat
	var walk func(n *flameNode, path string)
	walk = func(n *flameNode, path string) {
		got = append(got, flat{path, n.Value, n.OwnCount, n.OwnInclusive, n.OwnInherent})
		for _, c := range n.Children {
			walk(c, path+"/"+c.Name)
		}
	}
	walk(root, "")
	want := []flat{
		{"", 301, 0, 0, 0},
		{"/a.main", 300, 0, 0, 0},
		{"/a.main/a.work", 300, 1, 500, 200},
		{"/a.main/a.work/a.leaf", 100, 0, 0, 0},
		{"/a.main/a.work/a.leaf/a.inl", 100, 2, 300, 100},
		{"/0x4000", 1, 1, 1, 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flame\n%v\nwant\n%v", got, want)
	}

	// Without any traced sample there are no call paths to draw.
	var modelOnly Profile = *p
	modelOnly.Samples = p.Samples[2:3]
	if root, _ := modelOnly.flame(); len(root.Children) != 0 {
		t.Fatalf("model-only profile drew %d roots", len(root.Children))
	}
	// A profile without source labels (a CPU profile, say) is drawn whole.
	foreign := Profile{SampleTypes: []ValueType{{"samples", "count"}, {"cpu", "nanoseconds"}}, DefaultSampleType: "cpu",
		Samples: []Sample{{Stack: []string{"b", "a"}, Values: []int64{1, 10}}, {Stack: []string{"c", "a"}, Values: []int64{2, 30}}}}
	root, typ = foreign.flame()
	if typ != "cpu" || root.Value != 40 || len(root.Children) != 1 || root.Children[0].Children[0].Name != "c" {
		t.Fatalf("foreign profile: %q %+v", typ, root)
	}
}
