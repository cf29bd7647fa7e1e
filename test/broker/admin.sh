#!/usr/bin/env bash
# Tiny REST helper for the broker admin API.
# Usage: admin.sh METHOD PATH [JSON-BODY]
#   admin.sh GET  clusters
#   admin.sh PUT  persistent/public/default/my-topic/partitions 3
#   admin.sh POST namespaces/public/default/deduplication true
# PATH is relative to $PULSAR_ADMIN_URL/admin/v2/ (default http://127.0.0.1:8080).
# Prints the response body; fails on HTTP status >= 400.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

(( $# >= 2 )) || die "usage: $0 METHOD PATH [JSON-BODY]"
method="$1" path="${2#/}"
url="${PULSAR_ADMIN_URL:-$ADMIN_URL}/admin/v2/$path"
args=(-sS --fail-with-body --max-time 30 -X "$method")
if (( $# >= 3 )); then
    args+=(-H 'Content-Type: application/json' --data-raw "$3")
fi
curl "${args[@]}" "$url"
