#!/usr/bin/env bash
# Stop the broker started by start.sh: SIGTERM, wait (default 30 s), then
# SIGKILL. Removes the PID file. Safe to call when nothing is running; never
# signals a process that is not our broker JVM.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

grace="${PULSARC_BROKER_STOP_TIMEOUT:-30}"

if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "no broker running"
    exit 0
fi

log "stopping broker pid $pid (SIGTERM)"
t0=$(date +%s)
kill -TERM "$pid" 2>/dev/null || true
while alive "$pid" && (( $(date +%s) - t0 < grace )); do
    sleep 0.2
done
if alive "$pid"; then
    log "still alive after ${grace}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.1; done
fi
rm -f "$PID_FILE"
log "stopped after $(( $(date +%s) - t0 ))s"
