#!/usr/bin/env bash
# Start a fresh Apache Pulsar standalone broker (one JVM, loopback only) and
# wait until it is ready for the pulsarc tests.
#
# Policy for an existing broker: if a broker started by this script is still
# running (PID file + live JVM), it is stopped first and a fresh one with
# empty data is started. Anything else listening on the broker ports is an
# error: this script never touches processes it did not start.
#
# --keep-data (or PULSARC_BROKER_KEEP_DATA=1): restart on the data of the
# previous run instead: run/data (metadata, bookie journal and ledgers), the
# logs and the secrets are kept (secrets are generated only if missing), so
# clients and tests holding tokens or certificates keep working. For the
# broker stop/start tests (test_broker_churn).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

keep_data="${PULSARC_BROKER_KEEP_DATA:-0}"
for arg in "$@"; do
    case "$arg" in
        --keep-data) keep_data=1 ;;
        *) die "unknown option: $arg (usage: start.sh [--keep-data])" ;;
    esac
done

timeout_s="${PULSARC_BROKER_START_TIMEOUT:-180}"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "PULSARC_BROKER_START_TIMEOUT must be an integer"

command -v curl >/dev/null || die "curl not found"
"$BROKER_DIR/fetch.sh"

if running_pid >/dev/null; then
    log "a broker from a previous start.sh is running; stopping it first"
    "$BROKER_DIR/stop.sh"
fi
rm -f "$PID_FILE"

for hp in "$BROKER_PORT" "$WEB_PORT" "$BOOKIE_PORT" "$BROKER_PORT_TLS" "$WEB_PORT_TLS" \
          "$BROKER_PORT_TLS $WRONG_HOST"; do
    read -r port host <<< "$hp"
    # A JVM just killed can hold its sockets a moment longer than its main
    # thread lives (stop.sh sees a zombie leader while other threads exit).
    for _ in $(seq 1 75); do
        port_in_use "$port" "${host:-$BROKER_HOST}" || break
        sleep 0.2
    done
    if port_in_use "$port" "${host:-$BROKER_HOST}"; then
        ss -ltnp "sport = :$port" >&2 2>/dev/null || true
        die "port $port on ${host:-$BROKER_HOST} is already in use by another process (not started by start.sh)"
    fi
done

if [[ "$keep_data" == 1 ]]; then
    # Restart: same data, logs appended, same secrets (made only if missing).
    [[ -d "$DATA_DIR" ]] || log "--keep-data: no data in $DATA_DIR yet; starting empty"
    rm -rf "$TMP_DIR"
    mkdir -p "$DATA_DIR" "$LOG_DIR" "$TMP_DIR"
    if [[ ! -s "$SECRETS_DIR/secret.key" || ! -s "$SECRETS_DIR/ca.pem" ]]; then
        "$BROKER_DIR/gen-secrets.sh" "$SECRETS_DIR"
    fi
else
    # Fresh run directory: data, relative defaults and the merged config live here.
    rm -rf "$RUN_DIR" "$LOG_DIR" "$TMP_DIR"
    mkdir -p "$DATA_DIR" "$LOG_DIR" "$TMP_DIR"
    # Fresh TLS material and tokens on every start (0700 dir, 0600 files).
    "$BROKER_DIR/gen-secrets.sh" "$SECRETS_DIR"
fi

conf="$RUN_DIR/standalone.conf"
cat "$BROKER_DIR/standalone.conf" > "$conf"
{ printf '\n### --- security.conf (secrets in %s)\n' "$SECRETS_DIR"
  sed -e "s|@SECRETS@|$SECRETS_DIR|g" -e "s|@WRONG_HOST@|$WRONG_HOST|g" \
      -e "s|@BROKER_PORT_TLS@|$BROKER_PORT_TLS|g" "$BROKER_DIR/security.conf"; } >> "$conf"
if (( INSTANCE != 0 )); then
    printf '\n### --- instance %s ports\nbrokerServicePort=%s\nwebServicePort=%s\nbrokerServicePortTls=%s\nwebServicePortTls=%s\nbookiePort=%s\n' \
        "$INSTANCE" "$BROKER_PORT" "$WEB_PORT" "$BROKER_PORT_TLS" "$WEB_PORT_TLS" "$BOOKIE_PORT" >> "$conf"
fi
if [[ -n "${PULSARC_BROKER_CONF_EXTRA:-}" ]]; then
    IFS=':' read -r -a fragments <<< "$PULSARC_BROKER_CONF_EXTRA"
    for frag in "${fragments[@]}"; do
        [[ -n "$frag" ]] || continue
        [[ -f "$frag" ]] || die "config fragment not found: $frag"
        { printf '\n### --- fragment: %s\n' "$frag"; cat "$frag"; } >> "$conf"
    done
fi

