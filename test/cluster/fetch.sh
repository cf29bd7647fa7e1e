#!/usr/bin/env bash
# Resolve the cluster's jars (broker, client, proxy, jetty-proxy) from Maven
# and write the runtime classpath to .work/classpath.txt. Idempotent: does nothing when the
# classpath file is newer than pom.xml and all its jars are still present.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cp_is_fresh() {
    [[ -s "$CP_FILE" && "$CP_FILE" -nt "$CLUSTER_DIR/pom.xml" ]] || return 1
    classpath_jars_present "$CP_FILE"
}

if [[ "${1:-}" != "--force" ]] && cp_is_fresh; then
    exit 0
fi

command -v mvn >/dev/null || die "mvn not found (Maven 3.8+ is needed)"
mkdir -p "$WORK_DIR"
log "resolving dependencies with Maven (first run downloads ~300 MB)"
start=$(date +%s)
tmp="$CP_FILE.tmp"
if ! mvn -B -q -f "$CLUSTER_DIR/pom.xml" dependency:build-classpath \
        -Dmdep.outputFile="$tmp" >"$WORK_DIR/mvn.log" 2>&1; then
    tail -n 30 "$WORK_DIR/mvn.log" >&2
    die "maven dependency resolution failed (full log: $WORK_DIR/mvn.log)"
fi
mv "$tmp" "$CP_FILE"
log "classpath written to $CP_FILE ($(tr ':' '\n' < "$CP_FILE" | wc -l) jars, $(( $(date +%s) - start ))s)"
