#!/usr/bin/env bash
# test/check-connector-api.sh — libpulsarc-connector may use only the
# client's public API (the pulsarc_* functions libpulsarc.so exports) and
# the stateless helpers of the internal core archive (lib/core, lib/conf's
# value parser). Run by `make unit`; fails, naming each symbol and the
# connector object using it, when a connector object references a symbol
# defined in the client library's other objects that the client does not
# export, or when libpulsarc-connector.so exports anything but pulsarc_*.
#
# Usage: BUILD=build bash test/check-connector-api.sh <connector objects...>
set -euo pipefail
BUILD=${BUILD:-build}
[ $# -gt 0 ] || { echo "usage: $0 connector-objects..." >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# symbols the client exports, and those the core archive defines
nm -D --defined-only "$BUILD/libpulsarc.so" | awk '{ print $NF }' | sort -u >"$tmp/exported"
nm --defined-only "$BUILD/libpulsarc-core.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/core"
# symbols defined by the client's other objects (everything in libpulsarc.a outside the core archive)
nm --defined-only "$BUILD/libpulsarc.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u |
    comm -23 - "$tmp/core" >"$tmp/client"
# what the connector defines for itself, and what it needs from elsewhere
nm --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/own"
nm -u "$@" | awk 'NF == 2 { print $2 }' | sort -u | comm -23 - "$tmp/own" >"$tmp/needed"

comm -12 "$tmp/needed" "$tmp/client" | comm -23 - "$tmp/exported" >"$tmp/private"
if [ -s "$tmp/private" ]; then
    echo "libpulsarc-connector uses client symbols that are not public API:" >&2
    while read -r sym; do
        users=$(for o in "$@"; do nm -u "$o" | awk -v s="$sym" '$2 == s { f = 1 } END { exit !f }' && basename "$o"; done | paste -sd' ' -)
        echo "  $sym  (used by: $users)" >&2
    done <"$tmp/private"
    exit 1
fi
# the connector library exports its own pulsarc_* API and nothing else (the
# core helpers it carries stay private: --exclude-libs)
if [ -f "$BUILD/libpulsarc-connector.so" ]; then
    extra=$(nm -D --defined-only "$BUILD/libpulsarc-connector.so" | awk '{ print $NF }' | grep -v '^pulsarc_' || true)
    if [ -n "$extra" ]; then
        echo "libpulsarc-connector.so exports symbols outside the pulsarc_ API:" >&2
        echo "$extra" | sed 's/^/  /' >&2
        exit 1
    fi
fi
n_pub=$(comm -12 "$tmp/needed" "$tmp/exported" | grep -c '^pulsarc_' || true)
n_core=$(comm -12 "$tmp/needed" "$tmp/core" | wc -l)
echo "check-connector-api: ok ($n_pub public client functions, $n_core core helpers)"
