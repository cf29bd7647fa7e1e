/*
 * The hand-written decoders of core/pbfast.c against protobuf-c, from
 * bytes: for random messages, every prefix of them and every single-byte
 * corruption, the fast decoder must either decline (NULL) or produce a
 * struct whose protobuf-c re-encoding is byte-identical to that of
 * protobuf-c's own unpack. It must not decline the plain cases it exists
 * for, and must decline what it does not handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "core/arena.h"
#include "core/pbfast.h"
#include "core/pbwire.h"
#include "testutil.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) { return pct_xorshift(&rng); }

/* Any value width: small, one byte over, large, and "negative" int32. */
static uint64_t rnd_varint(void) {
    switch (rnd() % 4) {
    case 0: return rnd() % 100;
    case 1: return 128 + rnd() % 20000;
    case 2: return rnd();
    default: return (uint64_t)(int64_t)-1 - rnd() % 3;
    }
}

typedef struct bytes {
    uint8_t *b;
    size_t n;
} bytes_t;

static bytes_t pack_msg(const ProtobufCMessage *m) {
    bytes_t o;
    o.n = protobuf_c_message_get_packed_size(m);
    o.b = malloc(o.n ? o.n : 1);
    ck_assert_ptr_nonnull(o.b);
    ck_assert_uint_eq(protobuf_c_message_pack(m, o.b), o.n);
    return o;
}

/* Both NULL, or both present with identical re-encodings. fast may be NULL alone. */
static void same_as_reference(const ProtobufCMessage *fast, const ProtobufCMessage *ref) {
    if (!fast)
        return;
    ck_assert_msg(ref != NULL, "fast decoder accepted what protobuf-c rejects");
    bytes_t a = pack_msg(fast), b = pack_msg(ref);
    ck_assert_uint_eq(a.n, b.n);
    ck_assert_int_eq(memcmp(a.b, b.b, a.n), 0);
    free(a.b);
    free(b.b);
}

/*
 * For messages from gen (plain or not): every prefix, and every byte
 * replaced by a random one, through check (which allows declining).
 */
static void prefixes_and_corruptions(bytes_t (*gen)(int plain),
                                     void (*check)(const bytes_t *b, int must_take)) {
    for (int i = 0; i < 200; i++) {
        bytes_t b = gen((int)(rnd() % 2));
        for (size_t cut = 0; cut < b.n; cut++) {
            bytes_t p = {b.b, cut};
            check(&p, 0);
        }
        for (size_t at = 0; at < b.n; at++) {
            uint8_t keep = b.b[at];
            b.b[at] = (uint8_t)rnd();
            check(&b, 0);
            b.b[at] = keep;
        }
        free(b.b);
    }
}

/* ---------- varints ---------- */

static size_t put_varint(uint8_t *b, uint64_t v) {
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        b[n++] = (uint8_t)(v | 0x80);
    b[n++] = (uint8_t)v;
    return n;
}

/* Every width, with the buffer ending right after it or with slack after it. */
START_TEST(varint_every_width) {
    uint8_t buf[32];
    for (int i = 0; i < 20000; i++) {
        int bits = (int)(rnd() % 65);
        uint64_t v = bits == 64 ? rnd() | (UINT64_C(1) << 63) : rnd() & ((UINT64_C(1) << bits) - 1);
        memset(buf, 0xff, sizeof buf);
        size_t n = put_varint(buf, v);
        size_t slack = rnd() % 12;
        const uint8_t *p = buf;
        uint64_t got = 0;
        ck_assert_int_eq(pc_pb_varint(&p, buf + n + slack, &got), 0);
        ck_assert_uint_eq(got, v);
        ck_assert_ptr_eq(p, buf + n);
        p = buf; /* one byte short: truncated */
        ck_assert_int_eq(pc_pb_varint(&p, buf + n - 1, &got), -1);
        ck_assert_ptr_eq(p, buf);
    }
}
END_TEST

START_TEST(varint_too_long) {
    uint8_t buf[16];
    memset(buf, 0x80, sizeof buf);
    buf[10] = 0x01; /* 11 bytes */
    const uint8_t *p = buf;
    uint64_t v;
    ck_assert_int_eq(pc_pb_varint(&p, buf + sizeof buf, &v), -1);
    buf[9] = 0x01; /* 10 bytes: the top byte holds bit 63 */
    ck_assert_int_eq(pc_pb_varint(&p, buf + sizeof buf, &v), 0);
    ck_assert_uint_eq(v, UINT64_C(1) << 63);
    ck_assert_ptr_eq(p, buf + 10);
}
END_TEST

