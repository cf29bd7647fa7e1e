#!/usr/bin/env bash
# Usage: run-with-broker.sh CMD [ARGS...]
#
# If PULSAR_SERVICE_URL is already set, the caller provides a broker and CMD
# simply runs. Otherwise a fresh standalone broker is started, the URLs are
# exported, CMD runs, and the broker is always stopped afterwards (also on
# failure or Ctrl-C). Exits with CMD's status.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$here/common.sh"

(( $# > 0 )) || die "usage: $0 CMD [ARGS...]"

if [[ -n "${PULSAR_SERVICE_URL:-}" ]]; then
    log "using existing broker at $PULSAR_SERVICE_URL"
    exec "$@"
fi

# One broker at a time on this machine (fixed ports): concurrent runs wait
# for each other here instead of start.sh stopping a broker in use.
exec 9>"${TMPDIR:-/tmp}/pulsarc-test-broker-$INSTANCE.lock"
if ! flock -w 1800 9; then
    die "another run-with-broker.sh held the broker for 30 minutes"
fi

# shellcheck disable=SC2317  # invoked via trap
cleanup() { "$here/stop.sh" || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$here/start.sh"

export PULSAR_SERVICE_URL="$SERVICE_URL"
export PULSAR_ADMIN_URL="$ADMIN_URL"
export PULSARC_BROKER_CLASSPATH_FILE="$CP_FILE"
# TLS and authentication (see security.conf and gen-secrets.sh).
export PULSAR_SERVICE_URL_TLS="$SERVICE_URL_TLS"
export PULSAR_ADMIN_URL_TLS="$ADMIN_URL_TLS"
export PULSARC_TEST_SECRETS="$SECRETS_DIR"
export PULSARC_TEST_MINT_TOKEN="$BROKER_DIR/mint-token.sh"
export PULSARC_TEST_WRONG_HOST="$WRONG_HOST"
export PULSARC_TEST_WRONG_HOST_URL="pulsar+ssl://$WRONG_HOST:$BROKER_PORT_TLS"
if grep -q '^tlsRequireTrustedClientCertOnConnect=true' "$RUN_DIR/standalone.conf"; then
    export PULSARC_BROKER_MTLS_REQUIRED=1
else
    export PULSARC_BROKER_MTLS_REQUIRED=0
fi

status=0
"$@" || status=$?
exit "$status"
