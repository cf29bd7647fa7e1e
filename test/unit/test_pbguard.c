/*
 * The receive path's protobuf bounds (core/pbguard.h) on raw bytes: for
 * every place protobuf-c unpacks peer or user bytes (BaseCommand in the
 * frame decoder, MessageMetadata in rx_decode, MessageIdData in
 * pulsarc_msgid_deserialize), input at each limit decodes and input one
 * past it is refused with an error naming the command and the limit,
 * never a crash. Nesting 100,000 deep, which overflows the stack in an
 * unguarded protobuf-c unpack, is among the inputs.
 *
 * Design notes: the bytes are assembled here from the wire format (tags,
 * varints, lengths), built back to front so nesting of any depth is a
 * loop, not a recursion; protobuf-c is only the reference for what
 * decodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "client/consumer/rx_decode.h"
#include "client/rxpool.h"
#include "core/frame.h"
#include "core/pbguard.h"
#include "pb_backwards.h"
#include "pulsarc.h"
#include "testutil.h"

#define MAX_FRAME ((size_t)PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING)
#define ck_assert_contains(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay), (needle))

/* ---------- a back-to-front protobuf writer ---------- */

/* The shared writer with its capacity; every prepend asserts it fitted. */
typedef struct rev {
    pb_backwards_t b;
    size_t cap; /* content is b.buf[b.pos .. cap) */
} rev_t;

static rev_t rev_new(size_t cap) {
    rev_t r = {{malloc(cap), cap, 0, 0}, cap};
    ck_assert_ptr_nonnull(r.b.buf);
    return r;
}

static size_t rev_len(const rev_t *r) { return r->cap - r->b.pos; }
static const uint8_t *rev_data(const rev_t *r) { return r->b.buf + r->b.pos; }

static void rev_bytes(rev_t *r, const void *p, size_t n) {
    pbb_bytes(&r->b, p, n);
    ck_assert(!r->b.full);
}

static void rev_varint(rev_t *r, uint64_t v) {
    pbb_varint(&r->b, v);
    ck_assert(!r->b.full);
}

/* Fields are prepended: call in reverse field order. */
static void rev_uint(rev_t *r, uint32_t num, uint64_t v) {
    pbb_uint(&r->b, num, v);
    ck_assert(!r->b.full);
}
/* Wraps the last content_len bytes written as field num (length-delimited). */
static void rev_wrap(rev_t *r, uint32_t num, size_t content_len) {
    pbb_wrap(&r->b, num, content_len);
    ck_assert(!r->b.full);
}

/* A MessageIdData nested `depth` levels (1: no first_chunk_message_id). */
static void rev_nested_id(rev_t *r, int depth) {
    rev_uint(r, 2, 1);
    rev_uint(r, 1, 5);
    for (int i = 1; i < depth; i++) {
        rev_wrap(r, 7, rev_len(r));
        rev_uint(r, 2, (uint64_t)i + 1);
        rev_uint(r, 1, 5);
    }
}