/* ---------- MESSAGE command ---------- */

static int64_t acks[80];

/* A MESSAGE command with random optional parts; plain = only what the fast path knows. */
static bytes_t random_message_cmd(int plain) {
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandMessage m = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    Pulsar__Proto__BaseCommand c = PULSAR__PROTO__BASE_COMMAND__INIT;
    id.ledgerid = rnd_varint();
    id.entryid = rnd_varint();
    id.has_partition = rnd() % 2, id.partition = (int32_t)rnd_varint();
    id.has_batch_index = rnd() % 3 == 0, id.batch_index = (int32_t)rnd_varint();
    id.has_batch_size = rnd() % 3 == 0, id.batch_size = (int32_t)rnd_varint();
    m.consumer_id = rnd_varint();
    m.message_id = &id;
    m.has_redelivery_count = rnd() % 2, m.redelivery_count = (uint32_t)rnd_varint();
    m.has_consumer_epoch = rnd() % 2, m.consumer_epoch = rnd_varint();
    m.n_ack_set = rnd() % 3 == 0 ? (size_t)(rnd() % (plain ? PC_FAST_ACK_WORDS + 1 : 80)) : 0;
    for (size_t i = 0; i < m.n_ack_set; i++)
        acks[i] = (int64_t)rnd_varint();
    m.ack_set = acks;
    if (!plain && rnd() % 2) { /* an id ack_set: left to protobuf-c */
        id.n_ack_set = 1;
        id.ack_set = acks;
    }
    c.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    c.message = &m;
    return pack_msg(&c.base);
}

static ProtobufCMessage *ref_cmd(const bytes_t *b) {
    return (ProtobufCMessage *)pulsar__proto__base_command__unpack(NULL, b->n, b->b);
}

static void check_cmd_bytes(const bytes_t *b, int must_take) {
    Pulsar__Proto__BaseCommand *fast = pc_fast_message_cmd(b->b, b->n, NULL);
    ProtobufCMessage *ref = ref_cmd(b);
    if (must_take)
        ck_assert_msg(fast != NULL, "fast decoder declined a plain MESSAGE command");
    same_as_reference(fast ? &fast->base : NULL, ref);
    pc_fast_cmd_free(fast, NULL);
    if (ref)
        protobuf_c_message_free_unpacked(ref, NULL);
}

START_TEST(message_cmd_matches_protobuf_c) {
    for (int i = 0; i < 3000; i++) {
        bytes_t b = random_message_cmd(1);
        check_cmd_bytes(&b, 1);
        free(b.b);
    }
}
END_TEST

START_TEST(message_cmd_prefixes_and_corruptions) {
    prefixes_and_corruptions(random_message_cmd, check_cmd_bytes);
}
END_TEST

START_TEST(message_cmd_declines_the_rest) {
    /* ack_set longer than the inline room, an id ack_set, another command type */
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandMessage m = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    Pulsar__Proto__BaseCommand c = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.message_id = &id;
    m.n_ack_set = PC_FAST_ACK_WORDS + 1;
    m.ack_set = acks;
    c.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    c.message = &m;
    bytes_t b = pack_msg(&c.base);
    ck_assert_ptr_null(pc_fast_message_cmd(b.b, b.n, NULL));
    free(b.b);
    m.n_ack_set = 0;
    id.n_ack_set = 1;
    id.ack_set = acks;
    b = pack_msg(&c.base);
    ck_assert_ptr_null(pc_fast_message_cmd(b.b, b.n, NULL));
    free(b.b);
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__BaseCommand pc = PULSAR__PROTO__BASE_COMMAND__INIT;
    pc.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    pc.ping = &ping;
    b = pack_msg(&pc.base);
    ck_assert_ptr_null(pc_fast_message_cmd(b.b, b.n, NULL));
    free(b.b);
}
END_TEST

/* ---------- SEND_RECEIPT command ---------- */

