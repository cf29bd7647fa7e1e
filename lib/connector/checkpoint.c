/*
 * Design notes: the checkpoint blob of a source.
 *
 * Layout, little-endian throughout so a blob moves between machines:
 *   "PCSC" u16 version u16 flags(0) u32 nsplits
 *   per split: u16 topic length, topic bytes (UTF-8, no NUL), i32 partition,
 *              u8 flags (1 = has last id, 2 = finished, 4 = has floor,
 *                        8 = floor inclusive),
 *              last id: i64 ledger, i64 entry, i32 batch index, i32 batch size,
 *              floor id: the same four fields,
 *              stop: u8 kind, i64 ledger, i64 entry, i32 batch index,
 *                    i32 batch size, u64 time
 *   (version 2) u32 ntxns, per transaction: u64 most, u64 least,
 *               u8 fate (1 = commit on restore, 0 = abort on restore)
 *   (version 3) u32 reader index, u32 reader count,
 *               u8 flags (1 = Shared / Key_Shared subscription)
 *   u32 CRC32C of every byte before it.
 * Everything a restore needs is inside (no Java serialization, no reference
 * to the configuration that produced it): the stop bound is stored
 * resolved, so a "latest" bound stays frozen across restarts. The
 * floor is the start cursor's id while nothing has been emitted, so a
 * restore before the first message still honours an exclusive or
 * batch-index start. The version is checked before anything else so a later format can be told
 * apart; the CRC is checked before any field is trusted.
 *
 * Parallel readers. Each of N readers writes its own blob holding the
 * splits it owns, stamped "reader i of N". Restoring into a different
 * number of readers first merges the N blobs (pc_ckpt_merge) into one
 * "reader 0 of 1" blob holding every split, from which each new reader
 * takes the splits the assignment rule gives it. A blob of versions 1
 * and 2 reads as reader 0 of 1.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/checkpoint.h"
#include "core/crc32c.h"
#include "core/err.h"

#define CKPT_HEADER 12u
#define CKPT_ID_BYTES 24u
#define CKPT_SPLIT_FIXED (2u + 4u + 1u + 2u * CKPT_ID_BYTES + 1u + CKPT_ID_BYTES + 8u)
#define CKPT_TXN_BYTES 17u
#define CKPT_READER_BYTES 9u
#define CKPT_READER_SHARED 1u
#define CKPT_FLAG_LAST 1u
#define CKPT_FLAG_FINISHED 2u
#define CKPT_FLAG_FLOOR 4u
#define CKPT_FLAG_FLOOR_INCLUSIVE 8u

/* ---------- writer ---------- */

typedef struct wbuf {
    uint8_t *p;
    size_t len;
} wbuf_t;

