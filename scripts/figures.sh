#!/usr/bin/env bash
# The figures of docs/meterinject.md, measured in one run:
#   - time to instrument goldmark (-overlay, default selection);
#   - compile time of goldmark's packages, plain and instrumented;
#   - goldmark's rendering benchmark (example/bench_test.go on goldmark's
#     own _benchmark/cmark/_data.md), plain and instrumented: wall time
#     (benchstat, interleaved runs) and callgrind instructions per op
#     after warm-up ((Ir at N2 ops − Ir at N1 ops) / (N2 − N1)).
# Variants: twin and defer shapes, at default properties, with every probe
# disabled (METER_ENABLED=false), with METER_HOTSPOT_ENABLED=false, and
# twin after -model refinement; "nosmall" is the default selection without
# the small rule (-small-max -1), as meterinject selected before it.
# FIG_WORK keeps the work dir; FIG_COUNT, FIG_N1, FIG_N2, FIG_BUILDS tune
# the runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
WORK=${FIG_WORK:-$(mktemp -d /tmp/figures.XXXXXX)}
COUNT=${FIG_COUNT:-6}
WARM=${FIG_WARMUP:-30}
N1=${FIG_N1:-10}
N2=${FIG_N2:-30}
BUILDS=${FIG_BUILDS:-10}
mkdir -p "$WORK"
export GOWORK=off
MI="$WORK/meterinject"

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$MI" .)
$GO build -o "$WORK/irnop" ./scripts/irnop
cd "$ROOT/example"
$GO mod download
GM=$($GO list -m -f '{{.Dir}}' github.com/yuin/goldmark)
export GOLDMARK_DATA="$GM/_benchmark/cmark/_data.md"
mkdir -p "$WORK/data" && cp "$GOLDMARK_DATA" "$WORK/data/"
PKGS=github.com/yuin/goldmark/...

now() { date +%s.%N; }
secs() { echo "scale=2; ($2 - $1) / 1" | bc; }

# Instrument: twin (timed), defer.
t0=$(now)
"$MI" -overlay "$WORK/twin.json" -cache "$WORK/cache-twin" -runtime "$ROOT" $PKGS 2> "$WORK/twin.summary"
t1=$(now)
INSTRUMENT_S=$(secs "$t0" "$t1")
"$MI" -shape defer -overlay "$WORK/defer.json" -cache "$WORK/cache-defer" -runtime "$ROOT" $PKGS 2> "$WORK/defer.summary"
"$MI" -small-max -1 -overlay "$WORK/nosmall.json" -cache "$WORK/cache-nosmall" -runtime "$ROOT" $PKGS 2> "$WORK/nosmall.summary"

# A model from the workload at default properties, for -model refinement.
"$MI" -overlay "$WORK/work.json" -cache "$WORK/cache-work" -runtime "$ROOT" . $PKGS 2>/dev/null
$GO build -overlay "$WORK/work.json" -o "$WORK/workload" .
METER_EXPORT_CSV="$WORK/model.csv" "$WORK/workload" -plain -n 100 -corpus "$WORK/data" > /dev/null
"$MI" -model "$WORK/model.csv" -overlay "$WORK/model.json" -cache "$WORK/cache-model" -runtime "$ROOT" $PKGS 2> "$WORK/model.summary"

# Test binaries.
$GO test -c -o "$WORK/plain.test" .
for v in twin defer model nosmall; do
	$GO test -c -overlay "$WORK/$v.json" -o "$WORK/$v.test" .
done

