#!/usr/bin/env bash
# bench/compare.sh — pulsarc (bench/fetch) beside PyPI's pulsar-client
# (Python over the C++ client, bench/compare_py.py) on the same replay corpus.
#
# Design notes (performance.md §7.1, §7.3)
#  - Both clients drain MSGS messages of one corpus (default batch100x1000)
#    from build/bench/replay_server, a fresh server per run, subscription
#    Exclusive/Earliest, receiver queue QUEUE (10000, fetch's default), no
#    acks. Server on CPU 0, client on CPU 1 (PIN=1, as bench/run.sh).
#  - Interleaved: PAIRS rounds of fetch, python (count only), python with
#    data() (one bytes copy per message); ratios are medians of per-round
#    ratios, with min-max. Each program measures its own window (after
#    subscribe .. N-th message) with getrusage, so interpreter start-up is
#    outside it.
#  - The Python client lives in a virtualenv (VENV, default
#    $BUILD/bench/pyvenv), created with `pip install pulsar-client` (PYPI_SPEC)
#    when missing. Only processes this script started are stopped, by PID.
#
# Environment: BUILD (build), PORT (6655), MSGS (5000000), PAIRS (5),
# QUEUE (10000), CORPUS (batch100x1000), PIN (1), VENV, PYPI_SPEC
# (pulsar-client), NOBUILD (0). Figures only; nothing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
PORT=${PORT:-6655}
MSGS=${MSGS:-5000000}
PAIRS=${PAIRS:-5}
QUEUE=${QUEUE:-10000}
CORPUS=${CORPUS:-batch100x1000}
PIN=${PIN:-1}
B=$BUILD/bench
OUT=${OUT:-$B/out}
VENV=${VENV:-$B/pyvenv}
PYPI_SPEC=${PYPI_SPEC:-pulsar-client}
SERVER_PID=
mkdir -p "$OUT"
LOG=$OUT/compare.log
: >"$LOG"

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=
}
trap cleanup EXIT INT TERM

PIN0=()
PIN1=()
if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    PIN0=(taskset -c 0)
    PIN1=(taskset -c 1)
fi

if [ "${NOBUILD:-0}" != 1 ]; then
    make -j"$(nproc)" -f Makefile -f bench/Makefile.inc BUILD="$BUILD" bench >"$OUT/compare-build.log" 2>&1 ||
        { tail -20 "$OUT/compare-build.log"; exit 1; }
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import pulsar' 2>/dev/null; then
    echo "creating $VENV with pip install $PYPI_SPEC ..."
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "$PYPI_SPEC" >"$OUT/compare-pip.log" 2>&1 || { tail -20 "$OUT/compare-pip.log"; exit 1; }
fi
PYVER=$("$VENV/bin/python" -c 'import pulsar; print(getattr(pulsar, "__version__", "?"))')

start_server() {
    : >"$OUT/compare-server.log"
    "${PIN0[@]}" "$B/replay_server" --port "$PORT" --corpus "$CORPUS" --messages "$MSGS" 2>"$OUT/compare-server.log" &
    SERVER_PID=$!
    for _ in $(seq 1 200); do
        grep -q "listening on" "$OUT/compare-server.log" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$OUT/compare-server.log" >&2
    return 1
}

kv() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "") printf "%.2f", a / b; else print "-" }'; }

# run NAME cmd...: one run against a fresh server; prints the key=value line
run() {
    local name=$1 line
    shift
    start_server
    line=$(timeout 300 "${PIN1[@]}" "$@" 2>>"$OUT/compare.err" | grep -E '^(fetch|compare_py):' || true)
    cleanup
    echo "$name: $line" >>"$LOG"
    [ "$(echo "$line" | kv status)" = ok ] || { echo "$name failed: ${line:-no output} (see $OUT/compare.err)" >&2; return 1; }
    echo "$line"
}

URL=pulsar://127.0.0.1:$PORT
: >"$OUT/compare.rows"
echo "corpus=$CORPUS msgs=$MSGS queue=$QUEUE pairs=$PAIRS; pulsar-client $PYVER; server CPU 0, client CPU 1 (PIN=$PIN)"
for r in $(seq 1 "$PAIRS"); do
    f=$(run fetch "$B/fetch" --url "$URL" --messages "$MSGS" --queue "$QUEUE" --label pulsarc)
    p=$(run python "$VENV/bin/python" bench/compare_py.py --url "$URL" --messages "$MSGS" --queue "$QUEUE")
    d=$(run python-data "$VENV/bin/python" bench/compare_py.py --url "$URL" --messages "$MSGS" --queue "$QUEUE" \
        --data --label python-data)
    fc=$(echo "$f" | kv cpu_s_per_M) fr=$(echo "$f" | kv msgs_per_s)
    pc=$(echo "$p" | kv cpu_s_per_M) pr=$(echo "$p" | kv msgs_per_s)
    dc=$(echo "$d" | kv cpu_s_per_M) dr=$(echo "$d" | kv msgs_per_s)
    echo "$fr $fc $pr $pc $dr $dc $(ratio "$pc" "$fc") $(ratio "$fr" "$pr") $(ratio "$dc" "$fc") $(ratio "$fr" "$dr")" >>"$OUT/compare.rows"
    echo "  round $r: pulsarc $fr msg/s $fc CPU-s/M | python $pr msg/s $pc CPU-s/M | python+data() $dr msg/s $dc CPU-s/M"
done

col() { awk -v c="$1" '{ print $c }' "$OUT/compare.rows" | median; }
mm() { awk -v c="$1" '{ print $c }' "$OUT/compare.rows" | minmax; }
echo
echo "## pulsarc vs pulsar-client $PYVER (PyPI, C++ core), replay server, $CORPUS, $MSGS msgs, medians of $PAIRS rounds"
echo
echo "| client | msg/s | msg/s min-max | CPU s/M msgs | CPU s/M min-max | CPU ratio (x pulsarc) | msg/s ratio (pulsarc / this) |"
echo "|---|---|---|---|---|---|---|"
echo "| pulsarc (bench/fetch) | $(col 1) | $(mm 1) | $(col 2) | $(mm 2) | 1 | 1 |"
echo "| python, count only | $(col 3) | $(mm 3) | $(col 4) | $(mm 4) | $(col 7) ($(mm 7)) | $(col 8) ($(mm 8)) |"
echo "| python, data() per msg | $(col 5) | $(mm 5) | $(col 6) | $(mm 6) | $(col 9) ($(mm 9)) | $(col 10) ($(mm 10)) |"
echo
echo "ratios: medians of per-round ratios (min-max); log: $LOG"
