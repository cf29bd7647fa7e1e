#!/usr/bin/env bash
# Start a fresh pulsarc test cluster on loopback and wait until it is ready:
# ZooKeeper, the cluster metadata (PulsarClusterMetadataSetup), one bookie,
# three brokers and one pulsar-proxy (plain and TLS), each a JVM of its own.
#
# Ready means: every broker answers /admin/v2/brokers/ready, the cluster
# lists all three, the transaction coordinators and public/default exist,
# and a binary lookup through the proxy is answered. Prints the time to
# ready, the RSS of each process and which broker owns a sample of topics.
#
# Like test/broker/start.sh: a cluster left by an earlier start.sh (same work
# dir) is stopped first; any other process on one of the ports is an error.
# On failure or interruption everything started here is stopped.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

(( $# == 0 )) || die "usage: start.sh (no options)"
timeout_s="${PULSARC_CLUSTER_START_TIMEOUT:-300}"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "PULSARC_CLUSTER_START_TIMEOUT must be an integer"
command -v curl >/dev/null || die "curl not found"
"$CLUSTER_DIR/fetch.sh"

for role in "${ROLES[@]}"; do
    if running_pid "$role" >/dev/null; then
        log "a cluster from a previous start.sh is running; stopping it first"
        "$CLUSTER_DIR/stop.sh"
        break
    fi
done

while read -r port; do
    for _ in $(seq 1 75); do port_in_use "$port" || break; sleep 0.2; done
    if port_in_use "$port"; then
        ss -ltnp "sport = :$port" >&2 2>/dev/null || true
        die "port $port on $HOST is already in use by another process (not started by start.sh)"
    fi
done < <(all_ports)
port_in_use "$(broker_port_tls 1)" "$WRONG_HOST" && die "port $(broker_port_tls 1) on $WRONG_HOST is already in use"

rm -rf "$RUN_DIR" "$LOG_DIR" "$TMP_DIR" "$WORK_DIR"/*.pid
mkdir -p "$RUN_DIR" "$LOG_DIR" "$TMP_DIR"
# The standalone harness's TLS material and tokens, generated afresh here,
# plus the proxy's own token (the role the brokers know as proxyRoles).
PULSARC_BROKER_INSTANCE=0 PULSARC_BROKER_WORK="$WORK_DIR" \
    "$BROKER_SCRIPTS/gen-secrets.sh" "$SECRETS_DIR"
(umask 077; bash "$BROKER_SCRIPTS/mint-token.sh" "$SECRETS_DIR/secret.key" proxy > "$SECRETS_DIR/proxy.jwt")

broker_ports_csv=""
for b in "${BROKERS[@]}"; do
    broker_ports_csv+="${broker_ports_csv:+,}$(broker_port "$b"),$(broker_port_tls "$b")"
done

# fill TEMPLATE [KEY=VALUE...]: the template with @KEY@ replaced.
fill() {
    local file="$1" kv args=()
    shift
    for kv in "$@"; do args+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
    sed "${args[@]}" "$file"
}
common_keys=(CLUSTER="$CLUSTER_NAME" ZK_URL="$ZK_URL" ZK="$HOST:$ZK_PORT" ADVERTISED="$ADVERTISED"
             SECRETS="$SECRETS_DIR" BROKER_PORTS="$broker_ports_csv")
mkdir -p "$RUN_DIR/zookeeper" "$RUN_DIR/bookie"
fill "$CLUSTER_DIR/zookeeper.conf" DATA="$RUN_DIR/zookeeper/data" ZK_PORT="$ZK_PORT" > "$RUN_DIR/zookeeper/zookeeper.conf"
fill "$CLUSTER_DIR/bookie.conf" "${common_keys[@]}" BOOKIE_PORT="$BOOKIE_PORT" DATA="$RUN_DIR/bookie/data" \
    > "$RUN_DIR/bookie/bookie.conf"
for b in "${BROKERS[@]}"; do
    mkdir -p "$RUN_DIR/broker$b"
    keys=("${common_keys[@]}" BROKER_PORT="$(broker_port "$b")" WEB_PORT="$(broker_web "$b")"
          BROKER_PORT_TLS="$(broker_port_tls "$b")" WEB_PORT_TLS="$(broker_web_tls "$b")")
    { fill "$CLUSTER_DIR/broker.conf" "${keys[@]}"
      printf '\n### --- security.conf\n'
      fill "$CLUSTER_DIR/security.conf" "${keys[@]}"
      if (( b == 1 )); then
          # The standalone's wrong-host listener, on broker 1 only: its TLS
          # port again at an address the certificate does not name.
          printf 'bindAddresses=internal:pulsar+ssl://%s:%s\n' "$WRONG_HOST" "$(broker_port_tls 1)"
      fi; } > "$RUN_DIR/broker$b/broker.conf"
done
mkdir -p "$RUN_DIR/proxy"
fill "$CLUSTER_DIR/proxy.conf" "${common_keys[@]}" PROXY_PORT="$PROXY_PORT" PROXY_PORT_TLS="$PROXY_PORT_TLS" \
    PROXY_WEB="$PROXY_WEB" PROXY_WEB_TLS="$PROXY_WEB_TLS" > "$RUN_DIR/proxy/proxy.conf"

# java, common_jvm, heap, role_args, launch.
# shellcheck source-path=SCRIPTDIR source=launch.sh
source "$CLUSTER_DIR/launch.sh"

trap '"$CLUSTER_DIR/stop.sh" || true; exit 130' INT
trap '"$CLUSTER_DIR/stop.sh" || true; exit 143' TERM
fail() {
    local role
    log "$1"
    for role in "${ROLES[@]}"; do
        [[ -s "$LOG_DIR/$role.log" || -s "$LOG_DIR/$role.out" ]] || continue
        log "---- last 15 lines of $role.log / $role.out ----"
        tail -n 15 "$LOG_DIR/$role.log" 2>/dev/null | cut -c 1-300 >&2 || true
        tail -n 5 "$LOG_DIR/$role.out" 2>/dev/null | cut -c 1-300 >&2 || true
    done
    "$CLUSTER_DIR/stop.sh" || true
    exit 1
}

t0=$(date +%s.%N)
deadline=$(( $(date +%s) + timeout_s ))
# wait_for DESCRIPTION ROLE COMMAND...: until COMMAND succeeds, ROLE's JVM
# stays alive and the deadline holds.
wait_for() {
    local what="$1" role="$2" pid
    shift 2
    pid="$(cat "$(pid_file "$role")")"
    until "$@" >/dev/null 2>&1; do
        alive "$pid" || fail "$role exited during start-up (waiting for: $what)"
        (( $(date +%s) < deadline )) || fail "not ready after ${timeout_s}s (waiting for: $what)"
        sleep 0.5
    done
}
zk_ok() { [[ "$(timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$ZK_PORT; printf ruok >&3; cat <&3")" == imok ]]; }
http_ok() { curl -fs --max-time 5 -o /dev/null "$1"; }
brokers_listed() {
    [[ "$(curl -fs --max-time 5 "$BROKER1_ADMIN/admin/v2/brokers/$CLUSTER_NAME" | tr ',' '\n' | grep -c :)" == "${#BROKERS[@]}" ]]
}

launch zookeeper
wait_for "ZooKeeper on $ZK_PORT" zookeeper zk_ok

log "initialising the cluster metadata ($CLUSTER_NAME)"
if ! timeout 120 "$java" -Xmx128m "${common_jvm[@]}" -Dpulsarc.log.name=setup -cp "$(cat "$CP_FILE")" \
        "$(main_class setup)" --cluster "$CLUSTER_NAME" \
        --metadata-store "$ZK_URL" --configuration-metadata-store "$ZK_URL" \
        --web-service-url "$BROKER1_ADMIN" --web-service-url-tls "https://localhost:$(broker_web_tls 1)" \
        --broker-service-url "$BROKER1_URL" --broker-service-url-tls "pulsar+ssl://localhost:$(broker_port_tls 1)" \
        --default-namespace-bundle-number 16 --initial-num-transaction-coordinators 3 \
        </dev/null >"$LOG_DIR/setup.out" 2>&1; then
    fail "PulsarClusterMetadataSetup failed (see $LOG_DIR/setup.log, setup.out)"
fi

launch bookie
wait_for "bookie on $BOOKIE_PORT" bookie port_in_use "$BOOKIE_PORT"

for b in "${BROKERS[@]}"; do launch "broker$b"; done
for b in "${BROKERS[@]}"; do
    wait_for "broker$b ready" "broker$b" http_ok "http://$HOST:$(broker_web "$b")/admin/v2/brokers/ready"
done
wait_for "all brokers listed in $CLUSTER_NAME" broker1 brokers_listed
wait_for "transaction coordinators" broker1 \
    http_ok "$BROKER1_ADMIN/admin/v2/persistent/pulsar/system/transaction_coordinator_assign/partitions"
wait_for "public/default" broker1 http_ok "$BROKER1_ADMIN/admin/v2/namespaces/public/default"
for b in "${BROKERS[@]}"; do
    wait_for "broker$b TLS ports" "broker$b" port_in_use "$(broker_port_tls "$b")"
    wait_for "broker$b HTTPS port" "broker$b" port_in_use "$(broker_web_tls "$b")"
done
wait_for "broker1 TLS on $WRONG_HOST" broker1 port_in_use "$(broker_port_tls 1)" "$WRONG_HOST"

launch proxy
for port in "$PROXY_PORT" "$PROXY_PORT_TLS" "$PROXY_WEB" "$PROXY_WEB_TLS"; do
    wait_for "proxy port $port" proxy port_in_use "$port"
done
probe_topic="persistent://public/default/cluster-ready-probe"
proxy_lookup() {
    "$java" -Xmx128m -cp "$(cat "$CP_FILE")" "-Dlog4j.configurationFile=$CLUSTER_DIR/log4j2.xml" \
        "-Dpulsarc.log.dir=$LOG_DIR" -Dpulsarc.log.name=probe \
        "$CLUSTER_DIR/ProxyLookup.java" "$PROXY_URL" "$probe_topic" > "$LOG_DIR/probe.out" 2>&1
}
wait_for "a lookup through the proxy" proxy proxy_lookup
trap - INT TERM
t1=$(date +%s.%N)

elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
log "ready in ${elapsed}s: proxy $PROXY_URL $PROXY_URL_TLS $PROXY_ADMIN; brokers:"
for b in "${BROKERS[@]}"; do
    log "  broker$b pulsar://$ADVERTISED:$(broker_port "$b") pulsar+ssl://localhost:$(broker_port_tls "$b") http://$HOST:$(broker_web "$b") https://localhost:$(broker_web_tls "$b")"
done
log "proxy probe: $(tail -n 1 "$LOG_DIR/probe.out")"
total=0
for role in "${ROLES[@]}"; do
    pid="$(running_pid "$role")" || fail "$role is gone"
    rss_kb="$(ps -o rss= -p "$pid" | tr -d ' ')"
    total=$(( total + rss_kb ))
    log "  RSS $role (pid $pid): $(( rss_kb / 1024 )) MiB"
done
log "  RSS total: $(( total / 1024 )) MiB"
"$CLUSTER_DIR/owners.sh" sample || true
