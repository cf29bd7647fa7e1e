/*
 * Design notes: the consumer's hot path. One MESSAGE frame becomes one
 * entry (pooled) holding the payload — the frame's own bytes when the
 * connection offers its read buffer (a large frame: the buffers swap, no
 * copy), else copied once, or decompressed into it — and the entry's
 * metadata decoded into the entry's arena (by hand,
 * core/pbfast.h, protobuf-c for the rare fields). What the messages share
 * (topic, producer, publish time, schema version, redelivery count) is
 * set once in the entry, where the views read it; each message of a batch
 * is then a slot of the entry's message array holding only its own fields
 * (payload slice, id, sequence id, event time; keys and properties
 * cleared as one block unless its record has them): no per-message
 * malloc, lock, payload copy or copy of shared fields.
 *
 * SingleMessageMetadata is read by the minimal wire reader (core/pbwire.h)
 * instead of protobuf-c: it runs once per message and needs no allocation
 * for the common case (no key, no properties). Everything the peer sends
 * is bounds-checked against the entry; a batch claiming more messages than
 * its bytes can hold is refused when the bytes run out, and its slots are
 * reserved for no more records than its bytes can hold.
 *
 * Bounds (docs/PROTOCOL_BOUNDS.md); a violation fails that entry only (it
 * is acked with a validation error, as the broker would redeliver it to a
 * fresh connection forever):
 *   MessageMetadata      hand decoder: flat, bounded by meta_len; protobuf-c
 *                        fallback after core/pbguard.h (depth 16, 10^6
 *                        elements, 64 MiB)
 *   uncompressed size    <= the pool's max_entry_bytes (64 MiB)
 *   batch count          slots reserved for <= payload bytes / 6; records
 *                        read until the bytes run out, never past them
 *   SingleMessageMeta    flat wire reader, bounded by its record's size
 *   chunked message      total <= chunk max bytes, chunks <= 100000 and
 *                        <= total + 1 (client/chunk_assembler.c)
 *
 * Runs on the consumer's io thread; touches only the entry it fills.
 */
#include "client/consumer/rx_decode.h"
#include "client/consumer/rx_crypto.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base64.h"
#include "core/codec.h"
#include "core/pbfast.h"
#include "core/pbguard.h"
#include "core/pbwire.h"

#define VE_UNCOMPRESSED_SIZE PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__UncompressedSizeCorruption
#define VE_DECOMPRESSION PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__DecompressionError
#define VE_CHECKSUM PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__ChecksumMismatch
#define VE_BATCH PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__BatchDeSerializeError

/* SingleMessageMetadata, as offsets into the batch payload. */
enum {
    SM_KEY = 1 << 0, SM_OKEY = 1 << 1, SM_B64 = 1 << 2, SM_COMPACTED = 1 << 3,
    SM_NULL = 1 << 4, SM_EVENT_TIME = 1 << 5, SM_SEQ = 1 << 6, SM_SIZE = 1 << 7, SM_PROPS = 1 << 8
};

typedef struct smm {
    const uint8_t *start, *end;
    unsigned flags;
    int nprops;
    const uint8_t *key, *okey;
    size_t keylen, oklen;
    uint64_t event_time, seq;
    int64_t payload_size;
} smm_t;

static void smm_take(smm_t *s, const pc_pb_field_t *f) {
    switch (f->num) {
    case 1: if (f->wt == 2) s->nprops++, s->flags |= SM_PROPS; break;
    case 2: if (f->wt == 2) s->key = f->bytes, s->keylen = f->len, s->flags |= SM_KEY; break;
    case 3: if (f->wt == 0) s->payload_size = (int32_t)f->v, s->flags |= SM_SIZE; break;
    case 4: if (f->wt == 0 && f->v) s->flags |= SM_COMPACTED; break;
    case 5: if (f->wt == 0) s->event_time = f->v, s->flags |= SM_EVENT_TIME; break;
    case 6: if (f->wt == 0 && f->v) s->flags |= SM_B64; break;
    case 7: if (f->wt == 2) s->okey = f->bytes, s->oklen = f->len, s->flags |= SM_OKEY; break;
    case 8: if (f->wt == 0) s->seq = f->v, s->flags |= SM_SEQ; break;
    case 9: if (f->wt == 0 && f->v) s->flags |= SM_NULL; break;
    default: break;
    }
}

