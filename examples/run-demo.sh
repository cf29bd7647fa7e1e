#!/usr/bin/env bash
# `make run`: the demo against the broker run-with-broker.sh started (or $PULSAR_SERVICE_URL).
set -euo pipefail
build=${1:-build}
"$build/examples/produce_consume" "${PULSAR_SERVICE_URL:-pulsar://127.0.0.1:6650}" "${DEMO_COUNT:-20000}" "${DEMO_SIZE:-100}"
