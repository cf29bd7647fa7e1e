/*
 * Design notes: one SEND frame in flight (an op): allocating it, encoding
 * its frame once (kept byte for byte for resends), freeing it. Shared by
 * entry.c and chunker.c so framing reads top-down: entry -> chunker ->
 * send_op. An uncompressed, unencrypted single message is not copied into
 * the op: its frame holds the head, and the payload goes to the connection
 * from the message itself (one copy fewer on the way to the socket; the
 * message lives until the op completes it). An uncompressed, unencrypted
 * batch is sent the same way from the op's body, where its records were
 * written, or, gathered, from the messages themselves with only the
 * records' heads in the body. Large pieces (payloads, a compressed frame)
 * are lent to the connection (pc_conn_send_borrowed), which on plain TCP
 * writes them from here with one gathered write, so their bytes are not
 * copied at all on the way to the socket; whoever frees an op that may
 * still be lent (producer.c's complete_op) first has the connections copy
 * what they borrow. A finished op goes back to its producer's pool with its frame
 * buffer, so an unbatched message costs neither an op nor a frame
 * allocation once the pool has filled. Io thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "client/producer/producer_int.h"
#include "core/crc32c.h"
#include "crypto/crypto.h"
#include "net/conn.h"

void pc_send_op_pool_init(pc_send_op_pool_t *pool, int max) {
    pool->free = NULL;
    pool->n = 0;
    pool->max = max > 0 ? max : 0;
}

void pc_send_op_pool_clear(pc_send_op_pool_t *pool) {
    while (pool->free) {
        send_op_t *op = pool->free;
        pool->free = op->next;
        pc_buf_free(&op->frame);
        pc_buf_free(&op->body);
        free(op);
    }
    pool->n = 0;
}

send_op_t *pc_send_op_new(pc_send_op_pool_t *pool, int64_t seq, int64_t highest_seq) {
    send_op_t *op = pool ? pool->free : NULL;
    if (op) {
        pool->free = op->next;
        pool->n--;
        pc_buf_t frame = op->frame, body = op->body; /* bytes reused, lengths start over */
        memset(op, 0, sizeof *op);
        op->frame = frame;
        op->frame.len = 0;
        op->body = body;
        op->body.len = 0;
    } else if ((op = calloc(1, sizeof *op)) != NULL) {
        pc_buf_init(&op->frame, 0);
        pc_buf_init(&op->body, 0);
    } else {
        return NULL;
    }
    op->pool = pool;
    op->seq = seq;
    op->highest_seq = highest_seq;
    return op;
}

void pc_send_op_free(send_op_t *op) {
    pc_send_op_pool_t *pool = op->pool;
    if (pool && pool->n < pool->max && op->frame.cap <= PC_SEND_OP_KEEP_BYTES &&
        op->body.cap <= PC_SEND_OP_KEEP_BYTES) {
        op->items = NULL;
        op->next = pool->free;
        pool->free = op;
        pool->n++;
        return;
    }
    pc_buf_free(&op->frame);
    pc_buf_free(&op->body);
    free(op);
}

/* The SEND command for op in *send, wrapped in *cmd (which points at it). */
static void send_cmd(const pc_entry_conf_t *f, const send_op_t *op,
                     const Pulsar__Proto__MessageMetadata *md, int num_messages, int is_chunk,
                     Pulsar__Proto__CommandSend *out, pc_cmd_t *cmd) {
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    send.producer_id = f->producer_id;
    send.sequence_id = (uint64_t)op->seq;
    send.has_num_messages = num_messages > 0;
    send.num_messages = num_messages;
    send.has_highest_sequence_id = op->highest_seq > op->seq;
    send.highest_sequence_id = (uint64_t)op->highest_seq;
    send.has_is_chunk = send.is_chunk = is_chunk != 0;
    send.has_txnid_most_bits = md->has_txnid_most_bits; /* the broker reads both places */
    send.txnid_most_bits = md->txnid_most_bits;
    send.has_txnid_least_bits = md->has_txnid_least_bits;
    send.txnid_least_bits = md->txnid_least_bits;
    *out = send;
    *cmd = (pc_cmd_t)PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd->type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd->send = out;
}

