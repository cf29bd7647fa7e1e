# shellcheck shell=bash
# Sourced after common.sh (by run-with-cluster.sh, or by hand to run tests
# against a cluster start.sh left running): exports where everything is,
# the cluster's own PULSARC_CLUSTER_* variables and the standalone harness's
# (pointed at broker 1; via.sh re-points them).
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
export PULSARC_CLUSTER_SCRIPTS="$CLUSTER_DIR"
