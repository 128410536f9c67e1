#!/usr/bin/env bash
# Wall-time cost of a firing against an uninstrumented twin, in one run.
# The benchmark binary runs pinned to one CPU, at real-time priority where
# the user may (root), so other work on a small VM does not land in the
# figures; benchstat summarises the runs.
#   scripts/bench-firing.sh [count]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v benchstat >/dev/null || go install golang.org/x/perf/cmd/benchstat@latest
PATH=$PATH:$(go env GOPATH)/bin
go test -c -o "$tmp/probe.test" ./probe
run=()
if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null; then run+=(chrt -f 80); fi
if command -v taskset >/dev/null; then run+=(taskset -c "$(($(nproc) - 1))"); fi
for _ in $(seq "$count"); do
  "${run[@]}" "$tmp/probe.test" -test.run '^$' -test.benchtime 2000000x \
    -test.bench '^BenchmarkFiring$/^(plain|disabled|twin-disabled|metered|metered-manual-clock|clock-read|time.Now)$'
done | grep '^Bench' >"$tmp/bench.txt"
benchstat "$tmp/bench.txt"
