/*
 * The hand-written encoders of core/pbenc.c against protobuf-c: for
 * randomised CommandSend, MessageMetadata and SingleMessageMetadata structs
 * (every optional field on and off, values of every varint width, negative
 * int32/int64, NULL, empty and long strings, many properties) the bytes and
 * the counted size must equal protobuf-c's exactly, and with too little
 * room nothing may be written past it; the fields they leave
 * to protobuf-c must make them decline without writing; and a whole SEND
 * frame must equal one assembled from protobuf-c's packing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "core/crc32c.h"
#include "core/frame.h"
#include "core/pbenc.h"
#include "testutil.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void) { return pct_xorshift(&rng); }

static int coin(void) { return rnd() & 1; }

/* Every varint width from 1 to 10 bytes, and the edges between them. */
static uint64_t rnd_u64(void) {
    int bits = (int)(rnd() % 65);
    uint64_t v = bits == 64 ? rnd() : rnd() & ((UINT64_C(1) << bits) - 1);
    return rnd() % 8 == 0 && bits > 0 && bits < 64 ? (UINT64_C(1) << bits) - 1 : v;
}

static int32_t rnd_i32(void) {
    switch (rnd() % 4) {
    case 0: return -(int32_t)(rnd() % 1000) - 1;
    case 1: return INT32_MIN + (int32_t)(rnd() % 3);
    default: return (int32_t)(rnd_u64() & 0x7fffffff);
    }
}

/* Arena of test strings: freed all at once after each case. */
#define POOL_MAX 4096
static void *pool[POOL_MAX];
static size_t npool;

static void *keep(void *p) {
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_lt(npool, POOL_MAX);
    return pool[npool++] = p;
}

static void pool_free(void) {
    while (npool)
        free(pool[--npool]);
}

/* Lengths around the varint boundaries of the length prefix. */
static size_t rnd_len(void) {
    static const size_t lens[] = {0, 1, 5, 127, 128, 300, 16383, 16384, 20000};
    return rnd() % 3 ? rnd() % 40 : lens[rnd() % (sizeof lens / sizeof lens[0])];
}

static char *rnd_str(void) {
    size_t n = rnd_len();
    char *s = keep(malloc(n + 1));
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + rnd() % 26);
    s[n] = 0;
    return s;
}

static char *rnd_opt_str(void) { return coin() ? rnd_str() : NULL; }

static void rnd_bin(protobuf_c_boolean *has, ProtobufCBinaryData *b) {
    *has = coin();
    b->len = rnd_len();
    b->data = keep(malloc(b->len + 1));
    for (size_t i = 0; i < b->len; i++)
        b->data[i] = (uint8_t)rnd();
}

static Pulsar__Proto__KeyValue **rnd_props(size_t *n) {
    *n = rnd() % 3 ? 0 : rnd() % 12;
    Pulsar__Proto__KeyValue **kvp = keep(calloc(*n + 1, sizeof *kvp));
    for (size_t i = 0; i < *n; i++) {
        Pulsar__Proto__KeyValue *kv = keep(malloc(sizeof *kv));
        pulsar__proto__key_value__init(kv);
        kv->key = rnd_str();
        kv->value = rnd_str();
        kvp[i] = kv;
    }
    return kvp;
}

#define RND_OPT(msg, field, gen)                                                                  \
    do {                                                                                          \
        (msg)->has_##field = coin();                                                              \
        (msg)->field = gen;                                                                       \
    } while (0)

static void rnd_send(Pulsar__Proto__CommandSend *s) {
    pulsar__proto__command_send__init(s);
    s->producer_id = rnd_u64();
    s->sequence_id = rnd_u64();
    RND_OPT(s, num_messages, rnd_i32());
    RND_OPT(s, txnid_least_bits, rnd_u64());
    RND_OPT(s, txnid_most_bits, rnd_u64());
    RND_OPT(s, highest_sequence_id, rnd_u64());
    RND_OPT(s, is_chunk, coin());
    RND_OPT(s, marker, coin());
}