/* BaseCommand SEND_RECEIPT whose message id nests id_depth levels: total depth id_depth + 2. */
static void rev_deep_receipt(rev_t *r, int id_depth) {
    rev_nested_id(r, id_depth);
    rev_wrap(r, 3, rev_len(r));
    rev_uint(r, 2, 42); /* sequence_id */
    rev_uint(r, 1, 1);  /* producer_id */
    rev_wrap(r, 7, rev_len(r));
    rev_uint(r, 1, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
}

/* The frame header in front of a command of cmdlen bytes plus extra bytes after it. */
static void rev_frame(rev_t *r, size_t cmdlen, size_t extra) {
    uint8_t h[8];
    size_t total = 4 + cmdlen + extra;
    h[0] = (uint8_t)(total >> 24), h[1] = (uint8_t)(total >> 16), h[2] = (uint8_t)(total >> 8), h[3] = (uint8_t)total;
    h[4] = (uint8_t)(cmdlen >> 24), h[5] = (uint8_t)(cmdlen >> 16), h[6] = (uint8_t)(cmdlen >> 8), h[7] = (uint8_t)cmdlen;
    rev_bytes(r, h, 8);
}

static long parse(const rev_t *r, pc_frame_t *f, char *err, size_t errlen) {
    err[0] = '\0';
    return pc_frame_parse(rev_data(r), rev_len(r), MAX_FRAME, f, err, errlen);
}

/* ---------- nesting depth ---------- */

START_TEST(test_frame_at_depth_limit_decodes) {
    rev_t r = rev_new(4096);
    rev_deep_receipt(&r, PC_PB_MAX_DEPTH - 2);
    rev_frame(&r, rev_len(&r), 0);
    pc_frame_t f;
    char err[256];
    long n = parse(&r, &f, err, sizeof err);
    ck_assert_msg(n == (long)rev_len(&r), "n=%ld: %s", n, err);
    ck_assert_int_eq(f.cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
    int levels = 0;
    for (const Pulsar__Proto__MessageIdData *id = f.cmd->send_receipt->message_id; id;
         id = id->first_chunk_message_id)
        levels++;
    ck_assert_int_eq(levels, PC_PB_MAX_DEPTH - 2);
    pc_frame_clear(&f);
    free(r.b.buf);
}
END_TEST

static void expect_too_deep(int id_depth) {
    rev_t r = rev_new((size_t)id_depth * 12 + 64);
    rev_deep_receipt(&r, id_depth);
    rev_frame(&r, rev_len(&r), 0);
    pc_frame_t f;
    char err[256];
    long n = parse(&r, &f, err, sizeof err);
    printf("depth %d: %ld, %s\n", id_depth + 2, n, err);
    ck_assert_int_eq(n, PULSARC_ERR_MALFORMED);
    ck_assert_ptr_null(f.cmd);
    ck_assert_contains(err, "SEND_RECEIPT");
    ck_assert_contains(err, "first_chunk_message_id");
    ck_assert_contains(err, "deeper than the limit of 16");
    free(r.b.buf);
}

START_TEST(test_frame_one_past_depth_limit_refused) { expect_too_deep(PC_PB_MAX_DEPTH - 1); }
END_TEST

/* Deep enough that an unguarded protobuf-c unpack overflows an 8 MiB stack. */
START_TEST(test_frame_100000_deep_refused) { expect_too_deep(100000); }
END_TEST

START_TEST(test_guard_depth_counts_top_as_one) {
    rev_t r = rev_new(256);
    rev_nested_id(&r, 3);
    pc_pbguard_result_t g;
    pc_pbguard_limits_t lim = {3, 100, 1 << 20};
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), &lim, &g), PC_PBG_OK);
    ck_assert_uint_eq(g.depth, 3);
    lim.max_depth = 2;
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), &lim, &g), PC_PBG_TOO_DEEP);
    ck_assert_str_eq(g.message, "MessageIdData");
    ck_assert_str_eq(g.field, "first_chunk_message_id");
    free(r.b.buf);
}
END_TEST

/* ---------- element count ---------- */

/* MESSAGE with `words` packed ack_set words of one byte each, and an empty payload section. */
static void rev_message_with_ack_set(rev_t *r, size_t words) {
    uint8_t tail[4] = {0, 0, 0, 0}; /* metadata size 0: a payload section the decoder accepts */
    rev_bytes(r, tail, 4);
    size_t after_cmd = rev_len(r);
    for (size_t i = 0; i < words; i++)
        rev_varint(r, i & 0x7f);
    rev_wrap(r, 4, words);
    size_t id_start = rev_len(r);
    rev_uint(r, 2, 9);
    rev_uint(r, 1, 3);
    rev_wrap(r, 2, rev_len(r) - id_start);
    rev_uint(r, 1, 77); /* consumer_id */
    rev_wrap(r, 9, rev_len(r) - after_cmd);
    rev_uint(r, 1, PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE);
    rev_frame(r, rev_len(r) - after_cmd, after_cmd);
}

