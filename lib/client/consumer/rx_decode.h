/*
 * Turning one MESSAGE frame into messages: checksum, metadata, decompression,
 * batch splitting, ack_set and start-position filtering. No I/O and no
 * locks of its own, so it is also what bench/decode measures.
 */
#ifndef PC_RX_DECODE_H
#define PC_RX_DECODE_H
#include "client/rxpool.h"
#include "core/frame.h"

typedef struct pc_rx_opts {
    int32_t partition;                 /* stamped into every message id */
    const pulsarc_msgid_t *skip_upto;  /* drop ids <= this (reader restarts), or NULL */
    struct pc_decryptor *decryptor;    /* encrypted payloads: lib/crypto, or NULL */
    int crypto_action;                 /* pc_crypto_fail_action_t when one does not decrypt */
    /* Stamped into every message as it is made, while it is in cache:
     * the consumer it reaches and that consumer's resend epoch (ack.c). */
    struct pulsarc_consumer_s *owner;
    uint32_t epoch;
} pc_rx_opts_t;

typedef struct pc_rx_result {
    pulsarc_msg_t *first, *last;       /* the messages, linked by ->next */
    size_t n;
    size_t bytes;                      /* their payload bytes, summed as they are made */
    uint32_t permits;                  /* flow permits this entry consumed */
    int validation_error;              /* >= 0: entry unusable; ack it with this */
    pulsarc_msgid_t entry_id;          /* the entry decoded (for that ack) */
    char error[256];                   /* why, when validation_error >= 0 */
    /* A chunk of a chunked message: not split, handed over as is. */
    pc_entry_t *chunk_entry;           /* holds a reference; NULL otherwise */
    const Pulsar__Proto__MessageMetadata *chunk_meta;
    const uint8_t *chunk_data;
    size_t chunk_len;
} pc_rx_result_t;

/* Decodes f (a MESSAGE frame) into r. Loop thread (any single thread). */
void pc_rx_decode(pc_rxpool_t *pool, const pc_frame_t *f, const pc_rx_opts_t *o,
                  pc_rx_result_t *r);
/*
 * Builds the messages of an already assembled entry whose payload is in
 * e->data (compressed as md says): used for reassembled chunked messages.
 * Takes over the caller's reference on e.
 */
void pc_rx_decode_entry(pc_entry_t *e, const Pulsar__Proto__MessageMetadata *md,
                        const Pulsar__Proto__CommandMessage *cm, const pc_rx_opts_t *o,
                        pc_rx_result_t *r);
/* Frees every message of r (when the consumer cannot take them). */
void pc_rx_result_discard(pc_rx_result_t *r);
#endif
