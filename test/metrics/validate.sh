#!/usr/bin/env bash
# Usage: test/metrics/validate.sh METRICS_FILE EXPECT_FILE
#
# Parses METRICS_FILE (pulsarc_client_metrics output) with the reference
# Prometheus text parser, prometheus_client from PyPI, and checks it
# against EXPECT_FILE (validate.py says the format). The package goes into
# a virtualenv under test/metrics/.work, made here on first use and reused.
# Exits 0 when everything matches; prints what does not otherwise.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { printf '[metrics] ERROR: %s\n' "$*" >&2; exit 2; }
(( $# == 2 )) || die "usage: validate.sh METRICS_FILE EXPECT_FILE"

# shellcheck source=../python-venv.sh
source "$here/../python-venv.sh"
python_venv "$here/.work" prometheus_client.parser 'prometheus-client>=0.17,<1'
exec "$venv/bin/python" "$here/validate.py" "$1" "$2"