START_TEST(test_frame_elements_at_limit_decode) {
    /* the two sub-messages (message, its message_id) are elements too */
    size_t words = PC_PB_MAX_ELEMENTS - 2;
    rev_t r = rev_new(words + 4096);
    rev_message_with_ack_set(&r, words);
    pc_frame_t f;
    char err[256];
    long n = parse(&r, &f, err, sizeof err);
    ck_assert_msg(n == (long)rev_len(&r), "n=%ld: %s", n, err);
    ck_assert_uint_eq(f.cmd->message->n_ack_set, words);
    ck_assert_int_eq(f.cmd->message->ack_set[0], (int64_t)((words - 1) & 0x7f)); /* written last */
    ck_assert_int_eq(f.cmd->message->ack_set[words - 1], 0);
    pc_frame_clear(&f);
    free(r.b.buf);
}
END_TEST

START_TEST(test_frame_elements_past_limit_refused) {
    size_t words = PC_PB_MAX_ELEMENTS - 1;
    rev_t r = rev_new(words + 4096);
    rev_message_with_ack_set(&r, words);
    pc_frame_t f;
    char err[256];
    long n = parse(&r, &f, err, sizeof err);
    printf("%zu ack_set words: %ld, %s\n", words, n, err);
    ck_assert_int_eq(n, PULSARC_ERR_MALFORMED);
    ck_assert_contains(err, "MESSAGE command");
    ck_assert_contains(err, "CommandMessage.ack_set");
    ck_assert_contains(err, "limit of 1000000 elements");
    free(r.b.buf);
}
END_TEST

/* ---------- memory ---------- */

/* SEND_RECEIPT whose body field comes `times` times: protobuf-c merges each repeat. */
static void rev_repeated_receipt(rev_t *r, int times) {
    for (int i = 0; i < times; i++) {
        size_t before = rev_len(r);
        rev_nested_id(r, 1);
        rev_wrap(r, 3, rev_len(r) - before);
        rev_uint(r, 2, (uint64_t)i);
        rev_uint(r, 1, 1);
        rev_wrap(r, 7, rev_len(r) - before);
    }
    rev_uint(r, 1, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
}

START_TEST(test_frame_repeated_body_merges_within_bound) {
    rev_t r = rev_new(4096);
    rev_repeated_receipt(&r, 2);
    rev_frame(&r, rev_len(&r), 0);
    pc_frame_t f;
    char err[256];
    long n = parse(&r, &f, err, sizeof err);
    ck_assert_msg(n > 0, "%s", err);
    ck_assert_uint_eq(f.cmd->send_receipt->sequence_id, 0); /* the last on the wire (written first) wins */
    pc_frame_clear(&f);
    free(r.b.buf);
}
END_TEST

START_TEST(test_frame_repeat_flood_refused) {
    rev_t r = rev_new(1 << 20);
    rev_repeated_receipt(&r, 20000);
    rev_frame(&r, rev_len(&r), 0);
    pc_frame_t f;
    char err[256];
    long n = parse(&r, &f, err, sizeof err);
    printf("20000 repeats: %ld, %s\n", n, err);
    ck_assert_int_eq(n, PULSARC_ERR_MALFORMED);
    ck_assert_contains(err, "SEND_RECEIPT command");
    ck_assert_contains(err, "would unpack to more than the limit of 67108864 bytes");
    free(r.b.buf);
}
END_TEST

/* The unpacked-size bound at and one past a small limit, on its own. */
START_TEST(test_guard_unpacked_limit_exact) {
    rev_t r = rev_new(256);
    rev_nested_id(&r, 2);
    pc_pbguard_result_t g;
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), NULL, &g), PC_PBG_OK);
    pc_pbguard_limits_t lim = {16, 100, g.unpacked};
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), &lim, &g), PC_PBG_OK);
    lim.max_unpacked--;
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), &lim, &g), PC_PBG_TOO_BIG);
    lim = (pc_pbguard_limits_t){16, 1, 1 << 20}; /* the one sub-message is the one element */
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), &lim, &g), PC_PBG_OK);
    lim.max_elements = 0;
    ck_assert_int_eq(pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, rev_data(&r),
                                      rev_len(&r), &lim, &g), PC_PBG_TOO_MANY);
    free(r.b.buf);
}
END_TEST

