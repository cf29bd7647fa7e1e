#!/usr/bin/env bash
# bench/run.sh — build the benchmark programs and run them; prints tables.
#
# Design notes
#  - Builds with the library's own make and build dir:
#      make -f Makefile -f bench/Makefile.inc bench
#    (works whether or not the top-level Makefile includes Makefile.inc).
#  - Stages: (1) limits: memcpy, CRC32C, loopback TCP on this machine;
#    (2) decode harness from memory, both paths (proto = reference protobuf-c
#    walk, consumer = the library's pc_rx_decode when present), ns/msg and
#    allocations/msg; (3) callgrind Ir per message on small runs when
#    valgrind is installed; (4) for each corpus: replay_server pinned to CPU 0,
#    fetch pinned to CPU 1 (so neither steals the other's core), REPS runs
#    each, median and min-max reported (one run says nothing of the noise).
#  - Bounded: default counts finish in about 75 s on 2 cores (measured).
#    SCALE multiplies every message count (SCALE=0.2 for a smoke run);
#    REPS sets the runs per fetch row (default 3; 5 or more for figures
#    that will be quoted).
#  - Only processes this script started are stopped, by their PID.
#  - Logs and callgrind files go to $OUT (default $BUILD/bench/out); the
#    tables are also written to $OUT/results.md.
#
# Environment: BUILD (build), PORT (6655), SCALE (1), REPS (3), PIN (1),
# CALLGRIND (1), OUT, NOBUILD (0; 1 = skip the build, e.g. while lib/ is
# mid-edit and does not compile).
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
PORT=${PORT:-6655}
SCALE=${SCALE:-1}
REPS=${REPS:-3}
PIN=${PIN:-1}
CALLGRIND=${CALLGRIND:-1}
OUT=${OUT:-$BUILD/bench/out}
B=$BUILD/bench
SERVER_PID=

mkdir -p "$OUT"
RESULTS=$OUT/results.md
: >"$RESULTS"
for f in decode.log decode.err fetch.log fetch.err server.all.log callgrind.err; do : >"$OUT/$f"; done

say() { printf '%s\n' "$*" | tee -a "$RESULTS"; }
n() { awk -v a="$1" -v s="$SCALE" 'BEGIN { v = int(a * s); print (v < 1000 ? 1000 : v) }'; }
# kv KEY < lines: the value of KEY=value, one per input line
kv() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi; else print "-" }'; }

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    SERVER_PID=
}
trap cleanup EXIT INT TERM

# taskset prefixes (taskset execs the program, so $! is the program's PID)
PIN0=()
PIN1=()
if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    PIN0=(taskset -c 0)
    PIN1=(taskset -c 1)
fi

# ---------------------------------------------------------------- build
if [ "${NOBUILD:-0}" = 1 ]; then
    echo "NOBUILD=1: using the existing binaries in $B"
else
    echo "building (make -f Makefile -f bench/Makefile.inc BUILD=$BUILD bench) ..."
    if ! make -j"$(nproc)" -f Makefile -f bench/Makefile.inc BUILD="$BUILD" bench-build >"$OUT/build.log" 2>&1; then
        tail -30 "$OUT/build.log"
        echo "build failed (NOBUILD=1 runs the binaries already in $B)" >&2
        exit 1
    fi
fi
for p in replay_server decode fetch limits; do
    [ -x "$B/$p" ] || { echo "missing $B/$p" >&2; exit 1; }
done

say "# pulsarc bench — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say ""
say "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $(uname -r)"
say "tree: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)'); SCALE=$SCALE REPS=$REPS PIN=$PIN"
say ""

# ---------------------------------------------------------------- limits
say "## 1. Physical limits (bench/limits)"
say ""
"$B/limits" "$SCALE" | tee -a "$RESULTS"
say ""

# End-to-end encryption (bench/crypto, built when OpenSSL is): its own cost
# per message and per data key, in memory.
if [ -x "$B/crypto" ]; then
    say "## 1b. End-to-end encryption (bench/crypto)"
    say ""
    "$B/crypto" "$(awk -v s="$SCALE" 'BEGIN { n = int(20000 * s); print (n < 100 ? 100 : n) }')" | tee -a "$RESULTS"
    say ""
fi

# ---------------------------------------------------------------- decode
CORPORA="batch100x1000 batch100x1000-lz4 batch100x1000-zlib batch100x1000-zstd batch100x1000-snappy single100 batch1kx100"
PATHS="proto"
"$B/decode" --path consumer --messages 1 >/dev/null 2>&1 && PATHS="proto consumer"

