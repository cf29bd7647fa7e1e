/*
 * Design notes: one writer that writes while there is room and counts
 * always, so the size a caller reserves and the bytes it then gets come
 * from the same lines and cannot disagree, and a caller with a buffer that
 * is usually big enough encodes in one pass. Field presence follows
 * protobuf-c's rules for proto2: required fields always (a NULL string as
 * empty), optional scalars and bytes by their has_ flag, optional strings
 * when not NULL, repeated ones element by element. Pure; any thread.
 */
#include "core/pbenc.h"

#include <string.h>

enum { WT_VARINT = 0, WT_LEN = 2 };

typedef struct pbw {
    uint8_t *p;   /* next byte to write; NULL: count only (or out of room) */
    uint8_t *end; /* end of the room */
    size_t n;     /* bytes so far */
} pbw_t;

static inline void w_varint(pbw_t *w, uint64_t v) {
    if (w->p && w->end - w->p >= 10) { /* room for any varint: no length needed first */
        uint8_t *e = pc_pbenc_put_varint(w->p, v);
        w->n += (size_t)(e - w->p);
        w->p = e;
        return;
    }
    size_t len = pc_pbenc_varint_len(v);
    if (w->p && (size_t)(w->end - w->p) >= len)
        w->p = pc_pbenc_put_varint(w->p, v);
    else
        w->p = NULL;
    w->n += len;
}

static inline void w_raw(pbw_t *w, const void *data, size_t len) {
    if (w->p && (size_t)(w->end - w->p) >= len) {
        if (len)
            memcpy(w->p, data, len);
        w->p += len;
    } else {
        w->p = NULL;
    }
    w->n += len;
}

static pbw_t writer(uint8_t *out, size_t cap) {
    pbw_t w = {out, out ? out + cap : NULL, 0};
    return w;
}

static inline void w_key(pbw_t *w, uint32_t num, int wt) { w_varint(w, (uint64_t)num << 3 | (uint64_t)wt); }

static inline void w_u64(pbw_t *w, uint32_t num, uint64_t v) {
    w_key(w, num, WT_VARINT);
    w_varint(w, v);
}

/* Negative int32s go out sign-extended to ten bytes, as protobuf requires. */
static inline void w_i32(pbw_t *w, uint32_t num, int32_t v) { w_u64(w, num, (uint64_t)(int64_t)v); }

static inline void w_bool(pbw_t *w, uint32_t num, int v) { w_u64(w, num, v ? 1 : 0); }

static inline void w_bytes(pbw_t *w, uint32_t num, const void *data, size_t len) {
    w_key(w, num, WT_LEN);
    w_varint(w, len);
    w_raw(w, data, len);
}

static inline void w_str(pbw_t *w, uint32_t num, const char *s) {
    w_bytes(w, num, s, s ? strlen(s) : 0);
}

static inline void w_opt_str(pbw_t *w, uint32_t num, const char *s) {
    if (s)
        w_str(w, num, s);
}

static inline void w_opt_bin(pbw_t *w, uint32_t num, int has, const ProtobufCBinaryData *b) {
    if (has)
        w_bytes(w, num, b->data, b->len);
}

