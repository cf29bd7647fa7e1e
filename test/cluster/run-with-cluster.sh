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

# shellcheck source-path=SCRIPTDIR source=env.sh
source "$here/env.sh"

status=0
"$here/via.sh" broker "$@" || status=$?
exit "$status"
