/*
 * Design notes: the sink checkpoint blob.
 *
 * Layout, every integer little-endian so a blob moves between hosts:
 *
 *   u32 magic "PSSK"   u16 version (1)   u8 guarantee   u8 reserved (0)
 *   u64 checkpoint id  u32 transaction count N
 *   N x { u64 checkpoint id, u64 most bits, u64 least bits, u8 fate }
 *   (version 2) u32 writer index, u32 writer count
 *   u32 CRC32C of every byte before it
 *
 * Why a CRC of our own: the blob passes through the application's state
 * store, and a truncated or bit-flipped blob must not make a restored sink
 * commit or abort the wrong transaction; it is refused with a reason
 * instead. The version lets a later layout coexist: an unknown version is
 * refused rather than guessed at. The count is bounded before anything is
 * allocated, so a hostile length cannot ask for gigabytes.
 *
 * Parallel writers (sink.parallelism N): each writer's blob says "writer i
 * of N" and names only its own transactions. A blob of version 1 reads as
 * writer 0 of 1. Restoring into another number of writers goes through
 * pc_sink_state_merge, which makes one blob naming every writer's
 * transactions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/sink_state.h"
#include "core/crc32c.h"
#include "core/err.h"

#define HEADER_LEN 20u /* magic 4 + version 2 + guarantee 1 + reserved 1 + id 8 + count 4 */
#define TXN_LEN 25u
#define CRC_LEN 4u
#define WRITER_LEN 8u /* version 2: writer index, writer count */

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
    uint32_t writers = st && st->writers ? st->writers : 1;
    if (!st || !out || !len || st->ntxns > PC_SINK_STATE_MAX_TXNS ||
        writers > PC_SINK_STATE_MAX_WRITERS || st->writer >= writers)
        return PULSARC_ERR_INVALID_ARG;
    size_t n = HEADER_LEN + st->ntxns * TXN_LEN + WRITER_LEN + CRC_LEN;
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
    put_le(b + n - CRC_LEN - WRITER_LEN, st->writer, 4);
    put_le(b + n - CRC_LEN - 4, writers, 4);
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
static pulsarc_err_t check_frame(const uint8_t *b, size_t len, size_t *count, size_t *extra,
                                 char *errstr, size_t errlen) {
    if (len < HEADER_LEN + CRC_LEN)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "truncated (shorter than a header)");
    if (get_le(b, 4) != PC_SINK_STATE_MAGIC)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "bad magic (not a sink blob)");
    if (get_le(b + len - CRC_LEN, 4) != pc_crc32c(0, b, len - CRC_LEN))
        return fail(PULSARC_ERR_CHECKSUM, errstr, errlen, "CRC32C mismatch (corrupt blob)");
    uint64_t version = get_le(b + 4, 2);
    if (version < 1 || version > PC_SINK_STATE_VERSION) {
        if (errstr && errlen)
            snprintf(errstr, errlen, "sink checkpoint rejected: version %u is not supported "
                     "(this library reads 1 to %u)", (unsigned)version, PC_SINK_STATE_VERSION);
        return PULSARC_ERR_MALFORMED;
    }
    *extra = version >= 2 ? WRITER_LEN : 0;
    *count = (size_t)get_le(b + 16, 4);
    if (*count > PC_SINK_STATE_MAX_TXNS)
        return fail(PULSARC_ERR_MALFORMED, errstr, errlen, "too many transactions");
    if (len != HEADER_LEN + *count * TXN_LEN + *extra + CRC_LEN)
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
    size_t count = 0, extra = 0;
    pulsarc_err_t err = check_frame(b, len, &count, &extra, errstr, errlen);
    if (err)
        return err;
    st->writers = 1;
    if (extra) {
        st->writer = (uint32_t)get_le(b + len - CRC_LEN - WRITER_LEN, 4);
        st->writers = (uint32_t)get_le(b + len - CRC_LEN - 4, 4);
        if (st->writers == 0 || st->writers > PC_SINK_STATE_MAX_WRITERS ||
            st->writer >= st->writers) {
            if (errstr && errlen)
                snprintf(errstr, errlen, "sink checkpoint rejected: writer %u of %u is not a "
                         "valid writer", st->writer, st->writers);
            return PULSARC_ERR_MALFORMED;
        }
    }
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

/* ---------- merging the writers' states ---------- */

static pulsarc_err_t merge_check(const pc_sink_state_t *sts, size_t n, char *errstr,
                                 size_t errlen) {
    unsigned char *seen = calloc(n, 1);
    if (!seen)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < n && !err; i++) {
        const pc_sink_state_t *s = &sts[i];
        if (s->writers != n)
            err = pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                            "sink state %zu is writer %u of %u's, but %zu states were given "
                            "(one from each writer of one run is needed)", i, s->writer,
                            s->writers, n);
        else if (seen[s->writer]++)
            err = pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                            "writer %u of %zu's state is given twice", s->writer, n);
        else if (s->checkpoint_id != sts[0].checkpoint_id || s->guarantee != sts[0].guarantee)
            err = pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                            "writers %u and %u: states of different checkpoints (%llu, %llu) or "
                            "delivery guarantees", sts[0].writer, s->writer,
                            (unsigned long long)sts[0].checkpoint_id,
                            (unsigned long long)s->checkpoint_id);
    }
    free(seen);
    return err;
}

pulsarc_err_t pc_sink_state_merge(const pc_sink_state_t *sts, size_t n, pc_sink_state_t *out,
                                  char *errstr, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->writers = 1;
    if (!sts || n == 0 || n > PC_SINK_STATE_MAX_WRITERS)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "merge: between 1 and %u sink states are needed",
                         PC_SINK_STATE_MAX_WRITERS);
    pulsarc_err_t err = merge_check(sts, n, errstr, errlen);
    if (err)
        return err;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += sts[i].ntxns;
    if (total > PC_SINK_STATE_MAX_TXNS)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "merge: %zu transactions, more than %u", total, PC_SINK_STATE_MAX_TXNS);
    if (total && !(out->txns = calloc(total, sizeof *out->txns)))
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < sts[i].ntxns; j++)
            out->txns[out->ntxns++] = sts[i].txns[j];
    out->guarantee = sts[0].guarantee;
    out->checkpoint_id = sts[0].checkpoint_id;
    return PULSARC_OK;
}
