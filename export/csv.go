package export

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/meterio/meter/meter"
)

// CSVHeader is the header row of the performance model, as DESIGN.md fixes it.
const CSVHeader = "probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label"

// WriteCSV writes the model's rows, in the snapshot's order (largest
// inherent total first), under the header row.
func WriteCSV(w io.Writer, s meter.Snapshot) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(CSVHeader)
	bw.WriteByte('\n')
	var buf []byte
	for _, r := range s.Rows {
		buf = appendField(buf[:0], r.Probe)
		for _, n := range [...]int64{r.Count, r.Total, r.Avg, r.InherentTotal, r.InherentAvg, r.Min, r.Max} {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, n, 10)
		}
		buf = append(buf, ',')
		buf = append(buf, r.Label...)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// appendField quotes a probe name as RFC 4180 wants when it holds a comma,
// a quote or a line break. Toolchain names never do, but names passed to
// Register by hand may.
func appendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// WriteCSVFile writes the model to path atomically: to a temporary file in
// the same directory, then renamed, so a reader never sees half a model.
func WriteCSVFile(path string, s meter.Snapshot) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteCSV(w, s) })
}

// WriteFileAtomic writes a file the way every export does: write to a
// temporary file in the same directory, then rename it over path, so a
// reader never sees half a file. An error names the path.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("export: cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("export: cannot write %s: %w", path, err)
	}
	return nil
}
