/*
 * Design notes: protobuf-c's unpack is generic: it initialises every field
 * of BaseCommand (some seventy sub-message slots) and walks descriptors for
 * each field it meets, which cost ~3,000 instructions per MESSAGE frame and
 * ~1,300 per MessageMetadata: most of the time of an unbatched consumer.
 * SEND_RECEIPT, one per entry an unbatched producer writes, is the same
 * cost on the sending side.
 * These decoders switch on the field numbers the broker actually sends and
 * fall back (return NULL) on anything else, so protobuf-c stays the
 * reference for the rare and the malformed. test_pbfast.c checks both give
 * byte-identical re-encodings. Pure functions; any thread.
 */
#include "core/pbfast.h"

#include <stdlib.h>
#include <string.h>

#include "core/pbwire.h"

/* Field outcome: taken, or "not ours, let protobuf-c do the whole message". */
#define TAKEN 0
#define FALLBACK -1

static void *block_alloc(ProtobufCAllocator *a, size_t n) {
    return a ? a->alloc(a->allocator_data, n) : malloc(n);
}

/*
 * BaseCommand's INIT is its type and seventy-odd NULL sub-message pointers:
 * zeroing it costs half of copying the initialiser, which was a tenth of
 * a small unbatched entry's decode. The callers set the type.
 */
static void base_command_init(Pulsar__Proto__BaseCommand *cmd) {
    memset(cmd, 0, sizeof *cmd);
    cmd->base = (ProtobufCMessage)PROTOBUF_C_MESSAGE_INIT(&pulsar__proto__base_command__descriptor);
}

/* ---------- MESSAGE command ---------- */

typedef struct fast_cmd {
    Pulsar__Proto__BaseCommand cmd; /* first: the block's address is the command's */
    Pulsar__Proto__CommandMessage msg;
    Pulsar__Proto__MessageIdData id;
    int64_t ack_set[PC_FAST_ACK_WORDS];
} fast_cmd_t;

/* MessageIdData fields 1, 2, 3, 4, 6; required: 1 and 2 (bits 1, 2 of *seen). */
static int id_field(Pulsar__Proto__MessageIdData *id, const pc_pb_field_t *f, unsigned *seen) {
    if (f->wt != PC_WT_VARINT)
        return FALLBACK;
    switch (f->num) {
    case 1: id->ledgerid = f->v; *seen |= 1; return TAKEN;
    case 2: id->entryid = f->v; *seen |= 2; return TAKEN;
    case 3: id->partition = (int32_t)f->v; id->has_partition = 1; return TAKEN;
    case 4: id->batch_index = (int32_t)f->v; id->has_batch_index = 1; return TAKEN;
    case 6: id->batch_size = (int32_t)f->v; id->has_batch_size = 1; return TAKEN;
    default: return FALLBACK;
    }
}

/*
 * The loops below read the fields every peer sends straight from their
 * one-byte keys (what parse_smm in the consumer does for batch records);
 * anything else goes through the general field reader, so field order and
 * repeats are handled as before.
 */
static int parse_id(Pulsar__Proto__MessageIdData *id, const uint8_t *p, const uint8_t *end) {
    unsigned seen = 0;
    while (p < end) {
        pc_pb_field_t f;
        switch (*p) {
        case 0x08: /* 1: ledgerId */
            if (pc_pb_varint((++p, &p), end, &id->ledgerid))
                return FALLBACK;
            seen |= 1;
            break;
        case 0x10: /* 2: entryId */
            if (pc_pb_varint((++p, &p), end, &id->entryid))
                return FALLBACK;
            seen |= 2;
            break;
        default:
            if (pc_pb_field(&p, end, &f) || id_field(id, &f, &seen))
                return FALLBACK;
        }
    }
    return seen == 3 ? TAKEN : FALLBACK;
}

static int msg_ack_word(fast_cmd_t *b, uint64_t v) {
    if (b->msg.n_ack_set == PC_FAST_ACK_WORDS)
        return FALLBACK;
    b->ack_set[b->msg.n_ack_set++] = (int64_t)v;
    return TAKEN;
}

