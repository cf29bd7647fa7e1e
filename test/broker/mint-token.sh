#!/usr/bin/env bash
# Usage: mint-token.sh SECRET_KEY_FILE SUBJECT [EXP_EPOCH_SECONDS]
#
# Prints an HS256 JWT as Pulsar's AuthenticationProviderToken checks it:
# header {"alg":"HS256"}, payload {"sub":SUBJECT[,"exp":EXP]}, signed with
# the raw bytes of SECRET_KEY_FILE. Only openssl and coreutils are needed.
# The token goes to stdout only; never log it.
set -euo pipefail

(( $# >= 2 && $# <= 3 )) || { echo "usage: $0 SECRET_KEY_FILE SUBJECT [EXP]" >&2; exit 2; }
key_file="$1" sub="$2" exp="${3:-}"
[[ -r "$key_file" ]] || { echo "mint-token: cannot read $key_file" >&2; exit 1; }
[[ "$sub" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "mint-token: bad subject" >&2; exit 1; }
[[ -z "$exp" || "$exp" =~ ^[0-9]+$ ]] || { echo "mint-token: bad exp" >&2; exit 1; }

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

header=$(printf '{"alg":"HS256"}' | b64url)
if [[ -n "$exp" ]]; then
    payload=$(printf '{"sub":"%s","exp":%s}' "$sub" "$exp" | b64url)
else
    payload=$(printf '{"sub":"%s"}' "$sub" | b64url)
fi
hexkey=$(od -An -v -tx1 "$key_file" | tr -d ' \n')
sig=$(printf '%s.%s' "$header" "$payload" |
      openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | b64url)
printf '%s.%s.%s\n' "$header" "$payload" "$sig"
