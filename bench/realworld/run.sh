#!/usr/bin/env bash
# Real modules, fetched by version from the Go module proxy, instrumented by
# meterinject and run with their own test suites (docs/realworld.md).
#
#   bench/realworld/run.sh [ci|all]     the modules of modules.txt (default ci)
#
# Each module's packages are tested as a dependency of a small wrapper
# module on the runtime's go line (or the module's own, if higher), which
# reaches them through meterinject's instrumented copies of the module,
# as a service's owner instruments a library; and as the main module, as
# the library's authors instrument it, whatever its go line:
#   1. the suite runs plain, as a dependency;
#   2. instrumented through -overlay with REALWORLD_FLAGS (default -all:
#      every function) and the module's own flags from modules.txt, it runs
#      three times, unchanged: at default properties, with
#      METER_HOTSPOT_ENABLED=false METER_HOTSPOT_UNTIMED=0 (every firing metered), and with the
#      whole chain at small rates (tracepoint, flowcheck, budget and
#      spotcheck on, rates chosen so that traces and spot checks are
#      frequent). Every test must end as it ended plain, test by test, in
#      both directions: passed, failed or skipped, and no test lost or
#      gained. Go commands that the tests start see an overlay too, in
#      GOFLAGS: meterinject's, plus the go.mod files those commands need
#      when they run inside the instrumented copy (bench/realworld/nested).
#      A test that ends differently is rerun alone, plain and instrumented,
#      three times: if each rerun ends as plain, it is reported as a flake
#      in the table, not as a difference.
#      A test listed under its module with `except` in modules.txt is left
#      out of the comparison and shown in the table;
#   3. a copy instrumented in place (-tests), twice, then -remove, is byte
#      for byte the module again (diff -r, go.mod included, after go mod
#      tidy gives the copy what it needs to load; below the runtime's go
#      line, meterinject raises it and gives each file its old language
#      version), and every file gofmt-clean before stays gofmt-clean;
#   4. as the main module, in a copy under a directory named as the module
#      (tests that check file paths see them end as they do in the module
#      cache): the suite runs plain, then through meterinject go test with
#      the same flags at default properties, as its authors would run it;
#      every test ends as plain, and the copy is left as it was, byte for
#      byte (nothing of the user's is written). Go commands that the tests
#      start see the module plain.
# Every go test run has -timeout 60m: metering every firing of a suite that
# runs minutes plain must not end it at the go command's default 10m.
# At the end, one Markdown row per module (docs/realworld.md's table).
#
# REALWORLD_MODULES="mod@version …" runs those (with their flags and
# exceptions from modules.txt, if listed there); REALWORLD_WORK=dir keeps
# the work dir; REALWORLD_FLAGS replaces -all; REALWORLD_LIST replaces
# modules.txt.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
LIST=${REALWORLD_LIST:-"$ROOT/bench/realworld/modules.txt"}
SET=${1:-ci}
case $SET in ci | all) ;; *) echo "usage: $0 [ci|all]" >&2; exit 2 ;; esac
FLAGS=${REALWORLD_FLAGS--all}
WORK=${REALWORLD_WORK:-$(mktemp -d /tmp/realworld.XXXXXX)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
export GOWORK=off
# goldmark's own knob for slow machines. Its performance tests have 5 s
# limits, which a loaded shared 2-core VM exceeds even uninstrumented
# (TestDeepNestedLabelPerformance: 9 s wall for 2.3 s of CPU, measured),
# and the METER_HOTSPOT_ENABLED=false run meters all of its 50,000-deep
# nested firings (about 4x). The tests still run and must pass.
export GOLDMARK_TEST_TIMEOUT_MULTIPLIER=${GOLDMARK_TEST_TIMEOUT_MULTIPLIER:-20}

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
$GO build -o "$WORK/outcomes" ./bench/realworld/outcomes
$GO build -o "$WORK/nested" ./bench/realworld/nested

# The modules: "mod@version [ci] [-flag…]", each followed by its
# "except PACKAGE TEST: reason" lines (modules.txt).
# entry MV: prints the line of module MV (empty if not listed).
entry() { awk -v mv="$1" '$1 == mv { sub(/#.*/, ""); print; exit }' "$LIST"; }
# excepts MV: prints "PACKAGE TEST<TAB>reason" for the exceptions of MV.
excepts() {
	awk -v mv="$1" '
		/^[[:space:]]*#/ || NF == 0 || $1 == "skip" { next }
		$1 == "except" { if (cur == mv) { p = $2; t = $3; sub(/:$/, "", t); r = $0; sub(/^[^:]*:[[:space:]]*/, "", r); print p " " t "\t" r }; next }
		{ cur = $1 }' "$LIST"
}
# skips MV: prints "TEST<TAB>reason" for the tests of MV that are not run.
skips() {
	awk -v mv="$1" '
		/^[[:space:]]*#/ || NF == 0 || $1 == "except" { next }
		$1 == "skip" { if (cur == mv) { t = $2; sub(/:$/, "", t); r = $0; sub(/^[^:]*:[[:space:]]*/, "", r); print t "\t" r }; next }
		{ cur = $1 }' "$LIST"
}
if [ -n "${REALWORLD_MODULES:-}" ]; then
	MODULES=$REALWORLD_MODULES
else
	MODULES=$(awk -v set="$SET" '
		/^[[:space:]]*#/ || NF == 0 || $1 == "except" || $1 == "skip" { next }
		{ sub(/#.*/, ""); ci = 0; for (i = 2; i <= NF; i++) if ($i == "ci") ci = 1 }
		set == "all" || ci { print $1 }' "$LIST")
fi

# goline DIR: the go line of DIR/go.mod (1.16 without one, as the go command reads it)
goline() { if [ -f "$1/go.mod" ]; then awk '$1 == "go" {print $2; f=1} END {if (!f) print "1.16"}' "$1/go.mod"; else echo 1.16; fi; }
# higher A B: the higher of two go versions
higher() { printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1; }
# now: seconds since the epoch, with fractions
now() { date +%s.%N; }
# since T: seconds since T, to a tenth
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# passes FILE: how many tests passed in an outcomes file
passes() { awk '$2 != "-" && $NF == "pass"' "$1" | wc -l | tr -d ' '; }
# recheck DIFF PROPS [main]: reruns the tests that end differently in DIFF
# (a diff of outcome files), alone, plain and instrumented, three times
# each: as a dependency in the wrapper, or, with "main", as the main module
# in $main through meterinject go test. A difference that every rerun gives
# back as plain is printed as a flake (returns 0); one that shows again is
# a difference (returns 1). Uses $out, $mod, $main, $flags and $GO of the
# module under test.
recheck() {
	local diff=$1 props=$2 route=${3:-wrap} tests pkgs p re i a b
	tests=$(grep '^[<>]' "$diff" | awk '{t = $3; sub(/\/.*/, "", t); print $2, t}' | sort -u)
	if echo "$tests" | awk '$2 == "-"' | grep -q .; then return 1; fi
	pkgs=$(echo "$tests" | awk '{print $1}' | sort -u)
	for i in 1 2 3; do
		for p in $pkgs; do
			re="^($(echo "$tests" | awk -v p="$p" '$1 == p {print $2}' | paste -sd'|' -))\$"
			if [ "$route" = main ]; then
				a=$(cd "$main" && $GO test -count=1 -timeout 60m -json -run "$re" "$p" 2>&1 | "$WORK/outcomes")
				# shellcheck disable=SC2086 # flags are words
				b=$(cd "$main" && "$WORK/meterinject" $flags -cache "$out/cache" -runtime "$ROOT" \
					go test -count=1 -timeout 60m -json -run "$re" "$p" 2> /dev/null | "$WORK/outcomes")
			else
				a=$($GO test -count=1 -timeout 60m -json -run "$re" "$p" 2>&1 | "$WORK/outcomes")
				# shellcheck disable=SC2086 # props are words
				b=$(env $props GOFLAGS="-overlay=$out/overlay-nested.json ${GOFLAGS:-}" \
					$GO test -overlay "$out/overlay.json" -count=1 -timeout 60m -json -run "$re" "$p" 2>&1 | "$WORK/outcomes")
			fi
			if [ "$a" != "$b" ]; then
				echo "      rerun $i of $p alone still differs:"; diff <(echo "$a") <(echo "$b") | grep '^[<>]' | head -10 | sed 's/^/      /'
				return 1
			fi
		done
	done
	echo "      flake: rerun alone three times, plain and instrumented, each ends as plain:"
	echo "$tests" | sed 's/^/        /'
	echo "$tests" | awk '{print $2}' >> "$out/flakes"
	return 0
}
RTLINE=$(goline "$ROOT")
OTLPLINE=$(goline "$ROOT/otlp")
chain="METER_TRACEPOINT_ENABLED=true METER_TRACEPOINT_SAMPLE=7 METER_FLOWCHECK_ENABLED=true METER_FLOWCHECK_LOWER=3 METER_FLOWCHECK_UPPER=20 METER_BUDGET_ENABLED=true METER_SPOTCHECK_ENABLED=true METER_SPOTCHECK_INTERVAL=5 METER_HOTSPOT_INITIAL=20"

fail=0
rows=()
for mv in $MODULES; do
	mod=${mv%@*}
	ver=${mv#*@}
	name=$(echo "$mod" | tr '/' '_')
	line=$(entry "$mv")
	own=$(echo "$line" | tr ' \t' '\n\n' | grep '^-' | tr '\n' ' ' || true)
	flags="$FLAGS $own"
	out="$WORK/$name"
	rm -rf "$out" && mkdir -p "$out"
	excepts "$mv" > "$out/excepts.txt"
	cut -f1 "$out/excepts.txt" > "$out/except"
	echo "== $mv ($flags)"
	skipargs=()
	if skipre=$(skips "$mv" | cut -f1 | paste -sd'|' -) && [ -n "$skipre" ]; then
		skipargs=(-skip "^($skipre)\$")
		skips "$mv" | while IFS=$'\t' read -r t reason; do echo "   not run, plain or instrumented: $t ($reason)"; done
	fi
	mstart=$(now)
	dir=$(cd "$WORK" && $GO mod download -json "$mv" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$dir" ]; then echo "realworld: cannot download $mv"; exit 1; fi
	cp -r "$dir" "$out/pristine" && chmod -R u+w "$out/pristine"
	modline=$(goline "$dir")
	rtline=$RTLINE nestflags=
	case " $flags " in *" -otlp "*) rtline=$(higher "$RTLINE" "$OTLPLINE") nestflags=-otlp ;; esac
	wline=$(higher "$rtline" "$modline")

	# The wrapper module: it requires the module, and tests its packages.
	wrap="$out/wrap"
	mkdir -p "$wrap"
	printf 'module meterwrap\n\ngo %s\n\nrequire %s %s\n' "$wline" "$mod" "$ver" > "$wrap/go.mod"
	cd "$wrap"
	$GO list -mod=mod -test -deps "$mod/..." > /dev/null
	t=$(now)
	$GO test -count=1 -timeout 60m -json ${skipargs[@]+"${skipargs[@]}"} "$mod/..." > "$out/plain.json" 2>&1 || true
	tplain=$(since "$t")
	"$WORK/outcomes" < "$out/plain.json" > "$out/plain.all"
	"$WORK/outcomes" -except "$out/except" < "$out/plain.json" > "$out/plain.out"
	nplain=$(passes "$out/plain.all")
	echo "   plain: $nplain tests pass (${tplain} s)"

	# shellcheck disable=SC2086 # flags are words
	"$WORK/meterinject" $flags -overlay "$out/overlay.json" -cache "$out/cache" -runtime "$ROOT" "$mod/..." 2> "$out/inject.err" || {
		cat "$out/inject.err"; echo "   FAIL: meterinject"; fail=1
		rows+=("| $mv | $modline | | $nplain | | | | | | | **meterinject failed** | $(since "$mstart") |")
		cd "$ROOT"; continue
	}
	sed 's/^/   /' "$out/inject.err"
	probes=$(sed -n 's/.* \([0-9][0-9]*\) functions\{0,1\} instrumented.*/\1/p' "$out/inject.err" | head -1)
	"$WORK/nested" -overlay "$out/overlay.json" -runtime "$ROOT" -out "$out/nested" -go "$rtline" $nestflags > "$out/overlay-nested.json"

	result=ok
	counts=()
	times=("$tplain")
	for props in "" "METER_HOTSPOT_ENABLED=false METER_HOTSPOT_UNTIMED=0" "$chain"; do
		label=${props:-default}
		[ "$props" = "$chain" ] && label="whole chain"
		t=$(now)
		# shellcheck disable=SC2086 # props are words
		env $props GOFLAGS="-overlay=$out/overlay-nested.json ${GOFLAGS:-}" \
			$GO test -overlay "$out/overlay.json" -count=1 -timeout 60m -json ${skipargs[@]+"${skipargs[@]}"} "$mod/..." > "$out/inst.json" 2>&1 || true
		times+=("$(since "$t")")
		"$WORK/outcomes" < "$out/inst.json" > "$out/inst.all"
		"$WORK/outcomes" -except "$out/except" < "$out/inst.json" > "$out/inst.out"
		counts+=("$(passes "$out/inst.all")")
		cp "$out/inst.json" "$out/inst-${label// /-}.json"
		if ! diff "$out/plain.out" "$out/inst.out" > "$out/diff-${label// /-}.txt"; then
			echo "   FAIL ($label): outcomes differ from plain (< plain, > instrumented):"
			{ grep '^[<>]' "$out/diff-${label// /-}.txt" | head -20 | sed 's/^/      /'; } || true
			# What the instrumented run printed about the tests that differ.
			{ grep '^>' "$out/diff-${label// /-}.txt" | awk '$NF != "pass" {print $3}' | head -5 | while read -r tst; do
				grep -F "\"Test\":\"$tst\"" "$out/inst.json" | grep '"Action":"output"' | head -15 | cut -c1-300 | sed 's/^/      /'
			done; } || true
			if ! recheck "$out/diff-${label// /-}.txt" "$props"; then
				result=FAIL
				fail=1
			fi
		else
			echo "   instrumented ($label): ${counts[-1]} tests pass, every outcome as plain (${times[-1]} s)"
		fi
	done
	# An exception must still be needed: its test ends differently.
	while IFS=$'\t' read -r t reason; do
		[ -n "$t" ] || continue
		p=${t% *}; n=${t#* }
		a=$(awk -v p="$p" -v n="$n" '$1 == p && ($2 == n || index($2, n "/") == 1)' "$out/plain.all" | sort)
		b=$(awk -v p="$p" -v n="$n" '$1 == p && ($2 == n || index($2, n "/") == 1)' "$out/inst.all" | sort)
		if [ "$a" = "$b" ]; then
			echo "   NOTE: exception $t ends as plain in the last run; it may no longer be needed"
		else
			echo "   exception: $t ($reason): $(echo "$a" | awk '{print $NF}' | sort | uniq -c | xargs) plain, $(echo "$b" | awk '{print $NF}' | sort | uniq -c | xargs) instrumented"
		fi
	done < "$out/excepts.txt"
	cd "$ROOT"

	# In place on a copy, twice, then -remove: the same bytes.
	t=$(now)
	inplace="$out/inplace"
	cp -r "$out/pristine" "$inplace"
	[ -f "$inplace/go.mod" ] || printf 'module %s\n' "$mod" > "$inplace/go.mod"
	ip=ok
	# shellcheck disable=SC2086 # flags are words
	# (go mod tidy writes a go line where there was none: it goes again.)
	noline=$(grep -q '^go ' "$inplace/go.mod" || echo 1)
	if ! (cd "$inplace" && { $GO mod tidy > /dev/null 2>&1 || true; } && { [ -z "$noline" ] || $GO mod edit -go=none; } && cp go.mod "$out/inplace.go.mod" &&
		gofmt -l . | sort > "$out/gofmt.before" &&
		"$WORK/meterinject" $flags -tests ./... 2> "$out/inplace.err" && gofmt -l . | sort > "$out/gofmt.after" &&
		"$WORK/meterinject" $flags -tests ./... 2>> "$out/inplace.err" && "$WORK/meterinject" -remove -tests ./... 2>> "$out/inplace.err"); then
		echo "   FAIL: in place:"; sed 's/^/      /' "$out/inplace.err"; ip=fail; result=FAIL; fail=1
	fi
	unformatted=$(comm -13 "$out/gofmt.before" "$out/gofmt.after" 2> /dev/null || true)
	if [ -n "$unformatted" ]; then
		echo "   FAIL: gofmt-clean files no longer are after instrumentation:"; echo "$unformatted" | head; ip=fail; result=FAIL; fail=1
	fi
	if diff -r -x go.mod -x go.sum "$out/pristine" "$inplace" > "$out/inplace.diff" &&
		diff "$out/inplace.go.mod" "$inplace/go.mod" >> "$out/inplace.diff"; then
		echo "   in place, then -remove: identical bytes (go $(goline "$inplace")); gofmt-clean files stay clean"
	else
		echo "   FAIL: in place, then -remove, differs:"; head -20 "$out/inplace.diff"; ip=fail; result=FAIL; fail=1
	fi
	tinplace=$(since "$t")

	# As the main module: plain, then meterinject go test, in one copy.
	t=$(now)
	main="$out/main/$mod"
	mkdir -p "$(dirname "$main")"
	cp -r "$out/pristine" "$main"
	[ -f "$main/go.mod" ] || printf 'module %s\n' "$mod" > "$main/go.mod"
	(cd "$main" && find . -type f -exec sha256sum {} + | sort -k2) > "$out/main.sums"
	(cd "$main" && $GO test -count=1 -timeout 60m -json ${skipargs[@]+"${skipargs[@]}"} ./... > "$out/main-plain.json" 2>&1 || true)
	# shellcheck disable=SC2086 # flags are words
	(cd "$main" && "$WORK/meterinject" $flags -cache "$out/cache" -runtime "$ROOT" \
		go test -count=1 -timeout 60m -json ${skipargs[@]+"${skipargs[@]}"} ./... > "$out/main-inst.json" 2> "$out/main-inject.err" || true)
	"$WORK/outcomes" -except "$out/except" < "$out/main-plain.json" > "$out/main-plain.out"
	"$WORK/outcomes" -except "$out/except" < "$out/main-inst.json" > "$out/main-inst.out"
	mplain=$(passes "$out/main-plain.out")
	mm="$mplain as plain"
	if ! grep -q 'functions\{0,1\} instrumented' "$out/main-inject.err"; then
		echo "   FAIL (main module): meterinject go test:"; sed 's/^/      /' "$out/main-inject.err" | head -20
		mm="**meterinject failed**"; result=FAIL; fail=1
	elif ! diff "$out/main-plain.out" "$out/main-inst.out" > "$out/diff-main.txt"; then
		echo "   FAIL (main module): outcomes differ from plain (< plain, > instrumented):"
		{ grep '^[<>]' "$out/diff-main.txt" | head -20 | sed 's/^/      /'; } || true
		if ! recheck "$out/diff-main.txt" "" main; then
			mm="**differs**"; result=FAIL; fail=1
		fi
	else
		echo "   as the main module (go $(goline "$main")): $mplain tests pass plain, every outcome as plain through meterinject go test ($(grep 'instrumented' "$out/main-inject.err" | head -1 | sed 's/^meterinject: //'))"
	fi
	if ! (cd "$main" && find . -type f -exec sha256sum {} + | sort -k2) | diff "$out/main.sums" - > "$out/main.diff"; then
		echo "   FAIL (main module): meterinject go test wrote in the module:"; head -10 "$out/main.diff"; mm="**wrote files**"; result=FAIL; fail=1
	fi
	tmain=$(since "$t")
	ex=$(cut -f1 "$out/excepts.txt" | awk '{print $2}' | paste -sd, - | sed 's/,/, /g')
	exn=$(grep -c . "$out/excepts.txt" || true)
	[ "$exn" -gt 0 ] && ex="$ex ($exn)"
	[ -f "$out/flakes" ] && result="$result; flaky, did not reproduce: $(sort -u "$out/flakes" | paste -sd, - | sed 's/,/, /g')"
	rows+=("| $mv | $modline | $probes | $nplain | ${counts[0]} | ${counts[1]} | ${counts[2]} | ${ex:-none} | $ip | $mm | **$result** | ${times[0]} / ${times[1]} / ${times[2]} / ${times[3]} / $tinplace / $tmain |")
	echo "   $mv: $result in $(since "$mstart") s"
done

echo
echo "| module | go line | probes | tests passing plain | default | every firing metered | whole chain | exceptions | in place, -remove | main module, meterinject go test | result | wall s: plain / default / every / chain / in place / main module |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
[ -z "${REALWORLD_WORK:-}" ] && rm -rf "$WORK"
if [ $fail -ne 0 ]; then echo "realworld: FAIL"; exit 1; fi
echo "realworld: ok"
