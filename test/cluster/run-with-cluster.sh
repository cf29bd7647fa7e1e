#!/usr/bin/env bash
# Usage: run-with-cluster.sh CMD [ARGS...]
#
# Starts a fresh test cluster (start.sh), exports where everything is, runs
# CMD and always stops the cluster afterwards (also on failure or Ctrl-C).
# Exits with CMD's status.
#
# Exported for CMD: the cluster's own variables (PULSARC_CLUSTER_*, below),
# and the standalone harness's variables (PULSAR_SERVICE_URL, ...) set to
# broker 1, so a live suite run unchanged talks to the cluster through broker
# 1 and follows redirects to brokers 2 and 3. `via.sh proxy CMD` re-points
# them at the pulsar-proxy.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$here/common.sh"

(( $# > 0 )) || die "usage: $0 CMD [ARGS...]"

# One cluster per instance at a time: concurrent runs wait for each other.
exec 9>"${TMPDIR:-/tmp}/pulsarc-test-cluster-$INSTANCE.lock"
flock -w 1800 9 || die "another run-with-cluster.sh held the cluster for 30 minutes"

# shellcheck disable=SC2317  # invoked via trap
cleanup() { "$here/stop.sh" || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$here/start.sh"

brokers_plain="" brokers_admin=""
for b in "${BROKERS[@]}"; do
    brokers_plain+="${brokers_plain:+,}pulsar://$ADVERTISED:$(broker_port "$b")"
    brokers_admin+="${brokers_admin:+,}http://$HOST:$(broker_web "$b")"
done
export PULSARC_CLUSTER_NAME="$CLUSTER_NAME"
export PULSARC_CLUSTER_BROKER_URLS="$brokers_plain"
export PULSARC_CLUSTER_BROKER_ADMIN_URLS="$brokers_admin"
export PULSARC_CLUSTER_BROKER_URL="$BROKER1_URL"
export PULSARC_CLUSTER_BROKER_ADMIN_URL="$BROKER1_ADMIN"
export PULSARC_CLUSTER_BROKER_URL_TLS="pulsar+ssl://localhost:$(broker_port_tls 1)"
export PULSARC_CLUSTER_BROKER_ADMIN_URL_TLS="https://localhost:$(broker_web_tls 1)"
export PULSARC_CLUSTER_PROXY_URL="$PROXY_URL"
export PULSARC_CLUSTER_PROXY_URL_TLS="$PROXY_URL_TLS"
export PULSARC_CLUSTER_PROXY_ADMIN_URL="$PROXY_ADMIN"
export PULSARC_CLUSTER_PROXY_ADMIN_URL_TLS="https://localhost:$PROXY_WEB_TLS"
export PULSARC_CLUSTER_LOG_DIR="$LOG_DIR"
# What the standalone harness exports, for suites that know nothing else.
export PULSARC_BROKER_CLASSPATH_FILE="$CP_FILE"
export PULSARC_TEST_SECRETS="$SECRETS_DIR"
export PULSARC_TEST_MINT_TOKEN="$BROKER_SCRIPTS/mint-token.sh"
export PULSARC_TEST_WRONG_HOST="$WRONG_HOST"
export PULSARC_TEST_WRONG_HOST_URL="pulsar+ssl://$WRONG_HOST:$(broker_port_tls 1)"
export PULSARC_BROKER_MTLS_REQUIRED=0
export PULSAR_CLUSTER="$CLUSTER_NAME"

status=0
"$here/via.sh" broker "$@" || status=$?
exit "$status"
