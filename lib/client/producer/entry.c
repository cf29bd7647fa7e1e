/*
 * Design notes: framing one entry — what one SEND frame carries: a single
 * message or a batch, compressed as a whole (docs/PROTOCOL.md §4.7, §5, §6).
 * Io thread only (called while enqueueing or flushing batches). What it
 * needs of its producer comes in a pc_entry_conf_t, so framing never calls
 * back into the producer.
 *
 * Size rule, as the Java client applies it: the *compressed* payload is
 * compared with the broker's maxMessageSize (from CONNECTED); above it a
 * message is chunked when chunkingEnabled, else refused with MSG_TOO_BIG.
 * The metadata rides in the broker's 10 KiB frame padding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "client/producer/metadata.h"
#include "client/producer/producer_int.h"
#include "client/txn/txn.h"
#include "core/err.h"

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void base_md(const pc_entry_conf_t *f, Pulsar__Proto__MessageMetadata *md, int64_t seq) {
    md->producer_name = (char *)f->producer_name;
    md->sequence_id = (uint64_t)seq;
    md->publish_time = wall_ms();
    if (f->schema_version_len) { /* consumers learn which version wrote the message */
        md->has_schema_version = 1;
        md->schema_version.data = (uint8_t *)f->schema_version;
        md->schema_version.len = f->schema_version_len;
    }
}

/* Transactional messages are never batched, so only single entries carry it. */
static void txn_md(Pulsar__Proto__MessageMetadata *md, const send_item_t *it) {
    if (!it->txn)
        return;
    md->has_txnid_most_bits = md->has_txnid_least_bits = 1;
    pc_txn_ids(it->txn, &md->txnid_most_bits, &md->txnid_least_bits);
}

/* Points *data at the bytes to send: the input, or its compressed form in z. */
static pulsarc_err_t compress(const pc_entry_conf_t *f, Pulsar__Proto__MessageMetadata *md,
                              const void *in, size_t len, pc_buf_t *z, const uint8_t **data,
                              size_t *dlen) {
    md->has_uncompressed_size = 1; /* as the Java client, also when not compressed */
    md->uncompressed_size = (uint32_t)len;
    *data = in;
    *dlen = len;
    if (f->codec == PC_CODEC_NONE)
        return PULSARC_OK;
    pulsarc_err_t err = pc_codec_compress(f->codec, in, len, z);
    if (err)
        return err;
    md->has_compression = 1;
    md->compression = (Pulsar__Proto__CompressionType)f->codec;
    *data = z->data;
    *dlen = z->len;
    return PULSARC_OK;
}

static pulsarc_err_t too_big(const pc_entry_conf_t *f, size_t len, char *e, size_t el) {
    return pc_seterr(e, el, PULSARC_ERR_MSG_TOO_BIG,
                     "message of %zu bytes (after compression) exceeds the broker's maximum of "
                     "%zu bytes; enable chunkingEnabled (with batching off) to send it",
                     len, f->max_size);
}

static pulsarc_err_t frame_single(const pc_entry_conf_t *f, send_item_t *it,
                                  Pulsar__Proto__MessageMetadata *md, const uint8_t *data,
                                  size_t len, send_op_t **ops, char *e, size_t el) {
    if (f->chunking && len > f->chunk_limit)
        return pc_chunk_entry(f, it, md, data, len, ops, e, el);
    if (len > f->max_size)
        return too_big(f, len, e, el);
    send_op_t *op = pc_send_op_new(f->op_pool, it->seq, it->seq);
    /* Sent from the message's own bytes when they go out unchanged. */
    int borrow = data == it->msg->data && !f->encryptor && len > 0;
    pulsarc_err_t err = !op       ? PULSARC_ERR_NOMEM
                        : borrow ? pc_send_op_frame_borrowed(f, op, md, data, len, 0)
                                 : pc_send_op_frame(f, op, md, data, len, 0, 0);
    if (err) {
        if (op)
            pc_send_op_free(op);
        return pc_seterr(e, el, err, "could not frame the message");
    }
    op->items = it;
    op->nitems = 1;
    *ops = op;
    return PULSARC_OK;
}

pulsarc_err_t pc_entry_single(const pc_entry_conf_t *f, send_item_t *it, send_op_t **ops,
                              char *e, size_t el) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    pc_md_store_t st;
    pc_buf_t z;
    pc_buf_init(&z, 0);
    const uint8_t *data;
    size_t len;
    pulsarc_err_t err = pc_md_fill_user(&md, &st, it->msg);
    base_md(f, &md, it->seq);
    txn_md(&md, it);
    if (!err)
        err = compress(f, &md, it->msg->data, it->msg->len, &z, &data, &len);
    if (err)
        pc_seterr(e, el, err, "could not %s the message", err == PULSARC_ERR_NOMEM ? "allocate" : "compress");
    else
        err = frame_single(f, it, &md, data, len, ops, e, el);
    pc_md_store_free(&st);
    pc_buf_free(&z);
    return err;
}

