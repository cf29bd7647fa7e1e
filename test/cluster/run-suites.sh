#!/usr/bin/env bash
# Usage: run-suites.sh TEST_BINARY...   (inside run-with-cluster.sh)
#
# Runs the test binaries once per pass of PULSARC_CLUSTER_PASSES (default
# "broker proxy http", see via.sh): service URLs on broker 1 (lookups
# redirected to brokers 2 and 3), on the pulsar-proxy, and broker 1's
# http:// URL (HTTP lookup). Prints each pass's wall time; fails if any
# pass failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runner="$here/../run-tests.sh"
status=0
summary=()
read -r -a passes <<< "${PULSARC_CLUSTER_PASSES:-broker proxy http}"
for via in "${passes[@]}"; do
    echo "##### via $via: $*"
    t0=$(date +%s)
    "$here/via.sh" "$via" bash "$runner" "$@" || status=1
    summary+=("via $via: $(( $(date +%s) - t0 ))s")
done
echo "##### ${summary[*]}"
exit "$status"
