#!/usr/bin/env bash
# bench/compare.sh — pulsarc (bench/fetch) beside the Java client
# (bench/java/FetchJava.java) and PyPI's pulsar-client (Python over the C++
# client, bench/compare_py.py), draining the same messages.
#
# Design notes
#  - Replay mode (default): every client drains MSGS messages of one corpus
#    (default batch100x1000) from build/bench/replay_server, a fresh server
#    per run, subscription Exclusive/Earliest, receiver queue QUEUE (10000,
#    fetch's default), no acks; pulsarc takes up to 1000 per
#    pulsarc_consumer_batch_receive (its fastest path, like the Python
#    driver's batch_receive). Server on CPU 0, client on CPU 1 (PIN=1).
#  - Live mode (--live, needs PULSAR_SERVICE_URL, e.g. under
#    test/broker/run-with-broker.sh): LIVE_MSGS 100-byte messages are
#    produced once, batched, to a fresh topic; then each client drains that
#    backlog with a subscription of its own (Exclusive/Earliest). No
#    pinning: the broker needs both cores.
#  - Interleaved: PAIRS rounds of fetch, java, python (count only), python
#    with data() (one bytes copy per message); ratios are medians of
#    per-round ratios, with min-max. Each program measures its own window
#    (after subscribe .. N-th message) with process CPU time, so JVM and
#    interpreter start-up stay outside it; JIT and GC threads count.
#  - Java: compiled with javac against the test broker's classpath (the
#    broker jar depends on pulsar-client-original, so no extra download;
#    test/broker/fetch.sh resolves it when missing). Skipped without javac.
#  - Python: a virtualenv (VENV, default $BUILD/bench/pyvenv) made with
#    `pip install pulsar-client` (PYPI_SPEC) when missing; skipped when pip
#    cannot install it. Only processes this script started are stopped.
#
# Environment: BUILD (build), PORT (6655), MSGS (5000000), LIVE_MSGS
# (1000000), PAIRS (5; live 3), QUEUE (10000), CORPUS (batch100x1000),
# PIN (1), VENV, PYPI_SPEC (pulsar-client), NOBUILD (0). Figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh

LIVE=0
[ "${1:-}" = --live ] && LIVE=1
BUILD=${BUILD:-build}
PORT=${PORT:-6655}
MSGS=${MSGS:-5000000}
LIVE_MSGS=${LIVE_MSGS:-1000000}
PAIRS=${PAIRS:-$([ $LIVE = 1 ] && echo 3 || echo 5)}
QUEUE=${QUEUE:-10000}
CORPUS=${CORPUS:-batch100x1000}
PIN=${PIN:-1}
B=$BUILD/bench
OUT=${OUT:-$B/out}
VENV=${VENV:-$B/pyvenv}
PYPI_SPEC=${PYPI_SPEC:-pulsar-client}
SERVER_PID=
mkdir -p "$OUT"
TAG=$([ $LIVE = 1 ] && echo live || echo replay)
LOG=$OUT/compare-$TAG.log
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
if [ "$PIN" = 1 ] && [ $LIVE = 0 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    PIN0=(taskset -c 0)
    PIN1=(taskset -c 1)
fi

if [ "${NOBUILD:-0}" != 1 ]; then
    make -j"$(nproc)" -f Makefile -f bench/Makefile.inc BUILD="$BUILD" bench-build all \
        >"$OUT/compare-build.log" 2>&1 || { tail -20 "$OUT/compare-build.log"; exit 1; }
fi

# ---- the other clients, when they can be had ----
HAVE_PY=1
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import pulsar' 2>/dev/null; then
    echo "creating $VENV with pip install $PYPI_SPEC ..."
    { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "$PYPI_SPEC"; } >"$OUT/compare-pip.log" 2>&1 ||
        { echo "python client unavailable (see $OUT/compare-pip.log); its rows are skipped"; HAVE_PY=0; }
fi
PYVER=$([ $HAVE_PY = 1 ] && "$VENV/bin/python" -c 'import pulsar; print(getattr(pulsar, "__version__", "?"))' || echo none)

java_setup FetchJava

# ---- where the messages come from ----
start_server() {
    [ $LIVE = 1 ] && return 0
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

if [ $LIVE = 1 ]; then
    URL=${PULSAR_SERVICE_URL:?live mode needs PULSAR_SERVICE_URL (run under test/broker/run-with-broker.sh)}
    TOPIC=persistent://public/default/bench-compare-$$-$(date +%s)
    N=$LIVE_MSGS
    echo "producing $N x 100 B to $TOPIC ..."
    "$BUILD/pulsarc" perf produce -u "$URL" -r 0 -s 100 -m "$N" -o 20000 "$TOPIC" \
        >"$OUT/compare-produce.log" 2>&1 || { tail -5 "$OUT/compare-produce.log"; exit 1; }
    WHERE="live broker $URL, $N backlog msgs of 100 B"
else
    URL=pulsar://127.0.0.1:$PORT
    TOPIC=persistent://public/default/replay-bench
    N=$MSGS
    WHERE="replay server, $CORPUS, $N msgs"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "" && a != "-") printf "%.2f", a / b; else print "-" }'; }

