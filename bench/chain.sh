#!/usr/bin/env bash
# Wall time of the chain's cases against a disabled probe, as differences
# taken inside one process run: each run measures the disabled probe and
# every case seconds apart, so a host that speeds up or slows down between
# runs moves both. Prints, per case, the quartiles of those differences over
# the runs, then benchstat of the raw times. Pinned to one CPU, at real-time
# priority where the user may (root).
#   bench/chain.sh [runs]      (BIN: a test binary built from ./probe)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
. bench/env.sh
for i in $(seq "$runs"); do
  "${run[@]}" "$bin" -test.run '^$' -test.benchtime 2000000x \
    -test.bench "^BenchmarkChain\$/^(disabled|outside-tracepoint|outside-flowcheck|outside-tracepoint\\+flowcheck\\+budget|disabled-spotcheck)\$" |
    grep '^Bench' | sed "s/^/$i /"
done >"$tmp/runs.txt"
awk 'function sort(a, k,   i, j, v) { for (i = 2; i <= k; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v } }
  { run = $1; name = $2; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkChain\/([a-z]+\/)?/, "", name); t[run, name] = $4; names[name] = 1 }
  END {
    for (n in names) if (n != "disabled") {
      k = 0
      for (r = 1; (r, "disabled") in t; r++) if ((r, n) in t) d[++k] = t[r, n] - t[r, "disabled"]
      sort(d, k)
      printf "%-36s over disabled, ns: median %+.1f  quartiles %+.1f %+.1f  min %+.1f  max %+.1f  (%d runs)\n", n, d[int((k + 1) / 2)], d[int((k + 3) / 4)], d[int((3 * k + 3) / 4)], d[1], d[k], k
      delete d
    }
  }' "$tmp/runs.txt" | sort
cut -d' ' -f2- "$tmp/runs.txt" >"$tmp/bench.txt"
benchstat "$tmp/bench.txt" | awk '/B\/op/ { exit } { print }'
