#!/usr/bin/env bash
# How long a sampled function's own time per call comes out against a CPU
# profile of the same run, by how rarely its calls are selected
# (METER_HOTSPOT_SAMPLE): bench/adversarial/allocfree, whose step300ns and
# step3us compute, and bench/adversarial/phases, whose makeRecord
# allocates, each run at each rate. The profile's figure is the function's
# CPU time charged as the model charges it (untimed callees' to their
# caller) over its calls, as bench/judge's shares check prints it.
#
#   bench/adversarial/sample-bias.sh [rate...]      (default 10 100 1000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${ADVERSARIAL_WORK:-$ROOT/.meterinject/adversarial}
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10 100 1000)
# Builds each program instrumented; 1: a check failed, which is no matter here.
ADVERSARIAL_MODES=default "$ROOT/bench/adversarial/run.sh" allocfree phases >/dev/null || [ $? -eq 1 ]
echo "| METER_HOTSPOT_SAMPLE | function | model own ns/call | profile ns/call | model/profile |"
echo "| ---: | --- | ---: | ---: | ---: |"
for rate in "${rates[@]}"; do
	for run in allocfree:main.step300ns,main.step3us phases:main.makeRecord,main.checksum; do
		prog=${run%%:*}
		dir=$WORK/$prog-all
		out=$dir/rate$rate
		METER_HOTSPOT_SAMPLE=$rate METER_EXPORT_CSV="$out.csv" ADVERSARIAL_TRUTH="$out.truth" \
			"$dir/$prog" -cpuprofile "$out.pprof" >/dev/null 2>&1
		"$WORK/judge" -truth "$out.truth" -probes "$dir/probes.txt" "$out.csv" "$out.pprof" >"$out.judge" || true
		for fn in ${run#*:}; do
			fn=${fn//,/ }
			for f in $fn; do
				model=$(awk -F, -v f="$f" '$1 == f { print $6 }' "$out.csv")
				prof=$(awk -F'|' -v f="$f" '/^shares:/ { on = 1 } on && $2 ~ " "f" " { gsub(/ /, "", $7); print $7; exit }' "$out.judge")
				label=$(awk -F, -v f="$f" '$1 == f { print $9 }' "$out.csv")
				if [ "$label" != sampled ]; then # its verdict in this run: no sampled estimate to compare
					echo "| $rate | $f | ${label:-no row} | | |"
					continue
				fi
				awk -v r="$rate" -v f="$f" -v m="$model" -v p="$prof" 'BEGIN { printf "| %d | %s | %d | %.0f | %.2f |\n", r, f, m, p, (p > 0 ? m / p : 0) }'
			done
		done
	done
done