#define W_OPT(w, kind, num, msg, field)                                                           \
    do {                                                                                          \
        if ((msg)->has_##field)                                                                   \
            kind(w, num, (msg)->field);                                                           \
    } while (0)

/* KeyValue: two required strings, as a length-delimited field. */
static void w_kv(pbw_t *w, uint32_t num, const Pulsar__Proto__KeyValue *kv) {
    size_t klen = kv->key ? strlen(kv->key) : 0, vlen = kv->value ? strlen(kv->value) : 0;
    size_t body = 2 + pc_pbenc_varint_len(klen) + klen + pc_pbenc_varint_len(vlen) + vlen;
    w_key(w, num, WT_LEN);
    w_varint(w, body);
    w_bytes(w, 1, kv->key, klen);
    w_bytes(w, 2, kv->value, vlen);
}

static int kvs_plain(size_t n, Pulsar__Proto__KeyValue *const *kvs) {
    for (size_t i = 0; i < n; i++)
        if (!kvs[i] || kvs[i]->base.n_unknown_fields)
            return 0;
    return 1;
}

static void w_kvs(pbw_t *w, uint32_t num, size_t n, Pulsar__Proto__KeyValue *const *kvs) {
    for (size_t i = 0; i < n; i++)
        w_kv(w, num, kvs[i]);
}

size_t pc_pbenc_send(const Pulsar__Proto__CommandSend *s, uint8_t *out, size_t cap) {
    if (s->message_id || s->base.n_unknown_fields)
        return PC_PBENC_FALLBACK;
    pbw_t w = writer(out, cap);
    w_u64(&w, 1, s->producer_id);
    w_u64(&w, 2, s->sequence_id);
    W_OPT(&w, w_i32, 3, s, num_messages);
    W_OPT(&w, w_u64, 4, s, txnid_least_bits);
    W_OPT(&w, w_u64, 5, s, txnid_most_bits);
    W_OPT(&w, w_u64, 6, s, highest_sequence_id);
    W_OPT(&w, w_bool, 7, s, is_chunk);
    W_OPT(&w, w_bool, 8, s, marker);
    return w.n;
}

/* Fields 1..12: identity, user data, compression, batch size, event time. */
static void md_head(pbw_t *w, const Pulsar__Proto__MessageMetadata *md) {
    w_str(w, 1, md->producer_name);
    w_u64(w, 2, md->sequence_id);
    w_u64(w, 3, md->publish_time);
    w_kvs(w, 4, md->n_properties, md->properties);
    w_opt_str(w, 5, md->replicated_from);
    w_opt_str(w, 6, md->partition_key);
    for (size_t i = 0; i < md->n_replicate_to; i++)
        w_str(w, 7, md->replicate_to[i]);
    W_OPT(w, w_i32, 8, md, compression);
    W_OPT(w, w_u64, 9, md, uncompressed_size);
    W_OPT(w, w_i32, 11, md, num_messages_in_batch);
    W_OPT(w, w_u64, 12, md, event_time);
}

/* Fields 14..30 (13, encryption_keys, falls back before we get here). */
static void md_tail(pbw_t *w, const Pulsar__Proto__MessageMetadata *md) {
    w_opt_str(w, 14, md->encryption_algo);
    w_opt_bin(w, 15, md->has_encryption_param, &md->encryption_param);
    w_opt_bin(w, 16, md->has_schema_version, &md->schema_version);
    W_OPT(w, w_bool, 17, md, partition_key_b64_encoded);
    w_opt_bin(w, 18, md->has_ordering_key, &md->ordering_key);
    if (md->has_deliver_at_time)
        w_u64(w, 19, (uint64_t)md->deliver_at_time);
    W_OPT(w, w_i32, 20, md, marker_type);
    W_OPT(w, w_u64, 22, md, txnid_least_bits);
    W_OPT(w, w_u64, 23, md, txnid_most_bits);
    W_OPT(w, w_u64, 24, md, highest_sequence_id);
    W_OPT(w, w_bool, 25, md, null_value);
    w_opt_str(w, 26, md->uuid);
    W_OPT(w, w_i32, 27, md, num_chunks_from_msg);
    W_OPT(w, w_i32, 28, md, total_chunk_msg_size);
    W_OPT(w, w_i32, 29, md, chunk_id);
    W_OPT(w, w_bool, 30, md, null_partition_key);
}

size_t pc_pbenc_metadata(const Pulsar__Proto__MessageMetadata *md, uint8_t *out, size_t cap) {
    if (md->n_encryption_keys || md->base.n_unknown_fields ||
        !kvs_plain(md->n_properties, md->properties))
        return PC_PBENC_FALLBACK;
    pbw_t w = writer(out, cap);
    md_head(&w, md);
    md_tail(&w, md);
    return w.n;
}

size_t pc_pbenc_single(const Pulsar__Proto__SingleMessageMetadata *sm, uint8_t *out,
                       size_t cap) {
    if (sm->base.n_unknown_fields || !kvs_plain(sm->n_properties, sm->properties))
        return PC_PBENC_FALLBACK;
    pbw_t w = writer(out, cap);
    w_kvs(&w, 1, sm->n_properties, sm->properties);
    w_opt_str(&w, 2, sm->partition_key);
    w_i32(&w, 3, sm->payload_size);
    W_OPT(&w, w_bool, 4, sm, compacted_out);
    W_OPT(&w, w_u64, 5, sm, event_time);
    W_OPT(&w, w_bool, 6, sm, partition_key_b64_encoded);
    w_opt_bin(&w, 7, sm->has_ordering_key, &sm->ordering_key);
    W_OPT(&w, w_u64, 8, sm, sequence_id);
    W_OPT(&w, w_bool, 9, sm, null_value);
    W_OPT(&w, w_bool, 10, sm, null_partition_key);
    return w.n;
}