/* CommandMessage fields 1-5 (ack_set unpacked only); required: 1 and 2. */
static int msg_field(fast_cmd_t *b, const pc_pb_field_t *f, unsigned *seen) {
    Pulsar__Proto__CommandMessage *m = &b->msg;
    if (f->num == 2) {
        if (f->wt != PC_WT_LEN || (*seen & 2) || parse_id(&b->id, f->bytes, f->bytes + f->len))
            return FALLBACK;
        *seen |= 2;
        return TAKEN;
    }
    if (f->wt != PC_WT_VARINT)
        return FALLBACK;
    switch (f->num) {
    case 1: m->consumer_id = f->v; *seen |= 1; return TAKEN;
    case 3: m->redelivery_count = (uint32_t)f->v; m->has_redelivery_count = 1; return TAKEN;
    case 4: return msg_ack_word(b, f->v);
    case 5: m->consumer_epoch = f->v; m->has_consumer_epoch = 1; return TAKEN;
    default: return FALLBACK;
    }
}

/* A length-delimited field's bytes at *pp (its key already read); -1 if truncated. */
static int len_field(const uint8_t **pp, const uint8_t *end, const uint8_t **bytes,
                     const uint8_t **bend) {
    uint64_t n;
    if (pc_pb_varint(pp, end, &n) || n > (uint64_t)(end - *pp))
        return -1;
    *bytes = *pp;
    *bend = *pp += n;
    return 0;
}

static int parse_msg(fast_cmd_t *b, const uint8_t *p, const uint8_t *end) {
    unsigned seen = 0;
    while (p < end) {
        pc_pb_field_t f;
        const uint8_t *q, *qend;
        switch (*p) {
        case 0x08: /* 1: consumer_id */
            if (pc_pb_varint((++p, &p), end, &b->msg.consumer_id))
                return FALLBACK;
            seen |= 1;
            break;
        case 0x12: /* 2: message_id */
            if (len_field((++p, &p), end, &q, &qend) || (seen & 2) || parse_id(&b->id, q, qend))
                return FALLBACK;
            seen |= 2;
            break;
        default:
            if (pc_pb_field(&p, end, &f) || msg_field(b, &f, &seen))
                return FALLBACK;
        }
    }
    return seen == 3 ? TAKEN : FALLBACK;
}

/* BaseCommand: exactly type = MESSAGE (field 1) and message (field 9). */
static int parse_base(fast_cmd_t *b, const uint8_t *p, const uint8_t *end) {
    unsigned seen = 0;
    while (p < end) {
        uint64_t type;
        const uint8_t *q, *qend;
        switch (*p) {
        case 0x08: /* 1: type */
            if (pc_pb_varint((++p, &p), end, &type) ||
                type != PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE)
                return FALLBACK;
            seen |= 1;
            break;
        case 0x4a: /* 9: message */
            if (len_field((++p, &p), end, &q, &qend) || (seen & 2) || parse_msg(b, q, qend))
                return FALLBACK;
            seen |= 2;
            break;
        default:
            return FALLBACK;
        }
    }
    return seen == 3 ? TAKEN : FALLBACK;
}

/* Only a command that starts with the MESSAGE type is tried at all. */
static int looks_like_message(const uint8_t *p, size_t len) {
    return len >= 4 && p[0] == 0x08 && p[1] == PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
}

Pulsar__Proto__BaseCommand *pc_fast_message_cmd(const uint8_t *p, size_t len,
                                                ProtobufCAllocator *alloc) {
    if (!looks_like_message(p, len))
        return NULL;
    fast_cmd_t *b = block_alloc(alloc, sizeof *b);
    if (!b)
        return NULL;
    base_command_init(&b->cmd);
    b->msg = (Pulsar__Proto__CommandMessage)PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    b->id = (Pulsar__Proto__MessageIdData)PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    if (parse_base(b, p, p + len) != TAKEN) {
        pc_fast_cmd_free(&b->cmd, alloc);
        return NULL;
    }
    b->cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    b->cmd.message = &b->msg;
    b->msg.message_id = &b->id;
    b->msg.ack_set = b->msg.n_ack_set ? b->ack_set : NULL;
    return &b->cmd;
}

/* ---------- SEND_RECEIPT command ---------- */

typedef struct fast_receipt {
    Pulsar__Proto__BaseCommand cmd; /* first: the block's address is the command's */
    Pulsar__Proto__CommandSendReceipt receipt;
    Pulsar__Proto__MessageIdData id;
} fast_receipt_t;