/* Every field after the fast ones, read by the general field reader. */
static int parse_smm_rest(const uint8_t *p, const uint8_t *end, smm_t *s) {
    while (p < end) {
        pc_pb_field_t f;
        if (pc_pb_field(&p, end, &f))
            return -1;
        smm_take(s, &f);
    }
    return 0;
}

/*
 * What producers write is payload_size (3), then maybe event_time (5) and
 * sequence_id (8), in field order: read straight from their one-byte keys.
 * Whatever else follows (or precedes) goes through the general reader.
 * Fields are only read back under their flag, so only flags, counts and
 * the bounds are cleared here.
 */
static inline int parse_smm(const uint8_t *p, const uint8_t *end, smm_t *s) {
    s->start = p;
    s->end = end;
    s->flags = 0;
    s->nprops = 0;
    uint64_t v;
    if (p < end && *p == 0x18) { /* 3: payload_size */
        if (pc_pb_varint((++p, &p), end, &v))
            return -1;
        s->payload_size = (int32_t)v;
        s->flags = SM_SIZE;
        if (p < end && *p == 0x28) { /* 5: event_time */
            if (pc_pb_varint((++p, &p), end, &s->event_time))
                return -1;
            s->flags |= SM_EVENT_TIME;
        }
        if (p < end && *p == 0x40) { /* 8: sequence_id */
            if (pc_pb_varint((++p, &p), end, &s->seq))
                return -1;
            s->flags |= SM_SEQ;
        }
    }
    if (p < end && parse_smm_rest(p, end, s))
        return -1;
    return (s->flags & SM_SIZE) && s->payload_size >= 0 ? 0 : -1;
}

/* ---------- building message views ---------- */

/* The payload in e's data: past the frame's head when the frame was adopted. */
static const uint8_t *entry_payload(const pc_entry_t *e) {
    return e->data_off ? e->data.data + e->data_off : e->data.data;
}

static size_t entry_payload_len(const pc_entry_t *e) { return e->data.len - e->data_off; }

