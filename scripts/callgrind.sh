#!/usr/bin/env bash
# Instructions per operation for the probe hot path, counted by callgrind.
# Each case runs the same benchmark binary for N and 2N iterations; the
# difference divided by N cancels start-up, so the figures repeat to ~0.1%.
# The clock is mono: TSC calibration loops for 20 ms of wall time, which
# under valgrind is a varying number of instructions. So 'metered' here
# includes two mono reads; 'metered-manual-clock' is the engine alone.
#   scripts/callgrind.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-400000}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/probe.test" ./probe
count() { # case iterations → total instructions
  METER_CLOCK=mono GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
    "$tmp/probe.test" -test.run '^$' -test.bench "^BenchmarkFiring\$/^$1\$" -test.benchtime "${2}x" >/dev/null 2>&1
  callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}'
}
per() { # case → instructions per operation
  local a b
  a=$(count "$1" "$n"); b=$(count "$1" $((2 * n)))
  echo $(( (b - a) / n ))
}
plain=$(per plain)
printf '%-12s %6s %s\n' case 'Ir/op' 'over plain'
printf '%-12s %6d\n' plain "$plain"
for c in ${CASES:-disabled twin-disabled metered metered-manual-clock clock-read}; do
  v=$(per "$c")
  printf '%-12s %6d %+d\n' "$c" "$v" $((v - plain))
done
