/*
 * Design notes: the consumer's side of end-to-end encryption, between a
 * MESSAGE frame's payload and its decompression. The decryptor (lib/crypto)
 * belongs to the consumer and is only used here, on its io thread; its
 * output stays valid until the next entry, which is after this one has
 * been copied or decompressed into the entry's own buffer.
 *
 * An entry that does not decrypt (no key for any of its names, or a failed
 * check) meets cryptoFailureAction, as in the Java client:
 *   FAIL     not delivered and not acked (validation_error -2): the broker
 *            redelivers it later (reconnect, redelivery request);
 *   DISCARD  acked with the DecryptionError validation error;
 *   CONSUME  delivered as one message holding the entry's bytes, still
 *            encrypted and compressed, marked (pulsarc_msg_is_encrypted);
 *            a chunk is held back as under FAIL.
 * A chunked message is encrypted chunk by chunk (as the Java client does):
 * each chunk is decrypted on arrival, before the assembler copies it.
 */
#include "client/consumer/rx_crypto.h"

#include <stdio.h>

#include "crypto/crypto.h"

#define VE_DECRYPTION PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__DecryptionError

static void fail(pc_rx_result_t *r, int ve, const char *action, const char *why) {
    r->validation_error = ve;
    snprintf(r->error, sizeof r->error, "not decrypted (cryptoFailureAction %s): %s", action, why);
}

int pc_rx_open_encrypted(const pc_rx_opts_t *o, const Pulsar__Proto__MessageMetadata *md,
                         const uint8_t **src, size_t *len, pc_rx_result_t *r) {
    if (!pc_crypto_is_encrypted(md))
        return 0;
    char why[200];
    if (pc_decryptor_open(o->decryptor, md, src, len, why, sizeof why) == PULSARC_OK)
        return 0;
    if (o->crypto_action == PC_CRYPTO_CONSUME)
        return 1;
    if (o->crypto_action == PC_CRYPTO_DISCARD)
        fail(r, VE_DECRYPTION, "DISCARD, acked", why);
    else
        fail(r, -2, "FAIL, left unacked", why);
    return -1;
}

int pc_rx_open_chunk(const pc_rx_opts_t *o, const Pulsar__Proto__MessageMetadata *md,
                     const uint8_t **src, size_t *len, pc_rx_result_t *r) {
    int rc = pc_rx_open_encrypted(o, md, src, len, r);
    if (rc == 1) { /* one chunk of ciphertext is no message: hold it back */
        r->validation_error = -2;
        snprintf(r->error, sizeof r->error,
                 "chunk not decrypted, left unacked (cryptoFailureAction CONSUME does not "
                 "apply to chunked messages)");
        return -1;
    }
    return rc;
}
