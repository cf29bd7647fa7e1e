# shellcheck shell=bash
# Sourced by start.sh and restart.sh (after common.sh): the JVM options of
# every cluster process and launch(), which starts one role's JVM in the
# background with its PID file and log. Needs RUN_DIR/ROLE/ already filled
# in by start.sh (configs), so restart.sh relaunches with the same config.
require_java17
pulsar_jvm_opts "$CLUSTER_DIR/log4j2.xml" "$LOG_DIR" "$TMP_DIR" "${PULSARC_CLUSTER_JAVA_OPTS:-}"
common_jvm=(
    "${pulsar_jvm[@]}"
    -Dzookeeper.4lw.commands.whitelist=ruok,srvr
    # Marks the process as this work dir's (running_pid checks it).
    "-Dpulsarc.cluster.work=$WORK_DIR"
)
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
