#!/usr/bin/env bash
# bench_ab.sh — the consume-side bench figures of two trees side by side.
#
# Usage: tools/bench_ab.sh OLD_TREE NEW_TREE
#   Each tree is a checkout (e.g. a clone of an old commit under /tmp) with
#   its bench programs built:
#     make -j2 -f Makefile -f bench/Makefile.inc build/bench/replay_server \
#          build/bench/decode build/bench/fetch
#   (BUILD_TREES=1 runs that make in both trees first.)
#
# Design notes
#  - Each tree runs its own programs against its own library, so the figures
#    are what that commit's code costs, whatever its bench programs were.
#  - Exact figures first (the same on a loaded machine): callgrind Ir per
#    message of bench/decode's decode pass, and "decode Ir/msg" computed as
#    bench/run.sh does (frame parse + rx decode - payload copy -
#    decompression); allocations per message of the decode pass; callgrind
#    Ir per message of the whole fetch program (io thread and receiving
#    thread) against the replay server.
#  - Then wall clock: the replay server on CPU 0, fetch on CPU 1 (as
#    bench/run.sh section 4), old and new interleaved for ROUNDS rounds so
#    load from other processes falls on both; medians and min-max printed.
#    These are noisy on a shared machine; nothing here asserts a figure.
#  - Bounded: every run has a timeout, the server's start is waited for at
#    most 20 s, and only the processes this script started are stopped, by
#    their PID.
#
# Environment: PORT (6655), ROUNDS (5), SCALE (1: multiplies the message
# counts), CALLGRIND (1), PIN (1), OUT (a new temporary directory).
set -uo pipefail

