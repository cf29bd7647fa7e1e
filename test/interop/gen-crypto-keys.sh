#!/usr/bin/env bash
# Writes the key pairs of the encryption interop test into DIR with the
# openssl command line, in the forms the Java client reads (its docs'
# recipe): rsa.pem (RSA PRIVATE KEY, 2048 bits), ec-k1.pem and ec-p256.pem
# (EC PARAMETERS + EC PRIVATE KEY on secp256k1 and prime256v1), and the
# matching public keys NAME.pub.pem (PUBLIC KEY).
set -euo pipefail
dir="${1:?usage: gen-crypto-keys.sh DIR}"
mkdir -p "$dir"
openssl genrsa -traditional -out "$dir/rsa.pem" 2048 2>/dev/null
openssl rsa -in "$dir/rsa.pem" -pubout -out "$dir/rsa.pub.pem" 2>/dev/null
for c in k1:secp256k1 p256:prime256v1; do
    openssl ecparam -name "${c#*:}" -genkey -out "$dir/ec-${c%%:*}.pem"
    openssl ec -in "$dir/ec-${c%%:*}.pem" -pubout -out "$dir/ec-${c%%:*}.pub.pem" 2>/dev/null
done
