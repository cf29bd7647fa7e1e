/*
 * Hand-written decoders for the two messages every received entry carries:
 * the MESSAGE command and its MessageMetadata, and for the receipt of every
 * sent entry (SEND_RECEIPT). They fill the same
 * protobuf-c structs as the generated unpack (so the rest of the code does
 * not care which ran), but only for the fields they know; on anything else
 * (an unknown or repeated-message field, a wrong wire type, a missing
 * required field) they return NULL and the caller runs protobuf-c, which
 * also produces the error for malformed input.
 */
#ifndef PC_PBFAST_H
#define PC_PBFAST_H
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"

/* ack_set words kept inline; a longer set falls back (batches over 4096). */
#define PC_FAST_ACK_WORDS 64

/*
 * A BaseCommand of type MESSAGE from len bytes at p, in one block from
 * alloc (NULL: malloc); free it with pc_fast_cmd_free. NULL: use protobuf-c.
 */
Pulsar__Proto__BaseCommand *pc_fast_message_cmd(const uint8_t *p, size_t len,
                                                ProtobufCAllocator *alloc);
/* The same for a BaseCommand of type SEND_RECEIPT. */
Pulsar__Proto__BaseCommand *pc_fast_receipt_cmd(const uint8_t *p, size_t len,
                                                ProtobufCAllocator *alloc);
void pc_fast_cmd_free(Pulsar__Proto__BaseCommand *cmd, ProtobufCAllocator *alloc);

/*
 * MessageMetadata from len bytes at p. alloc must be an arena-style
 * allocator (alloc->free may be called for nothing: strings and bytes are
 * separate allocations that live until the arena is reset). NULL: use
 * protobuf-c (also when alloc is NULL).
 */
Pulsar__Proto__MessageMetadata *pc_fast_metadata(const uint8_t *p, size_t len,
                                                 ProtobufCAllocator *alloc);
#endif
