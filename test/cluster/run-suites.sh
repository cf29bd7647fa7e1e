#!/usr/bin/env bash
# Usage: run-suites.sh TEST_BINARY...   (inside run-with-cluster.sh)
#
# Runs the test binaries twice, first with the service URLs on broker 1
# (lookups redirected to brokers 2 and 3), then on the pulsar-proxy, and
# prints each pass's wall time. Fails if either pass failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runner="$here/../run-tests.sh"
status=0
summary=()
for via in broker proxy; do
    echo "##### via $via: $*"
    t0=$(date +%s)
    "$here/via.sh" "$via" bash "$runner" "$@" || status=1
    summary+=("via $via: $(( $(date +%s) - t0 ))s")
done
echo "##### ${summary[*]}"
exit "$status"
