package report

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/meterio/meter/schema"
)

// ReadModel reads a performance model CSV. name is the file's name in
// errors. Columns after the fixed ones, which a newer runtime may add, are
// ignored; a header that does not start with the fixed columns is an
// error.
func ReadModel(r io.Reader, name string) ([]Row, error) {
	var rows []Row
	err := readCSV(r, name, schema.ModelColumns(), nil, func(rec []string, line int) error {
		row := Row{Probe: rec[0], Label: rec[8]}
		for i, dst := range []*int64{&row.Count, &row.Total, &row.Avg, &row.InherentTotal, &row.InherentAvg, &row.Min, &row.Max} {
			n, err := wholeField(name, line, schema.ModelColumns()[i+1], rec[i+1])
			if err != nil {
				return err
			}
			*dst = n
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// readStats reads a .stats sidecar: the standard deviation of each
// probe's inclusive times and, in optional columns after it, that of its
// inherent times (inherent_sd_ns), how many firings they come from
// (metered), for an untimed or disabled row, the probes whose own time
// holds its time (time_in, separated by spaces), and the wall time of the
// stretches of its own time left out for a wait (waited_ns).
func readStats(r io.Reader, name string) (map[string]Spread, error) {
	spreads := map[string]Spread{}
	metered, inherent, timeIn, waited := -1, -1, -1, -1 // the optional columns, when there are
	header := func(h []string) {
		for i, c := range h {
			switch {
			case i < len(schema.StatsColumns()):
			case c == schema.StatsMetered:
				metered = i
			case c == schema.StatsInherentSD:
				inherent = i
			case c == schema.StatsTimeIn:
				timeIn = i
			case c == schema.StatsWaited:
				waited = i
			}
		}
	}
	err := readCSV(r, name, schema.StatsColumns(), header, func(rec []string, line int) error {
		var s Spread
		for _, c := range []struct {
			i    int
			name string
			dst  *float64
		}{{1, schema.StatsInclusiveSD, &s.Inclusive}, {inherent, schema.StatsInherentSD, &s.Inherent}} {
			if c.i < 0 {
				continue
			}
			if c.i >= len(rec) {
				return fileErr(name, line, "no %s field", c.name)
			}
			f, err := strconv.ParseFloat(rec[c.i], 64)
			if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
				return fileErr(name, line, "%s %q is not a number of at least 0", c.name, rec[c.i])
			}
			*c.dst = f
		}
		if metered >= 0 {
			if metered >= len(rec) {
				return fileErr(name, line, "no metered field")
			}
			n, err := wholeField(name, line, schema.StatsMetered, rec[metered])
			if err != nil {
				return err
			}
			s.Metered = n
		}
		if timeIn >= 0 && timeIn < len(rec) && rec[timeIn] != "" {
			s.TimeIn = strings.Fields(rec[timeIn])
		}
		if waited >= 0 && waited < len(rec) {
			n, err := wholeField(name, line, schema.StatsWaited, rec[waited])
			if err != nil {
				return err
			}
			s.Waited = n
		}
		spreads[rec[0]] = s
		return nil
	})
	return spreads, err
}

// wholeField parses field v of column, on line of file name, as a whole
// number of at least 0.
func wholeField(name string, line int, column, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fileErr(name, line, "%s %q is not a whole number of at least 0", column, v)
	}
	return n, nil
}

// readCSV checks that the header starts with columns, shows it to header
// (which may be nil), and hands each record to row with its line number.
func readCSV(r io.Reader, name string, columns []string, header func([]string), row func(rec []string, line int) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	want := strings.Join(columns, ",")
	head, err := cr.Read()
	if err == io.EOF {
		return fileErr(name, 1, "empty file: want the header %s", want)
	}
	if err != nil {
		return csvErr(name, err)
	}
	if len(head) < len(columns) || strings.Join(head[:len(columns)], ",") != want {
		return fileErr(name, 1, "header %q: want %s", strings.Join(head, ","), want)
	}
	if header != nil {
		header(head)
	}
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) < len(columns) {
			return fileErr(name, line, "%d fields: want %d (%s)", len(rec), len(columns), want)
		}
		if err := row(rec, line); err != nil {
			return err
		}
	}
}

func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return &FileError{File: name, Err: err}
}
