#!/usr/bin/env bash
# Instructions per round of the example's workload (goldmark rendering the
# corpus in example/corpus), plain and instrumented as make example
# instruments it, in the steady state, with the collector on and off:
# (Ir(N2 rounds) - Ir(N1 rounds)) / (N2 - N1), counted by callgrind, at
# default properties with the hotspot thresholds scaled by 50 (time runs
# about 50 times slower under valgrind). With the collector on, rounds
# long enough to hold many collections keep the count steady.
#   bench/steady.sh            STEADY_N1, STEADY_N2 set the rounds (60, 180)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
N1=${STEADY_N1:-60}
N2=${STEADY_N2:-180}
command -v valgrind >/dev/null || { echo "steady.sh: valgrind is not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOWORK=off
(cd "$ROOT/cmd/meterinject" && $GO build -o "$tmp/meterinject" .)
cd "$ROOT/example"
$GO mod download
$GO build -o "$tmp/plain" .
"$tmp/meterinject" -cache "$tmp/cache" -runtime "$ROOT" -deps 'github.com/yuin/goldmark/...' go build -o "$tmp/instrumented" . 2>/dev/null
count() { # binary rounds gogc → instructions
	GOGC=$3 GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 METER_HOTSPOT_THRESHOLD=500 METER_HOTSPOT_THRESHOLD_INHERENT=100 \
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$tmp/$1" -n "$2" -corpus "$ROOT/example/corpus" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "| collector | plain, instructions/round | instrumented | vs plain |"
echo "| --- | ---: | ---: | ---: |"
for gc in 100 off; do
	p=$(( ($(count plain "$N2" $gc) - $(count plain "$N1" $gc)) / (N2 - N1) ))
	i=$(( ($(count instrumented "$N2" $gc) - $(count instrumented "$N1" $gc)) / (N2 - N1) ))
	label=on; [ $gc = off ] && label=off
	echo "| $label | $p | $i | $(awk -v p="$p" -v i="$i" 'BEGIN { printf "%+.2f%%", (i - p) * 100 / p }') |"
done