/* ---------- malformed bytes: refused, and protobuf-c refuses them too ---------- */

START_TEST(test_guard_malformed_agrees_with_protobuf_c) {
    static const struct { const char *what; uint8_t b[8]; size_t n; } cases[] = {
        {"truncated varint", {0x08, 0x80}, 2},
        {"length past the end", {0x3a, 0x05, 0x08}, 3},
        {"group wire type", {0x0b, 0x0c}, 2},
        {"wire type 7", {0x0f, 0x00}, 2},
        {"sub-message as varint", {0x08, 0x07, 0x38, 0x01}, 4},
        {"packed run cut mid-varint", {0x08, 0x09, 0x4a, 0x03, 0x22, 0x01, 0x80}, 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pc_pbguard_result_t g;
        ck_assert_msg(pc_pbguard_check(&pulsar__proto__base_command__descriptor, cases[i].b, cases[i].n,
                                       NULL, &g) == PC_PBG_MALFORMED, "%s", cases[i].what);
        Pulsar__Proto__BaseCommand *c = pulsar__proto__base_command__unpack(NULL, cases[i].n, cases[i].b);
        ck_assert_msg(c == NULL, "protobuf-c accepts %s", cases[i].what);
    }
}
END_TEST

/* ---------- MessageMetadata in rx_decode ---------- */

static void decode_meta(const rev_t *meta, pc_rx_result_t *r) {
    static pc_rxpool_t *pool;
    if (!pool)
        pool = pc_rxpool_new("persistent://public/default/guard", (size_t)64 << 20, 100);
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    mid.ledgerid = 4;
    mid.entryid = 2;
    Pulsar__Proto__CommandMessage cm = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    cm.message_id = &mid;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    cmd.message = &cm;
    pc_frame_t f = {.cmd = &cmd, .has_payload = 1, .checksum_ok = 1, .meta = rev_data(meta),
                    .meta_len = rev_len(meta), .payload = (const uint8_t *)"x", .payload_len = 1};
    pc_rx_opts_t o = {.partition = -1, .skip_upto = NULL};
    pc_rx_decode(pool, &f, &o, r);
}

/* Metadata with n empty properties (each an element and a KeyValue) after
 * its required fields, so the metadata with fewer is a prefix of it. */
#define META_HEAD 8
#define PROP_BYTES 6
static rev_t meta_with_props(size_t n) {
    rev_t r = rev_new(META_HEAD + n * PROP_BYTES);
    static const uint8_t head[META_HEAD] = {0x0a, 0x01, 'p', 0x10, 0x01, 0x18, 0xe8, 0x07};
    static const uint8_t kv[PROP_BYTES] = {0x22, 0x04, 0x0a, 0x00, 0x12, 0x00}; /* {key: "" value: ""} */
    r.b.pos = 0;
    memcpy(r.b.buf, head, META_HEAD);
    for (size_t i = 0; i < n; i++)
        memcpy(r.b.buf + META_HEAD + i * PROP_BYTES, kv, PROP_BYTES);
    return r;
}

/*
 * The most empty properties whose unpacking the guard lets through (memory
 * binds first). protobuf-c's scan slabs make the cost a step function, so
 * the count is searched for, on prefixes of one buffer.
 */
static size_t most_props(void) {
    size_t lo = 1, hi = (PC_PB_MAX_UNPACKED / 64); /* an empty property costs more than 64 bytes */
    rev_t r = meta_with_props(hi);
    while (lo + 1 < hi) {
        size_t mid = lo + (hi - lo) / 2;
        pc_pbguard_result_t g;
        if (pc_pbguard_check(&pulsar__proto__message_metadata__descriptor, r.b.buf,
                             META_HEAD + mid * PROP_BYTES, NULL, &g) == PC_PBG_OK)
            lo = mid;
        else
            hi = mid;
    }
    free(r.b.buf);
    return lo;
}

START_TEST(test_metadata_at_memory_limit_decodes) {
    size_t n = most_props();
    rev_t r = meta_with_props(n);
    pc_rx_result_t res;
    decode_meta(&r, &res);
    printf("%zu properties (%zu bytes of metadata) decode\n", n, rev_len(&r));
    ck_assert_msg(res.validation_error < 0, "%s", res.error);
    ck_assert_ptr_nonnull(res.first);
    ck_assert_uint_eq(pulsarc_msg_property_count(res.first), n);
    pc_rx_result_discard(&res);
    free(r.b.buf);
}
END_TEST

START_TEST(test_metadata_past_memory_limit_refused) {
    size_t n = most_props() + 1;
    rev_t r = meta_with_props(n);
    pc_rx_result_t res;
    decode_meta(&r, &res);
    printf("%zu properties: %s\n", n, res.error);
    ck_assert_int_eq(res.validation_error, PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__BatchDeSerializeError);
    ck_assert_ptr_null(res.first);
    ck_assert_contains(res.error, "entry 4:2 metadata refused: MessageMetadata.properties");
    ck_assert_contains(res.error, "would unpack to more than the limit of 67108864 bytes");
    free(r.b.buf);
}
END_TEST

/* ---------- MessageIdData from user bytes ---------- */

START_TEST(test_msgid_deserialize_bounds) {
    pulsarc_msgid_t id;
    rev_t r = rev_new(64);
    rev_nested_id(&r, 4); /* the limit for stored ids */
    ck_assert_int_eq(pulsarc_msgid_deserialize(rev_data(&r), rev_len(&r), &id), PULSARC_OK);
    ck_assert_int_eq(id.ledger_id, 5);
    ck_assert_int_eq(id.entry_id, 4);
    free(r.b.buf);
    r = rev_new(64);
    rev_nested_id(&r, 5);
    ck_assert_int_eq(pulsarc_msgid_deserialize(rev_data(&r), rev_len(&r), &id), PULSARC_ERR_MALFORMED);
    free(r.b.buf);
    r = rev_new(100000 * 12);
    rev_nested_id(&r, 100000);
    ck_assert_int_eq(pulsarc_msgid_deserialize(rev_data(&r), rev_len(&r), &id), PULSARC_ERR_MALFORMED);
    free(r.b.buf);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("pbguard");
    TCase *tc = tcase_create("bounds");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_frame_at_depth_limit_decodes);
    tcase_add_test(tc, test_frame_one_past_depth_limit_refused);
    tcase_add_test(tc, test_frame_100000_deep_refused);
    tcase_add_test(tc, test_guard_depth_counts_top_as_one);
    tcase_add_test(tc, test_frame_elements_at_limit_decode);
    tcase_add_test(tc, test_frame_elements_past_limit_refused);
    tcase_add_test(tc, test_frame_repeated_body_merges_within_bound);
    tcase_add_test(tc, test_frame_repeat_flood_refused);
    tcase_add_test(tc, test_guard_unpacked_limit_exact);
    tcase_add_test(tc, test_guard_malformed_agrees_with_protobuf_c);
    tcase_add_test(tc, test_metadata_at_memory_limit_decodes);
    tcase_add_test(tc, test_metadata_past_memory_limit_refused);
    tcase_add_test(tc, test_msgid_deserialize_bounds);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
