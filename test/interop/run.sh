#!/usr/bin/env bash
# Runs the Java side of the interop test: test/interop/run.sh MODE ARGS...
# (see Interop.java; PULSARC_INTEROP_MAIN=CryptoInterop.java runs that
# program instead). Needs the broker's classpath file, which
# test/broker/run-with-broker.sh exports as PULSARC_BROKER_CLASSPATH_FILE
# (falls back to test/broker/.work/classpath.txt). The Java client's own
# logging goes to a temporary file, shown only when the run fails.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cp_file="${PULSARC_BROKER_CLASSPATH_FILE:-$here/../broker/.work/classpath.txt}"
if [[ ! -s "$cp_file" ]]; then
    echo "interop: no broker classpath file ($cp_file)" >&2
    exit 77
fi
log=$(mktemp)
# UTF-8 arguments (non-ASCII keys) must reach Java intact.
LC_ALL=C.UTF-8 java -Dsun.jnu.encoding=UTF-8 -Dfile.encoding=UTF-8 \
    -cp "$(cat "$cp_file")" "$here/${PULSARC_INTEROP_MAIN:-Interop.java}" "$@" >"$log" 2>&1
rc=$?
grep -E '^(checked|produced|MISMATCH)' "$log"
if [[ $rc != 0 ]]; then
    echo "interop: java exited $rc; its output:" >&2
    tail -n 40 "$log" >&2
fi
rm -f "$log"
exit $rc
