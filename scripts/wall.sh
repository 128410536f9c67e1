#!/usr/bin/env bash
# Wall time of goldmark's rendering benchmark, plain against instrumented,
# in one run: many short runs interleaved (plain, twin at default
# properties, twin with every probe disabled), pinned to one CPU at a
# real-time priority where allowed, GOGC=off, each after BENCH_WARMUP
# renders. Prints the minimum, lower quartile and median per variant and
# their ratios to plain. On a shared VM single runs move by ±25%; the
# quantiles over many runs are what can be compared.
#   scripts/wall.sh WORKDIR   (a FIG_WORK dir of scripts/figures.sh)
# WALL_RUNS (20) runs of WALL_OPS (60) renders per variant.
set -euo pipefail
W=${1:?usage: scripts/wall.sh FIG_WORK-dir}
RUNS=${WALL_RUNS:-20}
OPS=${WALL_OPS:-60}
export GOLDMARK_DATA="$W/data/_data.md"
PIN=${FIG_PIN-chrt -f 80 taskset -c 1}
if [ -n "$PIN" ] && ! $PIN true 2>/dev/null; then PIN=""; fi
run() { # out bin env...
	local out=$1 bin=$2; shift 2
	$PIN env GOGC=off BENCH_WARMUP=30 "$@" "$W/$bin.test" -test.run '^$' -test.bench Render -test.benchtime "${OPS}x" |
		awk '/^BenchmarkRender/ {print $3}' >> "$out"
}
for v in plain twin off; do : > "$W/wallq.$v"; done
for i in $(seq "$RUNS"); do
	run "$W/wallq.plain" plain
	run "$W/wallq.twin" twin
	run "$W/wallq.off" twin METER_ENABLED=false
done
q() { sort -n "$1" | awk '{a[NR] = $1} END {printf "%d %d %d", a[1], a[int(NR / 4) + 1], (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2}'; }
read -r pm pq pd <<< "$(q "$W/wallq.plain")"
echo "wall time per render, $RUNS interleaved runs of $OPS renders (ms): min / lower quartile / median, and vs plain"
for v in plain twin off; do
	read -r m qq d <<< "$(q "$W/wallq.$v")"
	awk -v v="$v" -v m="$m" -v q="$qq" -v d="$d" -v pm="$pm" -v pq="$pq" -v pd="$pd" 'BEGIN {
		printf "%-6s %.3f / %.3f / %.3f   %+.1f%% / %+.1f%% / %+.1f%%\n", v, m / 1e6, q / 1e6, d / 1e6,
			100 * (m - pm) / pm, 100 * (q - pq) / pq, 100 * (d - pd) / pd }'
done
