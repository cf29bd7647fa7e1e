#!/usr/bin/env bash
# bench/latency_compare.sh — send latency at fixed rates: pulsarc
# (bench/latency) beside the Java client (bench/java/LatencyJava.java),
# alternating, against a live broker or (--sink) the replay server.
#
# Design notes
#  - Rates RATES (1000 10000 50000 msg/s) of SIZE (1 KB) messages, batched
#    as the saturation bench (1 ms / 1,000 / 128 KiB), SECONDS (10) per run
#    after a warm-up second; a fresh topic per run.
#  - Latency is measured from each message's intended send time, so a
#    stalled sender is charged for every message it held back (each round
#    also prints how far the paced loop itself fell behind); p50, p99,
#    p99.9 and max are medians over PAIRS (2) rounds, min-max beside them.
#  - Live needs PULSAR_SERVICE_URL (test/broker/run-with-broker.sh); --sink
#    starts build/bench/replay_server on PORT (6657).
#  - MODES (live: "send e2e"; sink: "send"): send = to the broker's
#    receipt; e2e = to a consumer of the same process receiving it.
#
# Environment: BUILD, PAIRS, RATES, SIZE, SECONDS, PORT, MODES, NOBUILD. Figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh

SINK=0
[ "${1:-}" = --sink ] && SINK=1
BUILD=${BUILD:-build}
PAIRS=${PAIRS:-2}
RATES=${RATES:-"1000 10000 50000"}
SIZE=${SIZE:-1024}
SECONDS_PER_RUN=${SECONDS:-10}
PORT=${PORT:-6657}
MODES=${MODES:-$([ $SINK = 1 ] && echo send || echo "send e2e")}
B=$BUILD/bench
OUT=${OUT:-$B/out}
mkdir -p "$OUT"
TAG=$([ $SINK = 1 ] && echo sink || echo live)
LOG=$OUT/latency-compare-$TAG.log
ROWS=$OUT/latency-compare-$TAG.rows
: >"$LOG"
: >"$ROWS"

if [ "${NOBUILD:-0}" != 1 ]; then
    make -j"$(nproc)" -f Makefile -f bench/Makefile.inc BUILD="$BUILD" "$B/latency" "$B/replay_server" \
        >"$OUT/latency-build.log" 2>&1 || { tail -20 "$OUT/latency-build.log"; exit 1; }
fi

trap stop_sink EXIT INT TERM
if [ $SINK = 1 ]; then
    start_sink "$OUT/latency-sink.log" || exit 1
    URL=pulsar://127.0.0.1:$PORT
    WHERE="broker-free sink (replay_server)"
else
    URL=${PULSAR_SERVICE_URL:?needs PULSAR_SERVICE_URL (run under test/broker/run-with-broker.sh), or --sink}
    WHERE="live broker $URL"
fi

java_setup LatencyJava


run() {
    local client=$1 rate=$2 round=$3 mode=$4 line topic
    topic=persistent://public/default/latency-$client-$rate-$round-$$-$(date +%s%N)
    local args=(--url "$URL" --topic "$topic" --rate "$rate" --seconds "$SECONDS_PER_RUN" --size "$SIZE" --label "$client"
                --e2e "$([ "$mode" = e2e ] && echo 1 || echo 0)")
    if [ "$client" = pulsarc ]; then
        line=$(timeout 600 "$B/latency" "${args[@]}" 2>>"$OUT/latency-compare.err" | grep '^latency:' || true)
    else
        line=$(timeout 600 java -Xms512m -cp "$JAVA_CP" LatencyJava "${args[@]}" 2>>"$OUT/latency-compare.err" | grep '^latency:' || true)
    fi
    echo "$client $rate $mode: $line" >>"$LOG"
    if [ "$(echo "$line" | kv status)" != ok ]; then
        echo "  $client at $rate msg/s ($mode) failed: ${line:-no output} (see $OUT/latency-compare.err)" >&2
        return 0
    fi
    echo "$client $rate $mode $(echo "$line" | kv p50_ms) $(echo "$line" | kv p99_ms) $(echo "$line" | kv p999_ms) $(echo "$line" | kv max_ms)" >>"$ROWS"
    echo "  round $round: $client $rate msg/s $mode: p50 $(echo "$line" | kv p50_ms) p99 $(echo "$line" | kv p99_ms) p99.9 $(echo "$line" | kv p999_ms) max $(echo "$line" | kv max_ms) ms (sender behind by up to $(echo "$line" | kv sender_late_ms) ms)"
}

echo "$WHERE; $SIZE B; $SECONDS_PER_RUN s per run; pairs $PAIRS"
for r in $(seq 1 "$PAIRS"); do
    for mode in $MODES; do
        for rate in $RATES; do
            run pulsarc "$rate" "$r" "$mode"
            [ $HAVE_JAVA = 1 ] && run java "$rate" "$r" "$mode"
        done
    done
done

stat() {
    local vals
    vals=$(awk -v c="$1" -v r="$2" -v m="$3" -v k="$4" '$1 == c && $2 == r && $3 == m { print $k }' "$ROWS")
    [ -n "$vals" ] || { echo "-"; return; }
    echo "$(echo "$vals" | median) ($(echo "$vals" | minmax))"
}
echo
echo "## latency in ms from the intended send time (send: to the receipt; e2e: to a consumer), $SIZE B batched, $WHERE; medians (min-max) of $PAIRS rounds"
echo
echo "| kind | rate | client | p50 | p99 | p99.9 | max |"
echo "|---|---|---|---|---|---|---|"
for mode in $MODES; do
    for rate in $RATES; do
        for c in pulsarc java; do
            [ $c = java ] && [ $HAVE_JAVA = 0 ] && continue
            echo "| $mode | $rate/s | $c | $(stat $c "$rate" "$mode" 4) | $(stat $c "$rate" "$mode" 5) | $(stat $c "$rate" "$mode" 6) | $(stat $c "$rate" "$mode" 7) |"
        done
    done
done
echo
echo "log: $LOG"
