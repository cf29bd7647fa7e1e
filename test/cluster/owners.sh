#!/usr/bin/env bash
# Usage: owners.sh [sample | TOPIC...]
#
# Which broker owns what. For each TOPIC (a full persistent:// name, or a
# name in public/default), asks broker 1 for the owner (HTTP lookup, which
# also assigns an unowned bundle); "sample" (the default) looks up twelve
# topics cluster-sample-0..11. Then lists every broker's owned bundles.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

topics=("$@")
if (( $# == 0 )) || [[ "$1" == sample ]]; then
    topics=()
    for i in $(seq 0 11); do topics+=("cluster-sample-$i"); done
fi

json_field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"; }

declare -A per_broker=()
for t in "${topics[@]}"; do
    [[ "$t" == *://* ]] || t="persistent://public/default/$t"
    path="${t/:\//}"
    owner="$(curl -fsSL --max-redirs 5 --max-time 30 "$BROKER1_ADMIN/lookup/v2/topic/$path" | json_field brokerUrl)" \
        || owner="(lookup failed)"
    per_broker["$owner"]=$(( ${per_broker["$owner"]:-0} + 1 ))
    log "  $t -> $owner"
done
for owner in "${!per_broker[@]}"; do
    log "  ${per_broker[$owner]} of ${#topics[@]} topics on $owner"
done
for b in "${BROKERS[@]}"; do
    id="$ADVERTISED:$(broker_web "$b")"
    bundles="$(curl -fsS --max-time 10 "http://$HOST:$(broker_web "$b")/admin/v2/brokers/$CLUSTER_NAME/$id/ownedNamespaces" |
               grep -o '"public/default/[^"]*"' | tr -d '"' | sed 's|public/default/||' | sort | tr '\n' ' ' || true)"
    log "  broker$b ($id) owns public/default bundles: ${bundles:-none}"
done