[ $# -eq 2 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
OLD=$(cd "$1" && pwd) || exit 2
NEW=$(cd "$2" && pwd) || exit 2
PORT=${PORT:-6655}
ROUNDS=${ROUNDS:-5}
SCALE=${SCALE:-1}
CALLGRIND=${CALLGRIND:-1}
PIN=${PIN:-1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
SERVER_PID=

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    SERVER_PID=
}
trap cleanup EXIT INT TERM

kv() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p"; }
n() { awk -v a="$1" -v s="$SCALE" 'BEGIN { v = int(a * s); print (v < 1000 ? 1000 : v) }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
label() { git -C "$1" rev-parse --short HEAD 2>/dev/null || basename "$1"; }
PIN0=()
PIN1=()
if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    PIN0=(taskset -c 0)
    PIN1=(taskset -c 1)
fi
TREES=("old:$OLD" "new:$NEW")

if [ "${BUILD_TREES:-0}" = 1 ]; then
    for t in "$OLD" "$NEW"; do
        echo "building bench programs in $t ..."
        make -C "$t" -j"$(nproc)" -f Makefile -f bench/Makefile.inc build/bench/replay_server \
            build/bench/decode build/bench/fetch >"$OUT/build.log" 2>&1 ||
            { tail -20 "$OUT/build.log"; exit 1; }
    done
fi
for t in "$OLD" "$NEW"; do
    for p in replay_server decode fetch; do
        [ -x "$t/build/bench/$p" ] || { echo "missing $t/build/bench/$p (build it, or BUILD_TREES=1)" >&2; exit 1; }
    done
done

echo "# bench A/B: old $(label "$OLD") ($OLD), new $(label "$NEW") ($NEW)"
echo "SCALE=$SCALE ROUNDS=$ROUNDS PIN=$PIN; files in $OUT"
echo

# ------------------------------------------------------------ exact: decode
# incl FILE FUNC: inclusive Ir of FUNC in a callgrind file (0 when absent)
incl() {
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
        awk -v f=":$2 " 'index($0, f) { gsub(",", "", $1); print $1; found = 1; exit } END { if (!found) print 0 }'
}
if [ "$CALLGRIND" = 1 ] && command -v valgrind >/dev/null; then
    echo "## Decode from memory (bench/decode --path consumer): exact"
    echo
    echo "| corpus | tree | msgs | Ir/msg | decode Ir/msg | allocs/msg |"
    echo "|---|---|---|---|---|---|"
    for c in batch100x1000 single100 batch100x1000-lz4; do
        case $c in single100) m=$(n 20000) ;; *) m=$(n 100000) ;; esac
        for t in "${TREES[@]}"; do
            name=${t%%:*} tree=${t#*:}
            cg=$OUT/decode.$name.$c.out
            line=$(timeout 600 valgrind --tool=callgrind --toggle-collect=decode_pass --callgrind-out-file="$cg" \
                "$tree/build/bench/decode" --corpus "$c" --path consumer --messages "$m" --ring-bytes 1 2>>"$OUT/err.log")
            msgs=$(echo "$line" | kv msgs)
            ir=$(awk '/^totals:/ { print $2 }' "$cg" 2>/dev/null)
            if [ -z "$ir" ] || [ -z "$msgs" ]; then
                echo "| $c | $name | failed | | | |"
                continue
            fi
            dec=$(awk -v a="$(incl "$cg" pc_frame_parse)" -v b="$(incl "$cg" pc_rx_decode)" \
                -v c="$(incl "$cg" pc_buf_append)" -v d="$(incl "$cg" pc_codec_decompress)" -v m="$msgs" \
                'BEGIN { printf "%.1f", (a + b - c - d) / m }')
            al=$(timeout 300 "$tree/build/bench/decode" --corpus "$c" --path consumer --messages "$(n 1000000)" \
                2>>"$OUT/err.log" | kv allocs_per_msg)
            echo "| $c | $name | $msgs | $(div "$ir" "$msgs") | $dec | ${al:--} |"
        done
    done
    echo
fi

# ------------------------------------------------------------ fetch runs
start_server() { # tree corpus msgs [prefix...]
    local tree=$1 corpus=$2 msgs=$3 log=$OUT/server.log
    shift 3
    : >"$log"
    "$@" "$tree/build/bench/replay_server" --port "$PORT" --corpus "$corpus" --messages "$msgs" 2>"$log" &
    SERVER_PID=$!
    for _ in $(seq 1 200); do
        grep -q "listening on" "$log" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$log" >&2
    cleanup
    return 1
}

if [ "$CALLGRIND" = 1 ] && command -v valgrind >/dev/null; then
    echo "## Fetch through the public API under callgrind (whole program, both threads): exact"
    echo
    echo "| corpus | receive | tree | msgs | Ir/msg |"
    echo "|---|---|---|---|---|"
    for row in "single100 $(n 200000)" "batch100x1000 $(n 1000000)"; do
        set -- $row
        for t in "${TREES[@]}"; do
            name=${t%%:*} tree=${t#*:}
            cg=$OUT/fetch.$name.$1.out
            rm -f "$cg"*
            start_server "$tree" "$1" "$2" || { echo "| $1 | batch 1000 | $name | server failed | |"; continue; }
            line=$(timeout 600 valgrind --tool=callgrind --callgrind-out-file="$cg" "$tree/build/bench/fetch" \
                --url "pulsar://127.0.0.1:$PORT" --messages "$2" --label ab --idle-ms 20000 --batch 1000 \
                2>>"$OUT/err.log" | grep '^fetch:')
            cleanup
            ir=$(cat "$cg"* 2>/dev/null | awk '/^totals:/ { s += $2 } END { print s + 0 }')
            if [ "$(echo "$line" | kv status)" != ok ]; then
                echo "| $1 | batch 1000 | $name | $(echo "$line" | kv status) | |"
                continue
            fi
            echo "| $1 | batch 1000 | $name | $2 | $(div "$ir" "$2") |"
        done
    done
    echo
fi

echo "## Replay server -> fetch, wall clock, old and new interleaved, $ROUNDS rounds (noisy)"
echo
ROWS=("batch100x1000|batch 1000|$(n 10000000)|--batch 1000"
      "batch100x1000|one|$(n 10000000)|"
      "single100|batch 1000|$(n 2000000)|--batch 1000")
RUNS=$OUT/fetch.runs
: >"$RUNS"
for r in $(seq 1 "$ROUNDS"); do
    for i in "${!ROWS[@]}"; do
        IFS='|' read -r corpus recv msgs args <<<"${ROWS[$i]}"
        for t in "${TREES[@]}"; do
            name=${t%%:*} tree=${t#*:}
            start_server "$tree" "$corpus" "$msgs" "${PIN0[@]}" || continue
            # shellcheck disable=SC2086 # args is a word list
            line=$(timeout 120 "${PIN1[@]}" "$tree/build/bench/fetch" --url "pulsar://127.0.0.1:$PORT" \
                --messages "$msgs" --label ab --idle-ms 5000 $args 2>>"$OUT/err.log" | grep '^fetch:')
            cleanup
            echo "row=$i tree=$name round=$r $line" >>"$RUNS"
        done
    done
done
echo "| corpus | receive | tree | ok runs | msg/s median | msg/s min-max | CPU s/M median | CPU s/M min-max | user s/M | sys s/M | allocs/msg |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for i in "${!ROWS[@]}"; do
    IFS='|' read -r corpus recv msgs args <<<"${ROWS[$i]}"
    for t in "${TREES[@]}"; do
        name=${t%%:*}
        grep "^row=$i tree=$name " "$RUNS" | grep 'status=ok' | python3 -c '
import statistics as st, sys
rows = [dict(kv.split("=", 1) for kv in l.split() if "=" in kv) for l in sys.stdin]
def col(k):
    v = [float(r[k]) for r in rows if k in r]
    return v if v else [0.0]
m, c, u, s, a = (col(k) for k in ("msgs_per_s", "cpu_s_per_M", "user_s_per_M", "sys_s_per_M", "allocs_per_msg"))
print("| %s | %s | %s | %d | %.0f | %.0f-%.0f | %.4f | %.4f-%.4f | %.4f | %.4f | %.3f |" % (
    sys.argv[1], sys.argv[2], sys.argv[3], len(rows), st.median(m), min(m), max(m),
    st.median(c), min(c), max(c), st.median(u), st.median(s), st.median(a)))
' "$corpus" "$recv" "$name"
    done
done
