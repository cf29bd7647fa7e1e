# bench/common.sh — what the comparison scripts share; sourced, never run.
#
#   kv KEY          the value of KEY=... in the key=value line on stdin
#   median, minmax  over numbers on stdin, one per line
#   java_setup NAME compiles bench/java/NAME.java against the test broker's
#                   classpath (the broker jar depends on the Java client, so
#                   nothing more is fetched) into $B/java when it is newer;
#                   sets HAVE_JAVA (0/1), JAVA_CP and JVER (the client jar)
#   broker_pid, proc_cpu_ticks PID   the live test broker's PID, and a
#                   process's CPU so far in clock ticks (both from /proc)
#   start_sink LOG [PIN...]  starts $B/replay_server on $PORT, output to LOG,
#                   and waits until it listens; stop_sink stops it
# Callers set B (the bench build dir) and OUT, and PORT for start_sink.

kv() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi; else print "-" }'; }

java_setup() {
    local name=$1 cp_file
    HAVE_JAVA=0 JAVA_CP= JVER=none
    cp_file=$(ls test/broker/.work*/classpath.txt 2>/dev/null | head -1 || true)
    if [ -z "$cp_file" ] && command -v javac >/dev/null; then
        bash test/broker/fetch.sh >"$OUT/java-fetch.log" 2>&1 || true
        cp_file=$(ls test/broker/.work*/classpath.txt 2>/dev/null | head -1 || true)
    fi
    if command -v javac >/dev/null && [ -n "$cp_file" ]; then
        mkdir -p "$B/java"
        if [ ! -f "$B/java/$name.class" ] || [ "bench/java/$name.java" -nt "$B/java/$name.class" ]; then
            javac -d "$B/java" -cp "$(cat "$cp_file")" "bench/java/$name.java" >"$OUT/javac-$name.log" 2>&1 || true
        fi
        if [ -f "$B/java/$name.class" ]; then
            HAVE_JAVA=1
            JAVA_CP="$B/java:$(cat "$cp_file")"
            JVER=$(basename "$(tr ':' '\n' <"$cp_file" | grep -m1 'pulsar-client-original')" .jar)
        fi
    fi
    [ $HAVE_JAVA = 1 ] || echo "java client unavailable (javac or the broker classpath missing); its rows are skipped"
}

# broker_pid: the PID of the test broker this shell's PULSARC_BROKER_INSTANCE
# names (BROKER_PID overrides), or nothing when it is not found.
broker_pid() {
    local inst=${PULSARC_BROKER_INSTANCE:-0} f pid
    f=test/broker/.work$([ "$inst" = 0 ] || echo "-$inst")/broker.pid
    pid=${BROKER_PID:-$(cat "$f" 2>/dev/null || true)}
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && echo "$pid"
    return 0
}
# proc_cpu_ticks PID: user + system clock ticks the process has used so far.
proc_cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

SINK_PID=
start_sink() {
    local log=$1
    shift
    "$@" "$B/replay_server" --port "$PORT" 2>"$log" &
    SINK_PID=$!
    for _ in $(seq 1 100); do grep -q "listening on" "$log" && return 0; sleep 0.1; done
    cat "$log" >&2
    return 1
}
stop_sink() {
    if [ -n "$SINK_PID" ] && kill -0 "$SINK_PID" 2>/dev/null; then
        kill -TERM "$SINK_PID" 2>/dev/null || true
        wait "$SINK_PID" 2>/dev/null || true
    fi
    SINK_PID=
}
