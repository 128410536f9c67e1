package report

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const header = "probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n"

func TestReadModel(t *testing.T) {
	in := header +
		"example.com/app.handle,3,3000,1000,1200,400,900,1100,hotspot\n" +
		"\"example.com/app.odd,name\",1,5,5,5,5,5,5,\n" +
		"example.com/app.parse,0,0,0,0,0,0,0,budget\n"
	rows, err := ReadModel(strings.NewReader(in), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{"example.com/app.handle", 3, 3000, 1000, 1200, 400, 900, 1100, "hotspot"},
		{"example.com/app.odd,name", 1, 5, 5, 5, 5, 5, 5, ""},
		{"example.com/app.parse", 0, 0, 0, 0, 0, 0, 0, "budget"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got %+v\nwant %+v", rows, want)
	}
}

// Columns a newer runtime adds after the fixed ones are ignored.
func TestReadModelExtraColumns(t *testing.T) {
	in := strings.TrimSuffix(header, "\n") + ",roots\n" + "a.f,1,2,2,2,2,2,2,,yes\n"
	rows, err := ReadModel(strings.NewReader(in), "m.csv")
	if err != nil || len(rows) != 1 || rows[0].Probe != "a.f" || rows[0].Total != 2 {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
}

func TestReadModelErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "m.csv:1: empty file: want the header probe,count,"},
		{"probe,count\n", `m.csv:1: header "probe,count": want probe,count,total_ns`},
		{"probe,calls,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n", `m.csv:1: header "probe,calls,`},
		{header + "a.f,1,2,2,2,2,2,2,\na.g,x,2,2,2,2,2,2,\n", `m.csv:3: count "x" is not a whole number of at least 0`},
		{header + "a.f,1,2,2,-2,2,2,2,\n", `m.csv:2: inherent_total_ns "-2" is not a whole number`},
		{header + "a.f,1,2\n", "m.csv:2: 3 fields: want 9"},
		{header + "a.f,1,2,2,2,2,2,2,\n\"a.g,1,2,2,2,2,2,2,\n", "m.csv:3: extraneous or missing \" in quoted-field"},
	} {
		_, err := ReadModel(strings.NewReader(tc.in), "m.csv")
		var fe *FileError
		if err == nil || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to start with %q", tc.in, err, tc.want)
		}
	}
}

func TestReadStats(t *testing.T) {
	in := "probe,inclusive_sd_ns,inherent_sd_ns\na.f,12.5,3\na.g,0,0\n"
	s, err := readStats(strings.NewReader(in), "m.csv.stats")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]Spread{"a.f": {Inclusive: 12.5, Inherent: 3}, "a.g": {}}; !reflect.DeepEqual(s, want) {
		t.Fatalf("got %v, want %v", s, want)
	}
	s, err = readStats(strings.NewReader("probe,inclusive_sd_ns,inherent_sd_ns,metered\na.f,1,2,30\n"), "m.csv.stats")
	if want := map[string]Spread{"a.f": {Inclusive: 1, Inherent: 2, Metered: 30}}; err != nil || !reflect.DeepEqual(s, want) {
		t.Fatalf("with metered: %v %v", s, err)
	}
	// The sidecar the runtime writes now: no inherent_sd_ns, and where an
	// untimed row's time is.
	s, err = readStats(strings.NewReader("probe,inclusive_sd_ns,metered,time_in\na.f,1,30,\na.g,0,1000,a.f a.h\n"), "m.csv.stats")
	if want := map[string]Spread{"a.f": {Inclusive: 1, Metered: 30}, "a.g": {Metered: 1000, TimeIn: []string{"a.f", "a.h"}}}; err != nil || !reflect.DeepEqual(s, want) {
		t.Fatalf("without inherent_sd_ns: %v %v", s, err)
	}
	// With the wall time of the stretches left out for a wait.
	s, err = readStats(strings.NewReader("probe,inclusive_sd_ns,metered,time_in,waited_ns\na.f,1,30,,4200\n"), "m.csv.stats")
	if want := map[string]Spread{"a.f": {Inclusive: 1, Metered: 30, Waited: 4200}}; err != nil || !reflect.DeepEqual(s, want) {
		t.Fatalf("with waited_ns: %v %v", s, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"probe,inclusive_sd_ns,inherent_sd_ns,metered\na.f,1,2,many\n", `m.csv.stats:2: metered "many" is not a whole number`},
		{"probe,inclusive_sd_ns,inherent_sd_ns,metered\na.f,1,2\n", `m.csv.stats:2: no metered field`},
		{"probe,sd\n", `m.csv.stats:1: header "probe,sd": want probe,inclusive_sd_ns`},
		{"probe,inclusive_sd_ns,inherent_sd_ns\na.f,1,NaN\n", `m.csv.stats:2: inherent_sd_ns "NaN" is not a number of at least 0`},
		{"probe,inclusive_sd_ns,inherent_sd_ns\na.f,-1,0\n", `m.csv.stats:2: inclusive_sd_ns "-1"`},
		{"probe,inclusive_sd_ns,waited_ns\na.f,1,-5\n", `m.csv.stats:2: waited_ns "-5" is not a whole number`},
	} {
		if _, err := readStats(strings.NewReader(tc.in), "m.csv.stats"); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
