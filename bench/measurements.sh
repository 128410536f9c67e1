#!/usr/bin/env bash
# Writes docs/measurements.md: every figure the README and docs quote, each
# with the command that produced it, from runs made now on this machine.
# No figure is kept by hand. `make measurements` runs it; it takes about 20
# minutes on a 2-core VM, most of it under valgrind.
#
#   bench/measurements.sh [out]     (default docs/measurements.md)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${1:-docs/measurements.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

section() { # title command...
	local title=$1
	shift
	echo "running: $*" >&2
	{
		printf '\n## %s\n\n`%s`\n\n' "$title" "$*"
		"$@" 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g'
	} >>"$tmp/body.md"
}

section "Instructions per call, by path (over the plain function)" bench/callgrind.sh 200000
section "Instructions per call of the chain's paths (over a disabled probe's call)" env BENCH=Chain CASES="untimed sampled outside-tracepoint outside-flowcheck disabled-spotcheck" bench/callgrind.sh 200000
section "Instructions per operation of whole programs" bench/cost.sh yaml service
section "A selected call runs cold: a sampled function's own time per call, model against profile, by METER_HOTSPOT_SAMPLE" bench/adversarial/sample-bias.sh
section "The adversarial programs, judged" bash -c 'bench/adversarial/run.sh >"$0/adv.log" 2>&1 || true; sed -n "/^Summary/,\$p" "$0/adv.log"' "$tmp"

{
	echo "# Measurements"
	echo
	echo "Written by \`make measurements\` (bench/measurements.sh) on $(date -u +%Y-%m-%d),"
	echo "at commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' with changes'),"
	echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(go version | cut -d' ' -f3)."
	echo "Each section names the command that produced it. This machine is a shared VM:"
	echo "times move by 10% between identical runs, instruction counts by a few tenths of a point."
	cat "$tmp/body.md"
} >"$OUT"
echo "wrote $OUT" >&2