/* CommandSendReceipt fields 1-4; required: 1 and 2 (bits 1, 2 of *seen). */
static int receipt_field(fast_receipt_t *b, const pc_pb_field_t *f, unsigned *seen) {
    Pulsar__Proto__CommandSendReceipt *r = &b->receipt;
    if (f->num == 3) {
        if (f->wt != PC_WT_LEN || r->message_id || parse_id(&b->id, f->bytes, f->bytes + f->len))
            return FALLBACK;
        r->message_id = &b->id;
        return TAKEN;
    }
    if (f->wt != PC_WT_VARINT)
        return FALLBACK;
    switch (f->num) {
    case 1: r->producer_id = f->v; *seen |= 1; return TAKEN;
    case 2: r->sequence_id = f->v; *seen |= 2; return TAKEN;
    case 4: r->highest_sequence_id = f->v; r->has_highest_sequence_id = 1; return TAKEN;
    default: return FALLBACK;
    }
}

static int parse_receipt(fast_receipt_t *b, const uint8_t *p, const uint8_t *end) {
    unsigned seen = 0;
    while (p < end) {
        pc_pb_field_t f;
        if (pc_pb_field(&p, end, &f) || receipt_field(b, &f, &seen))
            return FALLBACK;
    }
    return seen == 3 ? TAKEN : FALLBACK;
}

/* BaseCommand: exactly type = SEND_RECEIPT (field 1) and send_receipt (field 7). */
static int parse_receipt_base(fast_receipt_t *b, const uint8_t *p, const uint8_t *end) {
    unsigned seen = 0;
    while (p < end) {
        pc_pb_field_t f;
        if (pc_pb_field(&p, end, &f))
            return FALLBACK;
        if (f.num == 1 && f.wt == PC_WT_VARINT &&
            f.v == PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT)
            seen |= 1;
        else if (f.num == 7 && f.wt == PC_WT_LEN && !(seen & 2) &&
                 parse_receipt(b, f.bytes, f.bytes + f.len) == TAKEN)
            seen |= 2;
        else
            return FALLBACK;
    }
    return seen == 3 ? TAKEN : FALLBACK;
}

Pulsar__Proto__BaseCommand *pc_fast_receipt_cmd(const uint8_t *p, size_t len,
                                                ProtobufCAllocator *alloc) {
    if (len < 4 || p[0] != 0x08 || p[1] != PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT)
        return NULL;
    fast_receipt_t *b = block_alloc(alloc, sizeof *b);
    if (!b)
        return NULL;
    base_command_init(&b->cmd);
    b->receipt = (Pulsar__Proto__CommandSendReceipt)PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    b->id = (Pulsar__Proto__MessageIdData)PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    if (parse_receipt_base(b, p, p + len) != TAKEN) {
        pc_fast_cmd_free(&b->cmd, alloc);
        return NULL;
    }
    b->cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    b->cmd.send_receipt = &b->receipt;
    return &b->cmd;
}

void pc_fast_cmd_free(Pulsar__Proto__BaseCommand *cmd, ProtobufCAllocator *alloc) {
    if (!cmd)
        return;
    if (alloc)
        alloc->free(alloc->allocator_data, cmd);
    else
        free(cmd);
}

/* ---------- MessageMetadata ---------- */

/* A string field: copied, NUL-terminated, as protobuf-c does. */
static int take_string(char **dst, const pc_pb_field_t *f, ProtobufCAllocator *a) {
    if (f->wt != PC_WT_LEN)
        return FALLBACK;
    char *s = a->alloc(a->allocator_data, f->len + 1);
    if (!s)
        return FALLBACK;
    if (f->len)
        memcpy(s, f->bytes, f->len);
    s[f->len] = '\0';
    *dst = s;
    return TAKEN;
}

static int take_bytes(ProtobufCBinaryData *dst, protobuf_c_boolean *has, const pc_pb_field_t *f,
                      ProtobufCAllocator *a) {
    if (f->wt != PC_WT_LEN)
        return FALLBACK;
    uint8_t *b = f->len ? a->alloc(a->allocator_data, f->len) : NULL;
    if (f->len && !b)
        return FALLBACK;
    if (f->len)
        memcpy(b, f->bytes, f->len);
    dst->data = b;
    dst->len = f->len;
    *has = 1;
    return TAKEN;
}

/* The length-delimited fields this decoder knows. */
static int md_len_field(Pulsar__Proto__MessageMetadata *md, const pc_pb_field_t *f,
                        ProtobufCAllocator *a, unsigned *seen) {
    switch (f->num) {
    case 1: *seen |= 1; return take_string(&md->producer_name, f, a);
    case 6: return take_string(&md->partition_key, f, a);
    case 16: return take_bytes(&md->schema_version, &md->has_schema_version, f, a);
    case 18: return take_bytes(&md->ordering_key, &md->has_ordering_key, f, a);
    case 26: return take_string(&md->uuid, f, a);
    default: return FALLBACK;
    }
}

