#!/usr/bin/env bash
# Stop the test cluster started by start.sh: proxy, brokers, bookie, then
# ZooKeeper (the reverse of the start order), each SIGTERM, a grace period
# (default 30 s), then SIGKILL. Safe to call when nothing runs; signals only
# PIDs whose command line is that role's JVM of this work dir.
#
# --kill: SIGKILL at once, every process.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

grace="${PULSARC_CLUSTER_STOP_TIMEOUT:-30}"
signal=TERM
for arg in "$@"; do
    case "$arg" in
        --kill) signal=KILL ;;
        *) die "unknown option: $arg (usage: stop.sh [--kill])" ;;
    esac
done

any_alive() {
    local pid
    for pid in "$@"; do alive "$pid" && return 0; done
    return 1
}

# stop_pids PID...: signal all, wait for all, SIGKILL what outlives the grace.
stop_pids() {
    local pid t0 left
    t0=$(date +%s)
    for pid in "$@"; do kill -"$signal" "$pid" 2>/dev/null || true; done
    while :; do
        left=()
        for pid in "$@"; do alive "$pid" && left+=("$pid"); done
        (( ${#left[@]} )) || break
        if (( $(date +%s) - t0 >= grace )); then
            log "still alive after ${grace}s: ${left[*]}; sending SIGKILL"
            for pid in "${left[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
            while any_alive "${left[@]}"; do sleep 0.1; done
            break
        fi
        sleep 0.2
    done
}

t0=$(date +%s)
stopped=0
# Front to back: the proxy, then the brokers together, then storage.
for group in "proxy" "broker1 broker2 broker3" "bookie" "zookeeper"; do
    pids=()
    for role in $group; do
        if pid="$(running_pid "$role")"; then
            pids+=("$pid")
            log "stopping $role pid $pid (SIG$signal)"
        fi
        rm -f "$(pid_file "$role")"
    done
    (( ${#pids[@]} )) || continue
    stop_pids "${pids[@]}"
    stopped=$(( stopped + ${#pids[@]} ))
done
if (( stopped == 0 )); then
    log "no cluster process running"
else
    log "stopped $stopped processes after $(( $(date +%s) - t0 ))s"
fi
