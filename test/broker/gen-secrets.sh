#!/usr/bin/env bash
# Usage: gen-secrets.sh [DIR]   (default: $WORK_DIR/secrets)
#
# Creates, afresh on every run, the TLS material and tokens of the test
# broker and the TLS/auth tests. Nothing secret is committed: all of it is
# generated here with openssl. DIR is mode 0700 and every file in it 0600
# (umask 077), so no key or token is ever world-readable.
#
#   ca.pem / ca.key            the test CA (signs everything below)
#   ca-dir/                    ca.pem in `openssl rehash` form (a trust directory)
#   broker.pem / broker.key    CN=localhost, SAN DNS:localhost, IP:127.0.0.1
#   client.pem / client.key    CN=pulsarc-tls-client (mTLS, TLS authentication)
#   other-ca.pem               a CA that signed nothing the broker uses ("wrong CA")
#   secret.key                 32 random bytes: the HS256 key of tokenSecretKey
#   wrong-secret.key           another 32 bytes, for a wrongly signed token
#   admin.jwt                  sub=admin, the superuser (broker's internal client)
#   client.jwt                 sub=pulsarc-client, no expiry
#   expired.jwt                sub=pulsarc-client, exp one hour ago
#   wrong-key.jwt              sub=pulsarc-client, signed with wrong-secret.key
#   basic-passwords.txt        the broker's basicAuthConf: pulsarc-basic:$apr1$<hash>
#   basic.password             the password of pulsarc-basic (random)
# Keys are EC P-256 in PKCS#8 PEM (what the broker's TLS providers read).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

dir="${1:-$SECRETS_DIR}"
command -v openssl >/dev/null || die "openssl not found"
umask 077
rm -rf "$dir"
mkdir -p "$dir"
chmod 0700 "$dir"
cd "$dir"

newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

make_ca() { # name cn
    newkey "$1.key"
    openssl req -x509 -new -key "$1.key" -sha256 -days 2 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.pem" 2>/dev/null
}

make_leaf() { # name cn extensions
    newkey "$1.key"
    openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr" 2>/dev/null
    printf '%s\n' "$3" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -sha256 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}

make_ca ca "pulsarc test CA"
make_ca other-ca "pulsarc other CA"
rm -f other-ca.key
make_leaf broker localhost "$(printf '%s\n' \
    'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
    'extendedKeyUsage=serverAuth' 'subjectAltName=DNS:localhost,IP:127.0.0.1')"
make_leaf client pulsarc-tls-client "$(printf '%s\n' \
    'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature' \
    'extendedKeyUsage=clientAuth')"
mkdir -p ca-dir
cp ca.pem ca-dir/ca.pem
openssl rehash ca-dir 2>/dev/null || c_rehash ca-dir >/dev/null

head -c 32 /dev/urandom > secret.key
head -c 32 /dev/urandom > wrong-secret.key
mint="$BROKER_DIR/mint-token.sh"
bash "$mint" secret.key admin > admin.jwt
bash "$mint" secret.key pulsarc-client > client.jwt
bash "$mint" secret.key pulsarc-client "$(( $(date +%s) - 3600 ))" > expired.jwt
bash "$mint" wrong-secret.key pulsarc-client > wrong-key.jwt
basic_pw="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
printf '%s' "$basic_pw" > basic.password
printf 'pulsarc-basic:%s\n' "$(printf '%s\n' "$basic_pw" | openssl passwd -apr1 -stdin)" \
    > basic-passwords.txt
rm -f ca.srl
chmod -R go-rwx "$dir"
log "secrets generated in $dir (mode 0700)"
