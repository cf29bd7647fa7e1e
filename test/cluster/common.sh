# shellcheck shell=bash
# Variables below are used by the scripts that source this file.
# shellcheck disable=SC2034
# Shared settings for the pulsarc test-cluster scripts. Sourced, not executed.
#
# The cluster: one ZooKeeper (metadata and configuration store), one bookie,
# three brokers and one pulsar-proxy, each its own JVM on loopback, each with
# its own ports, config, PID file and log.
#
# Environment knobs (all optional):
#   PULSARC_CLUSTER_INSTANCE       0-9: shifts every port by 100*N and uses
#                                  its own work dir (like PULSARC_BROKER_INSTANCE)
#   PULSARC_CLUSTER_WORK           work dir (default: test/cluster/.work)
#   PULSARC_CLUSTER_START_TIMEOUT  seconds start.sh waits for readiness (300)
#   PULSARC_CLUSTER_STOP_TIMEOUT   seconds stop.sh waits per process after SIGTERM (30)
#   PULSARC_CLUSTER_JAVA_OPTS      extra JVM options for every process (word-split)
#   JAVA_HOME                      java to use (default: java on PATH)

CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BROKER_SCRIPTS="$(cd "$CLUSTER_DIR/../broker" && pwd)"
INSTANCE="${PULSARC_CLUSTER_INSTANCE:-0}"
if [[ ! "$INSTANCE" =~ ^[0-9]$ ]]; then
    printf '[cluster] ERROR: PULSARC_CLUSTER_INSTANCE must be 0-9, not %s\n' "$INSTANCE" >&2
    exit 1
fi
if (( INSTANCE == 0 )); then
    WORK_DIR="${PULSARC_CLUSTER_WORK:-$CLUSTER_DIR/.work}"
else
    WORK_DIR="${PULSARC_CLUSTER_WORK:-$CLUSTER_DIR/.work-$INSTANCE}"
fi
CP_FILE="$WORK_DIR/classpath.txt"
RUN_DIR="$WORK_DIR/run"
LOG_DIR="$WORK_DIR/logs"
TMP_DIR="$WORK_DIR/tmp"
SECRETS_DIR="$WORK_DIR/secrets"

CLUSTER_NAME=pulsarc-cluster
HOST=127.0.0.1
# Brokers advertise "localhost", as the standalone does: the test
# certificate names it, and lookups answer pulsar://localhost:PORT.
ADVERTISED=localhost
# Broker 1's TLS listener again at an address its certificate does not name
# (the TLS suite's wrong-host checks), as on the standalone.
WRONG_HOST=127.0.0.2

# Ports. Binary listeners in 7000-7099, HTTP in 9000-9099, each shifted by
# 100*N: clear of the standalone instances (6650.., 8080.., 3181.., 8443..)
# and of ZooKeeper's usual 2181.
BIN_BASE=$((7000 + INSTANCE * 100))
WEB_BASE=$((9000 + INSTANCE * 100))
ZK_PORT=$((BIN_BASE + 81))
BOOKIE_PORT=$((BIN_BASE + 82))
BROKERS=(1 2 3)
broker_port()     { echo $((BIN_BASE + 10 * $1)); }
broker_port_tls() { echo $((BIN_BASE + 10 * $1 + 1)); }
broker_web()      { echo $((WEB_BASE + 10 * $1)); }
broker_web_tls()  { echo $((WEB_BASE + 10 * $1 + 1)); }
PROXY_PORT=$((BIN_BASE + 40))
PROXY_PORT_TLS=$((BIN_BASE + 41))
PROXY_WEB=$((WEB_BASE + 40))
PROXY_WEB_TLS=$((WEB_BASE + 41))

ZK_URL="zk:$HOST:$ZK_PORT"
BROKER1_URL="pulsar://$ADVERTISED:$(broker_port 1)"
BROKER1_ADMIN="http://$HOST:$(broker_web 1)"
PROXY_URL="pulsar://$HOST:$PROXY_PORT"
PROXY_URL_TLS="pulsar+ssl://localhost:$PROXY_PORT_TLS"
PROXY_ADMIN="http://$HOST:$PROXY_WEB"

# Process roles, in start order; stop goes the other way.
ROLES=(zookeeper bookie broker1 broker2 broker3 proxy)
main_class() {
    case "$1" in
        zookeeper) echo org.apache.zookeeper.server.quorum.QuorumPeerMain ;;
        bookie)    echo org.apache.bookkeeper.server.Main ;;
        broker*)   echo org.apache.pulsar.PulsarBrokerStarter ;;
        proxy)     echo org.apache.pulsar.proxy.server.ProxyServiceStarter ;;
        setup)     echo org.apache.pulsar.PulsarClusterMetadataSetup ;;
    esac
}
pid_file() { echo "$WORK_DIR/$1.pid"; }

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { printf '[cluster] ERROR: %s\n' "$*" >&2; exit 1; }

# java_bin, port_in_use, alive, classpath_jars_present.
# shellcheck source=../jvm-common.sh
source "$CLUSTER_DIR/../jvm-common.sh"

# Prints the PID of role $1 if its PID file names a live JVM of that role
# (and of this work dir: a recycled PID or another instance never matches).
running_pid() {
    local pid file cmdline
    file="$(pid_file "$1")"
    [[ -f "$file" ]] || return 1
    pid="$(cat "$file" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    # Read whole first: with pipefail, `tr | grep -q` fails when grep stops
    # reading early and tr dies of SIGPIPE (the classpath makes it long).
    cmdline="$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null || true)"
    grep -qx "$(main_class "$1")" <<< "$cmdline" || return 1
    grep -qx -- "-Dpulsarc.cluster.work=$WORK_DIR" <<< "$cmdline" || return 1
    printf '%s\n' "$pid"
}

# Every port the cluster binds, as "port host" lines.
all_ports() {
    local b
    echo "$ZK_PORT"; echo "$BOOKIE_PORT"
    for b in "${BROKERS[@]}"; do
        broker_port "$b"; broker_port_tls "$b"; broker_web "$b"; broker_web_tls "$b"
    done
    echo "$PROXY_PORT"; echo "$PROXY_PORT_TLS"; echo "$PROXY_WEB"; echo "$PROXY_WEB_TLS"
}