__attribute__((format(printf, 3, 4))) static void result_fail(pc_rx_result_t *r, int ve,
                                                              const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->validation_error = ve;
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

static void push(pc_rx_result_t *r, pulsarc_msg_t *m) {
    if (r->last)
        r->last->next = m;
    else
        r->first = m;
    r->last = m;
    r->n++;
    r->bytes += m->len;
}

void pc_rx_result_discard(pc_rx_result_t *r) {
    pulsarc_msg_t *m = r->first;
    while (m) {
        pulsarc_msg_t *next = m->next;
        pulsarc_msg_destroy(m);
        m = next;
    }
    r->first = r->last = NULL;
    r->n = 0;
    r->bytes = 0;
}

/* Key (decoding base64 keys) into the message; 0 on success. */
static int set_key(pc_arena_t *a, pulsarc_msg_t *m, const uint8_t *k, size_t n, int b64) {
    if (!(m->key = pc_arena_strndup(a, k, n)))
        return -1;
    if (!b64)
        return 0;
    uint8_t *bin = pc_arena_alloc(a, n / 4 * 3 + 1);
    long len = bin ? pc_base64_decode(m->key, n, bin) : -1;
    if (len < 0)
        return 0; /* not valid base64: keep the text key only */
    m->key_b64 = 1;
    m->key_bin = bin;
    m->key_bin_len = (size_t)len;
    return 0;
}

static int set_kv(pc_arena_t *a, pc_prop_kv_t *kv, const uint8_t *p, const uint8_t *end) {
    const uint8_t *k = NULL, *v = NULL;
    size_t kl = 0, vl = 0;
    while (p < end) {
        pc_pb_field_t f;
        if (pc_pb_field(&p, end, &f))
            return -1;
        if (f.num == 1 && f.wt == 2)
            k = f.bytes, kl = f.len;
        else if (f.num == 2 && f.wt == 2)
            v = f.bytes, vl = f.len;
    }
    if (!k)
        return -1;
    kv->name = pc_arena_strndup(a, k, kl);
    kv->value = pc_arena_strndup(a, v ? v : (const uint8_t *)"", vl);
    return kv->name && kv->value ? 0 : -1;
}

static int set_smm_props(pc_arena_t *a, pulsarc_msg_t *m, const smm_t *s) {
    if (!s->nprops)
        return 0;
    m->props = pc_arena_alloc(a, sizeof *m->props * (size_t)s->nprops);
    if (!m->props)
        return -1;
    const uint8_t *p = s->start;
    while (p < s->end) {
        pc_pb_field_t f;
        if (pc_pb_field(&p, s->end, &f))
            return -1;
        if (f.num == 1 && f.wt == 2 && set_kv(a, &m->props[m->nprops++], f.bytes, f.bytes + f.len))
            return -1;
    }
    return 0;
}

/* The per-view fields every message of an entry starts from. */
typedef struct view_tmpl {
    pulsarc_msgid_t id;
    int64_t seq;
    struct pulsarc_consumer_s *owner;
    uint32_t epoch;
} view_tmpl_t;

/*
 * What every message of the entry shares goes to the entry once (its
 * views read it there); t gets what each view carries itself.
 */
static void entry_shared(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                         const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o,
                         view_tmpl_t *t) {
    pc_msg_shared_t *sh = &e->shared;
    sh->topic = e->pool->topic;
    sh->producer_name = md->producer_name; /* lives in the entry's arena */
    int has_sv = md->has_schema_version && md->schema_version.len;
    sh->schema_version = has_sv ? md->schema_version.data : NULL;
    sh->schema_version_len = has_sv ? md->schema_version.len : 0;
    sh->publish_time = md->publish_time;
    sh->redelivery_count = cm->has_redelivery_count ? cm->redelivery_count : 0;
    t->id = (pulsarc_msgid_t){(int64_t)cm->message_id->ledgerid, (int64_t)cm->message_id->entryid,
                              o->partition, -1, 0};
    t->seq = (int64_t)md->sequence_id;
    t->owner = o->owner;
    t->epoch = o->epoch;
}

/*
 * Slot m of e becomes a fresh view of len bytes at data with sequence id
 * seq. No copy of a whole message: the shared fields stay in the entry,
 * the rare ones are cleared as one block. next is the caller's to set;
 * the slot holds no reference yet.
 */
static inline pulsarc_msg_t *view_new(pulsarc_msg_t *m, pc_entry_t *e, const view_tmpl_t *t,
                                      const uint8_t *data, size_t len, int64_t seq) {
    m->data = (uint8_t *)data;
    m->len = len;
    m->id = t->id;
    m->event_time = 0;
    m->seq = seq;
    m->entry = e;
    m->rx_epoch = t->epoch;
    pc_msg_clear_view(m);
    m->rx_owner = t->owner; /* in the cleared block: after it */
    return m;
}

/* A record's own fields; keys and properties (rare) go to the entry's arena. */
static int fill_record(pc_entry_t *e, pulsarc_msg_t *m, const smm_t *s) {
    if (s->flags & SM_EVENT_TIME)
        m->event_time = s->event_time;
    if (s->flags & SM_SEQ)
        m->seq = (int64_t)s->seq;
    m->null_value = (s->flags & SM_NULL) != 0;
    if ((s->flags & SM_KEY) && set_key(&e->arena, m, s->key, s->keylen, (s->flags & SM_B64) != 0))
        return -1;
    if (s->flags & SM_OKEY) {
        if (!(m->ordering_key = (uint8_t *)pc_arena_strndup(&e->arena, s->okey, s->oklen)))
            return -1;
        m->ordering_key_len = s->oklen;
    }
    return set_smm_props(&e->arena, m, s);
}

static int skip_id(const pc_rx_opts_t *o, const pulsarc_msgid_t *id) {
    return o->skip_upto && pulsarc_msgid_compare(id, o->skip_upto) <= 0;
}

static int acked_in_set(const Pulsar__Proto__CommandMessage *cm, int i) {
    size_t w = (size_t)i / 64;
    if (!cm->n_ack_set || w >= cm->n_ack_set)
        return 0;
    return !((uint64_t)cm->ack_set[w] & (UINT64_C(1) << (i % 64)));
}

/* One record of a batch: [u32 size][SingleMessageMetadata][payload]. */
static int next_record(const uint8_t **pp, const uint8_t *end, smm_t *s, const uint8_t **payload) {
    const uint8_t *p = *pp;
    if (end - p < 4)
        return -1;
    uint32_t n = pc_rd_u32(p);
    p += 4;
    if ((size_t)(end - p) < n || parse_smm(p, p + n, s))
        return -1;
    p += n;
    if ((uint64_t)(end - p) < (uint64_t)s->payload_size)
        return -1;
    *payload = p;
    *pp = p + s->payload_size;
    return 0;
}

/* Only the fields every producer writes: no key, property or flag to copy. */
#define SM_PLAIN (SM_SIZE | SM_SEQ | SM_EVENT_TIME)

/*
 * A batch's free slots, taken in order: kept in locals while the batch is
 * built, e->nmsgs set once at the end (batch_finish).
 */
typedef struct slots {
    pulsarc_msg_t *next, *end;
} slots_t;

/*
 * The next slot of e as a view for record s; NULL when the reserved
 * slots are used up or a key or property does not fit. The slot holds no
 * reference yet: build_batch adds them all at once (see batch_finish).
 */
static pulsarc_msg_t *batch_msg(pc_entry_t *e, slots_t *sl, const view_tmpl_t *t, const smm_t *s,
                                const uint8_t *payload) {
    if (sl->next == sl->end)
        return NULL;
    pulsarc_msg_t *m = view_new(sl->next, e, t, payload, (size_t)s->payload_size,
                                (s->flags & SM_SEQ) ? (int64_t)s->seq : t->seq);
    if (s->flags & SM_EVENT_TIME)
        m->event_time = s->event_time;
    if ((s->flags & ~SM_PLAIN) && fill_record(e, m, s))
        return NULL; /* the slot stays free, referenced by no one */
    sl->next++;
    return m;
}

/*
 * A batch record takes at least 6 bytes (4 of size, 2 of payload_size
 * field), so `bytes` of batch payload hold at most this many messages,
 * whatever the metadata claims.
 */
static size_t records_fit(size_t bytes) { return bytes / 6 + 1; }

static size_t at_most(size_t claimed, size_t bound) { return claimed < bound ? claimed : bound; }

/* Message slots for a batch. */
static int reserve_batch(pc_entry_t *e, int n) {
    return pc_entry_reserve_msgs(e, at_most(n > 0 ? (size_t)n : 0, records_fit(entry_payload_len(e))));
}

/*
 * Flow permits an entry costs: 1, or for a batch its message count. A
 * count larger than the entry's bytes can hold is a broker's lie (or
 * garbage); believing it would make the refund of a discarded entry
 * grant the broker that many permits. Compressed payloads are bounded by
 * their uncompressed size, itself capped at the entry limit.
 */
static uint32_t entry_permits(const Pulsar__Proto__MessageMetadata *md, size_t payload_len,
                              size_t limit) {
    if (!md->has_num_messages_in_batch || md->num_messages_in_batch <= 0)
        return 1;
    size_t bytes = payload_len;
    if (md->has_compression && md->compression != PULSAR__PROTO__COMPRESSION_TYPE__NONE)
        bytes = at_most(md->has_uncompressed_size ? md->uncompressed_size : 0, limit);
    return (uint32_t)at_most((size_t)md->num_messages_in_batch, records_fit(bytes));
}

/* n views of e made: a reference each (e is private to this thread still). */
static void ref_views(pc_entry_t *e, size_t n) {
    atomic_store_explicit(&e->refs, atomic_load_explicit(&e->refs, memory_order_relaxed) + (int)n,
                          memory_order_relaxed);
}

/*
 * The messages made so far become the result: a slot of e each (slots
 * are taken only for messages made), one reference on e each, added at
 * once (e is still private to this thread), and the list ends.
 */
static void batch_finish(pc_entry_t *e, pc_rx_result_t *r, pulsarc_msg_t *last, size_t made,
                         size_t bytes) {
    e->nmsgs += made;
    ref_views(e, made);
    if (last)
        last->next = NULL;
    r->last = last;
    r->n = made;
    r->bytes = bytes;
}

/*
 * pc_pb_varint with three-byte values inline too: a producer's sequence
 * ids need three bytes after its first 16384 messages.
 */
static inline int rec_varint(const uint8_t **pp, const uint8_t *lim, uint64_t *v) {
    const uint8_t *p = *pp;
    if (p < lim && p[0] < 0x80) {
        *v = p[0];
        *pp = p + 1;
        return 0;
    }
    if (lim - p >= 2 && p[1] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
        return 0;
    }
    if (lim - p >= 3 && p[2] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
        *pp = p + 3;
        return 0;
    }
    return pc_pb_varint_slow(pp, lim, v);
}

/*
 * The record every producer writes: payload_size, then maybe sequence_id,
 * nothing else. Read into locals (no smm_t in memory) for the per-message
 * loop; 0 when the record is anything else, which parse_smm then reads.
 */
static inline int plain_record(const uint8_t *q, const uint8_t *rend, uint64_t *size,
                               uint64_t *seq, unsigned *flags) {
    if (q == rend || *q != 0x18 || pc_pb_varint((++q, &q), rend, size))
        return 0;
    *flags = SM_SIZE;
    if (q < rend && *q == 0x40) {
        if (rec_varint((++q, &q), rend, seq))
            return 0;
        *flags = SM_SIZE | SM_SEQ;
    }
    return q == rend && *size <= INT32_MAX;
}

/* Skipped records: compacted away, acked already, or before the start. */
static int record_skipped(const pc_rx_opts_t *o, const Pulsar__Proto__CommandMessage *cm,
                          view_tmpl_t *t, unsigned flags, int i) {
    t->id.batch_index = i;
    return (flags & SM_COMPACTED) || acked_in_set(cm, i) || skip_id(o, &t->id);
}

enum { REC_MADE, REC_SKIPPED, REC_MALFORMED, REC_NO_MEMORY };

/* Record i of the batch at *pp into *out (a fresh view in a slot of e). */
static inline int batch_record(pc_entry_t *e, slots_t *sl, view_tmpl_t *t,
                               const Pulsar__Proto__CommandMessage *cm,
                               const pc_rx_opts_t *o, int filter, int i, const uint8_t **pp,
                               const uint8_t *end, pulsarc_msg_t **out) {
    const uint8_t *p = *pp;
    if (end - p < 4)
        return REC_MALFORMED;
    uint32_t reclen = pc_rd_u32(p);
    if ((size_t)(end - p - 4) < reclen)
        return REC_MALFORMED;
    const uint8_t *rend = p + 4 + reclen;
    uint64_t size, seq = 0;
    unsigned flags;
    if (!plain_record(p + 4, rend, &size, &seq, &flags)) { /* keys, properties, flags */
        smm_t sm;
        const uint8_t *payload;
        if (next_record(pp, end, &sm, &payload))
            return REC_MALFORMED;
        if ((filter || (sm.flags & SM_COMPACTED)) && record_skipped(o, cm, t, sm.flags, i))
            return REC_SKIPPED;
        if (!(*out = batch_msg(e, sl, t, &sm, payload)))
            return REC_NO_MEMORY;
        (*out)->id.batch_index = i;
        return REC_MADE;
    }
    if ((uint64_t)(end - rend) < size)
        return REC_MALFORMED;
    *pp = rend + size;
    if (filter && record_skipped(o, cm, t, flags, i))
        return REC_SKIPPED;
    if (sl->next == sl->end)
        return REC_NO_MEMORY;
    pulsarc_msg_t *m = *out =
        view_new(sl->next++, e, t, rend, (size_t)size, (flags & SM_SEQ) ? (int64_t)seq : t->seq);
    m->id.batch_index = i;
    return REC_MADE;
}

static void build_batch(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                        const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o,
                        pc_rx_result_t *r) {
    /* An empty payload has no buffer: point at a static byte, never offset NULL. */
    const uint8_t *p = e->data.data ? entry_payload(e) : (const uint8_t *)"";
    const uint8_t *end = p + entry_payload_len(e);
    int n = md->num_messages_in_batch;
    if (reserve_batch(e, n)) {
        result_fail(r, -2, "out of memory decoding a batch of %d", n);
        return;
    }
    view_tmpl_t t;
    entry_shared(e, md, cm, o, &t);
    t.id.batch_size = n;
    slots_t sl = {NULL, NULL};
    if (e->msgs) /* an empty batch may have none reserved: never offset NULL */
        sl = (slots_t){e->msgs + e->nmsgs, e->msgs + e->capmsgs};
    int filter = cm->n_ack_set || o->skip_upto;
    pulsarc_msg_t **link = &r->first, *last = NULL;
    size_t bytes = 0;
    int i, st = REC_MADE;
    for (i = 0; i < n; i++) {
        pulsarc_msg_t *m;
        st = batch_record(e, &sl, &t, cm, o, filter, i, &p, end, &m);
        if (st == REC_MADE) {
            *link = last = m;
            link = &m->next;
            bytes += m->len;
        } else if (st != REC_SKIPPED) {
            break;
        }
    }
    /* a slot taken per message made, counted once here */
    batch_finish(e, r, last, sl.next ? (size_t)(sl.next - e->msgs) - e->nmsgs : 0, bytes);
    if (st == REC_MALFORMED || st == REC_NO_MEMORY) {
        pc_rx_result_discard(r);
        if (st == REC_MALFORMED)
            result_fail(r, VE_BATCH, "batch record %d of %d is malformed or truncated", i, n);
        else
            result_fail(r, -2, "out of memory decoding a batch of %d", n);
    }
}

static int fill_from_md(pc_entry_t *e, pulsarc_msg_t *m, const Pulsar__Proto__MessageMetadata *md) {
    if (md->partition_key &&
        set_key(&e->arena, m, (const uint8_t *)md->partition_key, strlen(md->partition_key),
                md->has_partition_key_b64_encoded && md->partition_key_b64_encoded))
        return -1;
    if (md->has_ordering_key) {
        m->ordering_key = md->ordering_key.data;
        m->ordering_key_len = md->ordering_key.len;
    }
    m->event_time = md->has_event_time ? md->event_time : 0;
    m->null_value = md->has_null_value && md->null_value;
    if (!md->n_properties)
        return 0;
    m->props = pc_arena_alloc(&e->arena, sizeof *m->props * md->n_properties);
    if (!m->props)
        return -1;
    for (size_t i = 0; i < md->n_properties; i++) {
        m->props[i].name = md->properties[i]->key;
        m->props[i].value = md->properties[i]->value ? md->properties[i]->value : (char *)"";
    }
    m->nprops = md->n_properties;
    return 0;
}

static void build_single(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                         const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o,
                         pc_rx_result_t *r) {
    view_tmpl_t t;
    entry_shared(e, md, cm, o, &t);
    const pulsarc_msgid_t id = t.id;
    if (skip_id(o, &id))
        return;
    pulsarc_msg_t *m = NULL;
    if (!pc_entry_reserve_msgs(e, 1)) {
        m = view_new(&e->msgs[e->nmsgs++], e, &t, entry_payload(e), entry_payload_len(e), t.seq);
        m->next = NULL;
        ref_views(e, 1);
    }
    if (!m || fill_from_md(e, m, md)) {
        if (m)
            pulsarc_msg_destroy(m);
        result_fail(r, -2, "out of memory decoding entry %lld:%lld", (long long)id.ledger_id,
                    (long long)id.entry_id);
        return;
    }
    push(r, m);
}

/* ---------- payload ---------- */

static int decompress_into(pc_buf_t *dst, const Pulsar__Proto__MessageMetadata *md,
                           const uint8_t *src, size_t len, size_t limit, pc_rx_result_t *r) {
    pc_codec_t codec = (pc_codec_t)md->compression;
    if (!pc_codec_available(codec)) {
        result_fail(r, VE_DECOMPRESSION, "entry uses codec %d (%s), which this build cannot decode",
                    (int)md->compression, pc_codec_name(codec));
        return -1;
    }
    if (!md->has_uncompressed_size || md->uncompressed_size > limit) {
        result_fail(r, VE_UNCOMPRESSED_SIZE, "uncompressed size %u is missing or above the limit %zu",
                    md->uncompressed_size, limit);
        return -1;
    }
    dst->len = 0;
    char why[200];
    if (pc_buf_reserve(dst, md->uncompressed_size) ||
        pc_codec_decompress(codec, src, len, dst->data, md->uncompressed_size, why, sizeof why)) {
        result_fail(r, VE_DECOMPRESSION, "%s payload does not decompress to %u bytes: %s",
                    pc_codec_name(codec), md->uncompressed_size, why);
        return -1;
    }
    dst->len = md->uncompressed_size;
    return 0;
}

/*
 * The frame's bytes become e's (their buffer changes hands with e's own,
 * see pc_frame_adopt) when the payload is used as it came: a batch of
 * 100 KB is then not copied at all. 0 when taken.
 */
__attribute__((noinline)) static int adopt_payload(pc_entry_t *e, const pc_frame_t *f,
                                                   const uint8_t *src, size_t len) {
    if (src != f->payload || len != f->payload_len || len > e->pool->max_entry_bytes)
        return -1;
    size_t off = (size_t)(f->payload - f->source->data);
    e->data.len = 0;
    if (pc_frame_adopt(f, &e->data))
        return -1;
    e->data_off = off;
    return 0;
}

/* md NULL: the bytes as they are (an entry left encrypted). Inlined: as a
 * call it cost a small frame 32 instructions of register saves. */
__attribute__((always_inline)) static inline int load_payload(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md, const pc_frame_t *f,
                        const uint8_t *src, size_t len, pc_rx_result_t *r) {
    if (md && md->has_compression && md->compression != PULSAR__PROTO__COMPRESSION_TYPE__NONE)
        return decompress_into(&e->data, md, src, len, e->pool->max_entry_bytes, r);
    if (f->source && !adopt_payload(e, f, src, len)) /* kept out of line: small frames pass by */
        return 0;
    e->data.len = 0;
    if (pc_buf_append(&e->data, src, len)) {
        result_fail(r, VE_UNCOMPRESSED_SIZE, "entry of %zu bytes is above the limit %zu", len,
                    e->pool->max_entry_bytes);
        return -1;
    }
    return 0;
}

static void build(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                  const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o, pc_rx_result_t *r) {
    if (md->has_num_messages_in_batch)
        build_batch(e, md, cm, o, r);
    else
        build_single(e, md, cm, o, r);
}

/* CONSUME: the entry's raw bytes as one message, marked undecrypted. */
static void build_undecrypted(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                              const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o,
                              pc_rx_result_t *r) {
    build_single(e, md, cm, o, r);
    for (pulsarc_msg_t *m = r->first; m; m = m->next)
        m->undecrypted = 1;
}


/*
 * protobuf-c for the metadata the fast decoder leaves, after the bounds
 * check (core/pbguard.h): a hostile entry fails alone, like any corrupt
 * entry, instead of exhausting the stack or the memory of the io thread.
 */
static Pulsar__Proto__MessageMetadata *unpack_metadata_bounded(ProtobufCAllocator *al,
                                                               const pc_frame_t *f,
                                                               pc_rx_result_t *r) {
    pc_pbguard_result_t g;
    if (pc_pbguard_check(&pulsar__proto__message_metadata__descriptor, f->meta, f->meta_len, NULL,
                         &g) == PC_PBG_OK)
        return pulsar__proto__message_metadata__unpack(al, f->meta_len, f->meta);
    char why[200];
    const Pulsar__Proto__MessageIdData *id = f->cmd->message->message_id;
    result_fail(r, VE_BATCH, "entry %llu:%llu metadata refused: %s", (unsigned long long)id->ledgerid,
                (unsigned long long)id->entryid, pc_pbguard_describe(&g, NULL, why, sizeof why));
    return NULL;
}

/*
 * A clean result. Field by field: clearing the whole error text would be
 * a quarter of the work of a small unbatched entry; it is a C string.
 */
static void result_init(pc_rx_result_t *r) {
    r->first = r->last = NULL;
    r->n = 0;
    r->bytes = 0;
    r->permits = 1;
    r->validation_error = -1;
    r->entry_id = (pulsarc_msgid_t){0, 0, 0, 0, 0};
    r->error[0] = '\0';
    r->chunk_entry = NULL;
    r->chunk_meta = NULL;
    r->chunk_data = NULL;
    r->chunk_len = 0;
}

void pc_rx_decode(pc_rxpool_t *pool, const pc_frame_t *f, const pc_rx_opts_t *o,
                  pc_rx_result_t *r) {
    result_init(r);
    const Pulsar__Proto__CommandMessage *cm = f->cmd->message;
    r->entry_id = (pulsarc_msgid_t){(int64_t)cm->message_id->ledgerid, (int64_t)cm->message_id->entryid,
                                    o->partition, -1, 0};
    if (!f->has_payload || !f->checksum_ok) {
        result_fail(r, VE_CHECKSUM, "entry %llu:%llu failed its CRC32C check",
                    (unsigned long long)cm->message_id->ledgerid,
                    (unsigned long long)cm->message_id->entryid);
        return;
    }
    pc_entry_t *e = pc_entry_get(pool);
    if (!e) {
        result_fail(r, -2, "out of memory");
        return;
    }
    ProtobufCAllocator al = pc_arena_allocator(&e->arena);
    Pulsar__Proto__MessageMetadata *md = pc_fast_metadata(f->meta, f->meta_len, &al);
    if (!md) /* something the fast decoder leaves to protobuf-c */
        md = unpack_metadata_bounded(&al, f, r);
    if (!md && r->error[0]) {
        pc_entry_unref(e);
        return;
    }
    if (!md) {
        result_fail(r, VE_BATCH, "entry %llu:%llu has metadata that does not parse",
                    (unsigned long long)cm->message_id->ledgerid,
                    (unsigned long long)cm->message_id->entryid);
        pc_entry_unref(e);
        return;
    }
    int batched = md->has_num_messages_in_batch;
    r->permits = entry_permits(md, f->payload_len, e->pool->max_entry_bytes);
    const uint8_t *src = f->payload;
    size_t len = f->payload_len;
    if (!batched && md->has_num_chunks_from_msg && md->num_chunks_from_msg > 1) {
        if (pc_rx_open_chunk(o, md, &src, &len, r)) { /* each chunk is encrypted alone */
            pc_entry_unref(e);
            return;
        }
        r->chunk_entry = e; /* the assembler copies the slice and drops e */
        r->chunk_meta = md;
        r->chunk_data = src;
        r->chunk_len = len;
        return;
    }
    int enc = pc_rx_open_encrypted(o, md, &src, &len, r); /* end-to-end encryption */
    if (enc == 1 && !load_payload(e, NULL, f, src, len, r))
        build_undecrypted(e, md, cm, o, r);
    else if (enc == 0 && !load_payload(e, md, f, src, len, r))
        build(e, md, cm, o, r);
    pc_entry_unref(e);
}

void pc_rx_decode_entry(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                        const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o,
                        pc_rx_result_t *r) {
    result_init(r);
    if (md->has_compression && md->compression != PULSAR__PROTO__COMPRESSION_TYPE__NONE) {
        pc_buf_t out;
        pc_buf_init(&out, e->pool->max_entry_bytes);
        if (decompress_into(&out, md, entry_payload(e), entry_payload_len(e), e->pool->max_entry_bytes, r)) {
            pc_buf_free(&out);
            pc_entry_unref(e);
            return;
        }
        pc_buf_free(&e->data);
        e->data = out;
        e->data_off = 0;
    }
    build(e, md, cm, o, r);
    pc_entry_unref(e);
}
