#!/bin/sh
# Regenerates the measurement-reduction table of docs/chain.md: bbolt
# instrumented in full (meterinject -all -overlay; the sources and the
# module cache are left alone), driven by the write-stress program RUNS
# times per configuration of the chain, each run next to a run of the same
# program built without instrumentation. Throughput is the ratio of puts per
# second (wall time) within each pair; CPU overhead is the ratio of CPU time
# per put, less 1. Both are medians over the pairs.
#
#   bench/bbolt/run.sh            (from anywhere; extra stress flags in ARGS)
#
# Needs cmd/meterinject in this module. Prints a Markdown table.
set -eu
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
GO=${GO:-go}
ARGS=${ARGS:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT/cmd/meterinject" && $GO build -o "$WORK/meterinject" .)
pkgs=$($GO list -deps . | grep '^go\.etcd\.io/bbolt')
"$WORK/meterinject" -all -overlay "$WORK/overlay.json" -cache "$WORK/cache" -runtime "$ROOT" $pkgs
$GO build -o "$WORK/plain" .
$GO build -overlay "$WORK/overlay.json" -o "$WORK/metered" .

# median KEY FILE: the median of KEY=value over the lines of FILE.
median() {
	awk -v k="$1=" '{ for (i = 1; i <= NF; i++) if (index($i, k) == 1) v[n++] = substr($i, length(k) + 1) + 0 }
	END { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	      m = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; print m }' "$2"
}
mega() { awk -v n="$1" 'BEGIN { if (n >= 1e5) printf "%.2f M", n / 1e6; else printf "%d", n }'; }

TP=METER_TRACEPOINT_ENABLED=true
FC=METER_FLOWCHECK_ENABLED=true
FC2="METER_FLOWCHECK_ENABLED=true METER_FLOWCHECK_LOWER=250 METER_FLOWCHECK_UPPER=500"
B="METER_BUDGET_ENABLED=true"
RUNS=${RUNS:-3}

echo "| configuration | metered firings | write-up (Cassandra) | (*Bucket).Put | (*Cursor).seek | (*node).put | (*Tx).Commit | (*DB).Batch | traces | throughput vs uninstrumented | CPU overhead per put |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
while IFS='|' read -r name ref props; do
	: > "$WORK/runs"
	for i in $(seq "$RUNS"); do
		# Each instrumented run next to an uninstrumented one: the ratio
		# of the two is what is kept, so drifts of a shared machine cancel.
		p=$("$WORK/plain" $ARGS)
		m=$(env $props "$WORK/metered" $ARGS)
		r=$(printf '%s\n%s\n' "$p" "$m" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2] } }
			END { print "ratio=" v[2, "puts_per_second"] / v[1, "puts_per_second"], "cpu=" v[2, "cpu_us_per_put"] / v[1, "cpu_us_per_put"] }')
		echo "$m $r" >> "$WORK/runs"
	done
	rel=$(median ratio "$WORK/runs")
	cpu=$(median cpu "$WORK/runs")
	printf '| %s (`%s`) | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %+.0f%% |\n' \
		"$name" "${props:-defaults}" "$(mega "$(median metered "$WORK/runs")")" "$ref" \
		"$(median 'go.etcd.io/bbolt.(*Bucket).Put' "$WORK/runs")" \
		"$(median 'go.etcd.io/bbolt.(*Cursor).seek' "$WORK/runs")" \
		"$(median 'go.etcd.io/bbolt.(*node).put' "$WORK/runs")" \
		"$(median 'go.etcd.io/bbolt.(*Tx).Commit' "$WORK/runs")" \
		"$(median 'go.etcd.io/bbolt.(*DB).Batch' "$WORK/runs")" \
		"$(median traces "$WORK/runs")" "$rel" "$(awk -v c="$cpu" 'BEGIN { print 100 * (c - 1) }')"
done <<CONFIGS
every probe off|–|METER_ENABLED=false
no extension: every firing metered|–|METER_HOTSPOT_ENABLED=false
hotspot only|305 M|
tracepoint|4.1 M|$TP
tracepoint + budget 10%|0.8 M|$TP $B
tracepoint + budget 50%|–|$TP $B METER_BUDGET_PERCENT=50
tracepoint + budget 5%|0.4 M|$TP $B METER_BUDGET_PERCENT=5
flowcheck + budget 10%|11.7 M|$FC $B
flowcheck 250/500 + budget 10%|1.7 M|$FC2 $B
flowcheck 250/500 + budget 5%|1.1 M|$FC2 $B METER_BUDGET_PERCENT=5
CONFIGS
echo
echo "Medians of $RUNS runs each. Workload: the stress program's defaults${ARGS:+ with $ARGS} ($(median puts "$WORK/runs") puts a run); $(nproc) CPUs; $($GO version | cut -d' ' -f3)."
