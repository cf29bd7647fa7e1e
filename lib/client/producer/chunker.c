/*
 * Design notes: splitting one too-big entry into chunks (docs/PROTOCOL.md §4.8),
 * io thread only. The payload is compressed first and split after, so a
 * consumer reassembles, then decompresses. Every chunk repeats the
 * message's metadata with the same sequence id and uuid
 * ("<producerName>-<sequenceId>", as the Java client names it), plus
 * num_chunks_from_msg, total_chunk_msg_size (compressed) and chunk_id.
 * Each chunk is its own op; only the last one carries the item, so the
 * sender hears once, with the last chunk's message id, after all landed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "client/producer/producer_int.h"
#include "core/err.h"

/* Room for the payload in a chunk once the metadata is accounted for. */
static size_t chunk_room(const pc_entry_conf_t *f, Pulsar__Proto__MessageMetadata *md) {
    size_t limit = f->chunk_limit;
    md->num_chunks_from_msg = INT32_MAX; /* widest varints: an upper bound */
    md->chunk_id = INT32_MAX;
    size_t mdsize = pulsar__proto__message_metadata__get_packed_size(md);
    return limit > mdsize ? limit - mdsize : 0;
}

static send_op_t *chunk_op(const pc_entry_conf_t *f, const send_item_t *it,
                           const Pulsar__Proto__MessageMetadata *md, const uint8_t *data,
                           size_t len) {
    send_op_t *op = pc_send_op_new(f->op_pool, it->seq, it->seq);
    if (!op)
        return NULL;
    if (pc_send_op_frame(f, op, md, data, len, 0, 1) != PULSARC_OK) {
        pc_send_op_free(op);
        return NULL;
    }
    return op;
}

static void free_ops(send_op_t *op) {
    while (op) {
        send_op_t *next = op->next;
        pc_send_op_free(op);
        op = next;
    }
}

pulsarc_err_t pc_chunk_entry(const pc_entry_conf_t *f, send_item_t *it,
                             Pulsar__Proto__MessageMetadata *md, const uint8_t *payload,
                             size_t len, send_op_t **ops, char *e, size_t el) {
    char uuid[320];
    snprintf(uuid, sizeof uuid, "%s-%lld", f->producer_name, (long long)it->seq);
    md->uuid = uuid;
    md->has_num_chunks_from_msg = md->has_total_chunk_msg_size = md->has_chunk_id = 1;
    md->total_chunk_msg_size = (int32_t)len;
    size_t room = chunk_room(f, md);
    if (room == 0 || len > INT32_MAX)
        return pc_seterr(e, el, PULSARC_ERR_MSG_TOO_BIG, "message of %zu bytes cannot be chunked", len);
    int n = (int)((len + room - 1) / room);
    md->num_chunks_from_msg = n;
    send_op_t *first = NULL, **tail = &first;
    for (int i = 0; i < n; i++) {
        size_t off = (size_t)i * room, sz = len - off < room ? len - off : room;
        md->chunk_id = i;
        send_op_t *op = chunk_op(f, it, md, payload + off, sz);
        if (!op) {
            free_ops(first);
            return pc_seterr(e, el, PULSARC_ERR_NOMEM, "could not frame chunk %d of %d", i, n);
        }
        *tail = op;
        tail = &op->next;
    }
    send_op_t *last = first;
    while (last->next)
        last = last->next;
    last->items = it;
    last->nitems = 1;
    *ops = first;
    return PULSARC_OK;
}
