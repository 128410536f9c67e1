#!/bin/sh
# Regenerates the measurement-reduction table of docs/chain.md: bbolt
# instrumented in full (meterinject -all -overlay; the sources and the
# module cache are left alone), driven by the write-stress program once per
# configuration of the chain, each run next to a run of the same program
# built without instrumentation.
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

(cd "$ROOT" && $GO build -o "$WORK/meterinject" ./cmd/meterinject)
pkgs=$($GO list -deps . | grep '^go\.etcd\.io/bbolt')
"$WORK/meterinject" -all -overlay "$WORK/overlay.json" -cache "$WORK/cache" -runtime "$ROOT" $pkgs
$GO build -o "$WORK/plain" .
$GO build -overlay "$WORK/overlay.json" -o "$WORK/metered" .

field() { # field NAME LINE
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
mega() { awk -v n="$1" 'BEGIN { if (n >= 1e5) printf "%.2f M", n / 1e6; else printf "%d", n }'; }

TP=METER_TRACEPOINT_ENABLED=true
FC=METER_FLOWCHECK_ENABLED=true
FC2="METER_FLOWCHECK_ENABLED=true METER_FLOWCHECK_LOWER=250 METER_FLOWCHECK_UPPER=500"
B="METER_BUDGET_ENABLED=true"

echo "| configuration | metered firings | write-up (Cassandra) | (*Bucket).Put | (*Cursor).seek | (*node).put | (*Tx).Commit | traces (truncated) | throughput vs uninstrumented | overhead |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
while IFS='|' read -r name ref props; do
	plain=$("$WORK/plain" $ARGS)
	line=$(env $props "$WORK/metered" $ARGS)
	p=$(field puts_per_second "$plain")
	m=$(field puts_per_second "$line")
	rel=$(awk -v m="$m" -v p="$p" 'BEGIN { printf "%.2f", m / p }')
	over=$(awk -v m="$m" -v p="$p" 'BEGIN { printf "%+.0f%%", 100 * (p / m - 1) }')
	printf '| %s (`%s`) | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s |\n' \
		"$name" "${props:-defaults}" "$(mega "$(field metered "$line")")" "$ref" \
		"$(field 'go.etcd.io/bbolt.(\*Bucket).Put' "$line")" \
		"$(field 'go.etcd.io/bbolt.(\*Cursor).seek' "$line")" \
		"$(field 'go.etcd.io/bbolt.(\*node).put' "$line")" \
		"$(field 'go.etcd.io/bbolt.(\*Tx).Commit' "$line")" \
		"$(field traces "$line")" "$(field truncated "$line")" "$rel" "$over"
done <<CONFIGS
every probe off|–|METER_ENABLED=false
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
echo "Workload: $("$WORK/plain" -h 2>&1 | grep -c '^  -') flags at their defaults${ARGS:+ and $ARGS}; $(field puts "$plain") puts per run; $(nproc) CPUs; $($GO version | cut -d' ' -f3)."
