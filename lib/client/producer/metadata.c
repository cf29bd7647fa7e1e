/*
 * Design notes: the mapping from message fields to metadata fields, written
 * once for both shapes so a batched and an unbatched message carry exactly
 * the same user data. Nothing here keeps state; io thread only by use.
 * Disabling replication is sent as replicate_to = ["__local__"], the value
 * the broker's replicator recognises (it is what the Java client sends).
 */
#include "client/producer/metadata.h"

#include <stdlib.h>

#include "core/pbenc.h"

static pulsarc_err_t fill_props(pc_md_store_t *st, const pulsarc_msg_t *m) {
    size_t n = m->nprops;
    if (n == 0) { /* the common case allocates nothing */
        st->kvs = NULL;
        st->kvp = NULL;
        return PULSARC_OK;
    }
    st->kvs = calloc(n, sizeof *st->kvs);
    st->kvp = calloc(n, sizeof *st->kvp);
    if (!st->kvs || !st->kvp)
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        pulsar__proto__key_value__init(&st->kvs[i]);
        st->kvs[i].key = m->props[i].name;
        st->kvs[i].value = m->props[i].value;
        st->kvp[i] = &st->kvs[i];
    }
    return PULSARC_OK;
}

static void fill_replication(Pulsar__Proto__MessageMetadata *md, pc_md_store_t *st,
                             const pulsarc_msg_t *m) {
    if (m->repl_disabled) {
        st->local[0] = "__local__";
        md->replicate_to = st->local;
        md->n_replicate_to = 1;
        return;
    }
    size_t n = 0;
    while (m->repl_clusters && m->repl_clusters[n])
        n++;
    md->replicate_to = m->repl_clusters;
    md->n_replicate_to = n;
}

pulsarc_err_t pc_md_fill_user(Pulsar__Proto__MessageMetadata *md, pc_md_store_t *st,
                              const pulsarc_msg_t *m) {
    st->kvs = NULL;
    st->kvp = NULL;
    if (fill_props(st, m))
        return PULSARC_ERR_NOMEM;
    md->n_properties = m->nprops;
    md->properties = st->kvp;
    md->partition_key = m->key;
    md->has_partition_key_b64_encoded = m->key && m->key_b64;
    md->partition_key_b64_encoded = md->has_partition_key_b64_encoded;
    md->has_ordering_key = m->ordering_key != NULL;
    md->ordering_key.data = m->ordering_key;
    md->ordering_key.len = m->ordering_key_len;
    md->has_event_time = m->event_time != 0;
    md->event_time = m->event_time;
    md->has_deliver_at_time = m->deliver_at != 0;
    md->deliver_at_time = (int64_t)m->deliver_at;
    md->has_null_value = md->null_value = m->null_value != 0;
    fill_replication(md, st, m);
    return PULSARC_OK;
}

void pc_md_store_free(pc_md_store_t *st) {
    free(st->kvs);
    free(st->kvp);
    st->kvs = NULL;
    st->kvp = NULL;
}

static void fill_single(Pulsar__Proto__SingleMessageMetadata *sm, const pulsarc_msg_t *m,
                        int64_t seq, Pulsar__Proto__KeyValue **kvp) {
    sm->n_properties = m->nprops;
    sm->properties = kvp;
    sm->partition_key = m->key;
    sm->has_partition_key_b64_encoded = m->key && m->key_b64;
    sm->partition_key_b64_encoded = sm->has_partition_key_b64_encoded;
    sm->has_ordering_key = m->ordering_key != NULL;
    sm->ordering_key.data = m->ordering_key;
    sm->ordering_key.len = m->ordering_key_len;
    sm->has_event_time = m->event_time != 0;
    sm->event_time = m->event_time;
    sm->has_sequence_id = 1;
    sm->sequence_id = (uint64_t)seq;
    sm->has_null_value = sm->null_value = m->null_value != 0;
    sm->payload_size = (int32_t)m->len;
}

/*
 * A batch record of a message without properties, keys or ordering key,
 * written directly, without even filling a SingleMessageMetadata (the
 * others go through the hand encoder of core/pbenc.h). Fields in number order with
 * the same encodings, so the bytes are exactly protobuf-c's.
 */
static int is_plain(const pulsarc_msg_t *m) {
    return m->nprops == 0 && !m->key && !m->ordering_key && m->len <= INT32_MAX;
}

/* room: what the caller appends after the head (the payload, or nothing) */
static pulsarc_err_t append_plain_head(pc_buf_t *out, const pulsarc_msg_t *m, int64_t seq,
                                       size_t room) {
    pulsarc_err_t err = pc_buf_reserve(out, 4 + PC_MD_PLAIN_SINGLE_MAX + room);
    if (err)
        return err;
    uint8_t *start = out->data + out->len + 4, *p = start;
    *p++ = 0x18; /* 3: payload_size */
    p = pc_pbenc_put_varint(p, (uint64_t)m->len);
    if (m->event_time != 0) {
        *p++ = 0x28; /* 5: event_time */
        p = pc_pbenc_put_varint(p, (uint64_t)m->event_time);
    }
    *p++ = 0x40; /* 8: sequence_id */
    p = pc_pbenc_put_varint(p, (uint64_t)seq);
    if (m->null_value) {
        *p++ = 0x48; /* 9: null_value */
        *p++ = 1;
    }
    pc_wr_u32(out->data + out->len, (uint32_t)(p - start));
    out->len += 4 + (size_t)(p - start);
    return PULSARC_OK;
}

static pulsarc_err_t append_head(pc_buf_t *out, const pulsarc_msg_t *m, int64_t seq, size_t room) {
    if (is_plain(m))
        return append_plain_head(out, m, seq, room);
    pc_md_store_t st = {0};
    if (fill_props(&st, m)) {
        pc_md_store_free(&st);
        return PULSARC_ERR_NOMEM;
    }
    Pulsar__Proto__SingleMessageMetadata sm = PULSAR__PROTO__SINGLE_MESSAGE_METADATA__INIT;
    fill_single(&sm, m, seq, st.kvp);
    size_t n = pc_pbenc_single(&sm, NULL, 0);
    int hand = n != PC_PBENC_FALLBACK;
    if (!hand)
        n = pulsar__proto__single_message_metadata__get_packed_size(&sm);
    pulsarc_err_t err = pc_buf_reserve(out, 4 + n + room);
    if (!err) {
        pc_wr_u32(out->data + out->len, (uint32_t)n);
        if (hand)
            pc_pbenc_single(&sm, out->data + out->len + 4, n);
        else
            pulsar__proto__single_message_metadata__pack(&sm, out->data + out->len + 4);
        out->len += 4 + n;
    }
    pc_md_store_free(&st);
    return err;
}

pulsarc_err_t pc_md_append_single(pc_buf_t *out, const pulsarc_msg_t *m, int64_t seq) {
    pulsarc_err_t err = append_head(out, m, seq, m->len);
    return err ? err : pc_buf_append(out, m->data, m->len);
}

pulsarc_err_t pc_md_append_single_head(pc_buf_t *out, const pulsarc_msg_t *m, int64_t seq) {
    return append_head(out, m, seq, 0);
}