# Compile time of goldmark's packages, in CPU seconds (user + sys of go
# build and the compilers; wall time is at the mercy of the shared host).
# A fresh -trimpath value defeats the build cache for those packages only.
# Best of FIG_BUILDS (10), interleaved: with another job on the host, three
# were not enough (identical builds moved by 20%).
TIMEFORMAT='%U %S'
build() { # overlay-or-empty
	local flag="-gcflags=$PKGS=-trimpath=/nonexistent$RANDOM$RANDOM"
	if [ -n "$1" ]; then
		{ time $GO build -overlay "$1" "$flag" $PKGS; } 2>&1 | awk '{printf "%.2f\n", $1 + $2}'
	else
		{ time $GO build "$flag" $PKGS; } 2>&1 | awk '{printf "%.2f\n", $1 + $2}'
	fi
}
best() { sort -n | head -1; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
for v in plain twin defer nosmall; do : > "$WORK/build.$v"; done
for i in $(seq "$BUILDS"); do
	build "" >> "$WORK/build.plain"
	for v in twin defer nosmall; do build "$WORK/$v.json" >> "$WORK/build.$v"; done
done
BP=$(best < "$WORK/build.plain"); BT=$(best < "$WORK/build.twin"); BD=$(best < "$WORK/build.defer"); BN=$(best < "$WORK/build.nosmall")
MP=$(median < "$WORK/build.plain"); MT=$(median < "$WORK/build.twin"); MD=$(median < "$WORK/build.defer"); MN=$(median < "$WORK/build.nosmall")

# Variants: name binary environment.
VARIANTS=(
	"plain plain"
	"twin twin"
	"twin-off twin METER_ENABLED=false"
	"twin-nohotspot twin METER_HOTSPOT_ENABLED=false"
	"twin-model model"
	"defer defer"
	"defer-off defer METER_ENABLED=false"
)
# Under valgrind time runs ~50x slower, so hotspot would find nearly every
# function hot; callgrind also runs "twin-x50": default properties with the
# hotspot thresholds scaled by 50, as native time would judge them.
CG_EXTRA=(
	"twin-x50 twin METER_HOTSPOT_THRESHOLD=500 METER_HOTSPOT_THRESHOLD_INHERENT=100"
	"nosmall-off nosmall METER_ENABLED=false"
	"nosmall-x50 nosmall METER_HOTSPOT_THRESHOLD=500 METER_HOTSPOT_THRESHOLD_INHERENT=100"
)

# Wall time, interleaved so that the host's noise spreads over all, and
# pinned to one CPU at a real-time priority where the user may (FIG_PIN=""
# turns that off): other processes then wait, not the benchmark.
PIN=${FIG_PIN-chrt -f 80 taskset -c 1}
if [ -n "$PIN" ] && ! $PIN true 2>/dev/null; then PIN=""; fi
for v in "${VARIANTS[@]}"; do set -- $v; : > "$WORK/wall.$1"; done
for i in $(seq "$COUNT"); do
	for v in "${VARIANTS[@]}"; do
		set -- $v
		name=$1 bin=$2; shift 2
		$PIN env "$@" BENCH_WARMUP=$WARM "$WORK/$bin.test" -test.run '^$' -test.bench Render -test.benchtime 1s >> "$WORK/wall.$name"
	done
done

# Callgrind instructions per op after warm-up. GOMAXPROCS=1 and GOGC=off
# keep idle-P spinning and GC pacing out of the counts, which then repeat.
# irnop also counts the NOPs among them: the assembler's jump-alignment
# padding, which moves with any change to the binary (scripts/irnop).
irs() { # bin n env... → "total nops"
	local bin=$1 n=$2; shift 2
	env "$@" GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --dump-instr=yes \
		--callgrind-out-file="$WORK/cg.out" \
		"$WORK/$bin.test" -test.run '^$' -test.bench Render -test.benchtime "${n}x" > /dev/null 2> "$WORK/cg.err"
	"$WORK/irnop" "$WORK/$bin.test" "$WORK/cg.out" | awk '{print $2, $4}'
}
: > "$WORK/callgrind.txt"
for v in "${VARIANTS[@]}" "${CG_EXTRA[@]}"; do
	set -- $v
	name=$1 bin=$2; shift 2
	read -r a an <<< "$(irs "$bin" "$N1" "$@")"
	read -r b bn <<< "$(irs "$bin" "$N2" "$@")"
	echo "$name $(( (b - a) / (N2 - N1) )) $(( ((b - bn) - (a - an)) / (N2 - N1) ))" >> "$WORK/callgrind.txt"
done

{
	echo "## Figures ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $($GO version | cut -d' ' -f3), goldmark $($GO list -m -f '{{.Version}}' github.com/yuin/goldmark))"
	echo
	echo "Instrumenting goldmark (-overlay, default selection): ${INSTRUMENT_S} s"
	echo
	echo '```'
	cat "$WORK/twin.summary" "$WORK/model.summary" "$WORK/nosmall.summary"
	echo '```'
	echo
	pct() { echo "scale=1; 100 * ($1 - $2) / $2" | bc; }
	echo "Compile CPU time of goldmark's packages (user+sys, best of $BUILDS): plain ${BP} s;" \
		"twin, default selection ${BT} s (+$(pct "$BT" "$BP")%);" \
		"defer ${BD} s (+$(pct "$BD" "$BP")%);" \
		"twin without the small rule (-small-max -1) ${BN} s (+$(pct "$BN" "$BP")%)"
	echo
	echo "The same, median of $BUILDS: plain ${MP} s; twin ${MT} s (+$(pct "$MT" "$MP")%);" \
		"defer ${MD} s (+$(pct "$MD" "$MP")%); twin without the small rule ${MN} s (+$(pct "$MN" "$MP")%)"
	echo
	echo "Callgrind, instructions per op (one Convert of _data.md), after $N1 ops of warm-up:"
	echo
	echo "| variant | instructions/op | vs plain | without NOPs | vs plain |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	read -r base nbase <<< "$(awk '$1 == "plain" {print $2, $3}' "$WORK/callgrind.txt")"
	while read -r name ir nir; do
		echo "| $name | $ir | $(echo "scale=2; 100 * ($ir - $base) / $base" | bc)% |" \
			"$nir | $(echo "scale=2; 100 * ($nir - $nbase) / $nbase" | bc)% |"
	done < "$WORK/callgrind.txt"
	echo
	echo "Wall time (benchstat, $COUNT interleaved runs of 1 s each, after $WARM renders of warm-up in each process):"
	echo
	echo '```'
	cd "$WORK" && benchstat wall.plain wall.twin wall.twin-off wall.twin-nohotspot wall.twin-model wall.defer wall.defer-off
	echo '```'
} | tee "$WORK/figures.md"
