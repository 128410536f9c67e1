#!/usr/bin/env bash
# Jaeger v2, as users run it, with example/fanout's traces: an opt-in end
# to end check, outside make test (docs/traces.md).
#
#   bench/jaeger/run.sh [requests]     (default 200)
#
# It builds Jaeger v2 all-in-one (github.com/jaegertracing/jaeger, tag
# v1.76.0, package cmd/jaeger) from the Go module proxy in a wrapper module,
# as DESIGN.md says ("Real receivers for OTLP"): go install refuses the
# module's replace directive, so the wrapper repeats it, and the checksum
# database reachable here lacks the OpenTelemetry collector modules. That
# takes about 7 minutes on 2 cores with an empty module cache, once: the
# binary is kept in JAEGER_WORK (default .meterinject/jaeger). It starts
# Jaeger with in-memory storage (OTLP on 127.0.0.1:4317 and :4318, query API
# and UI on :16686), serves example/fanout instrumented with -otlp against
# it with tracepoint on at 1 in 10, and checks through Jaeger's query API
# that each trace of the handler holds the spans of its four goroutines,
# each goroutine's first span a child of the handler's. It prints the id of
# one such trace.
#
# The Go module holds no UI assets (Jaeger's release builds add them):
# JAEGER_UI=DIR serves a build of jaeger-ui from DIR. JAEGER_KEEP=1 leaves
# Jaeger running, its pid in JAEGER_WORK/jaeger.pid.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
REQUESTS=${1:-200}
WORK=${JAEGER_WORK:-$ROOT/.meterinject/jaeger}
VERSION=v1.76.0
export GOWORK=off
mkdir -p "$WORK"

if [ ! -x "$WORK/jaeger" ]; then
	echo "jaeger: building Jaeger $VERSION (minutes, once)" >&2
	mkdir -p "$WORK/wrap"
	cat >"$WORK/wrap/go.mod" <<MOD
module jaegerwrap

go 1.26

require github.com/jaegertracing/jaeger $VERSION

replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0
MOD
	printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/jaegertracing/jaeger/cmd/jaeger"\n' >"$WORK/wrap/tools.go"
	(
		cd "$WORK/wrap"
		export GOFLAGS=-mod=mod GONOSUMDB=github.com/open-telemetry/opentelemetry-collector-contrib,go.opentelemetry.io/collector
		$GO mod tidy
		$GO build -o "$WORK/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
	)
fi

ui=""
if [ -n "${JAEGER_UI:-}" ]; then
	ui="    ui:
      assets_path: $(cd "$JAEGER_UI" && pwd)"
fi
cat >"$WORK/config.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: memstore
$ui
    http:
      endpoint: 127.0.0.1:16686
    grpc:
      endpoint: 127.0.0.1:16685
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:4317
      http:
        endpoint: 127.0.0.1:4318
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML

"$WORK/jaeger" --config "$WORK/config.yaml" >"$WORK/jaeger.log" 2>&1 &
jpid=$!
echo "$jpid" >"$WORK/jaeger.pid"
stop_jaeger() { kill "$jpid" 2>/dev/null || true; }
if [ "${JAEGER_KEEP:-}" != 1 ]; then
	trap stop_jaeger EXIT
fi
for i in $(seq 100); do
	if curl -fsS "http://127.0.0.1:16686/api/services" >/dev/null 2>&1; then
		break
	fi
	if ! kill -0 "$jpid" 2>/dev/null; then
		echo "jaeger: did not start:" >&2
		tail -20 "$WORK/jaeger.log" >&2
		exit 2
	fi
	sleep 0.2
done

(cd "$ROOT/cmd/meterinject" && $GO build -o "$WORK/meterinject" .)
cd "$ROOT/example"
"$WORK/meterinject" -otlp -overlay "$WORK/fanout.json" -cache "$WORK/cache" -runtime "$ROOT" ./fanout >/dev/null
$GO build -overlay "$WORK/fanout.json" -o "$WORK/fanout" ./fanout

fifo="$WORK/fanout.fifo"
rm -f "$fifo"
mkfifo "$fifo"
METER_EXPORT_OTLP=true METER_TRACEPOINT_ENABLED=true METER_TRACEPOINT_SAMPLE=10 \
	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 OTEL_EXPORTER_OTLP_PROTOCOL=grpc \
	OTEL_SERVICE_NAME=fanout OTEL_METRICS_EXPORTER=none "$WORK/fanout" >"$fifo" &
fpid=$!
exec 3<"$fifo"
line=""
read -r line <&3 || true # the service prints one line once it listens
addr=${line#listening on }
if [ -z "$addr" ] || [ "$addr" = "$line" ]; then
	echo "jaeger: example/fanout did not start" >&2
	exit 2
fi
for i in $(seq "$REQUESTS"); do
	curl -fsS "$addr/fan?n=2" >/dev/null
done
kill -TERM "$fpid"
wait "$fpid"
exec 3<&-

# Jaeger's query API, once the last batch has landed.
sleep 1
curl -fsS "http://127.0.0.1:16686/api/traces?service=fanout&limit=1000&lookback=1h" >"$WORK/traces.json"
python3 - "$WORK/traces.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["data"]
names = {"main.(*server).fan.func1", "main.(*server).lookup", "main.(*server).audit"}
good, bad, first = 0, 0, None
for t in data:
    spans = {s["spanID"]: s for s in t["spans"]}
    roots = [s for s in t["spans"] if s["operationName"] == "main.(*server).fan"]
    if not roots:
        continue
    root = roots[0]
    under = {s["operationName"] for s in t["spans"]
             if any(r["refType"] == "CHILD_OF" and r["spanID"] == root["spanID"] for r in s.get("references", []))}
    if names <= under:
        good += 1
        first = first or t["traceID"]
    else:
        bad += 1
        print("trace %s lacks %s" % (t["traceID"], sorted(names - under)), file=sys.stderr)
print("jaeger: %d traces of the handler with its four goroutines, %d without" % (good, bad), file=sys.stderr)
if good == 0 or bad:
    sys.exit(1)
print(first)
PY