/* Batch-level fields come from the first message (docs/PROTOCOL.md §5.2). */
static void batch_md(const pc_entry_conf_t *f, Pulsar__Proto__MessageMetadata *md,
                     const pc_batch_group_t *g, int64_t lo, int64_t hi) {
    const pulsarc_msg_t *m = g->first->msg;
    base_md(f, md, lo);
    md->partition_key = m->key;
    md->has_partition_key_b64_encoded = md->partition_key_b64_encoded = m->key && m->key_b64;
    md->has_ordering_key = m->ordering_key != NULL;
    md->ordering_key.data = m->ordering_key;
    md->ordering_key.len = m->ordering_key_len;
    md->has_num_messages_in_batch = 1;
    md->num_messages_in_batch = g->n;
    md->has_highest_sequence_id = 1;
    md->highest_sequence_id = (uint64_t)hi;
}

static void seq_range(const pc_batch_group_t *g, int64_t *lo, int64_t *hi) {
    *lo = *hi = g->first->seq;
    for (const send_item_t *it = g->first; it; it = it->next) {
        *lo = it->seq < *lo ? it->seq : *lo;
        *hi = it->seq > *hi ? it->seq : *hi;
    }
}

/* The frame holds a copy of the records (compressed or sealed): a big body
 * is not kept for the op's lifetime. */
static void release_body(send_op_t *op) {
    if (op->body.cap > PC_SEND_OP_KEEP_BYTES)
        pc_buf_free(&op->body);
    op->body.len = 0;
}

static pulsarc_err_t frame_batch(const pc_entry_conf_t *f, pc_batch_group_t *g,
                                 const Pulsar__Proto__MessageMetadata *md, const uint8_t *data,
                                 size_t len, send_op_t *op, char *e, size_t el) {
    if (len > f->max_size)
        return too_big(f, len, e, el);
    /* Records that go out as written are sent from the op's body. */
    int borrow = data == op->body.data && !f->encryptor && len > 0;
    pulsarc_err_t err = borrow ? pc_send_op_frame_borrowed(f, op, md, data, len, g->n)
                               : pc_send_op_frame(f, op, md, data, len, g->n, 0);
    if (err)
        return pc_seterr(e, el, err, "could not frame the batch");
    if (!borrow)
        release_body(op);
    op->items = g->first;
    op->nitems = g->n;
    op->batched = 1;
    g->first = g->last = NULL;
    return PULSARC_OK;
}

/*
 * A batch that goes out as written (not compressed, not encrypted) with
 * payloads of GATHER_MIN_AVG bytes or more on average: only the records'
 * heads are written, into op->body; each payload is sent from its message,
 * so its bytes are copied once on the way to the socket. Below that, the
 * two pieces per record cost the connection more than one copy saves
 * (callgrind: 100 B records lose, 1 KiB ones win).
 */
#define GATHER_MIN_AVG 512

static int gather_pays(const pc_entry_conf_t *f, const pc_batch_group_t *g) {
    if (f->codec != PC_CODEC_NONE || f->encryptor)
        return 0;
    size_t bytes = 0;
    for (const send_item_t *it = g->first; it; it = it->next)
        bytes += it->msg->len;
    return bytes >= (size_t)g->n * GATHER_MIN_AVG;
}

static pulsarc_err_t entry_batch_gathered(const pc_entry_conf_t *f, pc_batch_group_t *g,
                                          Pulsar__Proto__MessageMetadata *md, send_op_t *op,
                                          char *e, size_t el) {
    size_t len = 0;
    pulsarc_err_t err = pc_batch_serialize_heads(g, &op->body, &len);
    if (err)
        return pc_seterr(e, el, err, "could not build the batch");
    if (len > f->max_size)
        return too_big(f, len, e, el);
    md->has_uncompressed_size = 1; /* as compress() sets it */
    md->uncompressed_size = (uint32_t)len;
    err = pc_send_op_frame_gathered(f, op, md, g->first, len, g->n);
    if (err)
        return pc_seterr(e, el, err, "could not frame the batch");
    op->items = g->first;
    op->nitems = g->n;
    op->batched = 1;
    g->first = g->last = NULL;
    return PULSARC_OK;
}

pulsarc_err_t pc_entry_batch(const pc_entry_conf_t *f, pc_batch_group_t *g, send_op_t **ops,
                             char *e, size_t el) {
    int64_t lo, hi;
    seq_range(g, &lo, &hi);
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    batch_md(f, &md, g, lo, hi);
    pc_buf_t z;
    pc_buf_init(&z, 0);
    const uint8_t *data;
    size_t len;
    send_op_t *op = pc_send_op_new(f->op_pool, lo, hi);
    if (op && gather_pays(f, g)) {
        pulsarc_err_t err = entry_batch_gathered(f, g, &md, op, e, el);
        if (err)
            pc_send_op_free(op);
        else
            *ops = op;
        return err;
    }
    pulsarc_err_t err = op ? pc_batch_serialize(g, &op->body) : PULSARC_ERR_NOMEM;
    if (!err)
        err = compress(f, &md, op->body.data, op->body.len, &z, &data, &len);
    if (err)
        pc_seterr(e, el, err, "could not build the batch");
    else
        err = frame_batch(f, g, &md, data, len, op, e, el);
    if (err && op)
        pc_send_op_free(op);
    else if (!err)
        *ops = op;
    pc_buf_free(&z);
    return err;
}