static void rnd_metadata(Pulsar__Proto__MessageMetadata *md) {
    pulsar__proto__message_metadata__init(md);
    md->producer_name = rnd() % 10 ? rnd_str() : NULL; /* required: NULL packs as empty */
    md->sequence_id = rnd_u64();
    md->publish_time = rnd_u64();
    md->properties = rnd_props(&md->n_properties);
    md->replicated_from = rnd_opt_str();
    md->partition_key = rnd_opt_str();
    md->n_replicate_to = rnd() % 3 ? 0 : rnd() % 5;
    md->replicate_to = keep(calloc(md->n_replicate_to + 1, sizeof(char *)));
    for (size_t i = 0; i < md->n_replicate_to; i++)
        md->replicate_to[i] = rnd_str();
    RND_OPT(md, compression, (Pulsar__Proto__CompressionType)(rnd() % 5));
    RND_OPT(md, uncompressed_size, (uint32_t)rnd_u64());
    RND_OPT(md, num_messages_in_batch, rnd_i32());
    RND_OPT(md, event_time, rnd_u64());
    md->encryption_algo = rnd_opt_str();
    rnd_bin(&md->has_encryption_param, &md->encryption_param);
    rnd_bin(&md->has_schema_version, &md->schema_version);
    RND_OPT(md, partition_key_b64_encoded, coin());
    rnd_bin(&md->has_ordering_key, &md->ordering_key);
    RND_OPT(md, deliver_at_time, coin() ? (int64_t)rnd_u64() : -(int64_t)(rnd() % 100));
    RND_OPT(md, marker_type, rnd_i32());
    RND_OPT(md, txnid_least_bits, rnd_u64());
    RND_OPT(md, txnid_most_bits, rnd_u64());
    RND_OPT(md, highest_sequence_id, rnd_u64());
    RND_OPT(md, null_value, coin());
    md->uuid = rnd_opt_str();
    RND_OPT(md, num_chunks_from_msg, rnd_i32());
    RND_OPT(md, total_chunk_msg_size, rnd_i32());
    RND_OPT(md, chunk_id, rnd_i32());
    RND_OPT(md, null_partition_key, coin());
}

static void rnd_single(Pulsar__Proto__SingleMessageMetadata *sm) {
    pulsar__proto__single_message_metadata__init(sm);
    sm->properties = rnd_props(&sm->n_properties);
    sm->partition_key = rnd_opt_str();
    sm->payload_size = rnd_i32();
    RND_OPT(sm, compacted_out, coin());
    RND_OPT(sm, event_time, rnd_u64());
    RND_OPT(sm, partition_key_b64_encoded, coin());
    rnd_bin(&sm->has_ordering_key, &sm->ordering_key);
    RND_OPT(sm, sequence_id, rnd_u64());
    RND_OPT(sm, null_value, coin());
    RND_OPT(sm, null_partition_key, coin());
}

typedef size_t (*hand_enc_fn)(const void *msg, uint8_t *out, size_t cap);

static size_t enc_send(const void *m, uint8_t *out, size_t cap) { return pc_pbenc_send(m, out, cap); }
static size_t enc_md(const void *m, uint8_t *out, size_t cap) { return pc_pbenc_metadata(m, out, cap); }
static size_t enc_single(const void *m, uint8_t *out, size_t cap) {
    return pc_pbenc_single(m, out, cap);
}

/* Nothing written past cap: the guard bytes after it are untouched. */
static void check_room(const uint8_t *got, size_t cap) {
    for (size_t i = cap; i < cap + 16; i++)
        ck_assert_uint_eq(got[i], 0xA5);
}

/*
 * Counted size, written bytes and protobuf-c's packing must agree exactly,
 * with room to spare, exactly enough, and too little (then the size is
 * still the whole one, and nothing goes past the room given).
 */
static void check_same(const ProtobufCMessage *m, hand_enc_fn enc) {
    size_t want = protobuf_c_message_get_packed_size(m);
    uint8_t *ref = malloc(want + 1), *got = malloc(want + 32);
    ck_assert(ref && got);
    ck_assert_uint_eq(protobuf_c_message_pack(m, ref), want);
    ck_assert_uint_eq(enc(m, NULL, 0), want);
    size_t caps[] = {want + 16, want, want / 2, want ? want - 1 : 0};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        memset(got, 0xA5, want + 32);
        ck_assert_uint_eq(enc(m, got, caps[i]), want);
        if (caps[i] >= want)
            ck_assert_mem_eq(got, ref, want);
        check_room(got, caps[i] < want ? caps[i] : want);
    }
    free(ref);
    free(got);
}

START_TEST(send_matches_protobuf_c) {
    for (int i = 0; i < 20000; i++) {
        Pulsar__Proto__CommandSend s;
        rnd_send(&s);
        check_same(&s.base, enc_send);
    }
}
END_TEST

START_TEST(metadata_matches_protobuf_c) {
    for (int i = 0; i < 5000; i++) {
        Pulsar__Proto__MessageMetadata md;
        rnd_metadata(&md);
        check_same(&md.base, enc_md);
        pool_free();
    }
}
END_TEST

START_TEST(single_matches_protobuf_c) {
    for (int i = 0; i < 5000; i++) {
        Pulsar__Proto__SingleMessageMetadata sm;
        rnd_single(&sm);
        check_same(&sm.base, enc_single);
        pool_free();
    }
}
END_TEST

