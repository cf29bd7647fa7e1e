/*
 * Design notes: the sink checkpoint blob.
 *
 * Layout, every integer little-endian so a blob moves between hosts:
 *
 *   u32 magic "PSSK"   u16 version (1)   u8 guarantee   u8 reserved (0)
 *   u64 checkpoint id  u32 transaction count N
 *   N x { u64 checkpoint id, u64 most bits, u64 least bits, u8 fate }
 *   u32 CRC32C of every byte before it
 *
 * Why a CRC of our own: the blob passes through the application's state
 * store, and a truncated or bit-flipped blob must not make a restored sink
 * commit or abort the wrong transaction; it is refused with a reason
 * instead. The version lets a later layout coexist: an unknown version is
 * refused rather than guessed at. The count is bounded before anything is
 * allocated, so a hostile length cannot ask for gigabytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/sink_state.h"
#include "core/crc32c.h"

#define HEADER_LEN 20u /* magic 4 + version 2 + guarantee 1 + reserved 1 + id 8 + count 4 */
#define TXN_LEN 25u
#define CRC_LEN 4u

static void put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void encode_txn(uint8_t *p, const pc_sink_txn_ref_t *t) {
    put_le(p, t->checkpoint_id, 8);
    put_le(p + 8, t->most, 8);
    put_le(p + 16, t->least, 8);
    p[24] = (uint8_t)t->fate;
}

pulsarc_err_t pc_sink_state_encode(const pc_sink_state_t *st, uint8_t **out, size_t *len) {
    if (!st || !out || !len || st->ntxns > PC_SINK_STATE_MAX_TXNS)
        return PULSARC_ERR_INVALID_ARG;
    size_t n = HEADER_LEN + st->ntxns * TXN_LEN + CRC_LEN;
    uint8_t *b = malloc(n);
    if (!b)
        return PULSARC_ERR_NOMEM;
    put_le(b, PC_SINK_STATE_MAGIC, 4);
    put_le(b + 4, PC_SINK_STATE_VERSION, 2);
    b[6] = st->guarantee;
    b[7] = 0;
    put_le(b + 8, st->checkpoint_id, 8);
    put_le(b + 16, st->ntxns, 4);
    for (size_t i = 0; i < st->ntxns; i++)
        encode_txn(b + HEADER_LEN + i * TXN_LEN, &st->txns[i]);
    put_le(b + n - CRC_LEN, pc_crc32c(0, b, n - CRC_LEN), 4);
    *out = b;
    *len = n;
    return PULSARC_OK;
}

static pulsarc_err_t fail(pulsarc_err_t err, char *errstr, size_t errlen, const char *why) {
    if (errstr && errlen)
        snprintf(errstr, errlen, "sink checkpoint rejected: %s", why);
    return err;
}

/* Checks everything that does not need the transaction list. */
static pulsarc_err_t check_frame(const uint8_t *b, size_t len, size_t *count, char *errstr,
                                 size_t errlen) {
    if (len < HEADER_LEN + CRC_LEN)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "truncated (shorter than a header)");
    if (get_le(b, 4) != PC_SINK_STATE_MAGIC)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "bad magic (not a sink blob)");
    if (get_le(b + len - CRC_LEN, 4) != pc_crc32c(0, b, len - CRC_LEN))
        return fail(PULSARC_ERR_CHECKSUM, errstr, errlen, "CRC32C mismatch (corrupt blob)");
    if (get_le(b + 4, 2) != PC_SINK_STATE_VERSION)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "unknown version");
    *count = (size_t)get_le(b + 16, 4);
    if (*count > PC_SINK_STATE_MAX_TXNS)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "too many transactions");
    if (len != HEADER_LEN + *count * TXN_LEN + CRC_LEN)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "length does not match its count");
    if (b[6] > 2)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "unknown delivery guarantee");
    return PULSARC_OK;
}

static pulsarc_err_t decode_txn(const uint8_t *p, pc_sink_txn_ref_t *t) {
    t->checkpoint_id = get_le(p, 8);
    t->most = get_le(p + 8, 8);
    t->least = get_le(p + 16, 8);
    t->fate = (pc_sink_txn_fate_t)p[24];
    return t->fate == PC_SINK_TXN_COMMIT || t->fate == PC_SINK_TXN_ABORT
               ? PULSARC_OK
               : PULSARC_ERR_MALFORMED;
}

pulsarc_err_t pc_sink_state_decode(const void *buf, size_t len, pc_sink_state_t *st,
                                   char *errstr, size_t errlen) {
    if (!buf || !st)
        return fail(PULSARC_ERR_INVALID_ARG, errstr, errlen, "no blob");
    memset(st, 0, sizeof *st);
    const uint8_t *b = buf;
    size_t count = 0;
    pulsarc_err_t err = check_frame(b, len, &count, errstr, errlen);
    if (err)
        return err;
    st->txns = count ? calloc(count, sizeof *st->txns) : NULL;
    if (count && !st->txns)
        return fail(PULSARC_ERR_NOMEM, errstr, errlen, "out of memory");
    st->guarantee = b[6];
    st->checkpoint_id = get_le(b + 8, 8);
    st->ntxns = count;
    for (size_t i = 0; i < count; i++) {
        if (decode_txn(b + HEADER_LEN + i * TXN_LEN, &st->txns[i]) != PULSARC_OK) {
            pc_sink_state_free(st);
            return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "unknown transaction fate");
        }
    }
    return PULSARC_OK;
}

void pc_sink_state_free(pc_sink_state_t *st) {
    if (!st)
        return;
    free(st->txns);
    st->txns = NULL;
    st->ntxns = 0;
}