# run NAME cmd...: one run (against a fresh server in replay mode); prints its key=value line
run() {
    local name=$1 line
    shift
    start_server
    line=$(timeout 600 "${PIN1[@]}" "$@" 2>>"$OUT/compare.err" | grep -E '^(fetch|compare_py|java):' || true)
    cleanup
    echo "$name: $line" >>"$LOG"
    [ "$(echo "$line" | kv status)" = ok ] || { echo "$name failed: ${line:-no output} (see $OUT/compare.err)" >&2; echo "-"; return 0; }
    echo "$line"
}

ROWS=$OUT/compare-$TAG.rows
: >"$ROWS"
echo "$WHERE; queue=$QUEUE pairs=$PAIRS; java $JVER; pulsar-client (PyPI) $PYVER; PIN=$PIN"
for r in $(seq 1 "$PAIRS"); do
    f=$(run fetch "$B/fetch" --url "$URL" --topic "$TOPIC" --sub "c-$r" --messages "$N" --queue "$QUEUE" --batch 1000 --label pulsarc)
    j=-; p=-; d=-
    [ $HAVE_JAVA = 1 ] && j=$(run java java -Xms512m -cp "$JAVA_CP" FetchJava --url "$URL" --topic "$TOPIC" --sub "j-$r" --messages "$N" --queue "$QUEUE")
    [ $HAVE_PY = 1 ] && p=$(run python "$VENV/bin/python" bench/compare_py.py --url "$URL" --topic "$TOPIC" --sub "p-$r" --messages "$N" --queue "$QUEUE")
    [ $HAVE_PY = 1 ] && d=$(run python-data "$VENV/bin/python" bench/compare_py.py --url "$URL" --topic "$TOPIC" --sub "d-$r" --messages "$N" --queue "$QUEUE" --data --label python-data)
    fc=$(echo "$f" | kv cpu_s_per_M) fr=$(echo "$f" | kv msgs_per_s)
    jc=$(echo "$j" | kv cpu_s_per_M) jr=$(echo "$j" | kv msgs_per_s)
    pc=$(echo "$p" | kv cpu_s_per_M) pr=$(echo "$p" | kv msgs_per_s)
    dc=$(echo "$d" | kv cpu_s_per_M) dr=$(echo "$d" | kv msgs_per_s)
    echo "${fr:--} ${fc:--} ${jr:--} ${jc:--} ${pr:--} ${pc:--} ${dr:--} ${dc:--} $(ratio "$jc" "$fc") $(ratio "$fr" "$jr") $(ratio "$pc" "$fc") $(ratio "$fr" "$pr") $(ratio "$dc" "$fc") $(ratio "$fr" "$dr")" >>"$ROWS"
    echo "  round $r: pulsarc ${fr:--} msg/s ${fc:--} CPU-s/M | java ${jr:--} msg/s ${jc:--} CPU-s/M | python ${pr:--} msg/s ${pc:--} CPU-s/M | python+data() ${dr:--} msg/s ${dc:--} CPU-s/M"
done

col() { awk -v c="$1" '$c != "-" { print $c }' "$ROWS" | median; }
mm() { awk -v c="$1" '$c != "-" { print $c }' "$ROWS" | minmax; }
echo
echo "## pulsarc beside the Java client ($JVER) and pulsar-client $PYVER (PyPI, C++ core): $WHERE; medians of $PAIRS rounds"
echo
echo "| client | msg/s | msg/s min-max | CPU s/M msgs | CPU s/M min-max | CPU ratio (x pulsarc) | msg/s ratio (pulsarc / this) |"
echo "|---|---|---|---|---|---|---|"
echo "| pulsarc (bench/fetch) | $(col 1) | $(mm 1) | $(col 2) | $(mm 2) | 1 | 1 |"
echo "| Java client, receive() | $(col 3) | $(mm 3) | $(col 4) | $(mm 4) | $(col 9) ($(mm 9)) | $(col 10) ($(mm 10)) |"
echo "| python, count only | $(col 5) | $(mm 5) | $(col 6) | $(mm 6) | $(col 11) ($(mm 11)) | $(col 12) ($(mm 12)) |"
echo "| python, data() per msg | $(col 7) | $(mm 7) | $(col 8) | $(mm 8) | $(col 13) ($(mm 13)) | $(col 14) ($(mm 14)) |"
echo
echo "ratios: medians of per-round ratios (min-max); log: $LOG"