require_java17
pulsar_jvm_opts "$BROKER_DIR/log4j2.xml" "$LOG_DIR" "$TMP_DIR" "${PULSARC_BROKER_JAVA_OPTS:-}"
jvm_opts=(-Xms512m -Xmx1g -XX:MaxDirectMemorySize=1g "${pulsar_jvm[@]}")

broker_args=(
    --config "$conf"
    --no-functions-worker
    --no-stream-storage
    --metadata-dir "$DATA_DIR/metadata"
    --bookkeeper-dir "$DATA_DIR/bookkeeper"
    --bookkeeper-port "$BOOKIE_PORT"
    --advertised-address localhost
)

t0=$(date +%s.%N)
# setsid: own session, so a Ctrl-C aimed at the caller's terminal does not
# reach the JVM; stop.sh is the only way it goes down. (setsid does not fork
# here because a background child of a script is not a group leader, so $!
# is the JVM's PID.)
(
    cd "$RUN_DIR"
    exec setsid "$java" "${jvm_opts[@]}" -cp "$(cat "$CP_FILE")" \
        "$MAIN_CLASS" "${broker_args[@]}" </dev/null >"$BROKER_OUT" 2>&1
) &
pid=$!
printf '%s\n' "$pid" > "$PID_FILE"
# Interrupted while waiting: take the half-started broker down with us.
trap '"$BROKER_DIR/stop.sh" || true; exit 130' INT
trap '"$BROKER_DIR/stop.sh" || true; exit 143' TERM
log "started Pulsar $PULSAR_VERSION, JVM pid $pid (log: $BROKER_LOG)"

# Gives up: the JVM's exit status if it is gone, then the end of both files
# (log4j's broker.log, and broker.out for what the JVM printed outside
# log4j, e.g. an exception thrown before the broker's own handler, as a bad
# config value is), then stops whatever is left. A JVM that died also gets
# broker.out copied to the end of broker.log, so the log alone tells why.
fail() {
    local status=0 f dead=0
    if ! alive "$pid"; then
        dead=1
        wait "$pid" 2>/dev/null || status=$?
        log "$1; JVM exit status $status"
    else
        log "$1"
    fi
    for f in "$BROKER_LOG" "$BROKER_OUT"; do
        [[ -s "$f" ]] || { log "---- $f is empty ----"; continue; }
        log "---- last 50 lines of $f ----"
        tail -n 50 "$f" >&2 || true
    done
    log "---- end (Pulsar $PULSAR_VERSION, classpath $CP_FILE) ----"
    if (( dead )) && [[ -s "$BROKER_OUT" ]]; then
        { printf '%s [start.sh] the JVM exited with status %s during start-up; its stdout/stderr (%s):\n' \
              "$(date -u +%Y-%m-%dT%H:%M:%S)" "$status" "$BROKER_OUT"
          cat "$BROKER_OUT"; } >> "$BROKER_LOG" 2>/dev/null || true
    fi
    "$BROKER_DIR/stop.sh" || true
    exit 1
}

http_code() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$ADMIN_URL$1" 2>/dev/null || true
}

deadline=$(( $(date +%s) + timeout_s ))
stage=clusters
while :; do
    alive "$pid" || fail "broker JVM exited during start-up (stage: $stage)"
    (( $(date +%s) < deadline )) || fail "broker not ready after ${timeout_s}s (stage: $stage)"
    advanced=0
    case "$stage" in
        clusters)
            if curl -fs --max-time 5 "$ADMIN_URL/admin/v2/clusters" 2>/dev/null | grep -q '"standalone"'; then
                stage=tc; advanced=1
            fi ;;
        tc)
            if [[ "$(http_code /admin/v2/persistent/pulsar/system/transaction_coordinator_assign/partitions)" == 200 ]]; then
                stage=namespace; advanced=1
            fi ;;
        namespace)
            if [[ "$(http_code /admin/v2/namespaces/public/default)" == 200 ]]; then
                break
            fi ;;
    esac
    (( advanced )) || sleep 0.5
done

# The bootstrap may answer before the binary ports accept connections.
for hp in "$BROKER_PORT" "$BROKER_PORT_TLS" "$WEB_PORT_TLS" "$BROKER_PORT_TLS $WRONG_HOST"; do
    read -r port host <<< "$hp"
    while ! port_in_use "$port" "${host:-$BROKER_HOST}"; do
        alive "$pid" || fail "broker JVM exited during start-up (stage: port ${host:-$BROKER_HOST}:$port)"
        (( $(date +%s) < deadline )) || fail "${host:-$BROKER_HOST}:$port not listening after ${timeout_s}s"
        sleep 0.2
    done
done

trap - INT TERM
t1=$(date +%s.%N)
elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
rss_kb="$(ps -o rss= -p "$pid" 2>/dev/null | tr -d ' ' || true)"
log "ready in ${elapsed}s: $SERVICE_URL  $ADMIN_URL  $SERVICE_URL_TLS  $ADMIN_URL_TLS  (pid $pid, RSS $(( ${rss_kb:-0} / 1024 )) MiB)"
