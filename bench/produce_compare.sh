#!/usr/bin/env bash
# bench/produce_compare.sh — the producer at saturation: pulsarc
# (bench/produce) beside the Java client (bench/java/ProduceJava.java),
# against a live broker, in the same run, alternating.
#
# Design notes
#  - Cells: 100 B and 1 KB, batched (1 ms / 1,000 messages / 128 KiB) and
#    unbatched; one producer, sendAsync in a loop, blockIfQueueFull with a
#    pending queue of PENDING (1,000). Every run publishes to a fresh topic,
#    so no run inherits another's backlog or ledger roll-over.
#  - Interleaved: PAIRS rounds, each round pulsarc then Java for every
#    cell; the table gives medians with min-max. Each program measures its
#    own window (producer created .. last receipt) with its process's CPU
#    time, so JVM start-up stays outside it; JIT and GC threads count.
#  - Live (default): needs PULSAR_SERVICE_URL (run under
#    test/broker/run-with-broker.sh). No pinning: the broker needs both
#    cores, and the client competes with it for them as it would in
#    production on a small machine.
#  - --sink: against build/bench/replay_server, which answers every SEND
#    with its receipt at once, so what is left is the client's own cost.
#    One server for the whole run, on CPU 0, the client on CPU 1. All the
#    client's threads then share one core, so no cache line moves between
#    cores: a live figure (unpinned) is not that plus the broker's share
#    alone. Pinned to one CPU (taskset -c 1) against the live broker,
#    100 B batched costs about what it costs against the sink.
#  - Live, the broker's own CPU is read from /proc around every run (the
#    broker of PULSARC_BROKER_INSTANCE, or BROKER_PID): CPU-s per M it spent
#    on each client's traffic, and the cores it kept busy over the run,
#    which says whether the broker, not the client, bounds the rate.
#  - What bounds 100 B batched live is the round trip of one batch, not
#    either client: the pending window (1,000) holds one batch of 1,000,
#    and the bookie's journal holds each entry up to its group wait (1 ms
#    in the test broker's config) before writing it out. A broker started
#    with test/broker/journal-no-wait.conf (PULSARC_BROKER_CONF_EXTRA)
#    writes out at once; run this against it to see the clients without
#    that wait.
#  - Java: compiled with javac against the test broker's classpath, as
#    bench/compare.sh does; skipped when javac or the classpath is missing.
#
# Environment: BUILD (build), PORT (6656, --sink), PAIRS (3), PENDING (1000), BATCHED_MSGS
# (1000000), UNBATCHED_MSGS (200000), CELLS ("100:1 1024:1 1024:0 100:0",
# size:batched), NOBUILD (0). Figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh

SINK=0
[ "${1:-}" = --sink ] && SINK=1
BUILD=${BUILD:-build}
PORT=${PORT:-6656}
PAIRS=${PAIRS:-3}
PENDING=${PENDING:-1000}
BATCHED_MSGS=${BATCHED_MSGS:-1000000}
UNBATCHED_MSGS=${UNBATCHED_MSGS:-200000}
CELLS=${CELLS:-"100:1 1024:1 1024:0 100:0"}
B=$BUILD/bench
OUT=${OUT:-$B/out}
mkdir -p "$OUT"
TAG=$([ $SINK = 1 ] && echo sink || echo live)
LOG=$OUT/produce-compare-$TAG.log
: >"$LOG"

if [ "${NOBUILD:-0}" != 1 ]; then
    make -j"$(nproc)" -f Makefile -f bench/Makefile.inc BUILD="$BUILD" "$B/produce" "$B/replay_server" \
        >"$OUT/produce-build.log" 2>&1 || { tail -20 "$OUT/produce-build.log"; exit 1; }
fi

trap stop_sink EXIT INT TERM
PIN0=()
PIN1=()
if [ $SINK = 1 ]; then
    if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
        PIN0=(taskset -c 0)
        PIN1=(taskset -c 1)
    fi
    start_sink "$OUT/produce-sink.log" "${PIN0[@]}" || exit 1
    URL=pulsar://127.0.0.1:$PORT
    WHERE="broker-free sink (replay_server answers every SEND at once)"
else
    URL=${PULSAR_SERVICE_URL:?needs PULSAR_SERVICE_URL (run under test/broker/run-with-broker.sh), or --sink}
    WHERE="live broker $URL"
    BPID=$(broker_pid)
    [ -n "$BPID" ] || echo "broker PID not found (set BROKER_PID): its CPU columns stay empty"
fi
TICKS=$(getconf CLK_TCK)

java_setup ProduceJava


