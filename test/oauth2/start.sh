#!/usr/bin/env bash
# Usage: test/oauth2/start.sh DIR
#
# Starts the test OAuth2 authorisation server (server.py) on loopback with
# the broker harness's certificate (CN=localhost, signed by the test CA)
# and its HS256 tokenSecretKey, so the tokens it issues are ones the test
# broker accepts. Needs PULSARC_TEST_SECRETS (set by run-with-broker.sh).
# PyJWT comes from PyPI into a virtualenv under test/oauth2/.work, made
# here on first use. Writes into DIR (created, mode 0700):
#   clients.json   client id -> secret the server accepts
#   key.json       the Java-style key file of that client (client_id,
#                  client_secret, issuer_url)
#   wrong-key.json the same client with a wrong secret
#   env            ISSUER=https://localhost:PORT, PID=..., KEY=..., CA=...
# and prints DIR/env's contents. Stop it with: kill "$PID".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:?usage: start.sh DIR}"
secrets="${PULSARC_TEST_SECRETS:?PULSARC_TEST_SECRETS is not set (run under test/broker/run-with-broker.sh)}"
die() { printf '[oauth2] ERROR: %s\n' "$*" >&2; exit 1; }

# shellcheck source=../python-venv.sh
source "$here/../python-venv.sh"
python_venv "$here/.work" jwt 'PyJWT>=2.6,<3'

umask 077
mkdir -p "$dir"
chmod 0700 "$dir"
id="pulsarc-oauth2-client"
secret="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
printf '{"%s": "%s"}\n' "$id" "$secret" > "$dir/clients.json"
rm -f "$dir/port"
"$venv/bin/python" "$here/server.py" --cert "$secrets/broker.pem" --key "$secrets/broker.key" \
    --signing-key "$secrets/secret.key" --clients "$dir/clients.json" \
    --port-file "$dir/port" >"$dir/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
    [[ -s "$dir/port" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/server.log" >&2; die "server.py exited"; }
    sleep 0.1
done
[[ -s "$dir/port" ]] || { kill "$pid"; die "server.py did not start within 10 s"; }
issuer="https://localhost:$(cat "$dir/port")"
printf '{"type": "client_credentials", "client_id": "%s", "client_secret": "%s", "issuer_url": "%s"}\n' \
    "$id" "$secret" "$issuer" > "$dir/key.json"
printf '{"type": "client_credentials", "client_id": "%s", "client_secret": "%s", "issuer_url": "%s"}\n' \
    "$id" "not-$secret" "$issuer" > "$dir/wrong-key.json"
printf 'ISSUER=%s\nPID=%s\nKEY=%s\nWRONG_KEY=%s\nCA=%s\nCLIENT_ID=%s\n' "$issuer" "$pid" \
    "$dir/key.json" "$dir/wrong-key.json" "$secrets/ca.pem" "$id" > "$dir/env"
cat "$dir/env"
