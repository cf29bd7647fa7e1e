#!/usr/bin/env bash
# Stop the broker started by start.sh: SIGTERM, wait (default 30 s), then
# SIGKILL. Removes the PID file. Safe to call when nothing is running; never
# signals a process that is not our broker JVM.
#
# --kill (or PULSARC_BROKER_STOP_SIGNAL=KILL): SIGKILL at once, a crash with
# no orderly shutdown (for the broker stop/start tests).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

grace="${PULSARC_BROKER_STOP_TIMEOUT:-30}"
signal="${PULSARC_BROKER_STOP_SIGNAL:-TERM}"
for arg in "$@"; do
    case "$arg" in
        --kill) signal=KILL ;;
        *) die "unknown option: $arg (usage: stop.sh [--kill])" ;;
    esac
done
[[ "$signal" == TERM || "$signal" == KILL ]] || die "PULSARC_BROKER_STOP_SIGNAL must be TERM or KILL"

if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "no broker running"
    exit 0
fi

log "stopping broker pid $pid (SIG$signal)"
t0=$(date +%s)
kill -"$signal" "$pid" 2>/dev/null || true
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
