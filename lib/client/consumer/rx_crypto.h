/*
 * End-to-end decryption on the consumer's receive path (rx_crypto.c): an
 * encrypted entry is decrypted before it is decompressed and split, as
 * the Java client does; one that does not decrypt meets the consumer's
 * cryptoFailureAction. Consumer io thread only.
 */
#ifndef PC_RX_CRYPTO_H
#define PC_RX_CRYPTO_H
#include "client/consumer/rx_decode.h"

/* Returns 0 with *src, *len at the plaintext (untouched when md says the
 * entry is not encrypted), 1 to deliver the entry undecrypted (CONSUME),
 * -1 when r says why nothing is delivered (FAIL, DISCARD). */
int pc_rx_open_encrypted(const pc_rx_opts_t *o, const Pulsar__Proto__MessageMetadata *md,
                         const uint8_t **src, size_t *len, pc_rx_result_t *r);
/* The same for one chunk of a chunked message, decrypted on its own;
 * CONSUME holds it back (-1) as FAIL does. */
int pc_rx_open_chunk(const pc_rx_opts_t *o, const Pulsar__Proto__MessageMetadata *md,
                     const uint8_t **src, size_t *len, pc_rx_result_t *r);
#endif
