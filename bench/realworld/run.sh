#!/usr/bin/env bash
# Real modules, fetched by version from the Go module proxy, instrumented by
# meterinject and run with their own test suites. Each module's packages
# are tested as a dependency of a small wrapper module on the runtime's go
# line (or the module's own, if higher): meterinject refuses a main module
# whose go line is below the runtime's, and the module's code keeps its own
# language version either way.
#   1. the suite runs plain;
#   2. instrumented through -overlay (REALWORLD_FLAGS adds flags, e.g.
#      "-all -tests"), it runs three times, unchanged: at default
#      properties, with METER_HOTSPOT_ENABLED=false (every firing
#      metered), and with the whole chain at small rates (tracepoint,
#      flowcheck, budget and spotcheck on, rates chosen so that traces and
#      spot checks would be frequent; this run checks only that no test is
#      lost, not how often they happened); every test that passed plain
#      must pass;
#   3. a copy instrumented in place, then -remove, is byte for byte the
#      module again (diff -r; the copy's go line is raised to the runtime's
#      first where it is lower, as a user would before instrumenting in
#      place, and go.mod is left out of the comparison).
# REALWORLD_MODULES overrides the list; REALWORLD_WORK keeps the work dir.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
MODULES=${REALWORLD_MODULES:-"github.com/google/btree@v1.1.3 github.com/tidwall/gjson@v1.18.0 github.com/yuin/goldmark@v1.7.13"}
WORK=${REALWORLD_WORK:-$(mktemp -d /tmp/realworld.XXXXXX)}
mkdir -p "$WORK"
export GOWORK=off
# goldmark's own knob for slow machines. Its performance tests have 5 s
# limits, which a loaded shared 2-core VM exceeds even uninstrumented
# (TestDeepNestedLabelPerformance: 9 s wall for 2.3 s of CPU, measured),
# and the METER_HOTSPOT_ENABLED=false run meters all of its 50,000-deep
# nested firings (about 4x). The tests still run and must pass.
export GOLDMARK_TEST_TIMEOUT_MULTIPLIER=${GOLDMARK_TEST_TIMEOUT_MULTIPLIER:-20}

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
$GO build -o "$WORK/passed" ./bench/realworld/passed

# goline DIR: the go line of DIR/go.mod (1.16 without one, as the go command reads it)
goline() { if [ -f "$1/go.mod" ]; then awk '$1 == "go" {print $2; f=1} END {if (!f) print "1.16"}' "$1/go.mod"; else echo 1.16; fi; }
# higher A B: the higher of two go versions
higher() { printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1; }
RTLINE=$(goline "$ROOT")

fail=0
for mv in $MODULES; do
	mod=${mv%@*}
	name=$(basename "$mod")
	echo "== $mv"
	dir=$(cd "$WORK" && $GO mod download -json "$mv" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$dir" ]; then echo "realworld: cannot download $mv"; exit 1; fi
	rm -rf "$WORK/$name" && mkdir -p "$WORK/$name"
	cp -r "$dir" "$WORK/$name/pristine" && chmod -R u+w "$WORK/$name/pristine"

	# The wrapper module: it requires the module, and tests its packages.
	wrap="$WORK/$name/wrap"
	mkdir -p "$wrap"
	printf 'module meterwrap\n\ngo %s\n\nrequire %s %s\n' "$(higher "$RTLINE" "$(goline "$dir")")" "$mod" "${mv#*@}" > "$wrap/go.mod"
	cd "$wrap"
	$GO list -mod=mod -test -deps "$mod/..." > /dev/null
	$GO test -count=1 -json "$mod/..." > "$WORK/$name/plain.json" 2>&1 || true
	"$WORK/passed" < "$WORK/$name/plain.json" > "$WORK/$name/plain.pass"
	echo "   plain: $(wc -l < "$WORK/$name/plain.pass") tests pass"

	start=$(date +%s.%N)
	"$WORK/meterinject" ${REALWORLD_FLAGS:-} -overlay "$WORK/$name/overlay.json" -cache "$WORK/$name/cache" -runtime "$ROOT" "$mod/..."
	end=$(date +%s.%N)
	echo "   instrumented in $(echo "$end - $start" | bc) s"
	chain="METER_TRACEPOINT_ENABLED=true METER_TRACEPOINT_SAMPLE=7 METER_FLOWCHECK_ENABLED=true METER_FLOWCHECK_LOWER=3 METER_FLOWCHECK_UPPER=20 METER_BUDGET_ENABLED=true METER_SPOTCHECK_ENABLED=true METER_SPOTCHECK_INTERVAL=5 METER_HOTSPOT_INITIAL=20"
	for props in "" "METER_HOTSPOT_ENABLED=false" "$chain"; do
		label=${props:-default}
		[ "$props" = "$chain" ] && label="whole chain"
		env $props $GO test -count=1 -json -overlay "$WORK/$name/overlay.json" "$mod/..." > "$WORK/$name/inst.json" 2>&1 || true
		"$WORK/passed" < "$WORK/$name/inst.json" > "$WORK/$name/inst.pass"
		missing=$(comm -23 "$WORK/$name/plain.pass" "$WORK/$name/inst.pass")
		if [ -n "$missing" ]; then
			echo "   FAIL ($label): passed plain, not instrumented:"
			{ echo "$missing" | head -20 | sed 's/^/      /'; } || true
			{ grep -v '"Action":"\(run\|pass\|pause\|cont\|start\)"' "$WORK/$name/inst.json" | head -20 | cut -c1-300; } || true
			fail=1
		else
			echo "   instrumented ($label): $(wc -l < "$WORK/$name/inst.pass") tests pass, none lost"
		fi
	done
	cd "$ROOT"

	# In place on a copy, then -remove: the same bytes.
	inplace="$WORK/$name/inplace"
	cp -r "$WORK/$name/pristine" "$inplace"
	[ -f "$inplace/go.mod" ] || printf 'module %s\n' "$mod" > "$inplace/go.mod"
	(cd "$inplace" && $GO mod edit -go="$(higher "$RTLINE" "$(goline "$inplace")")" && { $GO mod tidy > /dev/null 2>&1 || true; } &&
		gofmt -l . | sort > "$WORK/$name/gofmt.before" &&
		"$WORK/meterinject" -tests ./... && gofmt -l . | sort > "$WORK/$name/gofmt.after" &&
		"$WORK/meterinject" -tests ./... && "$WORK/meterinject" -remove -tests ./...)
	unformatted=$(comm -13 "$WORK/$name/gofmt.before" "$WORK/$name/gofmt.after")
	if [ -n "$unformatted" ]; then
		echo "   FAIL: gofmt-clean files no longer are after instrumentation:"; echo "$unformatted" | head; fail=1
	else
		echo "   in place: every gofmt-clean file stays gofmt-clean"
	fi
	if diff -r -x go.mod -x go.sum "$WORK/$name/pristine" "$inplace" > "$WORK/$name/inplace.diff"; then
		echo "   in place, then -remove: identical bytes"
	else
		echo "   FAIL: in place, then -remove, differs:"; head -20 "$WORK/$name/inplace.diff"; fail=1
	fi
done
[ -z "${REALWORLD_WORK:-}" ] && rm -rf "$WORK"
if [ $fail -ne 0 ]; then echo "realworld: FAIL"; exit 1; fi
echo "realworld: ok"