decode_count() {
    case $1 in
        single100) n 1000000 ;;
        batch1kx100) n 1000000 ;;
        *zlib*) n 1000000 ;;
        *) n 2000000 ;;
    esac
}

say "## 2. Decode from memory (bench/decode; no sockets, no threads)"
say ""
say "| corpus | path | codec ratio | msgs | ns/msg | ns/frame | msg/s | MB/s | allocs/msg |"
say "|---|---|---|---|---|---|---|---|---|"
for c in $CORPORA; do
    for p in $PATHS; do
        line=$("$B/decode" --corpus "$c" --path "$p" --messages "$(decode_count "$c")" 2>>"$OUT/decode.err")
        echo "$line" >>"$OUT/decode.log"
        if [ "$(echo "$line" | kv status)" != ok ]; then
            say "| $c | $p | $(echo "$line" | kv status) | | | | | | |"
            continue
        fi
        say "| $c | $p | $(echo "$line" | kv ratio) | $(echo "$line" | kv msgs) | $(echo "$line" | kv ns_per_msg) |" \
            "$(echo "$line" | kv ns_per_frame) | $(echo "$line" | kv msgs_per_s) | $(echo "$line" | kv MB_per_s) |" \
            "$(echo "$line" | kv allocs_per_msg) |"
    done
done
say ""

# ---------------------------------------------------------------- callgrind
# incl FILE FUNC: inclusive Ir of FUNC in a callgrind file (0 when absent)
incl() {
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
        awk -v f=":$2 " 'index($0, f) { gsub(",", "", $1); print $1; found = 1; exit } END { if (!found) print 0 }'
}
# decode_only_ir FILE MSGS: (frame parse + rx decode - payload copy - decompression) / msgs
decode_only_ir() {
    local fp rx cp dz
    fp=$(incl "$1" pc_frame_parse)
    rx=$(incl "$1" pc_rx_decode)
    [ "$rx" = 0 ] && { echo "-"; return; } # the proto path has no pc_rx_decode
    cp=$(incl "$1" pc_buf_append)
    dz=$(incl "$1" pc_codec_decompress)
    awk -v a="$fp" -v b="$rx" -v c="$cp" -v d="$dz" -v m="$2" 'BEGIN { printf "%.0f\n", (a + b - c - d) / m }'
}
if [ "$CALLGRIND" = 1 ] && command -v valgrind >/dev/null; then
    say "## 3. Instructions per message (callgrind, --toggle-collect=decode_pass)"
    say ""
    say "Ir/msg: everything decode_pass runs, the application's side included (getters,"
    say "pulsarc_msg_destroy). decode Ir/msg: only the decode (pc_frame_parse + pc_rx_decode),"
    say "without the payload copy and decompression."
    say ""
    say "| corpus | path | msgs | Ir total | Ir/msg | Ir/frame | decode Ir/msg |"
    say "|---|---|---|---|---|---|---|"
    for c in $CORPORA; do
        case $c in single100) m=$(n 20000) ;; batch1kx100) m=$(n 50000) ;; *) m=$(n 100000) ;; esac
        for p in $PATHS; do
            cg=$OUT/callgrind.$c.$p.out
            line=$(valgrind --tool=callgrind --toggle-collect=decode_pass --callgrind-out-file="$cg" \
                "$B/decode" --corpus "$c" --path "$p" --messages "$m" --ring-bytes 1 2>>"$OUT/callgrind.err")
            ir=$(awk '/^totals:/ { print $2 }' "$cg" 2>/dev/null)
            msgs=$(echo "$line" | kv msgs)
            frames=$(echo "$line" | kv frames)
            if [ -z "$ir" ] || [ -z "$msgs" ]; then
                say "| $c | $p | failed | | | |"
                continue
            fi
            dec=$(decode_only_ir "$cg" "$msgs")
            say "| $c | $p | $msgs | $ir | $(awk -v a="$ir" -v b="$msgs" 'BEGIN { printf "%.0f", a / b }') |" \
                "$(awk -v a="$ir" -v b="$frames" 'BEGIN { printf "%.0f", a / b }') | $dec |"
        done
    done
    say ""
    say "(callgrind files: $OUT/callgrind.*.out; callgrind_annotate shows where the Ir go)"
    say ""