# run CLIENT SIZE BATCH N ROUND: one run on a fresh topic; appends a row to $ROWS
ROWS=$OUT/produce-compare-$TAG.rows
: >"$ROWS"
run() {
    local client=$1 size=$2 batch=$3 n=$4 round=$5 line topic
    topic=persistent://public/default/produce-$client-$size-$batch-$round-$$-$(date +%s%N)
    local args=(--url "$URL" --topic "$topic" --messages "$n" --size "$size" --batch "$batch" --pending "$PENDING" --label "$client")
    local b0 t0 bcpu=- bcores=-
    [ -n "${BPID:-}" ] && b0=$(proc_cpu_ticks "$BPID") && t0=$(date +%s%N)
    if [ "$client" = pulsarc ]; then
        line=$(timeout 600 "${PIN1[@]}" "$B/produce" "${args[@]}" 2>>"$OUT/produce-compare.err" | grep '^produce:' || true)
    else
        line=$(timeout 600 "${PIN1[@]}" java -Xms512m -cp "$JAVA_CP" ProduceJava "${args[@]}" 2>>"$OUT/produce-compare.err" | grep '^produce:' || true)
    fi
    if [ -n "${BPID:-}" ] && [ -r "/proc/$BPID/stat" ]; then
        read -r bcpu bcores < <(awk -v d="$(( $(proc_cpu_ticks "$BPID") - b0 ))" -v hz="$TICKS" -v n="$n" \
            -v ns="$(( $(date +%s%N) - t0 ))" 'BEGIN { printf "%.3f %.2f\n", d / hz / n * 1e6, d / hz / (ns / 1e9) }')
    fi
    echo "$client $size $batch: $line broker_cpu_s_per_M=$bcpu broker_cores=$bcores" >>"$LOG"
    if [ "$(echo "$line" | kv status)" != ok ]; then
        echo "  $client $size B batch=$batch failed: ${line:-no output} (see $OUT/produce-compare.err)" >&2
        return 0
    fi
    echo "$client $size $batch $(echo "$line" | kv msgs_per_s) $(echo "$line" | kv cpu_s_per_M) $(echo "$line" | kv rss_mb) $bcpu $bcores" >>"$ROWS"
    echo "  round $round: $client $size B batch=$batch: $(echo "$line" | kv msgs_per_s) msg/s, $(echo "$line" | kv cpu_s_per_M) CPU-s/M, $(echo "$line" | kv rss_mb) MB; broker $bcpu CPU-s/M, $bcores cores busy"
}

echo "$WHERE; pending $PENDING; pairs $PAIRS; java $JVER"
for r in $(seq 1 "$PAIRS"); do
    for cell in $CELLS; do
        size=${cell%:*} batch=${cell#*:}
        n=$([ "$batch" = 1 ] && echo "$BATCHED_MSGS" || echo "$UNBATCHED_MSGS")
        run pulsarc "$size" "$batch" "$n" "$r"
        [ $HAVE_JAVA = 1 ] && run java "$size" "$batch" "$n" "$r"
    done
done

# stat CLIENT SIZE BATCH COLUMN: "median (min-max)" of one column over the rounds
stat() {
    local vals
    vals=$(awk -v c="$1" -v s="$2" -v b="$3" -v k="$4" '$1 == c && $2 == s && $3 == b && $k != "-" { print $k }' "$ROWS")
    [ -n "$vals" ] || { echo "-"; return; }
    echo "$(echo "$vals" | median) ($(echo "$vals" | minmax))"
}
echo
echo "## producer at saturation, pulsarc beside the Java client ($JVER), $WHERE; medians (min-max) of $PAIRS rounds"
echo
echo "| cell | msg/s pulsarc | msg/s Java | CPU-s per M pulsarc | CPU-s per M Java | peak RSS MB pulsarc | peak RSS MB Java |"
echo "|---|---|---|---|---|---|---|"
# rows COLUMN...: one table row a cell, each column's pulsarc and Java figures side by side
rows() {
    local cell size batch line col
    for cell in $CELLS; do
        size=${cell%:*} batch=${cell#*:}
        line="| $size B $([ "$batch" = 1 ] && echo batched || echo unbatched)"
        for col in "$@"; do
            line="$line | $(stat pulsarc "$size" "$batch" "$col") | $(stat java "$size" "$batch" "$col")"
        done
        echo "$line |"
    done
}
rows 4 5 6
if [ $SINK = 0 ]; then
    echo
    echo "The broker's CPU over the same runs (all its threads; a run includes the client's start-up, when the broker idles):"
    echo
    echo "| cell | broker CPU-s per M, pulsarc's traffic | broker CPU-s per M, Java's | cores the broker kept busy, pulsarc run | Java run |"
    echo "|---|---|---|---|---|"
    rows 7 8
fi
echo
echo "log: $LOG"
