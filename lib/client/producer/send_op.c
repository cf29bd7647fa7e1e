/*
 * Design notes: one SEND frame in flight (an op): allocating it, encoding
 * its frame once (kept byte for byte for resends), freeing it. Shared by
 * entry.c and chunker.c so framing reads top-down: entry -> chunker ->
 * send_op. Io thread only.
 */
#include <stdlib.h>

#include "client/producer/producer_int.h"
#include "crypto/crypto.h"

send_op_t *pc_send_op_new(int64_t seq, int64_t highest_seq) {
    send_op_t *op = calloc(1, sizeof *op);
    if (op) {
        op->seq = seq;
        op->highest_seq = highest_seq;
        pc_buf_init(&op->frame, 0);
    }
    return op;
}

void pc_send_op_free(send_op_t *op) {
    pc_buf_free(&op->frame);
    free(op);
}

pulsarc_err_t pc_send_op_frame(const pc_entry_conf_t *f, send_op_t *op,
                               const Pulsar__Proto__MessageMetadata *md, const void *payload,
                               size_t len, int num_messages, int is_chunk) {
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
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &send;
    /* End-to-end encryption of what this frame carries: after compression
     * and per chunk, as the Java client does (a no-op without encryptor). */
    Pulsar__Proto__MessageMetadata emd = *md;
    const uint8_t *data = payload;
    pulsarc_err_t err = pc_encryptor_seal(f->encryptor, &emd, &data, &len, NULL, 0);
    return err ? err : pc_frame_encode_payload(&op->frame, &cmd, &emd, data, len);
}