/* A SEND_RECEIPT with random optional parts; not plain: an id with an ack_set. */
static bytes_t random_receipt_cmd(int plain) {
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__BaseCommand c = PULSAR__PROTO__BASE_COMMAND__INIT;
    id.ledgerid = rnd_varint();
    id.entryid = rnd_varint();
    id.has_partition = rnd() % 2, id.partition = (int32_t)rnd_varint();
    id.has_batch_index = rnd() % 3 == 0, id.batch_index = (int32_t)rnd_varint();
    r.producer_id = rnd_varint();
    r.sequence_id = rnd_varint();
    r.message_id = rnd() % 4 ? &id : NULL; /* absent in some broker answers */
    r.has_highest_sequence_id = rnd() % 2, r.highest_sequence_id = rnd_varint();
    if (!plain && rnd() % 2) {
        id.n_ack_set = 1;
        id.ack_set = acks;
        acks[0] = 5;
        r.message_id = &id;
    }
    c.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    c.send_receipt = &r;
    return pack_msg(&c.base);
}

static void check_receipt_bytes(const bytes_t *b, int must_take) {
    Pulsar__Proto__BaseCommand *fast = pc_fast_receipt_cmd(b->b, b->n, NULL);
    ProtobufCMessage *ref = ref_cmd(b);
    if (must_take)
        ck_assert_msg(fast != NULL, "fast decoder declined a plain SEND_RECEIPT command");
    same_as_reference(fast ? &fast->base : NULL, ref);
    pc_fast_cmd_free(fast, NULL);
    if (ref)
        protobuf_c_message_free_unpacked(ref, NULL);
}

START_TEST(receipt_cmd_matches_protobuf_c) {
    for (int i = 0; i < 3000; i++) {
        bytes_t b = random_receipt_cmd(1);
        check_receipt_bytes(&b, 1);
        free(b.b);
    }
}
END_TEST

START_TEST(receipt_cmd_prefixes_and_corruptions) {
    prefixes_and_corruptions(random_receipt_cmd, check_receipt_bytes);
}
END_TEST

START_TEST(receipt_cmd_declines_the_rest) {
    /* a MESSAGE is not a receipt, and a receipt is not a MESSAGE */
    bytes_t m = random_message_cmd(1);
    ck_assert_ptr_null(pc_fast_receipt_cmd(m.b, m.n, NULL));
    free(m.b);
    bytes_t r = random_receipt_cmd(1);
    ck_assert_ptr_null(pc_fast_message_cmd(r.b, r.n, NULL));
    free(r.b);
}
END_TEST

/* ---------- MessageMetadata ---------- */

static char *rnd_str(char *buf, size_t cap) {
    size_t n = rnd() % (cap - 1);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + rnd() % 26);
    buf[n] = '\0';
    return buf;
}

typedef struct md_bufs {
    char producer[24], pkey[24], uuid[40], repl[16];
    uint8_t sv[8], okey[12];
    char *repl_list[1];
    Pulsar__Proto__KeyValue kv;
    Pulsar__Proto__KeyValue *kvs[1];
} md_bufs_t;

/* Sets each optional field the fast path knows with probability 1/2. */
static void random_known_fields(Pulsar__Proto__MessageMetadata *md, md_bufs_t *x) {
#define MAYBE(has, field, val) do { if (rnd() % 2) { md->has = 1; md->field = (val); } } while (0)
    MAYBE(has_compression, compression, (Pulsar__Proto__CompressionType)(rnd() % 5));
    MAYBE(has_uncompressed_size, uncompressed_size, (uint32_t)rnd_varint());
    MAYBE(has_num_messages_in_batch, num_messages_in_batch, (int32_t)rnd_varint());
    MAYBE(has_event_time, event_time, rnd_varint());
    MAYBE(has_partition_key_b64_encoded, partition_key_b64_encoded, rnd() % 2);
    MAYBE(has_deliver_at_time, deliver_at_time, (int64_t)rnd_varint());
    MAYBE(has_marker_type, marker_type, (int32_t)rnd_varint());
    MAYBE(has_txnid_least_bits, txnid_least_bits, rnd_varint());
    MAYBE(has_txnid_most_bits, txnid_most_bits, rnd_varint());
    MAYBE(has_highest_sequence_id, highest_sequence_id, rnd_varint());
    MAYBE(has_null_value, null_value, rnd() % 2);
    MAYBE(has_num_chunks_from_msg, num_chunks_from_msg, (int32_t)rnd_varint());
    MAYBE(has_total_chunk_msg_size, total_chunk_msg_size, (int32_t)rnd_varint());
    MAYBE(has_chunk_id, chunk_id, (int32_t)rnd_varint());
    MAYBE(has_null_partition_key, null_partition_key, rnd() % 2);
    MAYBE(has_schema_version, schema_version, ((ProtobufCBinaryData){rnd() % 9, x->sv}));
    MAYBE(has_ordering_key, ordering_key, ((ProtobufCBinaryData){rnd() % 13, x->okey}));
#undef MAYBE
    if (rnd() % 2)
        md->partition_key = rnd_str(x->pkey, sizeof x->pkey);
    if (rnd() % 2)
        md->uuid = rnd_str(x->uuid, sizeof x->uuid);
}

