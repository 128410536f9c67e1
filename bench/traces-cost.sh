#!/usr/bin/env bash
# What traces across goroutines cost a service's requests, in instructions
# per request counted by callgrind: example/fanout, whose handler fans out
# to a go statement, an errgroup and a goroutine that outlives it, serving
# requests in the process (fanout -n), plain and instrumented (default
# selection), at default properties (tracepoint off), with tracepoint on at
# 1 in 100, and so again with the spans exported (to the pprof profile's
# call paths, which take every span the pipeline hands over). Each count is
# the difference between runs of N2 and N1 requests over N2−N1, which
# cancels start-up; settings as bench/cost.sh's (hotspot thresholds scaled
# and sampler interval scaled by 50 for valgrind, GOMAXPROCS=1, no
# asynchronous preemption).
#
#   bench/traces-cost.sh                    this checkout
#   RUNTIME=DIR METERINJECT=DIR bench/traces-cost.sh
#                                           another checkout's runtime and
#                                           meterinject (an older engine: before/after)
# COST_N1, COST_N2 set the request counts (1000, 5000).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNTIME=${RUNTIME:-$ROOT}
METERINJECT=${METERINJECT:-$RUNTIME/cmd/meterinject}
GO=${GO:-go}
N1=${COST_N1:-1000}
N2=${COST_N2:-5000}
command -v valgrind >/dev/null || { echo "traces-cost.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOWORK=off GOFLAGS=
(cd "$METERINJECT" && $GO build -o "$tmp/meterinject" .)
(cd "$ROOT/example" && "$tmp/meterinject" -overlay "$tmp/fanout.json" -cache "$tmp/cache" -runtime "$RUNTIME" ./fanout >/dev/null 2>&1)
(cd "$ROOT/example" && $GO build -o "$tmp/plain" ./fanout && $GO build -overlay "$tmp/fanout.json" -o "$tmp/inst" ./fanout)

count() { # binary n [env...] → total instructions
	local bin=$1 n=$2
	shift 2
	env GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 METER_HOTSPOT_THRESHOLD=500 METER_HOTSPOT_THRESHOLD_INHERENT=100 METER_SAMPLER_INTERVAL=250000 "$@" \
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" -n "$n" >/dev/null 2>&1
	callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}'
}

per() { # binary [env...] → instructions per request
	local bin=$1 a b
	shift
	a=$(count "$bin" "$N1" "$@")
	b=$(count "$bin" "$N2" "$@")
	echo $(((b - a) / (N2 - N1)))
}

p=$(per "$tmp/plain")
echo "| case | Ir/request | over plain |"
echo "| --- | ---: | ---: |"
printf '| plain | %d | |\n' "$p"
row() { # name env...
	local name=$1 v
	shift
	v=$(per "$tmp/inst" "$@")
	printf '| %s | %d | %+.2f%% |\n' "$name" "$v" "$(echo "100*($v-$p)/$p" | bc -l)"
}
row "default properties" 
row "tracepoint 1 in 100" METER_TRACEPOINT_ENABLED=true METER_TRACEPOINT_SAMPLE=100
row "tracepoint 1 in 100, spans exported" METER_TRACEPOINT_ENABLED=true METER_TRACEPOINT_SAMPLE=100 METER_EXPORT_PPROF="$tmp/paths.pprof"
