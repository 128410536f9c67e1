#!/usr/bin/env bash
# What meterinject's probes cost on two real workloads, in instructions
# counted by callgrind (this VM's wall time moves by far more than the
# effect): gopkg.in/yaml.v3 decoding a 300-item document
# (bench/yamlwork) and goldmark rendering its own benchmark document
# (example/bench_test.go, BenchmarkRender).
#
# For each workload: plain; instrumented (default selection: yaml through
# meterinject go, goldmark's packages through -overlay) with every probe
# disabled (METER_ENABLED=false); at default properties with
# the hotspot thresholds scaled by 50 (METER_HOTSPOT_THRESHOLD=500
# METER_HOTSPOT_THRESHOLD_INHERENT=100: under valgrind time runs about 50
# times slower, and unscaled thresholds find nearly every function hot;
# the sampler's interval too, METER_SAMPLER_INTERVAL=250000);
# and the same two for -shape defer. Instructions per op are
# (Ir(N2 ops) - Ir(N1 ops)) / (N2 - N1): the first N1 ops are warm-up, in
# which hotspot learns (each probe's first 1000 or more firings are
# metered); their own figure, Ir(N1 ops) / N1, is the last column, with
# the process's start in it. Without NOPs too (bench/irnop): the assembler's
# jump-alignment padding moves with any change to a binary.
#
# Also reported: probes instrumented, and probe firings per op (every
# firing metered, METER_HOTSPOT_ENABLED=false, counted from the model);
# and "model-default-x50": instrumented again with -model, from the model
# of a native run of FIG_MODEL_OPS ops at default properties (the
# refinement a user runs: probes found disabled are left out).
#
#   bench/inject-figures.sh
#   FIG_WORK keeps the work dir; FIG_N1, FIG_N2 set the ops; FIG_GOGC the
#   collector (off by default: FIG_GOGC=100 as programs run); FIG_RUNTIME
#   names another runtime checkout; FIG_GO_LINE sets the workloads' go line
#   (below the runtime's, meterinject keeps each file's language version).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
WORK=${FIG_WORK:-$(mktemp -d /tmp/inject-figures.XXXXXX)}
N1=${FIG_N1:-10}
N2=${FIG_N2:-30}
MODEL_OPS=${FIG_MODEL_OPS:-200}
GCPERCENT=${FIG_GOGC:-off} # the collector: off by default; FIG_GOGC=100 runs it as programs do
RT=${FIG_RUNTIME:-$ROOT}
mkdir -p "$WORK"
export GOWORK=off GOFLAGS=
command -v valgrind >/dev/null || { echo "inject-figures.sh: valgrind is not installed"; exit 1; }

(cd "$ROOT/cmd/meterinject" && $GO build -o "$WORK/meterinject" .)
$GO build -o "$WORK/irnop" "$ROOT/bench/irnop"
MI="$WORK/meterinject"

rm -rf "$WORK/yaml" "$WORK/goldmark"
cp -r "$ROOT/bench/yamlwork" "$WORK/yaml"
cp -r "$ROOT/example" "$WORK/goldmark"
for w in yaml goldmark; do
	if [ -n "${FIG_GO_LINE:-}" ]; then (cd "$WORK/$w" && $GO mod edit -go="$FIG_GO_LINE"); fi
	(cd "$WORK/$w" && $GO mod download)
done
GM=$(cd "$WORK/goldmark" && $GO list -m -f '{{.Dir}}' github.com/yuin/goldmark)
export GOLDMARK_DATA="$GM/_benchmark/cmark/_data.md"

