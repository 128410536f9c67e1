package schema

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// TestVarintLen: the length agrees with what encoding/binary writes, at
// every boundary between lengths.
func TestVarintLen(t *testing.T) {
	xs := []uint64{0, 1, math.MaxUint64}
	for k := 7; k < 64; k += 7 {
		xs = append(xs, 1<<k-1, 1<<k)
	}
	for _, x := range xs {
		if got, want := VarintLen(x), len(binary.AppendUvarint(nil, x)); got != want {
			t.Errorf("VarintLen(%d) = %d, want %d", x, got, want)
		}
	}
}

// TestHeaders: the header rows are the columns joined by commas, in the
// order docs/design.md fixes.
func TestHeaders(t *testing.T) {
	const design = "probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label"
	if got := strings.Join(ModelColumns(), ","); got != design {
		t.Errorf("model columns %q, want %q", got, design)
	}
	if ModelHeader != design {
		t.Errorf("model header %q, want %q", ModelHeader, design)
	}
	if !strings.HasPrefix(StatsHeader, strings.Join(StatsColumns(), ",")+",") {
		t.Errorf("stats header %q does not start with the columns %q", StatsHeader, StatsColumns())
	}
	ModelColumns()[0] = "changed"
	if ModelColumns()[0] != ColumnProbe {
		t.Error("ModelColumns shares its slice with callers")
	}
}

func TestSwitchedOff(t *testing.T) {
	for _, l := range []string{LabelNone, LabelHotspot, LabelSampled, LabelUntimed, LabelTraced, LabelDisabled, LabelBudget} {
		if got, want := SwitchedOff(l), l == "disabled" || l == "budget"; got != want {
			t.Errorf("SwitchedOff(%q) = %v", l, got)
		}
	}
}
