# shellcheck shell=bash
# Sourced by start.sh and restart.sh (after common.sh): the JVM options of
# every cluster process and launch(), which starts one role's JVM in the
# background with its PID file and log. Needs RUN_DIR/ROLE/ already filled
# in by start.sh (configs), so restart.sh relaunches with the same config.
java="$(java_bin)"
java_major="$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
[[ -n "$java_major" && "$java_major" -ge 17 ]] || die "Java 17+ is required (found: ${java_major:-none})"

common_jvm=(
    -XX:+ExitOnOutOfMemoryError
    -Djava.net.preferIPv4Stack=true
    -Dio.netty.tryReflectionSetAccessible=true
    -Dio.netty.recycler.maxCapacityPerThread=4096
    -Dpulsar.allocator.exit_on_oom=true
    -Djute.maxbuffer=10485760
    -Dzookeeper.4lw.commands.whitelist=ruok,srvr
    --add-opens java.base/java.io=ALL-UNNAMED
    --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/java.util.zip=ALL-UNNAMED
    --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/jdk.internal.misc=ALL-UNNAMED
    --add-opens java.base/sun.net=ALL-UNNAMED
    --add-opens java.management/sun.management=ALL-UNNAMED
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
    --add-opens java.base/jdk.internal.platform=ALL-UNNAMED
    "-Djava.io.tmpdir=$TMP_DIR"
    "-Dlog4j.configurationFile=$CLUSTER_DIR/log4j2.xml"
    -Dlog4j.shutdownHookEnabled=false
    "-Dpulsarc.log.dir=$LOG_DIR"
    # Marks the process as this work dir's (running_pid checks it).
    "-Dpulsarc.cluster.work=$WORK_DIR"
)
if (( java_major >= 24 )); then
    common_jvm+=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
fi
if [[ -n "${PULSARC_CLUSTER_JAVA_OPTS:-}" ]]; then
    read -r -a extra_opts <<< "$PULSARC_CLUSTER_JAVA_OPTS"
    common_jvm+=("${extra_opts[@]}")
fi
# Small heaps: six JVMs share a 2-core machine with other work.
heap() {
    case "$1" in
        zookeeper) echo -Xms64m -Xmx128m ;;
        bookie)    echo -Xms128m -Xmx256m -XX:MaxDirectMemorySize=256m ;;
        broker*)   echo -Xms128m -Xmx384m -XX:MaxDirectMemorySize=256m ;;
        proxy)     echo -Xms64m -Xmx192m -XX:MaxDirectMemorySize=128m ;;
        *)         echo -Xmx128m ;;
    esac
}
role_args() {
    case "$1" in
        zookeeper) echo "$RUN_DIR/zookeeper/zookeeper.conf" ;;
        bookie)    echo --conf "$RUN_DIR/bookie/bookie.conf" ;;
        broker*)   echo --broker-conf "$RUN_DIR/$1/broker.conf" ;;
        proxy)     echo --config "$RUN_DIR/proxy/proxy.conf" ;;
    esac
}

# launch ROLE: the role's JVM in the background, in a session of its own (a
# Ctrl-C at the caller's terminal does not reach it; stop.sh takes it down).
launch() {
    local role="$1" pid opts args
    read -r -a opts <<< "$(heap "$role")"
    read -r -a args <<< "$(role_args "$role")"
    (
        cd "$RUN_DIR/$role"
        exec setsid "$java" "${opts[@]}" "${common_jvm[@]}" "-Dpulsarc.log.name=$role" \
            -cp "$(cat "$CP_FILE")" "$(main_class "$role")" "${args[@]}" \
            </dev/null >>"$LOG_DIR/$role.out" 2>&1
    ) &
    pid=$!
    printf '%s\n' "$pid" > "$(pid_file "$role")"
    log "started $role: pid $pid (log: $LOG_DIR/$role.log)"
}