# build WORKLOAD VARIANT [meterinject flags]: a binary that runs N ops
# of the workload when given N.
build() {
	local w=$1 v=$2; shift 2
	if [ "$v" = plain ]; then
		if [ "$w" = yaml ]; then
			(cd "$WORK/$w" && $GO build -o "$WORK/$w/$v" .)
		else
			(cd "$WORK/$w" && $GO test -c -o "$WORK/$w/$v" .)
		fi
	elif [ "$w" = yaml ]; then
		# the workload's main too (meterinject go instruments the main
		# module), so that the model is written at exit
		(cd "$WORK/$w" && "$MI" "$@" -cache "$WORK/cache" -runtime "$RT" -deps gopkg.in/yaml.v3 \
			go build -o "$WORK/$w/$v" . 2> "$WORK/$w/$v.summary")
	else
		# goldmark's packages only: the benchmark's own package stays
		# plain, which meterinject go would instrument with the module
		(cd "$WORK/$w" && "$MI" "$@" -overlay "$WORK/$w/$v.json" -cache "$WORK/cache" -runtime "$RT" \
			github.com/yuin/goldmark/... 2> "$WORK/$w/$v.summary")
		(cd "$WORK/$w" && $GO test -c -overlay "$WORK/$w/$v.json" -o "$WORK/$w/$v" .)
	fi
}
# ops WORKLOAD VARIANT N ENV...: run N ops
ops() {
	local w=$1 v=$2 n=$3; shift 3
	if [ "$w" = yaml ]; then
		env "$@" "$WORK/$w/$v" -n "$n"
	else
		env "$@" "$WORK/$w/$v" -test.run '^$' -test.bench Render -test.benchtime "${n}x" > /dev/null
	fi
}
# irs WORKLOAD VARIANT N ENV...: "total nops" instructions for N ops
irs() {
	local w=$1 v=$2 n=$3; shift 3
	ops "$w" "$v" "$n" "$@" GOMAXPROCS=1 GOGC="$GCPERCENT" GODEBUG=asyncpreemptoff=1 METER_CLOCK=mono METER_SAMPLER_INTERVAL=250000 \
		valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$WORK/cg.out" 2> "$WORK/cg.err" ||
		{ cat "$WORK/cg.err"; exit 1; }
	"$WORK/irnop" "$WORK/$w/$v" "$WORK/cg.out" | awk '{print $2, $4}'
}
X50=(METER_HOTSPOT_THRESHOLD=500 METER_HOTSPOT_THRESHOLD_INHERENT=100)
VARIANTS=(
	"plain plain"
	"end-disabled end METER_ENABLED=false"
	"end-default-x50 end ${X50[*]}"
	"defer-disabled defer METER_ENABLED=false"
	"defer-default-x50 defer ${X50[*]}"
	"model-default-x50 model ${X50[*]}"
)
for w in yaml goldmark; do
	build "$w" plain
	build "$w" end
	build "$w" defer -shape defer
	# Firings per op: every firing metered, counted in the model (for
	# goldmark, by the example program rendering the same document).
	if [ "$w" = yaml ]; then
		ops "$w" end "$N1" METER_HOTSPOT_ENABLED=false METER_EXPORT_CSV="$WORK/$w/fire.csv" > /dev/null
	else
		mkdir -p "$WORK/$w/data" && cp "$GOLDMARK_DATA" "$WORK/$w/data/"
		(cd "$WORK/$w" && "$MI" -cache "$WORK/cache" -runtime "$RT" -deps 'github.com/yuin/goldmark/...' \
			go build -o "$WORK/$w/prog" . 2> /dev/null)
		METER_HOTSPOT_ENABLED=false METER_EXPORT_CSV="$WORK/$w/fire.csv" "$WORK/$w/prog" -plain -n "$N1" -corpus "$WORK/$w/data" > /dev/null
	fi
	fired=$(awk -F, -v n="$N1" 'NR > 1 && $1 !~ /^main\./ { s += $2 } END { printf "%d", s / n }' "$WORK/$w/fire.csv")
	# The model of a native run at default properties, and the build it refines.
	if [ "$w" = yaml ]; then
		ops "$w" end "$MODEL_OPS" METER_EXPORT_CSV="$WORK/$w/model.csv" > /dev/null
	else
		METER_EXPORT_CSV="$WORK/$w/model.csv" "$WORK/$w/prog" -plain -n "$MODEL_OPS" -corpus "$WORK/$w/data" > /dev/null
	fi
	build "$w" model -model "$WORK/$w/model.csv"
	: > "$WORK/$w/cg.txt"
	for v in "${VARIANTS[@]}"; do
		set -- $v
		name=$1 bin=$2; shift 2
		read -r a an <<< "$(irs "$w" "$bin" "$N1" "$@")"
		read -r b bn <<< "$(irs "$w" "$bin" "$N2" "$@")"
		echo "$name $(( (b - a) / (N2 - N1) )) $(( ((b - bn) - (a - an)) / (N2 - N1) )) $(( a / N1 ))" >> "$WORK/$w/cg.txt"
	done
	{
		echo "### $w ($($GO version | cut -d' ' -f3), $(date -u +%Y-%m-%dT%H:%MZ))"
		echo
		sed 's/^/    /' "$WORK/$w/end.summary" "$WORK/$w/model.summary"
		echo
		echo "Probe firings per op (every firing metered): $fired"
		echo
		echo "| variant | instructions/op | vs plain | without NOPs | vs plain | first $N1 ops, per op | vs plain |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
		read -r base nbase wbase <<< "$(awk '$1 == "plain" {print $2, $3, $4}' "$WORK/$w/cg.txt")"
		while read -r name ir nir wir; do
			echo "| $name | $ir | $(echo "scale=2; 100 * ($ir - $base) / $base" | bc)% |" \
				"$nir | $(echo "scale=2; 100 * ($nir - $nbase) / $nbase" | bc)% |" \
				"$wir | $(echo "scale=2; 100 * ($wir - $wbase) / $wbase" | bc)% |"
		done < "$WORK/$w/cg.txt"
		echo
	} | tee -a "$WORK/figures.md"
done