static void put_u(wbuf_t *w, uint64_t v, unsigned bytes) {
    for (unsigned i = 0; i < bytes; i++)
        w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

static void put_id(wbuf_t *w, const pulsarc_msgid_t *id) {
    put_u(w, (uint64_t)id->ledger_id, 8);
    put_u(w, (uint64_t)id->entry_id, 8);
    put_u(w, (uint32_t)id->batch_index, 4);
    put_u(w, (uint32_t)id->batch_size, 4);
}

static unsigned split_flags(const pc_ckpt_split_t *s) {
    return (s->has_last ? CKPT_FLAG_LAST : 0) | (s->finished ? CKPT_FLAG_FINISHED : 0) |
           (s->has_floor ? CKPT_FLAG_FLOOR : 0) |
           (s->floor_inclusive ? CKPT_FLAG_FLOOR_INCLUSIVE : 0);
}

static void put_split(wbuf_t *w, const pc_ckpt_split_t *s) {
    size_t tl = strlen(s->topic);
    put_u(w, tl, 2);
    memcpy(w->p + w->len, s->topic, tl);
    w->len += tl;
    put_u(w, (uint32_t)s->partition, 4);
    put_u(w, split_flags(s), 1);
    put_id(w, &s->last);
    put_id(w, &s->floor);
    put_u(w, (uint8_t)s->stop.kind, 1);
    put_id(w, &s->stop.id);
    put_u(w, s->stop.time_ms, 8);
}

static size_t encoded_size(const pc_ckpt_t *ck) {
    size_t n = CKPT_HEADER + 4;
    for (size_t i = 0; i < ck->n; i++)
        n += CKPT_SPLIT_FIXED + strlen(ck->splits[i].topic);
    return n + 4 + ck->ntxns * CKPT_TXN_BYTES + CKPT_READER_BYTES;
}

pulsarc_err_t pc_ckpt_encode(const pc_ckpt_t *ck, uint8_t **out, size_t *len) {
    for (size_t i = 0; i < ck->n; i++)
        if (!ck->splits[i].topic || strlen(ck->splits[i].topic) > UINT16_MAX)
            return PULSARC_ERR_INVALID_ARG;
    if (ck->ntxns > PC_CKPT_MAX_TXNS || ck->readers > PC_CKPT_MAX_READERS ||
        ck->reader >= (ck->readers ? ck->readers : 1))
        return PULSARC_ERR_INVALID_ARG;
    wbuf_t w = {malloc(encoded_size(ck)), 0};
    if (!w.p)
        return PULSARC_ERR_NOMEM;
    memcpy(w.p, PC_CKPT_MAGIC, 4);
    w.len = 4;
    put_u(&w, PC_CKPT_VERSION, 2);
    put_u(&w, 0, 2);
    put_u(&w, ck->n, 4);
    for (size_t i = 0; i < ck->n; i++)
        put_split(&w, &ck->splits[i]);
    put_u(&w, ck->ntxns, 4);
    for (size_t i = 0; i < ck->ntxns; i++) {
        put_u(&w, ck->txns[i].most, 8);
        put_u(&w, ck->txns[i].least, 8);
        put_u(&w, ck->txns[i].commit ? 1 : 0, 1);
    }
    put_u(&w, ck->reader, 4);
    put_u(&w, ck->readers ? ck->readers : 1, 4);
    put_u(&w, ck->shared ? CKPT_READER_SHARED : 0, 1);
    put_u(&w, pc_crc32c(0, w.p, w.len), 4);
    *out = w.p;
    *len = w.len;
    return PULSARC_OK;
}

/* ---------- reader ---------- */

typedef struct rbuf {
    const uint8_t *p;
    size_t len, off;
} rbuf_t;

static uint64_t get_u(rbuf_t *r, unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)r->p[r->off + i] << (8 * i);
    r->off += bytes;
    return v;
}

static void get_id(rbuf_t *r, pulsarc_msgid_t *id) {
    id->ledger_id = (int64_t)get_u(r, 8);
    id->entry_id = (int64_t)get_u(r, 8);
    id->batch_index = (int32_t)(uint32_t)get_u(r, 4);
    id->batch_size = (int32_t)(uint32_t)get_u(r, 4);
}

static pulsarc_err_t check_frame(rbuf_t *r, unsigned *version, char *errstr, size_t errlen) {
    if (r->len < CKPT_HEADER + 4 || memcmp(r->p, PC_CKPT_MAGIC, 4) != 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: not a pulsarc source checkpoint (bad magic or too short)");
    r->off = 4;
    *version = (unsigned)get_u(r, 2);
    if (*version < 1 || *version > PC_CKPT_VERSION)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: version %u is not supported (this library reads 1 to %u)",
                         *version, PC_CKPT_VERSION);
    rbuf_t tail = {r->p, r->len, r->len - 4};
    uint32_t want = (uint32_t)get_u(&tail, 4), got = pc_crc32c(0, r->p, r->len - 4);
    if (want != got)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CHECKSUM,
                         "checkpoint: CRC32C mismatch (stored %08x, computed %08x): blob corrupt",
                         want, got);
    r->len -= 4; /* the CRC is not part of the body */
    r->off += 2; /* flags, none defined yet */
    return PULSARC_OK;
}

