#!/usr/bin/env bash
# How long a sampled function's own time per call comes out against a CPU
# profile of the same run, by how rarely its calls are selected
# (METER_HOTSPOT_SAMPLE): bench/adversarial/allocfree, whose step300ns is
# sampled at default properties, run at each rate; the profile's figure is
# its CPU time charged as the model charges it (untimed callees' to their
# caller) over its calls, as bench/judge's shares check prints it.
#
#   bench/adversarial/sample-bias.sh [rate...]      (default 10 100 1000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${ADVERSARIAL_WORK:-$ROOT/.meterinject/adversarial}
ADVERSARIAL_MODES=default "$ROOT/bench/adversarial/run.sh" allocfree >/dev/null || [ $? -eq 1 ] # 1: a check failed, which is no matter here
dir=$WORK/allocfree-all
echo "| METER_HOTSPOT_SAMPLE | function | model own ns/call | profile ns/call | model/profile |"
echo "| ---: | --- | ---: | ---: | ---: |"
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10 100 1000)
for rate in "${rates[@]}"; do
	out=$dir/rate$rate
	METER_HOTSPOT_SAMPLE=$rate METER_EXPORT_CSV="$out.csv" ADVERSARIAL_TRUTH="$out.truth" \
		"$dir/allocfree" -cpuprofile "$out.pprof" >/dev/null 2>&1
	"$WORK/judge" -truth "$out.truth" -probes "$dir/probes.txt" "$out.csv" "$out.pprof" >"$out.judge" || true
	for fn in main.step300ns main.step3us; do
		model=$(awk -F, -v f="$fn" '$1 == f { print $6 }' "$out.csv")
		prof=$(awk -F'|' -v f="$fn" '/^shares:/ { on = 1 } on && $2 ~ " "f" " { gsub(/ /, "", $7); print $7; exit }' "$out.judge")
		awk -v r="$rate" -v f="$fn" -v m="$model" -v p="$prof" 'BEGIN { printf "| %d | %s | %d | %.0f | %.2f |\n", r, f, m, p, (p > 0 ? m / p : 0) }'
	done
done
