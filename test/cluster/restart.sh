#!/usr/bin/env bash
# Usage: restart.sh ROLE [--kill] [--down | --up]   (ROLE: broker1..3 or proxy)
#
# Stops one process of the running test cluster and starts it again with
# the configuration start.sh wrote, then waits until it is ready: a broker
# answers /admin/v2/brokers/ready and listens on its binary ports, the
# proxy listens on all its ports. --kill stops it with SIGKILL (a crash:
# no unload, its ZooKeeper session expires on its own), otherwise SIGTERM
# with the usual grace. --down only stops it, --up only starts a stopped
# one (so a test can let the others take over a killed broker's topics
# before it returns). Prints how long the process was down and how long
# until ready. Used by the tests that move topic ownership or restart the
# proxy under load.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage="usage: restart.sh broker1|broker2|broker3|proxy [--kill] [--down | --up]"
(( $# >= 1 )) || die "$usage"
role="$1"
shift
signal=TERM do_stop=1 do_start=1
for arg in "$@"; do
    case "$arg" in
        --kill) signal=KILL ;;
        --down) do_start=0 ;;
        --up) do_stop=0 ;;
        *) die "unknown option: $arg ($usage)" ;;
    esac
done
(( do_stop || do_start )) || die "--down and --up together do nothing ($usage)"
case "$role" in
    broker[1-3]) b="${role#broker}"; ports=("$(broker_port "$b")" "$(broker_port_tls "$b")" "$(broker_web "$b")" "$(broker_web_tls "$b")") ;;
    proxy) ports=("$PROXY_PORT" "$PROXY_PORT_TLS" "$PROXY_WEB" "$PROXY_WEB_TLS") ;;
    *) die "restart.sh restarts broker1..3 or proxy, not $role" ;;
esac
timeout_s="${PULSARC_CLUSTER_START_TIMEOUT:-300}"
grace="${PULSARC_CLUSTER_STOP_TIMEOUT:-30}"

if (( do_stop )); then
    pid="$(running_pid "$role")" || die "$role is not running (start.sh first)"
elif running_pid "$role" >/dev/null; then
    die "$role is already running"
fi
# java, common_jvm, heap, role_args, launch.
# shellcheck source-path=SCRIPTDIR source=launch.sh
source "$CLUSTER_DIR/launch.sh"

t0=$(date +%s.%N)
if (( do_stop )); then
    log "restart $role: SIG$signal to pid $pid"
    kill -"$signal" "$pid"
    deadline=$(( $(date +%s) + grace ))
    while alive "$pid"; do
        if (( $(date +%s) >= deadline )); then kill -KILL "$pid" 2>/dev/null || true; fi
        sleep 0.1
    done
    for port in "${ports[@]}"; do
        until ! port_in_use "$port"; do sleep 0.2; done
    done
    rm -f "$(pid_file "$role")"
fi
t_down=$(date +%s.%N)
if (( ! do_start )); then
    log "$(awk -v a="$t0" -v d="$t_down" -v r="$role" 'BEGIN { printf "%s down after %.1fs", r, d - a }')"
    exit 0
fi

launch "$role"
newpid="$(cat "$(pid_file "$role")")"
deadline=$(( $(date +%s) + timeout_s ))
ready() {
    local port
    for port in "${ports[@]}"; do port_in_use "$port" || return 1; done
    if [[ "$role" == broker* ]]; then
        curl -fs --max-time 5 -o /dev/null "http://$HOST:$(broker_web "$b")/admin/v2/brokers/ready" || return 1
    fi
}
until ready; do
    alive "$newpid" || { tail -n 30 "$LOG_DIR/$role.log" "$LOG_DIR/$role.out" >&2 || true; die "$role exited while restarting"; }
    (( $(date +%s) < deadline )) || die "$role not ready ${timeout_s}s after its restart"
    sleep 0.5
done
t1=$(date +%s.%N)
log "$(awk -v a="$t0" -v d="$t_down" -v b="$t1" -v r="$role" -v p="$newpid" \
    'BEGIN { printf "%s restarted (pid %s): down after %.1fs, ready %.1fs after the signal", r, p, d - a, b - a }')"