/* Sets a has_ flag and returns TAKEN: keeps the switch below one line a case. */
static int set_has(protobuf_c_boolean *has) {
    *has = 1;
    return TAKEN;
}

/* The varint fields of MessageMetadata (enum values checked like protobuf-c). */
static int md_varint_field(Pulsar__Proto__MessageMetadata *md, uint32_t num, uint64_t v,
                           unsigned *seen) {
    switch (num) {
    case 2: md->sequence_id = v; *seen |= 2; return TAKEN;
    case 3: md->publish_time = v; *seen |= 4; return TAKEN;
    case 8:
        if (v > PULSAR__PROTO__COMPRESSION_TYPE__SNAPPY)
            return FALLBACK;
        md->compression = (Pulsar__Proto__CompressionType)v;
        return set_has(&md->has_compression);
    case 9: md->uncompressed_size = (uint32_t)v; return set_has(&md->has_uncompressed_size);
    case 11: md->num_messages_in_batch = (int32_t)v; return set_has(&md->has_num_messages_in_batch);
    case 12: md->event_time = v; return set_has(&md->has_event_time);
    case 17: md->partition_key_b64_encoded = v != 0; return set_has(&md->has_partition_key_b64_encoded);
    case 19: md->deliver_at_time = (int64_t)v; return set_has(&md->has_deliver_at_time);
    case 20: md->marker_type = (int32_t)v; return set_has(&md->has_marker_type);
    case 22: md->txnid_least_bits = v; return set_has(&md->has_txnid_least_bits);
    case 23: md->txnid_most_bits = v; return set_has(&md->has_txnid_most_bits);
    case 24: md->highest_sequence_id = v; return set_has(&md->has_highest_sequence_id);
    case 25: md->null_value = v != 0; return set_has(&md->has_null_value);
    case 27: md->num_chunks_from_msg = (int32_t)v; return set_has(&md->has_num_chunks_from_msg);
    case 28: md->total_chunk_msg_size = (int32_t)v; return set_has(&md->has_total_chunk_msg_size);
    case 29: md->chunk_id = (int32_t)v; return set_has(&md->has_chunk_id);
    case 30: md->null_partition_key = v != 0; return set_has(&md->has_null_partition_key);
    default: return FALLBACK;
    }
}

static int md_field(Pulsar__Proto__MessageMetadata *md, const pc_pb_field_t *f,
                    ProtobufCAllocator *a, unsigned *seen) {
    if (f->wt == PC_WT_VARINT)
        return md_varint_field(md, f->num, f->v, seen);
    return md_len_field(md, f, a, seen);
}

Pulsar__Proto__MessageMetadata *pc_fast_metadata(const uint8_t *p, size_t len,
                                                 ProtobufCAllocator *alloc) {
    if (!alloc)
        return NULL;
    Pulsar__Proto__MessageMetadata *md = alloc->alloc(alloc->allocator_data, sizeof *md);
    if (!md)
        return NULL;
    *md = (Pulsar__Proto__MessageMetadata)PULSAR__PROTO__MESSAGE_METADATA__INIT;
    const uint8_t *end = p + len;
    unsigned seen = 0;
    while (p < end) {
        pc_pb_field_t f;
        uint64_t v;
        switch (*p) { /* what every producer writes, by its one-byte key */
        case 0x10: /* 2: sequence_id */
            if (pc_pb_varint((++p, &p), end, &md->sequence_id))
                return NULL;
            seen |= 2;
            continue;
        case 0x18: /* 3: publish_time */
            if (pc_pb_varint((++p, &p), end, &md->publish_time))
                return NULL;
            seen |= 4;
            continue;
        case 0x58: /* 11: num_messages_in_batch */
            if (pc_pb_varint((++p, &p), end, &v))
                return NULL;
            md->num_messages_in_batch = (int32_t)v;
            md->has_num_messages_in_batch = 1;
            continue;
        default:
            if (pc_pb_field(&p, end, &f) || md_field(md, &f, alloc, &seen))
                return NULL; /* what was allocated goes with the arena */
        }
    }
    return seen == 7 ? md : NULL;
}
