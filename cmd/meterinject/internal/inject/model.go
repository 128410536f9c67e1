package inject

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
)

// readModel returns the probes that a performance model CSV labels
// disabled or budget.
func readModel(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseModel(f, path)
}

func parseModel(r io.Reader, name string) (map[string]bool, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	probeCol, labelCol := -1, -1
	for i, h := range head {
		switch h {
		case "probe":
			probeCol = i
		case "label":
			labelCol = i
		}
	}
	if probeCol < 0 || labelCol < 0 {
		return nil, fmt.Errorf("%s:1: not a performance model (needs probe and label columns)", name)
	}
	out := map[string]bool{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if l := rec[labelCol]; l == "disabled" || l == "budget" {
			out[rec[probeCol]] = true
		}
	}
}
