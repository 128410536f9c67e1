#!/usr/bin/env bash
# Writes docs/jaeger-trace.png, the picture of docs/traces.md: one of
# example/fanout's traces in Jaeger's UI, as headless chromium draws it.
#
#   JAEGER_UI=DIR bench/jaeger/screenshot.sh
#
# DIR is a build of jaeger-ui (packages/jaeger-ui/build of jaeger-ui
# v1.70.0: npm ci, npm run prepare, then vite build in packages/jaeger-ui),
# which the Go module of Jaeger lacks. run.sh builds and starts Jaeger and
# serves example/fanout's traces to it; chromium (make browser) then opens
# the trace's page. SCREENSHOT_OUT sets where the picture goes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${SCREENSHOT_OUT:-$ROOT/docs/jaeger-trace.png}
WORK=${JAEGER_WORK:-$ROOT/.meterinject/jaeger}
: "${JAEGER_UI:?JAEGER_UI=DIR: a build of jaeger-ui (see the comment above)}"
export JAEGER_WORK=$WORK
trace=$(JAEGER_KEEP=1 "$ROOT/bench/jaeger/run.sh" "${REQUESTS:-200}")
trap 'kill "$(cat "$WORK/jaeger.pid")" 2>/dev/null || true' EXIT
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
	--force-device-scale-factor=1 --user-data-dir="$profile" --window-size=1400,1000 \
	--virtual-time-budget=20000 --screenshot="$OUT" "http://127.0.0.1:16686/trace/$trace" >/dev/null 2>&1
rm -rf "$profile"
echo "screenshot: $OUT ($(($(stat -c %s "$OUT") / 1024)) KiB), trace $trace"
