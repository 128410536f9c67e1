#!/usr/bin/env bash
# Writes docs/measurements.md: every figure the README and docs quote, each
# with the command that produced it, from runs made now on this machine.
# No figure is kept by hand. `make measurements` runs it; it takes about 40
# minutes on a 2-core VM, most of it under valgrind. Where a script's own
# default size would take much longer, the section runs it smaller and its
# title says so.
#
#   bench/measurements.sh [out]     (default docs/measurements.md)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${1:-docs/measurements.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A section whose command fails keeps what it printed and its exit status,
# and the others still run; the script then exits 1 once the file is
# written.
failed=()
section() { # title command...
	local title=$1 status=0
	shift
	echo "running: $*" >&2
	{
		printf '\n## %s\n\n`%s`\n\n' "$title" "$*"
		"$@" 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g' || status=$?
		[ "$status" = 0 ] || printf '\n(exit status %d)\n' "$status"
	} >>"$tmp/body.md"
	[ "$status" = 0 ] || failed+=("$title")
}

# The engine's cost per call, and on whole programs.
section "Instructions per call, by path (over the plain function)" bench/callgrind.sh 200000
section "Instructions per call, metered, with the TSC (the clock where the kernel trusts it; above, the monotonic clock)" env METER_CLOCK=tsc CASES="metered nested/metered" bench/callgrind.sh 200000
section "Instructions per call of the chain's paths (over a disabled probe's call)" env BENCH=Chain CASES="untimed sampled outside-tracepoint outside-flowcheck disabled-spotcheck" bench/callgrind.sh 200000
section "Instructions per call of a root that hands its context on (within) or not (start)" env BENCH=Root BASE=start/disabled CASES="within/disabled start/outside-tracepoint within/outside-tracepoint start/metered within/metered" bench/callgrind.sh 200000
section "Wall time per call, by path (six runs, the fewest benchstat gives intervals for)" bench/firing.sh 6
section "Instructions per operation of whole programs" bench/cost.sh yaml service
section "meterinject's shapes and selection on yaml.v3 and goldmark, in instructions (smaller: 10 and 30 ops, so the default-properties rows hold part of hotspot's warm-up)" env FIG_N1=10 FIG_N2=30 FIG_WORK="$tmp/inject-figures" bench/inject-figures.sh
section "Traces across goroutines: instructions per request of example/fanout" bench/traces-cost.sh

# How far the model is to be trusted.
section "A selected call runs cold: a sampled function's own time per call, model against profile, by METER_HOTSPOT_SAMPLE" bench/adversarial/sample-bias.sh
section "The adversarial programs, judged" bash -c 'bench/adversarial/run.sh >"$0/adv.log" 2>&1 || true; sed -n "/^Summary/,\$p" "$0/adv.log"' "$tmp"
section "meter compare on simulated runs, and entries counted once on simulated programs" bash -c "set -o pipefail; go test -count=1 -run '^(TestCompareAA|TestCoverageEntryInPart)\$' -v ./report | grep -E 'A/A flagged|covered time|^(--- |ok|FAIL)'"
section "meter compare on real runs: A/A and a 25% change, five runs a side" report/compare-runs.sh 5
section "make example's model (goldmark rendering the corpus)" example/run.sh

# The exports.
section "The trace export path: handing spans over, and the exporter's work per span" go test -run '^$' -bench 'TraceSpans|ExportBatch' -benchtime 100000x -count 3 ./export
section "OTLP spans encoded by hand (raw) against built as messages and marshalled" go -C otlp test -run '^$' -bench ExportSpans -benchtime 200000x -count 3 .
section "pprof labels on traced goroutines: cost per trace" go test -run '^$' -bench Labels -benchtime 20000x -count 3 ./export/pproflabels
section "OTLP into a receiver on the same machine, by rate (one run)" go -C bench/export run ./otlpload -rates 200000,300000,400000,500000,0
section "OTLP with nothing listening: requests per CPU-second against no OTLP" go -C bench/export run ./unreachable -rounds 5
section "Head to head with the OpenTelemetry batch span processor" go -C bench/export run ./headtohead
section "An instrumented hello world's size, stripped" go test -count=1 -run '^TestInstrumentedProgramSize$' -v ./probe

# Real modules' own test suites, instrumented.
section "Real modules, the CI subset (make realworld)" bench/realworld/run.sh ci