pulsarc_err_t pc_send_op_frame(const pc_entry_conf_t *f, send_op_t *op,
                               const Pulsar__Proto__MessageMetadata *md, const void *payload,
                               size_t len, int num_messages, int is_chunk) {
    Pulsar__Proto__CommandSend send;
    pc_cmd_t cmd;
    send_cmd(f, op, md, num_messages, is_chunk, &send, &cmd);
    /* End-to-end encryption of what this frame carries: after compression
     * and per chunk, as the Java client does (a no-op without encryptor). */
    Pulsar__Proto__MessageMetadata emd = *md;
    const uint8_t *data = payload;
    pulsarc_err_t err = pc_encryptor_seal(f->encryptor, &emd, &data, &len, NULL, 0);
    return err ? err : pc_frame_encode_payload(&op->frame, &cmd, &emd, data, len);
}

pulsarc_err_t pc_send_op_frame_borrowed(const pc_entry_conf_t *f, send_op_t *op,
                                        const Pulsar__Proto__MessageMetadata *md,
                                        const uint8_t *payload, size_t len, int num_messages) {
    Pulsar__Proto__CommandSend send;
    pc_cmd_t cmd;
    send_cmd(f, op, md, num_messages, 0, &send, &cmd);
    pulsarc_err_t err = pc_frame_encode_payload_head(&op->frame, &cmd, md, payload, len);
    if (!err) {
        op->tail = payload;
        op->tail_len = len;
    }
    return err;
}

/*
 * Wire layout of the head (docs/PROTOCOL.md): [total u32][cmd size u32][cmd]
 * [magic u16][crc u32][metadata size u32][metadata]. Framed with an empty
 * payload, the head is right but for the total (payload not counted) and
 * the checksum (metadata only), which the records then extend.
 */
pulsarc_err_t pc_send_op_frame_gathered(const pc_entry_conf_t *f, send_op_t *op,
                                        const Pulsar__Proto__MessageMetadata *md,
                                        const send_item_t *items, size_t len, int num_messages) {
    Pulsar__Proto__CommandSend send;
    pc_cmd_t cmd;
    send_cmd(f, op, md, num_messages, 0, &send, &cmd);
    static const uint8_t none;
    pulsarc_err_t err = pc_frame_encode_payload_head(&op->frame, &cmd, md, &none, 0);
    uint8_t *h = op->frame.data;
    if (err)
        return err;
    if ((uint64_t)pc_rd_u32(h) + len > UINT32_MAX)
        return PULSARC_ERR_MSG_TOO_BIG;
    size_t crc_at = 8 + pc_rd_u32(h + 4) + 2;
    uint32_t crc = pc_rd_u32(h + crc_at);
    size_t off = 0;
    for (const send_item_t *it = items; it; it = it->next) {
        size_t head = 4 + pc_rd_u32(op->body.data + off);
        crc = pc_crc32c(crc, op->body.data + off, head);
        crc = pc_crc32c(crc, it->msg->data, it->msg->len);
        off += head;
    }
    pc_wr_u32(h, (uint32_t)(pc_rd_u32(h) + len));
    pc_wr_u32(h + crc_at, crc);
    op->gathered = 1;
    return PULSARC_OK;
}

/* The records of a gathered batch, each head then its payload. */
static pulsarc_err_t write_gathered(const send_op_t *op, pc_conn_t *conn) {
    size_t off = 0;
    pulsarc_err_t err = PULSARC_OK;
    for (const send_item_t *it = op->items; it && !err; it = it->next) {
        size_t head = 4 + pc_rd_u32(op->body.data + off);
        err = pc_conn_send_raw(conn, op->body.data + off, head);
        if (!err && it->msg->len)
            err = pc_conn_send_borrowed(conn, it->msg->data, it->msg->len);
        off += head;
    }
    return err;
}

void pc_send_op_write(const send_op_t *op, pc_conn_t *conn) {
    if (pc_conn_send_borrowed(conn, op->frame.data, op->frame.len) != PULSARC_OK)
        return;
    if (op->gathered) {
        if (write_gathered(op, conn) == PULSARC_ERR_NOMEM) /* as below: a torn frame */
            pc_conn_close(conn, PULSARC_ERR_NOMEM, "out of memory queueing a batch for the broker");
        return;
    }
    if (!op->tail_len)
        return;
    /* Straight after its head: nothing else is queued in between. A head
     * queued without its payload would garble the stream: the connection
     * goes, and the producer resends on the next one. */
    if (pc_conn_send_borrowed(conn, op->tail, op->tail_len) == PULSARC_ERR_NOMEM)
        pc_conn_close(conn, PULSARC_ERR_NOMEM, "out of memory queueing a message for the broker");
}
