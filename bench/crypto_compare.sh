#!/usr/bin/env bash
# bench/crypto_compare.sh — what end-to-end encryption costs on the wire
# path: produce and fetch at saturation against a live broker, plain beside
# encrypted (RSA-2048 data-key wrapping, AES-256-GCM payloads), in the same
# run, alternating.
#
# Design notes
#  - Cells: 100 B and 1 KB, batched (1 ms / 1,000 messages / 128 KiB), as
#    bench/produce_compare.sh. Each round produces N messages to a fresh
#    topic plain and N to another encrypted (encryptionKeys +
#    cryptoPublicKeyPath), then fetches each topic back from the earliest
#    message: the plain one as is, the encrypted one decrypting with
#    cryptoPrivateKeyPath. The fetch checks it got every message (status
#    ok), so a decryption failure shows as a failed row, never as speed.
#  - Keys: a fresh RSA-2048 pair from the openssl command in a temporary
#    directory; the data key is wrapped once per producer (and on rotation),
#    so the steady state measured here is the per-batch AES-GCM work.
#  - The in-memory cost of each primitive is bench/crypto's; this script
#    answers how much of it shows through the whole client.
#  - Needs PULSAR_SERVICE_URL (run under test/broker/run-with-broker.sh)
#    and the openssl command; without either it says so and exits 0.
#
# Environment: BUILD (build), PAIRS (3), MSGS (500000), CELLS ("100 1024"),
# NOBUILD (0). Figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh

BUILD=${BUILD:-build}
PAIRS=${PAIRS:-3}
MSGS=${MSGS:-500000}
CELLS=${CELLS:-"100 1024"}
B=$BUILD/bench
OUT=${OUT:-$B/out}
mkdir -p "$OUT"
LOG=$OUT/crypto-compare.log
: >"$LOG"
URL=${PULSAR_SERVICE_URL:-}
if [ -z "$URL" ] || ! command -v openssl >/dev/null; then
    echo "crypto_compare: needs PULSAR_SERVICE_URL and the openssl command; skipped"
    exit 0
fi
if [ "${NOBUILD:-0}" != 1 ]; then
    make -j"$(nproc)" -f Makefile -f bench/Makefile.inc BUILD="$BUILD" "$B/produce" "$B/fetch" \
        >"$OUT/crypto-build.log" 2>&1 || { tail -20 "$OUT/crypto-build.log"; exit 1; }
fi

KEYS=$(mktemp -d)
trap 'rm -rf "$KEYS"' EXIT
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$KEYS/priv.pem" 2>/dev/null
openssl pkey -in "$KEYS/priv.pem" -pubout -out "$KEYS/pub.pem" 2>/dev/null
ENC_P=(--conf encryptionKeys=bench --conf "cryptoPublicKeyPath=$KEYS/pub.pem")
ENC_C=(--conf "cryptoPrivateKeyPath=$KEYS/priv.pem")

ROWS=$OUT/crypto-compare.rows
: >"$ROWS"
# row SIDE MODE SIZE LINE: appends "side mode size msgs/s cpu-s/M" when LINE says ok
row() {
    echo "$1 $2 $3: $4" >>"$LOG"
    if [ "$(echo "$4" | kv status)" != ok ]; then
        echo "  $1 $2 $3 B failed: ${4:-no output} (see $OUT/crypto-compare.err)" >&2
        return 0
    fi
    echo "$1 $2 $3 $(echo "$4" | kv msgs_per_s) $(echo "$4" | kv cpu_s_per_M)" >>"$ROWS"
    echo "  $1 $2 $3 B: $(echo "$4" | kv msgs_per_s) msg/s, $(echo "$4" | kv cpu_s_per_M) CPU-s/M"
}

# once MODE SIZE ROUND: produce to a fresh topic, then fetch it all back
once() {
    local mode=$1 size=$2 topic line p=() c=()
    topic=persistent://public/default/crypto-$mode-$size-$3-$$-$(date +%s%N)
    [ "$mode" = encrypted ] && p=("${ENC_P[@]}") c=("${ENC_C[@]}")
    line=$(timeout 600 "$B/produce" --url "$URL" --topic "$topic" --messages "$MSGS" --size "$size" \
        --batch 1 --label "$mode" "${p[@]}" 2>>"$OUT/crypto-compare.err" | grep '^produce:' || true)
    row produce "$mode" "$size" "$line"
    line=$(timeout 600 "$B/fetch" --url "$URL" --topic "$topic" --messages "$MSGS" --batch 1000 \
        --label "$mode" "${c[@]}" 2>>"$OUT/crypto-compare.err" | grep '^fetch:' || true)
    row fetch "$mode" "$size" "$line"
}

echo "live broker $URL; $MSGS messages per run; pairs $PAIRS"
for r in $(seq 1 "$PAIRS"); do
    for size in $CELLS; do
        once plain "$size" "$r"
        once encrypted "$size" "$r"
    done
done

# stat SIDE MODE SIZE COLUMN: "median (min-max)" over the rounds
stat() {
    local vals
    vals=$(awk -v a="$1" -v m="$2" -v s="$3" -v k="$4" '$1 == a && $2 == m && $3 == s { print $k }' "$ROWS")
    [ -n "$vals" ] || { echo "-"; return; }
    echo "$(echo "$vals" | median) ($(echo "$vals" | minmax))"
}
echo
echo "## end-to-end encryption through the client (RSA-2048 + AES-256-GCM), batched, live broker; medians (min-max) of $PAIRS rounds"
echo
echo "| path | size | msg/s plain | msg/s encrypted | CPU-s per M plain | CPU-s per M encrypted |"
echo "|---|---|---|---|---|---|"
for side in produce fetch; do
    for size in $CELLS; do
        echo "| $side | $size B | $(stat $side plain "$size" 4) | $(stat $side encrypted "$size" 4) | $(stat $side plain "$size" 5) | $(stat $side encrypted "$size" 5) |"
    done
done
echo
echo "log: $LOG"
