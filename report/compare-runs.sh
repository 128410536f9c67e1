#!/usr/bin/env bash
# meter compare on real runs: a small program, instrumented by meterinject
# through an overlay, run RUNS times for each of three sides: A and A2, the
# same build (an A/A comparison: nothing changed), and B, where one
# function (main.parse) does 25% more work per call. Prints
# `meter compare A A2` and `meter compare A B`.
#
#   report/compare-runs.sh [runs]       (default 5 a side)
#
# COMPARE_WORK sets where the program, builds and models go.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
RUNS=${1:-5}
WORK=${COMPARE_WORK:-$ROOT/.meterinject/compare}
export GOWORK=off
rm -rf "$WORK/prog" "$WORK/A" "$WORK/A2" "$WORK/B"
mkdir -p "$WORK/prog" "$WORK/A" "$WORK/A2" "$WORK/B"

# The program: requests through a handler that parses, looks up, scores
# three times, renders and encodes; each function spins for its own share
# of the work. -slow multiplies parse's share.
cat >"$WORK/prog/go.mod" <<'EOF'
module example.com/runs

go 1.26
EOF
cat >"$WORK/prog/main.go" <<'EOF'
package main

import (
	"flag"
	"fmt"
)

var slow = flag.Float64("slow", 1, "multiply parse's work by this")

// Each function spins for its own share of a request's work.
func parse(i int) int {
	s := i
	for k := 0; k < int(4000**slow); k++ {
		s += k * k % 7
	}
	return s
}

func lookup(i int) int {
	s := i
	for k := 0; k < 2500; k++ {
		s += k * k % 5
	}
	return s
}

func score(i int) int {
	s := i
	for k := 0; k < 1500; k++ {
		s += k * k % 3
	}
	return s
}

func render(i int) int {
	s := i
	for k := 0; k < 3000; k++ {
		s += k * k % 11
	}
	return s
}

func encode(i int) int {
	s := i
	for k := 0; k < 1000; k++ {
		s += k * k % 13
	}
	return s
}

func handle(i int) int {
	s := parse(i) + lookup(i)
	for k := 0; k < 3; k++ {
		s += score(i + k)
	}
	return s + render(i) + encode(i)
}

func main() {
	n := flag.Int("n", 20000, "requests")
	flag.Parse()
	s := 0
	for i := 0; i < *n; i++ {
		s += handle(i)
	}
	fmt.Println(s > 0)
}
EOF

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
$GO build -o "$WORK/meter" ./cmd/meter
cd "$WORK/prog"
"$WORK/meterinject" -all -overlay "$WORK/overlay.json" -cache "$WORK/cache" -runtime "$ROOT" . >/dev/null
$GO build -overlay "$WORK/overlay.json" -o "$WORK/prog.bin" .

# The sides' runs interleave, so that a drift of the host over the minutes
# reaches every side alike.
for i in $(seq 1 "$RUNS"); do
	for side in A A2 B; do
		slow=1
		[ "$side" = B ] && slow=1.25
		METER_EXPORT_CSV="$WORK/$side/run$i.csv" "$WORK/prog.bin" -slow "$slow" >/dev/null 2>&1
	done
done
echo "== A/A: $RUNS runs against $RUNS of the same build"
"$WORK/meter" compare "$WORK/A" "$WORK/A2"
echo
echo "== A/B: main.parse does 25% more work per call"
"$WORK/meter" compare "$WORK/A" "$WORK/B"