else
    say "## 3. Instructions per message: skipped (valgrind not installed or CALLGRIND=0)"
    say ""
fi

# ---------------------------------------------------------------- replay + fetch
start_server() { # corpus limit
    local log=$OUT/server.log
    : >"$log"
    "${PIN0[@]}" "$B/replay_server" --port "$PORT" --corpus "$1" --messages "$2" 2>"$log" &
    SERVER_PID=$!
    for _ in $(seq 1 200); do
        grep -q "listening on" "$log" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$log" >&2
    return 1
}

stop_server() {
    cleanup
    cat "$OUT/server.log" >>"$OUT/server.all.log"
}

# one_row label corpus msgs fetch-args...: REPS runs, one table row
one_row() {
    local label=$1 corpus=$2 msgs=$3
    shift 3
    local runs=$OUT/fetch.$label.runs
    : >"$runs"
    for r in $(seq 1 "$REPS"); do
        if ! start_server "$corpus" "$msgs"; then
            say "| $label | server failed to start | | | | | | | | | |"
            return
        fi
        local line
        line=$(timeout 120 "${PIN1[@]}" "$B/fetch" --url "pulsar://127.0.0.1:$PORT" --messages "$msgs" \
            --label "$label" --idle-ms 5000 "$@" 2>>"$OUT/fetch.err" | grep '^fetch:')
        stop_server
        local busy
        busy=$(grep '^replay-stats:' "$OUT/server.log" | kv busy_pct)
        echo "$line busy_pct=${busy:--}" >>"$runs"
        echo "run $r: $line" >>"$OUT/fetch.log"
    done
    local bad
    bad=$(grep -vc 'status=ok' "$runs")
    if [ "$bad" != 0 ]; then
        say "| $label | $(kv status <"$runs" | sort -u | tr '\n' ' ')($bad of $REPS runs failed) | | | | | | | | | |"
        return
    fi
    col() { kv "$1" <"$runs" | median; }
    local q a rb
    q=$(head -1 "$runs" | kv queue)
    a=$(head -1 "$runs" | kv ack)
    rb=$(head -1 "$runs" | kv batch)
    [ "${rb:-0}" = 0 ] && rb=one || rb="batch $rb"
    say "| $label | $rb | $q | $a | $msgs | $(col msgs_per_s) | $(kv msgs_per_s <"$runs" | minmax) | $(col MB_per_s) |" \
        "$(col cpu_s_per_M) | $(col user_s_per_M) | $(col sys_s_per_M) |" \
        "$(awk -v a="$(col nvcsw_per_M)" -v b="$(col nivcsw_per_M)" 'BEGIN { printf "%.0f", a + b }') |" \
        "$(col allocs_per_msg) | $(col busy_pct) |"
}

say "## 4. Replay server -> fetch (public API), medians of $REPS runs"
say ""
say "server on CPU 0, client on CPU 1 (PIN=$PIN); window = after subscribe .. N-th message destroyed."
say "receive: \"batch 1000\" = pulsarc_consumer_batch_receive up to 1000 at once (the fastest path),"
say "\"one\" = pulsarc_consumer_receive per message."
say ""
say "| run | receive | queue | ack | msgs | msg/s | msg/s min-max | MB/s | CPU s/M | user s/M | sys s/M | csw/M | allocs/msg | server busy % |"
say "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
one_row batch100x1000 batch100x1000 "$(n 20000000)" --batch 1000
one_row batch100x1000-one batch100x1000 "$(n 20000000)"
one_row batch100x1000-lz4 batch100x1000-lz4 "$(n 10000000)" --batch 1000
one_row batch100x1000-zlib batch100x1000-zlib "$(n 4000000)" --batch 1000
one_row batch100x1000-zstd batch100x1000-zstd "$(n 8000000)" --batch 1000
one_row batch100x1000-snappy batch100x1000-snappy "$(n 8000000)" --batch 1000
one_row single100 single100 "$(n 3000000)" --batch 1000
one_row single100-one single100 "$(n 3000000)"
one_row batch1kx100 batch1kx100 "$(n 3000000)" --batch 1000
one_row batch100x1000-ack batch100x1000 "$(n 2000000)" --ack
one_row batch100x1000-q1000 batch100x1000 "$(n 5000000)" --queue 1000
say ""
say "logs: $OUT (fetch.log, server.all.log, decode.log); table: $RESULTS"
