/*
 * libFuzzer target: turning MESSAGE frames into messages (pc_rx_decode:
 * checksum flag, metadata, decompression, batch splitting, ack_set
 * filtering) and chunked messages into whole ones (pc_chunks_add), with
 * hostile metadata: batches claiming 10^9 messages, uncompressed sizes
 * near 4 GB, chunk totals of 4 GB, payloads that do not match.
 *
 * Input: up to 8 records, each
 *   [flags:1][metalen:2][paylen:2][acklen:1][meta][payload][ack_set: acklen x 8 bytes]
 * flags bit 0: checksum bad; bit 1: has skip_upto; bits 2-7: entry id.
 * Odd entry ids come in a reader's buffer (with bytes after the frame)
 * offered for adoption, which is scribbled over and freed before the
 * messages are read. Records of one input share a chunk assembler, so
 * chunk sequences (in order, repeated, with gaps) are explored.
 */
#include <stdint.h>
#include <string.h>

#include "client/consumer/chunk_assembler.h"
#include "client/message.h"
#include "client/consumer/rx_decode.h"
#include "client/rxpool.h"
#include "core/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pc_rxpool_t *pool;

static void drop(void *owner, const pulsarc_msgid_t *ids, size_t n, int ack) {
    (void)owner, (void)ids, (void)n, (void)ack;
}

static void consume_all(pc_rx_result_t *r) {
    for (pulsarc_msg_t *m = r->first; m; m = m->next) {
        const uint8_t *pl = pulsarc_msg_payload(m);
        size_t len = pulsarc_msg_len(m), klen = 0;
        volatile uint8_t sink = len ? pl[0] ^ pl[len - 1] : 0; /* views stay inside the entry */
        (void)sink;
        (void)pulsarc_msg_key_bytes(m, &klen);
        for (size_t i = 0; i < pulsarc_msg_property_count(m); i++) {
            const char *n, *v;
            pulsarc_msg_property_at(m, i, &n, &v);
        }
    }
    pc_rx_result_discard(r);
}

/* One record: decodes it and feeds chunks to ch. Returns bytes used, 0 at the end. */
static size_t one_record(const uint8_t *d, size_t left, pc_chunks_t *ch) {
    if (left < 6)
        return 0;
    size_t metalen = (size_t)d[1] << 8 | d[2], paylen = (size_t)d[3] << 8 | d[4], acklen = d[5];
    size_t need = 6 + metalen + paylen + acklen * 8;
    if (need > left)
        return 0;
    int64_t acks[255];
    for (size_t i = 0; i < acklen; i++)
        memcpy(&acks[i], d + 6 + metalen + paylen + i * 8, 8);
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    mid.ledgerid = 1;
    mid.entryid = d[0] >> 2;
    Pulsar__Proto__CommandMessage cm = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    cm.message_id = &mid;
    cm.n_ack_set = acklen;
    cm.ack_set = acks;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    cmd.message = &cm;
    pc_frame_t f = {.cmd = &cmd, .has_payload = 1, .has_checksum = 1, .checksum_ok = !(d[0] & 1),
                    .meta = d + 6, .meta_len = metalen, .payload = d + 6 + metalen,
                    .payload_len = paylen};
    pc_buf_t rbuf;
    pc_buf_init(&rbuf, (size_t)1 << 20);
    if ((d[0] >> 2) & 1) { /* as the connection offers a frame at its buffer's front */
        if (pc_buf_append(&rbuf, d + 6, metalen + paylen) || pc_buf_append(&rbuf, "next", 4)) {
            pc_buf_free(&rbuf);
            return 0;
        }
        f.meta = rbuf.data;
        f.payload = rbuf.data + metalen;
        f.source = &rbuf;
        f.frame_len = metalen + paylen;
    }
    pulsarc_msgid_t skip = {1, 3, -1, 2, 0};
    pc_rx_opts_t o = {.partition = -1, .skip_upto = (d[0] & 2) ? &skip : NULL};
    pc_rx_result_t r, out;
    memset(&out, 0, sizeof out);
    pc_rx_decode(pool, &f, &o, &r);
    int whole = 0;
    if (r.chunk_entry)
        whole = pc_chunks_add(ch, &r, &cm, &o, drop, NULL, &out) == 1;
    if (rbuf.data) /* the reader goes on: what it holds is not the messages' */
        memset(rbuf.data, 0xA5, rbuf.cap);
    pc_buf_free(&rbuf);
    if (whole)
        consume_all(&out);
    else if (!r.chunk_entry)
        consume_all(&r);
    return need;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!pool)
        pool = pc_rxpool_new("persistent://public/default/fuzz", (size_t)64 << 20, 1000);
    pc_chunks_t ch;
    memset(&ch, 0, sizeof ch);
    ch.max_pending = 4;
    ch.expire_ms = 60000;
    ch.max_bytes = (size_t)64 << 20;
    for (int i = 0; i < 8; i++) {
        size_t used = one_record(data, size, &ch);
        if (!used)
            break;
        data += used;
        size -= used;
    }
    pc_chunks_free(&ch);
    return 0;
}
