package export

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/schema"
)

// WriteCSV writes the model's rows, in the snapshot's order (largest
// inherent total first), under the header row (schema.ModelHeader), as
// docs/design.md fixes them.
func WriteCSV(w io.Writer, s meter.Snapshot) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(schema.ModelHeader)
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

// writeCSVFile writes the model to path as WriteFile does: a reader never
// sees half a model.
func writeCSVFile(path string, s meter.Snapshot) error {
	return WriteFile(path, func(w io.Writer) error { return WriteCSV(w, s) })
}