static pulsarc_err_t get_split(rbuf_t *r, size_t i, pc_ckpt_split_t *s, char *errstr,
                               size_t errlen) {
    if (r->len - r->off < 2)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "checkpoint: split %zu truncated", i);
    size_t tl = (size_t)get_u(r, 2);
    if (tl == 0 || r->len - r->off < tl + CKPT_SPLIT_FIXED - 2)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: split %zu truncated or without a topic", i);
    s->topic = malloc(tl + 1);
    if (!s->topic)
        return PULSARC_ERR_NOMEM;
    memcpy(s->topic, r->p + r->off, tl);
    s->topic[tl] = '\0';
    r->off += tl;
    s->partition = (int32_t)(uint32_t)get_u(r, 4);
    unsigned flags = (unsigned)get_u(r, 1);
    s->has_last = (flags & CKPT_FLAG_LAST) != 0;
    s->finished = (flags & CKPT_FLAG_FINISHED) != 0;
    s->has_floor = (flags & CKPT_FLAG_FLOOR) != 0;
    s->floor_inclusive = (flags & CKPT_FLAG_FLOOR_INCLUSIVE) != 0;
    get_id(r, &s->last);
    get_id(r, &s->floor);
    s->stop.kind = (pulsarc_stop_kind_t)get_u(r, 1);
    get_id(r, &s->stop.id);
    s->stop.time_ms = get_u(r, 8);
    s->last.partition = s->floor.partition = s->stop.id.partition = s->partition;
    if (s->partition < -1 || s->stop.kind > PULSARC_STOP_AFTER_EVENT_TIME)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: split %zu (%s) has an invalid partition or stop kind", i,
                         s->topic);
    return PULSARC_OK;
}

static pulsarc_err_t get_txns(rbuf_t *r, pc_ckpt_t *ck, char *errstr, size_t errlen) {
    if (r->len - r->off < 4)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: transaction list truncated");
    size_t n = (size_t)get_u(r, 4);
    if (n > PC_CKPT_MAX_TXNS || n > (r->len - r->off) / CKPT_TXN_BYTES)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: %zu transactions cannot fit in the %zu bytes left", n,
                         r->len - r->off);
    if (n && !(ck->txns = calloc(n, sizeof *ck->txns)))
        return PULSARC_ERR_NOMEM;
    for (; ck->ntxns < n; ck->ntxns++) {
        pc_ckpt_txn_t *t = &ck->txns[ck->ntxns];
        t->most = get_u(r, 8);
        t->least = get_u(r, 8);
        unsigned fate = (unsigned)get_u(r, 1);
        if (fate > 1)
            return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                             "checkpoint: transaction %zu has an unknown fate %u", ck->ntxns, fate);
        t->commit = (int)fate;
    }
    return PULSARC_OK;
}

static pulsarc_err_t get_reader(rbuf_t *r, pc_ckpt_t *ck, char *errstr, size_t errlen) {
    if (r->len - r->off < CKPT_READER_BYTES)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "checkpoint: reader truncated");
    ck->reader = (uint32_t)get_u(r, 4);
    ck->readers = (uint32_t)get_u(r, 4);
    unsigned flags = (unsigned)get_u(r, 1);
    ck->shared = (flags & CKPT_READER_SHARED) != 0;
    if (ck->readers == 0 || ck->readers > PC_CKPT_MAX_READERS || ck->reader >= ck->readers ||
        (flags & ~CKPT_READER_SHARED))
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: reader %u of %u (flags %u) is not a valid reader", ck->reader,
                         ck->readers, flags);
    return PULSARC_OK;
}

pulsarc_err_t pc_ckpt_decode(const void *buf, size_t len, pc_ckpt_t *ck, char *errstr,
                             size_t errlen) {
    memset(ck, 0, sizeof *ck);
    rbuf_t r = {buf, len, 0};
    unsigned version = 0;
    if (!buf)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "checkpoint: no bytes");
    pulsarc_err_t err = check_frame(&r, &version, errstr, errlen);
    if (err)
        return err;
    size_t n = (size_t)get_u(&r, 4);
    if (n > (r.len - r.off) / CKPT_SPLIT_FIXED)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "checkpoint: %zu splits cannot fit in %zu bytes", n, len);
    ck->splits = calloc(n ? n : 1, sizeof *ck->splits);
    if (!ck->splits)
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < n && !err; i++, ck->n++)
        err = get_split(&r, i, &ck->splits[i], errstr, errlen);
    if (!err && version >= 2)
        err = get_txns(&r, ck, errstr, errlen);
    ck->readers = 1;
    if (!err && version >= 3)
        err = get_reader(&r, ck, errstr, errlen);
    if (!err && r.off != r.len)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                        "checkpoint: %zu trailing bytes", r.len - r.off);
    if (err)
        pc_ckpt_free(ck);
    return err;
}

