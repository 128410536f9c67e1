#!/usr/bin/env bash
# Instructions per operation for the probe hot path, counted by callgrind.
# Each case runs the same benchmark binary for N and 2N iterations; the
# difference divided by N cancels start-up, so the figures repeat to ~0.1%.
# The clock is mono: TSC calibration loops for 5 ms of wall time, which
# under valgrind is a varying number of instructions. So 'metered' here
# includes two mono reads; 'metered-manual-clock' is the engine alone.
# METER_CLOCK=tsc counts the TSC's path instead (its calibration's loop
# varies the count by about 2 instructions a firing at N=200000: 612 and
# 614 over plain in two runs).
#   bench/callgrind.sh [N]
#   BENCH=Chain bench/callgrind.sh   the chain's cases against a disabled probe
# CASES picks the cases and BASE the baseline (BASE=defer/disabled with the
# defer/ cases); BIN runs a test binary already built from ./probe.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-400000}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench=${BENCH:-Firing}
if [ "$bench" = Chain ]; then
  base=${BASE:-disabled}
  cases=${CASES:-outside-tracepoint outside-flowcheck outside-tracepoint+flowcheck+budget disabled-spotcheck}
else
  base=${BASE:-plain}
  cases=${CASES:-disabled metered nested/metered metered-manual-clock clock-read}
fi
bin=${BIN:-$tmp/probe.test}
[ -n "${BIN:-}" ] || go test -c -o "$bin" ./probe
count() { # case iterations → total instructions
  METER_CLOCK=${METER_CLOCK:-mono} GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
    "$bin" -test.run '^$' -test.bench "^Benchmark$bench\$/^${1//+/\\+}\$" -test.benchtime "${2}x" >/dev/null 2>&1
  callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}'
}
per() { # case → instructions per operation
  local a b
  a=$(count "$1" "$n"); b=$(count "$1" $((2 * n)))
  echo $(( (b - a) / n ))
}
b0=$(per "$base")
printf '%-36s %6s %s\n' case 'Ir/op' "over $base"
printf '%-36s %6d\n' "$base" "$b0"
for c in $cases; do
  v=$(per "$c")
  printf '%-36s %6d %+d\n' "$c" "$v" $((v - b0))
done
