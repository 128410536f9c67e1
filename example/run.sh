#!/usr/bin/env bash
# The README's main job, as one command (make example):
#   build meterinject; build this workload with github.com/yuin/goldmark
#   (from the Go module proxy) instrumented, in one step (meterinject -deps
#   ... go build); run it with METER_EXPORT_CSV; print the top of the
#   performance model. Neither the sources nor the module cache are written.
# EXAMPLE_ROUNDS sets how often the corpus is rendered; EXAMPLE_WORK where
# the overlay, copies, binary and model go.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
WORK=${EXAMPLE_WORK:-$ROOT/.meterinject/example}
ROUNDS=${EXAMPLE_ROUNDS:-2000}
mkdir -p "$WORK"
export GOWORK=off

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
cd "$ROOT/example"
$GO mod download
"$WORK/meterinject" -cache "$WORK/cache" -runtime "$ROOT" -deps 'github.com/yuin/goldmark/...' \
	go build -o "$WORK/example" .
rm -f "$WORK/model.csv"
METER_EXPORT_CSV="$WORK/model.csv" "$WORK/example" -n "$ROUNDS" -corpus "$ROOT/example/corpus"
echo
echo "performance model ($WORK/model.csv), top 15 by inherent time:"
if command -v column >/dev/null; then head -n 16 "$WORK/model.csv" | column -s, -t; else head -n 16 "$WORK/model.csv"; fi
awk -F, 'NR > 1 { n++; c[$9 == "" ? "unlabelled" : $9]++ }
	END { printf "... %d probes in the model:", n; for (k in c) printf " %d %s", c[k], k; print "" }' "$WORK/model.csv"
