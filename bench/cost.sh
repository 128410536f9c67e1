#!/usr/bin/env bash
# What instrumentation costs, in instructions per operation counted by
# callgrind: plain, instrumented with every probe disabled
# (METER_ENABLED=false), and at default properties, on
#   yaml:    gopkg.in/yaml.v3 decoding a 300-item document (bench/yamlwork);
#            an operation is a decoding;
#   service: bench/adversarial/service, a net/http service behind four
#            middleware closures, with auth, JSON and a search sorting with a
#            comparator, served through httptest; an operation is a request.
# Each count is of operations N1 to N2 of one run, over N2−N1: the
# program calls main.mark after the N1th operation and after the last
# (-mark N1), and callgrind dumps its counts as mark is entered
# (--dump-before), so start-up and the first N1 operations (hotspot's
# verdicts come in those) stay out, and the operations counted all run
# under the same verdicts. (Two runs, of N1 and of N2 operations, reach
# their verdicts apart, timed under valgrind, and their difference
# multiplies any disagreement by N2/(N2−N1).) The collector is off
# (GOGC=off), as its work
# depends on how the heap grows in time, not on the code. Under valgrind a
# program runs about 50 times slower, so the hotspot thresholds are scaled
# by 50 (METER_HOTSPOT_THRESHOLD=500, ..._INHERENT=100), and with them the
# cap of the untimed limit, and so is the sampler's interval
# (METER_SAMPLER_INTERVAL=250000); GODEBUG=asyncpreemptoff=1 and GOMAXPROCS=1, as
# idle Ps spin under valgrind. Default selection (meterinject without
# -all).
#
#   bench/cost.sh [yaml|service]...     COST_N1, COST_N2 per workload
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
command -v valgrind >/dev/null || { echo "cost.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOWORK=off GOFLAGS=
(cd "$ROOT/cmd/meterinject" && $GO build -o "$tmp/meterinject" .)

count() { # binary args... → instructions between the two calls of main.mark
	local bin=$1
	shift
	rm -f "$tmp"/cg.out*
	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 METER_HOTSPOT_THRESHOLD=500 METER_HOTSPOT_THRESHOLD_INHERENT=100 METER_SAMPLER_INTERVAL=250000 \
		valgrind --tool=callgrind --dump-before=main.mark --callgrind-out-file="$tmp/cg.out" "$bin" "$@" >/dev/null 2>&1
	[ -f "$tmp/cg.out.2" ] || { echo "cost.sh: $bin called main.mark fewer than twice" >&2; exit 1; }
	callgrind_annotate "$tmp/cg.out.2" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}'
}

per() { # n1 n2 flag binary [env] → instructions per operation
	local n1=$1 n2=$2 flag=$3 bin=$4 b
	shift 4
	b=$(env "$@" bash -c "$(declare -f count); tmp=$tmp; count $bin $flag $n2 -mark $n1")
	echo $((b / (n2 - n1)))
}

run() { # name dir pkgs n1 n2 flag
	local name=$1 dir=$2 pkgs=$3 n1=$4 n2=$5 flag=$6
	(cd "$dir" && "$tmp/meterinject" -overlay "$tmp/$name.json" -cache "$tmp/cache" -runtime "$ROOT" $pkgs >/dev/null 2>&1)
	(cd "$dir" && $GO build -o "$tmp/$name.plain" . && $GO build -overlay "$tmp/$name.json" -o "$tmp/$name.inst" .)
	local p d m
	p=$(per "$n1" "$n2" "$flag" "$tmp/$name.plain")
	d=$(per "$n1" "$n2" "$flag" "$tmp/$name.inst" METER_ENABLED=false)
	m=$(per "$n1" "$n2" "$flag" "$tmp/$name.inst")
	printf '| %s | %d | %d | %+.2f%% | %d | %+.2f%% |\n' "$name" "$p" "$d" "$(echo "100*($d-$p)/$p" | bc -l)" "$m" "$(echo "100*($m-$p)/$p" | bc -l)"
}

echo "| workload | plain Ir/op | every probe disabled | over plain | default properties | over plain |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for w in "${@:-yaml service}"; do
	case $w in
	yaml)
		cp -r "$ROOT/bench/yamlwork" "$tmp/yaml"
		(cd "$tmp/yaml" && $GO mod download)
		run yaml "$tmp/yaml" ". gopkg.in/yaml.v3" "${COST_N1:-100}" "${COST_N2:-160}" -n
		;;
	service)
		run service "$ROOT/bench/adversarial/service" "." "${COST_N1:-5000}" "${COST_N2:-10000}" -n
		;;
	*)
		echo "cost.sh: workload yaml or service, not $w" >&2
		exit 2
		;;
	esac
done
