#!/usr/bin/env bash
# Does the model agree with a CPU profile of the same run? At default
# properties, on the two programs of example/, each run for about a minute
# on this 2-core VM, as a service's owner would run a load test:
#   - goldmark (as make example instruments it), rendering the corpus
#     ROUNDS times (24000) with -cpuprofile;
#   - example/service, serving REQUESTS requests (1,000,000) from its load
#     generator with -cpuprofile, ended by SIGTERM.
# Shorter runs are noisier on both sides: a 10-second run holds about
# 1,000 CPU samples, and with ROUNDS=4000 REQUESTS=100000 a share can fail
# on noise alone.
# The model's times are wall time, a CPU profile's are CPU time: they agree
# where the service has its cores to itself. So, on a machine of 2 cores or
# more, the service runs on core 0 (GOMAXPROCS=1) and its load generator on
# core 1; PIN=0 runs both on every core, as in a load test on one machine,
# where a request's wait for a core is part of its wall time.
# Each run is checked by bench/judge, without a truth file (no counts):
# shares of the profile's top 5, charged as the model charges time (an
# untimed or disabled probe's to its caller), and the profile's top 10 in
# the model (docs/adversarial.md, "The judge"); the functions of the
# service that only wait (main, serve and its goroutine) are left out of
# both sides. Prints each run's table and a summary line per
# program; exits 1 when any run fails.
#
#   bench/agreement.sh [runs]        (default 5 of each; 8 take about 18 minutes)
#
# AGREEMENT_WORK sets where builds, models and profiles go.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
RUNS=${1:-5}
ROUNDS=${ROUNDS:-24000}
REQUESTS=${REQUESTS:-1000000}
PIN=${PIN:-1}
WORK=${AGREEMENT_WORK:-$ROOT/.meterinject/agreement}
WAITING='^main\.(main|serve)(\.func[0-9]+)?$'
export GOWORK=off
mkdir -p "$WORK"

cd "$ROOT"
(cd cmd/meterinject && $GO build -o "$WORK/meterinject" .)
$GO build -o "$WORK/judge" ./bench/judge
cd "$ROOT/example"
$GO mod download
"$WORK/meterinject" -cache "$WORK/cache" -runtime "$ROOT" -deps 'github.com/yuin/goldmark/...' \
	go build -o "$WORK/goldmark" .
"$WORK/meterinject" -cache "$WORK/cache" -runtime "$ROOT" go build -o "$WORK/service" ./service
$GO build -o "$WORK/load" ./service # the load generator, plain

serve=()
drive=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	serve=(env GOMAXPROCS=1 taskset -c 0)
	drive=(taskset -c 1)
fi

failed=0
goldmark=0
for i in $(seq 1 "$RUNS"); do
	rm -f "$WORK/goldmark$i.csv"
	METER_EXPORT_CSV="$WORK/goldmark$i.csv" "$WORK/goldmark" -n "$ROUNDS" \
		-corpus "$ROOT/example/corpus" -cpuprofile "$WORK/goldmark$i.pprof" >/dev/null
	echo "== goldmark, run $i of $RUNS"
	if "$WORK/judge" "$WORK/goldmark$i.csv" "$WORK/goldmark$i.pprof"; then
		goldmark=$((goldmark + 1))
	else
		failed=1
	fi
done

service=0
for i in $(seq 1 "$RUNS"); do
	rm -f "$WORK/service$i.csv"
	fifo="$WORK/service.fifo"
	rm -f "$fifo"
	mkfifo "$fifo"
	METER_EXPORT_CSV="$WORK/service$i.csv" ${serve[@]+"${serve[@]}"} "$WORK/service" -graceful \
		-cpuprofile "$WORK/service$i.pprof" >"$fifo" &
	pid=$!
	exec 3<"$fifo"
	addr=""
	read -r line <&3 || true # the service prints one line once it listens
	addr=${line#listening on }
	if [ -z "$addr" ] || [ "$addr" = "$line" ]; then
		echo "agreement: the service did not start" >&2
		kill "$pid" 2>/dev/null || true
		exit 2
	fi
	${drive[@]+"${drive[@]}"} "$WORK/load" -load "$addr" -n "$REQUESTS" >/dev/null
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	exec 3<&-
	if [ "$status" != 0 ]; then
		echo "agreement: the service, which handles SIGTERM, ended with status $status" >&2
		failed=1
		continue
	fi
	echo "== example/service, run $i of $RUNS"
	if "$WORK/judge" -exclude "$WAITING" "$WORK/service$i.csv" "$WORK/service$i.pprof"; then
		service=$((service + 1))
	else
		failed=1
	fi
done

echo
echo "goldmark: $goldmark of $RUNS runs agree; example/service: $service of $RUNS"
exit "$failed"
