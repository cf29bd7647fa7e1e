#!/usr/bin/env bash
# Usage: test/oauth2/java-produce.sh SERVICE_URL TOPIC COUNT CA_PEM AUTH_PARAMS_JSON
# Runs OAuth2Interop.java (the Java client's OAuth2 plugin) with the broker's
# classpath file ($PULSARC_BROKER_CLASSPATH_FILE, from run-with-broker.sh).
# The Java client's own logging goes to a temporary file, shown only when
# the run fails. Exits 77 (skip) without a classpath file.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cp_file="${PULSARC_BROKER_CLASSPATH_FILE:-$here/../broker/.work/classpath.txt}"
if [[ ! -s "$cp_file" ]]; then
    echo "oauth2 interop: no broker classpath file ($cp_file)" >&2
    exit 77
fi
log=$(mktemp)
java -cp "$(cat "$cp_file")" "$here/OAuth2Interop.java" "$@" >"$log" 2>&1
rc=$?
grep -E '^produced' "$log"
if [[ $rc != 0 ]]; then
    echo "oauth2 interop: java exited $rc; its output:" >&2
    tail -n 40 "$log" >&2
fi
rm -f "$log"
exit $rc
