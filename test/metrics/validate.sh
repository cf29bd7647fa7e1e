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

# The virtualenv: made once (under a lock, other test runs may race), reused after.
work="$here/.work"
venv="$work/venv"
mkdir -p "$work"
exec 9>"$work/venv.lock"
flock 9
if ! "$venv/bin/python" -c 'import prometheus_client.parser' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 || die "python3 -m venv failed (is python3-venv installed? make deps)"
    "$venv/bin/pip" install -q --disable-pip-version-check 'prometheus-client>=0.17,<1' >&2 \
        || die "pip could not install prometheus-client"
fi
flock -u 9
exec "$venv/bin/python" "$here/validate.py" "$1" "$2"
