# shellcheck shell=bash
# Shell helpers shared by the two JVM test harnesses, the standalone broker
# (test/broker) and the cluster (test/cluster). Sourced by their common.sh,
# not executed; each harness keeps its own settings, log prefix and PID
# bookkeeping.

java_bin() {
    if [[ -n "${JAVA_HOME:-}" ]]; then
        printf '%s\n' "$JAVA_HOME/bin/java"
    else
        printf '%s\n' java
    fi
}

# True if something accepts TCP connections on ${2:-127.0.0.1}:$1.
port_in_use() {
    timeout 2 bash -c "exec 3<>/dev/tcp/${2:-127.0.0.1}/$1" 2>/dev/null
}

# True if PID $1 is a live process (zombies, whose cmdline is empty, count as
# gone: start.sh's own child stays a zombie until start.sh exits).
alive() {
    local state
    state="$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || true)"
    [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

# True if every jar of the ':'-separated classpath in file $1 still exists
# (a cleaned Maven repository makes a written classpath stale).
classpath_jars_present() {
    local jar
    while IFS= read -r -d ':' jar; do
        [[ -f "$jar" ]] || return 1
    done < <(cat "$1"; printf ':')
}
