#!/usr/bin/env bash
# Wall-time cost of a firing against the plain function, in one run.
# The benchmark binary runs pinned to one CPU, at real-time priority where
# the user may (root), so other work on a small VM does not land in the
# figures; benchstat summarises the runs.
#   bench/firing.sh [count]    (BIN: a test binary built from ./probe)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-8}
. bench/env.sh
for _ in $(seq "$count"); do
  "${run[@]}" "$bin" -test.run '^$' -test.benchtime 2000000x \
    -test.bench '^BenchmarkFiring$/^(plain|disabled|metered|metered-manual-clock|clock-read|time.Now)$'
done | grep '^Bench' >"$tmp/bench.txt"
benchstat "$tmp/bench.txt"
