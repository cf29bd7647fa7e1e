# shellcheck shell=bash
# Variables below are used by the scripts that source this file.
# shellcheck disable=SC2034
# Shared settings for the pulsarc test-broker scripts. Sourced, not executed.
#
# Environment knobs (all optional):
#   PULSARC_BROKER_WORK            work dir (default: test/broker/.work)
#   PULSARC_BROKER_START_TIMEOUT   seconds start.sh waits for readiness (180)
#   PULSARC_BROKER_STOP_TIMEOUT    seconds stop.sh waits after SIGTERM (30)
#   PULSARC_BROKER_CONF_EXTRA      ':'-separated conf fragments appended to
#                                  standalone.conf (later keys win)
#   PULSARC_BROKER_JAVA_OPTS       extra JVM options (word-split)
#   PULSAR_VERSION                 Pulsar release to run (default: pom.xml's
#                                  pulsar.version)
#   JAVA_HOME                      java to use (default: java on PATH)

BROKER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Several brokers can run side by side: instance N (0-9) shifts every port
# by 10*N and uses its own work dir. Instance 0 is the default layout.
INSTANCE="${PULSARC_BROKER_INSTANCE:-0}"
if [[ ! "$INSTANCE" =~ ^[0-9]$ ]]; then
    printf '[broker] ERROR: PULSARC_BROKER_INSTANCE must be 0-9, not %s\n' "$INSTANCE" >&2
    exit 1
fi
PORT_OFFSET=$((INSTANCE * 10))
if (( INSTANCE == 0 )); then
    WORK_DIR="${PULSARC_BROKER_WORK:-$BROKER_DIR/.work}"
else
    WORK_DIR="${PULSARC_BROKER_WORK:-$BROKER_DIR/.work-$INSTANCE}"
fi
# Which Pulsar release runs: $PULSAR_VERSION, else pom.xml's default. The
# default's classpath lives in the work dir itself (where other tools look
# for it); any other release gets a Maven dir of its own, pulsar-<version>/,
# so switching versions never clobbers the default classpath and each
# version is resolved once.
PULSAR_DEFAULT_VERSION="$(sed -n 's:.*<pulsar.version>\([^<]*\)</pulsar.version>.*:\1:p' \
    "$BROKER_DIR/pom.xml" | head -n 1)"
PULSAR_VERSION="${PULSAR_VERSION:-$PULSAR_DEFAULT_VERSION}"
if [[ ! "$PULSAR_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9.-]*$ ]]; then
    printf '[broker] ERROR: PULSAR_VERSION must be a release like 4.0.7, not %s\n' "$PULSAR_VERSION" >&2
    exit 1
fi
if [[ "$PULSAR_VERSION" == "$PULSAR_DEFAULT_VERSION" ]]; then
    MVN_DIR="$WORK_DIR"
else
    MVN_DIR="$WORK_DIR/pulsar-$PULSAR_VERSION"
fi
CP_FILE="$MVN_DIR/classpath.txt"
# The release CP_FILE was resolved for: fetch.sh re-resolves on a mismatch.
CP_VERSION_FILE="$MVN_DIR/classpath.version"
MVN_LOG="$MVN_DIR/mvn.log"
PID_FILE="$WORK_DIR/broker.pid"
RUN_DIR="$WORK_DIR/run"
DATA_DIR="$RUN_DIR/data"
LOG_DIR="$WORK_DIR/logs"
TMP_DIR="$WORK_DIR/tmp"
BROKER_LOG="$LOG_DIR/broker.log"
BROKER_OUT="$LOG_DIR/broker.out"

SECRETS_DIR="$WORK_DIR/secrets"

BROKER_HOST=127.0.0.1
BROKER_PORT=$((6650 + PORT_OFFSET))
WEB_PORT=$((8080 + PORT_OFFSET))
BOOKIE_PORT=$((3181 + PORT_OFFSET))
BROKER_PORT_TLS=$((6651 + PORT_OFFSET))
WEB_PORT_TLS=$((8443 + PORT_OFFSET))
# A second address of the same TLS listener that the broker certificate
# does not name (it names localhost and 127.0.0.1): the wrong-host tests.
WRONG_HOST=127.0.0.2
ADMIN_URL="http://$BROKER_HOST:$WEB_PORT"
SERVICE_URL="pulsar://$BROKER_HOST:$BROKER_PORT"
ADMIN_URL_TLS="https://localhost:$WEB_PORT_TLS"
SERVICE_URL_TLS="pulsar+ssl://localhost:$BROKER_PORT_TLS"

MAIN_CLASS=org.apache.pulsar.PulsarStandaloneStarter

log() { printf '[broker] %s\n' "$*" >&2; }
die() { printf '[broker] ERROR: %s\n' "$*" >&2; exit 1; }

# java_bin, port_in_use, alive, classpath_jars_present.
# shellcheck source=../jvm-common.sh
source "$BROKER_DIR/../jvm-common.sh"

# Prints the PID from the PID file if that process is our broker JVM.
running_pid() {
    local pid
    [[ -f "$PID_FILE" ]] || return 1
    pid="$(cat "$PID_FILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    # Guard against a recycled PID: the process must be our broker.
    tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$MAIN_CLASS" || return 1
    printf '%s\n' "$pid"
}
