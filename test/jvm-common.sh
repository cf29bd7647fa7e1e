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

# Sets java (the binary) and java_major, or dies: Pulsar needs Java 17+.
require_java17() {
    java="$(java_bin)"
    java_major="$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
    [[ -n "$java_major" && "$java_major" -ge 17 ]] || die "Java 17+ is required (found: ${java_major:-none})"
}

# pulsar_jvm_opts LOG4J_XML LOG_DIR TMP_DIR EXTRA_OPTS: fills the array
# pulsar_jvm with the options every Pulsar JVM of both harnesses runs with:
# Netty's reflection and recycler settings, the module opens Pulsar needs on
# Java 17+ (and the native-access flags from 24 on), the log4j file, log and
# temp dirs, then EXTRA_OPTS (a space-separated string from the user).
# Call require_java17 first.
pulsar_jvm_opts() {
    pulsar_jvm=(
        -XX:+ExitOnOutOfMemoryError
        -Djava.net.preferIPv4Stack=true
        -Dio.netty.tryReflectionSetAccessible=true
        -Dio.netty.recycler.maxCapacityPerThread=4096
        -Dpulsar.allocator.exit_on_oom=true
        -Djute.maxbuffer=10485760
        --add-opens java.base/java.io=ALL-UNNAMED
        --add-opens java.base/java.lang=ALL-UNNAMED
        --add-opens java.base/java.util.zip=ALL-UNNAMED
        --add-opens java.base/java.nio=ALL-UNNAMED
        --add-opens java.base/jdk.internal.misc=ALL-UNNAMED
        --add-opens java.base/sun.net=ALL-UNNAMED
        --add-opens java.management/sun.management=ALL-UNNAMED
        --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
        --add-opens java.base/jdk.internal.platform=ALL-UNNAMED
        "-Djava.io.tmpdir=$3"
        "-Dlog4j.configurationFile=$1"
        -Dlog4j.shutdownHookEnabled=false
        "-Dpulsarc.log.dir=$2"
    )
    if (( java_major >= 24 )); then
        pulsar_jvm+=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
    fi
    if [[ -n "$4" ]]; then
        local extra
        read -r -a extra <<< "$4"
        pulsar_jvm+=("${extra[@]}")
    fi
}