static bytes_t random_metadata(int plain) {
    static md_bufs_t x;
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = rnd_str(x.producer, sizeof x.producer);
    md.sequence_id = rnd_varint();
    md.publish_time = rnd_varint();
    for (size_t i = 0; i < sizeof x.sv; i++)
        x.sv[i] = (uint8_t)rnd();
    for (size_t i = 0; i < sizeof x.okey; i++)
        x.okey[i] = (uint8_t)rnd();
    random_known_fields(&md, &x);
    if (!plain && rnd() % 2) { /* properties or replicate_to: left to protobuf-c */
        x.kv = (Pulsar__Proto__KeyValue)PULSAR__PROTO__KEY_VALUE__INIT;
        x.kv.key = "k", x.kv.value = "v";
        x.kvs[0] = &x.kv;
        md.n_properties = 1, md.properties = x.kvs;
    } else if (!plain) {
        x.repl_list[0] = rnd_str(x.repl, sizeof x.repl);
        md.n_replicate_to = 1, md.replicate_to = x.repl_list;
    }
    return pack_msg(&md.base);
}

static void check_md_bytes(const bytes_t *b, int must_take) {
    pc_arena_t arena = {0};
    ProtobufCAllocator al = pc_arena_allocator(&arena);
    Pulsar__Proto__MessageMetadata *fast = pc_fast_metadata(b->b, b->n, &al);
    Pulsar__Proto__MessageMetadata *ref = pulsar__proto__message_metadata__unpack(NULL, b->n, b->b);
    if (must_take)
        ck_assert_msg(fast != NULL, "fast decoder declined plain metadata");
    same_as_reference(fast ? &fast->base : NULL, ref ? &ref->base : NULL);
    if (ref)
        pulsar__proto__message_metadata__free_unpacked(ref, NULL);
    pc_arena_free(&arena);
}

START_TEST(metadata_matches_protobuf_c) {
    for (int i = 0; i < 3000; i++) {
        bytes_t b = random_metadata(1);
        check_md_bytes(&b, 1);
        free(b.b);
    }
}
END_TEST

START_TEST(metadata_prefixes_and_corruptions) {
    prefixes_and_corruptions(random_metadata, check_md_bytes);
}
END_TEST

START_TEST(metadata_declines_the_rest) {
    pc_arena_t arena = {0};
    ProtobufCAllocator al = pc_arena_allocator(&arena);
    for (int i = 0; i < 50; i++) { /* every non-plain one has properties or replicate_to */
        bytes_t b = random_metadata(0);
        ck_assert_ptr_null(pc_fast_metadata(b.b, b.n, &al));
        free(b.b);
    }
    /* no allocator: declined, protobuf-c's job */
    bytes_t b = random_metadata(1);
    ck_assert_ptr_null(pc_fast_metadata(b.b, b.n, NULL));
    free(b.b);
    pc_arena_free(&arena);
}
END_TEST

static Suite *pbfast_suite(void) {
    Suite *s = suite_create("pbfast");
    TCase *t = tcase_create("varint");
    tcase_add_test(t, varint_every_width);
    tcase_add_test(t, varint_too_long);
    suite_add_tcase(s, t);
    t = tcase_create("message_cmd");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, message_cmd_matches_protobuf_c);
    tcase_add_test(t, message_cmd_prefixes_and_corruptions);
    tcase_add_test(t, message_cmd_declines_the_rest);
    tcase_add_test(t, receipt_cmd_matches_protobuf_c);
    tcase_add_test(t, receipt_cmd_prefixes_and_corruptions);
    tcase_add_test(t, receipt_cmd_declines_the_rest);
    suite_add_tcase(s, t);
    t = tcase_create("metadata");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, metadata_matches_protobuf_c);
    tcase_add_test(t, metadata_prefixes_and_corruptions);
    tcase_add_test(t, metadata_declines_the_rest);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(pbfast_suite)
