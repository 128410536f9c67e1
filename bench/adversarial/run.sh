#!/usr/bin/env bash
# Runs the adversarial programs (bench/adversarial/*, docs/adversarial.md)
# instrumented, and scores each model with bench/judge:
#   - builds cmd/meterinject and bench/judge;
#   - instruments each program through -overlay (its sources untouched)
#     with its selection: -all, or meterinject's default selection;
#   - runs it twice, each time with a CPU profile, its model
#     (METER_EXPORT_CSV) and its true calls (ADVERSARIAL_TRUTH): at default
#     properties, and with every firing metered (METER_HOTSPOT_ENABLED=false:
#     every firing of the functions the clock can time);
#   - judges each run, and prints a summary table.
# Exits 1 when any judgement fails, 2 when a program cannot be built or run.
#
#   bench/adversarial/run.sh [name[@all|@default]...]
#
# Names are the programs' folders; @all or @default picks the selection
# (default: the program's own, below). ADVERSARIAL_WORK sets where
# everything is written (default .meterinject/adversarial, which git
# ignores); ADVERSARIAL_MODES the modes to run (default "default every",
# and for the programs with more busy goroutines than cores, "oneproc" and
# "oneproc-every" too: the same with GOMAXPROCS=1, a container's one CPU,
# where each goroutine waits its turn for the others' time slices).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
WORK=${ADVERSARIAL_WORK:-$ROOT/.meterinject/adversarial}
export GOWORK=off

# Each program's selection.
ALL_RUNS="iterators@default iterators@all errpanic@all treewalk@all callers@all descent@all churn@all allocfree@all phases@all cpubound@all noalloc@all tiny@all service@default service@all blocking@all syscallwait@all cgowork@all short@all shapes@default shapes@all pipeline@default pipeline@all locks@default locks@all gcheavy@default gcheavy@all generic@default generic@all amortized@all young@all workers@default workers@all selected@all layers@all"
# How many runs a program is judged over: a program that ends after a
# tenth of a second leaves a profile of a few dozen samples, too few to
# tell a model's shares within 3 points, so its runs are judged together
# (bench/judge adds them up).
repeats() {
	case $1 in
	short) echo "${ADVERSARIAL_SHORT_RUNS:-20}" ;;
	*) echo 1 ;;
	esac
}
modes_of() {
	if [ -n "${ADVERSARIAL_MODES:-}" ]; then
		echo "$ADVERSARIAL_MODES"
		return
	fi
	case $1 in
	cpubound | locks) echo "default every oneproc oneproc-every" ;;
	*) echo "default every" ;;
	esac
}
selection_of() {
	case " $ALL_RUNS " in
	*" $1@default "*) echo default ;;
	*) echo all ;;
	esac
}

runs=()
if [ $# -eq 0 ]; then
	read -r -a runs <<<"$ALL_RUNS"
else
	for a in "$@"; do
		case $a in
		*@all | *@default) runs+=("$a") ;;
		*) runs+=("$a@$(selection_of "$a")") ;;
		esac
	done
fi

mkdir -p "$WORK"
cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
$GO build -o "$WORK/judge" ./bench/judge

table=()
failed=0
for run in "${runs[@]}"; do
	name=${run%@*}
	sel=${run#*@}
	if [ ! -f "bench/adversarial/$name/main.go" ]; then
		echo "run.sh: no program bench/adversarial/$name" >&2
		exit 2
	fi
	dir="$WORK/$name-$sel"
	mkdir -p "$dir"
	flags=()
	if [ "$sel" = all ]; then
		flags=(-all)
	fi
	"$WORK/meterinject" ${flags[@]+"${flags[@]}"} -overlay "$dir/overlay.json" -cache "$WORK/cache" \
		-runtime "$ROOT" "./bench/adversarial/$name"
	$GO build -overlay "$dir/overlay.json" -o "$dir/$name" "./bench/adversarial/$name"
	# The registered probes: the quoted names in the registration file's
	# Register call, which ends at a line ending in ")" outside its names
	# (a name such as main.(*T).M holds one).
	gen=$(sed -n 's/.*"\([^"]*meter_probes_gen\.go\)": "\([^"]*\)".*/\2/p' "$dir/overlay.json")
	awk '/Register\(/ { on = 1 } on && /"/ { if (match($0, /"[^"]*"/)) print substr($0, RSTART + 1, RLENGTH - 2) } on && /\)[ \t]*$/ { on = 0 }' \
		"$gen" >"$dir/probes.txt"
	for mode in $(modes_of "$name"); do
		env=()
		case $mode in
		default) ;;
		every) env=(METER_HOTSPOT_ENABLED=false) ;;
		oneproc) env=(GOMAXPROCS=1) ;;
		oneproc-every) env=(GOMAXPROCS=1 METER_HOTSPOT_ENABLED=false) ;;
		*)
			echo "run.sh: unknown mode $mode (default, every, oneproc, oneproc-every)" >&2
			exit 2
			;;
		esac
		out="$dir/$mode"
		reps=$(repeats "$name")
		echo "== $name ($sel selection), $mode properties$([ "$reps" = 1 ] || echo ", $reps runs")"
		start=$(date +%s.%N)
		pairs=()
		truths=()
		for i in $(seq "$reps"); do
			o=$out
			[ "$reps" = 1 ] || o=$out.$i
			rm -f "$o.csv" "$o.truth" "$o.pprof"
			if ! env ${env[@]+"${env[@]}"} METER_EXPORT_CSV="$o.csv" ADVERSARIAL_TRUTH="$o.truth" \
				"$dir/$name" -cpuprofile "$o.pprof" >"$o.stdout" 2>"$o.stderr"; then
				cat "$o.stderr" >&2
				echo "run.sh: $name failed" >&2
				exit 2
			fi
			pairs+=("$o.csv" "$o.pprof")
			truths+=("$o.truth")
		done
		secs=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
		status=0
		"$WORK/judge" -truth "$(IFS=,; echo "${truths[*]}")" -probes "$dir/probes.txt" "${pairs[@]}" >"$out.judge" || status=$?
		cat "$out.judge"
		echo
		if [ "$status" -gt 1 ]; then
			exit 2
		fi
		[ "$status" = 0 ] || failed=1
		table+=("| $name | $sel | $mode | ${secs} s $(sed -n 's/^summary: //p' "$out.judge")")
	done
done

echo "Summary (counts: rows within 0.5% of their true calls; shares: points apart, mean/largest over the profile's top 5; cpu: inherent over CPU time plus the threads' wait for a core, in brackets where not checked; hidden: of the profile's top 10, rows right; metering: the profile's share in the meter runtime, left out of shares and hidden)"
echo
echo "| program | selection | mode | wall | counts ok | shares mean/max | cpu | hidden ok | metering | result |"
echo "| --- | --- | --- | ---: | --- | --- | --- | --- | ---: | --- |"
printf '%s\n' "${table[@]}"
exit "$failed"