void pc_ckpt_free(pc_ckpt_t *ck) {
    for (size_t i = 0; ck && i < ck->n; i++)
        free(ck->splits[i].topic);
    if (ck) {
        free(ck->splits);
        free(ck->txns);
        ck->splits = NULL;
        ck->txns = NULL;
        ck->n = ck->ntxns = 0;
    }
}

/* ---------- merging the readers' checkpoints ---------- */

static int same_split(const pc_ckpt_split_t *a, const pc_ckpt_split_t *b) {
    return a->partition == b->partition && !strcmp(a->topic, b->topic);
}

/* Index of s among out's splits, or out->n. */
static size_t find_merged(const pc_ckpt_t *out, const pc_ckpt_split_t *s) {
    size_t i = 0;
    while (i < out->n && !same_split(&out->splits[i], s))
        i++;
    return i;
}

/* Checks that cks are readers 0..n-1 of n, each once, of one subscription kind. */
static pulsarc_err_t check_readers(const pc_ckpt_t *cks, size_t n, char *errstr, size_t errlen) {
    unsigned char *seen = calloc(n, 1);
    if (!seen)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < n && !err; i++) {
        const pc_ckpt_t *c = &cks[i];
        if (c->readers != n)
            err = pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                            "checkpoint %zu is reader %u of %u's, but %zu checkpoints were given "
                            "(one from each reader of one run is needed)", i, c->reader,
                            c->readers, n);
        else if (seen[c->reader]++)
            err = pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                            "reader %u of %zu's checkpoint is given twice", c->reader, n);
        else if (c->shared != cks[0].shared)
            err = pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                            "checkpoints of readers %u and %u come from different subscription "
                            "types (Shared / Key_Shared and Exclusive / Failover)",
                            cks[0].reader, c->reader);
    }
    free(seen);
    return err;
}

static pulsarc_err_t merge_split(pc_ckpt_t *out, const pc_ckpt_split_t *s, uint32_t reader,
                                 uint32_t *owner, char *errstr, size_t errlen) {
    size_t at = find_merged(out, s);
    if (at < out->n && !out->shared)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "split %s partition %d is claimed by reader %u and by reader %u",
                         s->topic, (int)s->partition, owner[at], reader);
    if (at < out->n) { /* one shared subscription: finished only when every reader finished */
        out->splits[at].finished &= s->finished;
        return PULSARC_OK;
    }
    out->splits[at] = *s;
    if (!(out->splits[at].topic = strdup(s->topic)))
        return PULSARC_ERR_NOMEM;
    owner[at] = reader;
    out->n++;
    return PULSARC_OK;
}

static pulsarc_err_t merge_txns(const pc_ckpt_t *cks, size_t n, pc_ckpt_t *out, char *errstr,
                                size_t errlen) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += cks[i].ntxns;
    if (total > PC_CKPT_MAX_TXNS)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "the readers' checkpoints hold %zu transactions, more than %d", total,
                         PC_CKPT_MAX_TXNS);
    if (total && !(out->txns = calloc(total, sizeof *out->txns)))
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < cks[i].ntxns; j++)
            out->txns[out->ntxns++] = cks[i].txns[j];
    return PULSARC_OK;
}

pulsarc_err_t pc_ckpt_merge(const pc_ckpt_t *cks, size_t n, pc_ckpt_t *out, char *errstr,
                            size_t errlen) {
    memset(out, 0, sizeof *out);
    out->readers = 1;
    if (!cks || n == 0 || n > PC_CKPT_MAX_READERS)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "merge: between 1 and %d checkpoints are needed", PC_CKPT_MAX_READERS);
    pulsarc_err_t err = check_readers(cks, n, errstr, errlen);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += cks[i].n;
    uint32_t *owner = err ? NULL : calloc(total ? total : 1, sizeof *owner);
    if (!err && (!owner || !(out->splits = calloc(total ? total : 1, sizeof *out->splits))))
        err = PULSARC_ERR_NOMEM;
    out->shared = cks[0].shared;
    for (size_t i = 0; i < n && !err; i++)
        for (size_t j = 0; j < cks[i].n && !err; j++)
            err = merge_split(out, &cks[i].splits[j], cks[i].reader, owner, errstr, errlen);
    if (!err)
        err = merge_txns(cks, n, out, errstr, errlen);
    free(owner);
    if (err)
        pc_ckpt_free(out);
    return err;
}