# The commit, read before the file is truncated (a truncated tracked file
# is a change).
rev="$(git rev-parse --short HEAD)$(git diff --quiet || echo ' with changes')"
{
	echo "# Measurements"
	echo
	echo "Written by \`make measurements\` (bench/measurements.sh) on $(date -u +%Y-%m-%d),"
	echo "at commit $rev,"
	echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(go version | cut -d' ' -f3)."
	echo "Each section names the command that produced it. This machine is a shared VM:"
	echo "times move by 10% between identical runs, instruction counts by a few tenths of a point."
	cat "$tmp/body.md"
} >"$OUT"
echo "wrote $OUT" >&2

# The README's cost and accuracy tables, from the sections above: each
# between its two markers, so that they are never kept by hand either.
if [ "$OUT" = docs/measurements.md ]; then
	awk -v date="$(date -u +%Y-%m-%d)" -v cores="$(nproc)" '
		/^## / { sec = $0 }
		sec ~ /by path \(over the plain/ && $1 == "disabled" { dis = $3 }
		sec ~ /by path \(over the plain/ && $1 == "metered" { met = $3 }
		sec ~ /by path \(over the plain/ && $1 == "nested/metered" { nest = $3 }
		sec ~ /with the TSC/ && $1 == "metered" { tmet = $3 }
		sec ~ /with the TSC/ && $1 == "nested/metered" { tnest = $3 }
		sec ~ /chain.s paths/ && $1 == "untimed" { unt = $3 }
		sec ~ /chain.s paths/ && $1 == "sampled" { smp = $3 }
		sec ~ /of whole programs/ && $2 ~ /^(yaml|service)$/ { off[$2] = $8; def[$2] = $12 }
		END {
			printf "Measured on %s on %s cores by `make measurements`; docs/measurements.md\n", date, cores
			printf "has every figure with the command that produced it.\n\n"
			printf "| | over plain |\n| --- | ---: |\n"
			printf "| a call of a disabled function | %d instructions |\n", dis
			printf "| a call counted, untimed | %d instructions |\n", dis + unt
			printf "| a call counted, sampled and not selected | %d instructions |\n", dis + smp
			printf "| a call metered, alone / inside a metered call: the TSC (the monotonic clock) | %d / %d (%d / %d) instructions |\n", tmet, tnest, met, nest
			printf "| yaml.v3 decoding: every probe disabled / default properties | %s / %s of its instructions |\n", off["yaml"], def["yaml"]
			printf "| a service request path: every probe disabled / default properties | %s / %s of its instructions |\n", off["service"], def["service"]
		}' "$tmp/body.md" >"$tmp/costs.md"
	awk -F'|' -v date="$(date -u +%Y-%m-%d)" '
		/^## / { sec = $0 }
		sec ~ /adversarial programs, judged/ && NF > 10 && $2 ~ /^ [a-z]/ && $2 !~ /^ program / {
			gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $4)
			gsub(/^ +| +$/, "", $6); gsub(/^ +| +$/, "", $7); gsub(/^ +| +$/, "", $11)
			name = $2
			if (!(name in seen)) { seen[name] = 1; order[++n] = name }
			if (!((name, $3) in cnt)) { sel[name, ++nsel[name]] = $3 }
			if ($6 !~ /ok$/ || !((name, $3) in cnt)) cnt[name, $3] = $6
			shares[name, $3, $4] = $7
		}
		function join(k, what,    i, s) {
			for (i = 1; i <= nsel[k]; i++) s = s (i > 1 ? ", " : "") (what == "" ? sel[k, i] : what == "counts" ? cnt[k, sel[k, i]] : shares[k, sel[k, i], what])
			return s
		}
		END {
			printf "Judged on %s by `make measurements` (bench/adversarial/run.sh); shares are\n", date
			printf "points apart from the profile, mean/largest over its top 5 (want 3/8), one\n"
			printf "figure per selection, in the order given:\n\n"
			printf "| program (selection) | counts right | shares, default | shares, every firing metered |\n"
			printf "| --- | --- | --- | --- |\n"
			for (i = 1; i <= n; i++) {
				k = order[i]
				printf "| %s (%s) | %s | %s | %s |\n", k, join(k, ""), join(k, "counts"), join(k, "default"), join(k, "every")
			}
		}' "$tmp/body.md" >"$tmp/accuracy.md"
	awk -v costs="$tmp/costs.md" -v accuracy="$tmp/accuracy.md" '
		/^<!-- costs: make measurements writes this table -->$/ { print; while ((getline l < costs) > 0) print l; skip = 1; next }
		/^<!-- accuracy: make measurements writes this table -->$/ { print; while ((getline l < accuracy) > 0) print l; skip = 1; next }
		/^<!-- end of (costs|accuracy) -->$/ { skip = 0 }
		!skip' README.md >"$tmp/README.md"
	cp "$tmp/README.md" README.md
	echo "wrote README.md's cost and accuracy tables" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
	printf 'failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
