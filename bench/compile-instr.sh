#!/usr/bin/env bash
# Instructions executed by the compiler for goldmark's packages, counted
# under valgrind (repeats to about 3%, where CPU time on a shared host moves
# by 20%). Usage, from example/: bench/compile-instr.sh [overlay.json]
# Prints one line per package and the sum. Takes about 3 minutes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp /tmp/compile-instr.XXXXXX)
TX=$(mktemp /tmp/compile-instr-tx.XXXXXX)
trap 'rm -f "$OUT" "$TX"' EXIT
cat > "$TX" <<'TXEOF'
#!/usr/bin/env bash
tool=$1; shift
pkg=""; prev=""
for a in "$@"; do if [ "$prev" = "-p" ]; then pkg=$a; fi; prev=$a; done
case "$(basename "$tool"):$pkg" in
compile:github.com/yuin/goldmark*)
	f=$(mktemp /tmp/compile-instr-cg.XXXXXX)
	# valgrind's callgrind does not survive the runtime's preemption signals
	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file="$f" "$tool" "$@" 2>"$f.err" || { cat "$f.err" >&2; rm -f "$f" "$f.err"; exit 1; }
	echo "$(grep -E '^(summary|totals):' "$f" | head -1 | awk '{print $2}') $pkg" >> "$COMPILE_INSTR_OUT"
	rm -f "$f" "$f.err"
	exit 0;;
esac
exec "$tool" "$@"
TXEOF
chmod +x "$TX"
cd "$ROOT/example"
export GOWORK=off
ov=()
if [ $# -gt 0 ]; then ov=(-overlay "$1"); fi
COMPILE_INSTR_OUT=$OUT go build -p 1 -toolexec "$TX" "${ov[@]}" \
	"-gcflags=github.com/yuin/goldmark/...=-trimpath=/nonexistent$RANDOM$RANDOM -c=1" github.com/yuin/goldmark/...
sort -k2 "$OUT"
awk '{s += $1} END {printf "%.0f total\n", s}' "$OUT"
