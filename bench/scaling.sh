#!/usr/bin/env bash
# How a probe scales when every P fires it at once: BenchmarkParallel
# (probe package) at 1 and 2 goroutines, RUNS times, alternating; for each
# case the median of ns/op at 1 over ns/op at 2 (about 2.0 for a loop that
# scales on 2 cores), and that ratio over the plain function's in the same
# runs (1.0: the probe scales as well as the function it measures).
#   bench/scaling.sh [RUNS]          RUNS defaults to 7; each run lasts
#                                    SCALING_BENCHTIME (1s: shorter runs
#                                    measure start-up, not the loop)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/probe.test" ./probe
for i in $(seq "$runs"); do
  for cpu in 1 2; do
    "$tmp/probe.test" -test.run '^$' -test.bench '^BenchmarkParallel$' -test.benchtime "${SCALING_BENCHTIME:-1s}" -test.cpu "$cpu" |
      awk -v cpu="$cpu" '/^BenchmarkParallel\// { n=$1; sub(/^BenchmarkParallel\//, "", n); sub(/-[0-9]+$/, "", n); print n, cpu, $3 }' >> "$tmp/all"
  done
done
awk -v runs="$runs" '
  { ns[$1 "," $2] = ns[$1 "," $2] " " $3; names[$1] = 1 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    p1 = median(ns["plain,1"]); p2 = median(ns["plain,2"]); plain = p1 / p2
    printf "%-20s %10s %10s %8s %10s\n", "case", "ns/op @1", "ns/op @2", "2 vs 1", "vs plain"
    n = split("plain disabled metered metered-different outside-tracepoint tracepoint-default", order, " ")
    for (i = 1; i <= n; i++) {
      c = order[i]; if (!(c in names)) continue
      a = median(ns[c ",1"]); b = median(ns[c ",2"])
      printf "%-20s %10.2f %10.2f %7.2fx %9.2fx\n", c, a, b, a / b, (a / b) / plain
    }
    printf "(medians of %d runs each)\n", runs
  }' "$tmp/all"
