#!/usr/bin/env bash
# Usage: via.sh broker|proxy|http CMD [ARGS...]   (inside run-with-cluster.sh)
#
# Runs CMD with the standalone harness's variables pointed at the cluster:
#   broker  PULSAR_SERVICE_URL / PULSAR_ADMIN_URL and their TLS forms are
#           broker 1's; topics owned by brokers 2 and 3 are reached through
#           lookup redirects.
#   proxy   the service URLs are the pulsar-proxy's (plain and TLS): every
#           lookup is answered through it and every connection goes via it;
#           the admin URLs stay broker 1's.
#   http    as broker, but PULSAR_SERVICE_URL is broker 1's http:// URL:
#           lookups and partition metadata over its REST API.
# PULSARC_CLUSTER_VIA says which, for suites that care.
set -euo pipefail
(( $# >= 2 )) || { echo "usage: $0 broker|proxy|http CMD [ARGS...]" >&2; exit 2; }
[[ -n "${PULSARC_CLUSTER_PROXY_URL:-}" ]] || { echo "via.sh: run it under test/cluster/run-with-cluster.sh" >&2; exit 2; }
case "$1" in
    broker|http)
        export PULSAR_SERVICE_URL="$PULSARC_CLUSTER_BROKER_URL"
        [[ "$1" == http ]] && export PULSAR_SERVICE_URL="$PULSARC_CLUSTER_BROKER_ADMIN_URL"
        export PULSAR_ADMIN_URL="$PULSARC_CLUSTER_BROKER_ADMIN_URL"
        export PULSAR_SERVICE_URL_TLS="$PULSARC_CLUSTER_BROKER_URL_TLS"
        export PULSAR_ADMIN_URL_TLS="$PULSARC_CLUSTER_BROKER_ADMIN_URL_TLS" ;;
    proxy)
        # The brokers re-check only the proxy's own token, never a proxied
        # client's: no broker challenge reaches the client (test_auth).
        export CK_EXCLUDE_TAGS="${CK_EXCLUDE_TAGS:+$CK_EXCLUDE_TAGS }broker-challenges-client"
        # Admin calls stay on broker 1: the proxy hands each HTTP request to
        # any broker, and a policy read back from another broker than the one
        # that wrote it may still be the old one (seen in test_admin).
        export PULSAR_SERVICE_URL="$PULSARC_CLUSTER_PROXY_URL"
        export PULSAR_ADMIN_URL="$PULSARC_CLUSTER_BROKER_ADMIN_URL"
        export PULSAR_SERVICE_URL_TLS="$PULSARC_CLUSTER_PROXY_URL_TLS"
        export PULSAR_ADMIN_URL_TLS="$PULSARC_CLUSTER_BROKER_ADMIN_URL_TLS" ;;
    *) echo "via.sh: broker, proxy or http, not $1" >&2; exit 2 ;;
esac
export PULSARC_CLUSTER_VIA="$1"
shift
exec "$@"
