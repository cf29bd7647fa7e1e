/*
 * Hand-written encoders for what a producer writes per entry and per
 * batched message: CommandSend, MessageMetadata, SingleMessageMetadata.
 * protobuf-c sizes and packs a message by walking every field descriptor,
 * twice (size, then pack); these switch on the fields the structs set and
 * write exactly the bytes protobuf-c writes (fields in number order, the
 * same varint widths, negative int32/int64 as ten bytes). test_pbenc.c
 * holds them to that over randomised structs.
 *
 * Each returns the encoded size and writes at most cap bytes to out (out
 * NULL: only counts); like snprintf, the bytes are complete only when the
 * size is <= cap. A field they do not cover makes them return
 * PC_PBENC_FALLBACK without writing: the caller packs with protobuf-c. Not covered: MessageMetadata.encryption_keys (set only on
 * encrypted messages, whose cost is the cipher's) and CommandSend.message_id
 * (replication only), and unknown fields on any of them.
 * Pure functions; any thread.
 */
#ifndef PC_PBENC_H
#define PC_PBENC_H
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"

#define PC_PBENC_FALLBACK ((size_t)-1)

size_t pc_pbenc_send(const Pulsar__Proto__CommandSend *send, uint8_t *out, size_t cap);
size_t pc_pbenc_metadata(const Pulsar__Proto__MessageMetadata *md, uint8_t *out, size_t cap);
size_t pc_pbenc_single(const Pulsar__Proto__SingleMessageMetadata *sm, uint8_t *out, size_t cap);

/* Bytes of the varint encoding of v (1..10). */
static inline size_t pc_pbenc_varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes v as a varint at p; returns the byte after it. */
static inline uint8_t *pc_pbenc_put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}
#endif
