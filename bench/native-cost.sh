#!/usr/bin/env bash
# What a workload costs instrumented at default properties, in
# instructions: the decisions of a native run, each firing at what
# callgrind counts for its path. Workloads: yaml (gopkg.in/yaml.v3
# decoding a 300-item document, bench/yamlwork; an op is a decoding) and
# goldmark (example/ rendering goldmark's benchmark document with its
# benchmark settings, -plain; an op is a rendering), as
# bench/inject-figures.sh instruments them.
#
# Which firings hotspot meters depends on time: a firing is hot on its
# inclusive and inherent microseconds. Under callgrind time runs 50 to 150
# times slower, by a factor that differs from one function to the next,
# so no scaling of the thresholds makes valgrind's decisions a native
# run's: (*parser).mapping, sampled in native runs, stays metered at every
# call there in some runs and not in others. And sampling windows open on
# timers, which under callgrind (one P, asynchronous preemption off) never
# run. So here:
#   - every probe disabled (METER_ENABLED=false) and plain are counted by
#     callgrind, per op between WIN_C1 and WIN_C2 ops (10 and 70), the
#     median of WIN_CG_RUNS (3) counts each: the instrumented code's cost
#     when nothing is metered;
#   - a native run at default properties of N2 ops and one of N1
#     (the first N1 hold hotspot's warm-up) count, per op, the
#     firings metered (the .stats files' "metered" column, windows and
#     probes metered always alike) and the firings counted in counting
#     windows (the .meta files' "counted");
#   - each metered firing is charged WIN_METERED instructions beyond a
#     disabled one (420: the engine alone, +415 in bench/callgrind.sh, and
#     two TSC reads of a few each), each counted one WIN_COUNTED (46:
#     BENCH=CountedFiring BASE=outside CASES=counting BIN=meter.test, Begin
#     and End called directly, loop included; generated code skips End, and
#     callgrind's split of those by function puts its share at about 37, so
#     this errs high).
# What it leaves out: the windows' own timers and bookkeeping, a fraction of a
# window an op (the table says how many).
#
#   bench/native-cost.sh [yaml|goldmark]   WIN_N1, WIN_N2 (500, 2500);
#                                          WIN_RUNS (3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
N1=${WIN_N1:-500}
N2=${WIN_N2:-2500}
C1=${WIN_C1:-10}
C2=${WIN_C2:-70}
CG_RUNS=${WIN_CG_RUNS:-3}
RUNS=${WIN_RUNS:-3}
METERED=${WIN_METERED:-420}
COUNTED=${WIN_COUNTED:-46}
command -v valgrind >/dev/null || { echo "native-cost.sh: valgrind is not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOWORK=off GOFLAGS=
(cd "$ROOT/cmd/meterinject" && $GO build -o "$tmp/meterinject" .)
W=${1:-yaml}
case $W in
yaml)
	cp -r "$ROOT/bench/yamlwork" "$tmp/w"
	deps=gopkg.in/yaml.v3
	args=()
	;;
goldmark)
	cp -r "$ROOT/example" "$tmp/w"
	deps=github.com/yuin/goldmark/...
	(cd "$tmp/w" && $GO mod download)
	mkdir "$tmp/data"
	cp "$(cd "$tmp/w" && $GO list -m -f '{{.Dir}}' github.com/yuin/goldmark)/_benchmark/cmark/_data.md" "$tmp/data/"
	args=(-plain -corpus "$tmp/data")
	;;
*)
	echo "native-cost.sh: workload yaml or goldmark, not $W" >&2
	exit 2
	;;
esac
cd "$tmp/w"
$GO mod download
$GO build -o "$tmp/plain" .
"$tmp/meterinject" -cache "$tmp/cache" -runtime "$ROOT" -deps "$deps" go build -o "$tmp/end" . 2>/dev/null

# ir BINARY N ENV...: instructions for N ops
ir() {
	local b=$1 n=$2
	shift 2
	env "$@" GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
		"$tmp/$b" -n "$n" "${args[@]}" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
# per BINARY ENV...: the median over CG_RUNS counts of instructions per op
# between C1 and C2 ops (a plain run's count moves by a few tenths of a
# percent with the hash seeds of the workload's maps)
per() {
	local b=$1
	shift
	for _ in $(seq "$CG_RUNS"); do
		echo $(( ($(ir "$b" "$C2" "$@") - $(ir "$b" "$C1" "$@")) / (C2 - C1) ))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
plain=$(per plain)
off=$(per end METER_ENABLED=false)

# run N: "metered counted windows counting-windows" of a native run at
# default properties
run() {
	METER_EXPORT_CSV="$tmp/m.csv" "$tmp/end" -n "$1" "${args[@]}" >/dev/null 2>&1
	awk -F, 'NR > 1 { m += $4 } END { printf "%d ", m }' "$tmp/m.csv.stats"
	awk '/^counted:/ { c = $2 } /^sampling_windows:/ { w = $2 } /^counting_windows:/ { k = $2 }
		END { printf "%d %d %d\n", c, w, k }' "$tmp/m.csv.meta"
}
awk -v p="$plain" -v o="$off" 'BEGIN { printf "callgrind, per op: plain %d, every probe disabled %d (%+.2f%%)\n", p, o, 100 * (o - p) / p }'
echo
echo "$W"
echo
echo "| run | metered an op | counted an op | windows an op, metered + counting | metering over plain | default properties over plain |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for i in $(seq "$RUNS"); do
	read -r m1 c1 w1 k1 <<< "$(run "$N1")"
	read -r m2 c2 w2 k2 <<< "$(run "$N2")"
	awk -v m=$((m2 - m1)) -v c=$((c2 - c1)) -v w=$((w2 - w1)) -v k=$((k2 - k1)) -v n=$((N2 - N1)) \
		-v pm="$METERED" -v pc="$COUNTED" -v p="$plain" -v o="$off" -v i="$i" 'BEGIN {
		x = (m * pm + c * pc) / n
		printf "| %d | %.0f | %.0f | %.2f + %.2f | %+.2f%% | %+.2f%% |\n", i, m / n, c / n, w / n, k / n, 100 * x / p, 100 * (o + x - p) / p
	}'
done
