# Sourced by bench/firing.sh and bench/chain.sh: a work dir removed on exit, benchstat
# (installed from the Go module proxy if missing), the probe package's test
# binary ($BIN if given, else built into the work dir as $bin), and in run
# the command prefix that pins a benchmark to the last CPU, at real-time
# priority where the user may (root). PIN=0 leaves it unpinned.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v benchstat >/dev/null || go install golang.org/x/perf/cmd/benchstat@latest
PATH=$PATH:$(go env GOPATH)/bin
bin=${BIN:-$tmp/probe.test}
[ -n "${BIN:-}" ] || go test -c -o "$bin" ./probe
run=()
if [ "${PIN:-1}" != 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null; then run+=(chrt -f 80); fi
  if command -v taskset >/dev/null; then run+=(taskset -c "$(($(nproc) - 1))"); fi
fi
