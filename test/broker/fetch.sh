#!/usr/bin/env bash
# Resolve the Pulsar broker + client jars from Maven Central and write the
# runtime classpath to .work/classpath.txt (another PULSAR_VERSION than the
# pom's default: .work/pulsar-<version>/classpath.txt). Idempotent: does
# nothing when that classpath was resolved for this version, is newer than
# pom.xml and all its jars are still present.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cp_is_fresh() {
    [[ -s "$CP_FILE" && "$CP_FILE" -nt "$BROKER_DIR/pom.xml" ]] || return 1
    [[ "$(cat "$CP_VERSION_FILE" 2>/dev/null || true)" == "$PULSAR_VERSION" ]] || return 1
    classpath_jars_present "$CP_FILE"
}

if [[ "${1:-}" != "--force" ]] && cp_is_fresh; then
    exit 0
fi

command -v mvn >/dev/null || die "mvn not found (Maven 3.8+ is needed)"
mkdir -p "$MVN_DIR"
log "resolving Pulsar $PULSAR_VERSION with Maven (first run downloads ~300 MB)"
start=$(date +%s)
tmp="$CP_FILE.tmp"
rm -f "$CP_VERSION_FILE"
if ! mvn -B -q -f "$BROKER_DIR/pom.xml" dependency:build-classpath \
        -Dpulsar.version="$PULSAR_VERSION" -Dmdep.outputFile="$tmp" >"$MVN_LOG" 2>&1; then
    tail -n 30 "$MVN_LOG" >&2
    die "maven dependency resolution of Pulsar $PULSAR_VERSION failed (full log: $MVN_LOG)"
fi
mv "$tmp" "$CP_FILE"
printf '%s\n' "$PULSAR_VERSION" > "$CP_VERSION_FILE"
log "classpath written to $CP_FILE ($(tr ':' '\n' < "$CP_FILE" | wc -l) jars, $(( $(date +%s) - start ))s)"