/* What the producer itself sends: a small plain entry, encoded the same. */
START_TEST(producer_shapes_match) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = "standalone-0-7";
    md.sequence_id = 12345;
    md.publish_time = UINT64_C(1764925200123);
    md.has_uncompressed_size = 1;
    md.uncompressed_size = 100;
    check_same(&md.base, enc_md);
    Pulsar__Proto__CommandSend s = PULSAR__PROTO__COMMAND_SEND__INIT;
    s.producer_id = 1;
    s.sequence_id = 12345;
    check_same(&s.base, enc_send);
}
END_TEST

/* Fields left to protobuf-c: declined, and nothing is written. */
START_TEST(declines_what_it_leaves_to_protobuf_c) {
    uint8_t buf[64];
    memset(buf, 0x5A, sizeof buf);
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    Pulsar__Proto__EncryptionKeys ek = PULSAR__PROTO__ENCRYPTION_KEYS__INIT;
    Pulsar__Proto__EncryptionKeys *ekp = &ek;
    md.producer_name = "p";
    md.n_encryption_keys = 1;
    md.encryption_keys = &ekp;
    ck_assert_uint_eq(pc_pbenc_metadata(&md, buf, sizeof buf), PC_PBENC_FALLBACK);
    Pulsar__Proto__CommandSend s = PULSAR__PROTO__COMMAND_SEND__INIT;
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    s.message_id = &id;
    ck_assert_uint_eq(pc_pbenc_send(&s, buf, sizeof buf), PC_PBENC_FALLBACK);
    Pulsar__Proto__SingleMessageMetadata sm = PULSAR__PROTO__SINGLE_MESSAGE_METADATA__INIT;
    ProtobufCMessageUnknownField uf = {.tag = 99, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT};
    sm.base.n_unknown_fields = 1;
    sm.base.unknown_fields = &uf;
    ck_assert_uint_eq(pc_pbenc_single(&sm, buf, sizeof buf), PC_PBENC_FALLBACK);
    for (size_t i = 0; i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], 0x5A);
}
END_TEST

/* A frame assembled from protobuf-c's packing, the layout of core/frame.h. */
static size_t reference_frame(uint8_t *out, const pc_cmd_t *cmd,
                              const Pulsar__Proto__MessageMetadata *md, const uint8_t *payload,
                              size_t len) {
    size_t clen = pulsar__proto__base_command__get_packed_size(cmd);
    size_t mlen = pulsar__proto__message_metadata__get_packed_size(md);
    size_t total = 4 + clen + 6 + 4 + mlen + len;
    pc_wr_u32(out, (uint32_t)total);
    pc_wr_u32(out + 4, (uint32_t)clen);
    pulsar__proto__base_command__pack(cmd, out + 8);
    uint8_t *p = out + 8 + clen;
    p[0] = 0x0e;
    p[1] = 0x01;
    pc_wr_u32(p + 6, (uint32_t)mlen);
    pulsar__proto__message_metadata__pack(md, p + 10);
    memcpy(p + 10 + mlen, payload, len);
    pc_wr_u32(p + 2, pc_crc32c(0, p + 6, 4 + mlen + len));
    return 4 + total;
}

START_TEST(send_frame_matches_protobuf_c) {
    for (int i = 0; i < 500; i++) {
        Pulsar__Proto__MessageMetadata md;
        rnd_metadata(&md);
        Pulsar__Proto__CommandSend s;
        rnd_send(&s);
        pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
        cmd.send = &s;
        size_t len = rnd() % 2000;
        uint8_t *payload = keep(malloc(len + 1));
        for (size_t j = 0; j < len; j++)
            payload[j] = (uint8_t)rnd();
        size_t cap = 64 + pulsar__proto__base_command__get_packed_size(&cmd) +
                     pulsar__proto__message_metadata__get_packed_size(&md) + len;
        uint8_t *want = keep(malloc(cap));
        size_t wlen = reference_frame(want, &cmd, &md, payload, len);
        pc_buf_t got;
        pc_buf_init(&got, 0);
        ck_assert_int_eq(pc_frame_encode_payload(&got, &cmd, &md, payload, len), PULSARC_OK);
        ck_assert_uint_eq(got.len, wlen);
        ck_assert_mem_eq(got.data, want, wlen);
        pc_buf_free(&got);
        pool_free();
    }
}
END_TEST

static Suite *pbenc_suite(void) {
    Suite *s = suite_create("pbenc");
    TCase *t = tcase_create("encoders");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, send_matches_protobuf_c);
    tcase_add_test(t, metadata_matches_protobuf_c);
    tcase_add_test(t, single_matches_protobuf_c);
    tcase_add_test(t, producer_shapes_match);
    tcase_add_test(t, declines_what_it_leaves_to_protobuf_c);
    tcase_add_test(t, send_frame_matches_protobuf_c);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(pbenc_suite)
