#!/usr/bin/env bash
# Writes docs/report.png, the picture of the report in docs/report.md and
# the README: the model of example/service under load, as headless
# chromium draws `meter report`'s page.
#
#   report/screenshot.sh [requests]     (default 50000; about 10 s here once the module cache is warm)
#
# It builds meterinject, instruments the service through an overlay (its
# handlers become entry probes), serves the requests of its load
# generator with the tracepoint on and the profile exported, ends it with
# SIGTERM, and has report/browser_test.go (TestBrowserScreenshot) draw the
# model. Chromium comes from `make browser`. SCREENSHOT_WORK sets where
# builds and the model go; SCREENSHOT_OUT where the picture goes.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
REQUESTS=${1:-50000}
WORK=${SCREENSHOT_WORK:-$ROOT/.meterinject/screenshot}
OUT=${SCREENSHOT_OUT:-$ROOT/docs/report.png}
export GOWORK=off
mkdir -p "$WORK"

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
cd "$ROOT/example"
"$WORK/meterinject" -overlay "$WORK/service.json" -cache "$WORK/service-cache" -runtime "$ROOT" ./service >/dev/null
$GO build -overlay "$WORK/service.json" -o "$WORK/service" ./service
$GO build -o "$WORK/load" ./service # the load generator, plain

model="$WORK/run/model.csv"
mkdir -p "$WORK/run"
rm -f "$model" "$model.meta" "$model.stats" "$WORK/run/model.pprof"
fifo="$WORK/service.fifo"
rm -f "$fifo"
mkfifo "$fifo"
METER_EXPORT_CSV="$model" METER_EXPORT_PPROF="$WORK/run/model.pprof" METER_TRACEPOINT_ENABLED=true \
	"$WORK/service" -graceful >"$fifo" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
exec 3<"$fifo"
line=""
read -r line <&3 || true # the service prints one line once it listens
addr=${line#listening on }
if [ -z "$addr" ] || [ "$addr" = "$line" ]; then
	echo "screenshot: the service did not start" >&2
	exit 2
fi
"$WORK/load" -load "$addr" -n "$REQUESTS"
kill -TERM "$pid"
wait "$pid"
trap - EXIT
exec 3<&-

cd "$ROOT"
REPORT_REQUIRE_BROWSER=1 REPORT_SCREENSHOT="$OUT" REPORT_SCREENSHOT_MODEL="$model" \
	$GO test -count=1 -run '^TestBrowserScreenshot$' -v ./report | grep -E '^(---|ok|FAIL)|KiB'
echo "screenshot: $OUT"
