/*
 * Unit tests of the producer's pure parts, from bytes and without a broker:
 *   - routing (router.c): the Java client's hash values per scheme, keyed
 *     and unkeyed rules of each routing mode, custom routers;
 *   - batching (batch.c, metadata.c): when a batch overflows or is full,
 *     which messages may be batched, key-based grouping and its order, and
 *     the exact record bytes [u32 size][SingleMessageMetadata][payload]
 *     decoded back with protobuf-c;
 *   - a batch's SEND frame as the connection gets it, uncompressed (head
 *     plus records from the op's body) and compressed.
 */
#include <stdlib.h>
#include <string.h>

#include "client/producer/metadata.h"
#include "client/producer/producer_int.h"
#include "core/codec.h"
#include "core/frame.h"
#include "testutil.h"

/* ---- routing ---- */

START_TEST(test_java_hash_vectors) {
    /* Java: "keykeykeykeykey1".hashCode() & MAX = 434058482, "keykeykey2" -> 42978643 */
    ck_assert_int_eq(pc_router_hash(PC_HASH_JAVA_STRING, "keykeykeykeykey1", 16), 434058482);
    ck_assert_int_eq(pc_router_hash(PC_HASH_JAVA_STRING, "keykeykey2", 10), 42978643);
    ck_assert_int_eq(pc_router_hash(PC_HASH_JAVA_STRING, "a", 1), 97);
    ck_assert_int_eq(pc_router_hash(PC_HASH_JAVA_STRING, "", 0), 0);
    /* Murmur3_32 seed 0, masked (pulsar-client-cpp's HashTest vectors) */
    ck_assert_int_eq(pc_router_hash(PC_HASH_MURMUR3, "k1", 2), 2110152746);
    ck_assert_int_eq(pc_router_hash(PC_HASH_MURMUR3, "key1", 4), 462881061);
    ck_assert_int_eq(pc_router_hash(PC_HASH_MURMUR3, "key02", 5), 751761803);
}
END_TEST

static pc_router_t router(const char *mode, const char *scheme, const char *batching) {
    const char *kv[] = {"messageRoutingMode", mode, "hashingScheme", scheme,
                        "batchingEnabled", batching, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pc_router_t r;
    pc_router_init(&r, conf, 7);
    pulsarc_conf_destroy(conf);
    return r;
}

START_TEST(test_keyed_routing_ignores_ordering_key) {
    pc_router_t r = router("RoundRobinPartition", "JavaStringHash", "false");
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_key(m, "keykeykey2");
    pulsarc_msg_set_ordering_key(m, "zzz", 3); /* Java routes on the partition key only */
    ck_assert_int_eq(pc_router_choose(&r, m, 7, -1), 42978643 % 7);
    static const uint8_t bin[] = {0x00, 0xff};
    pulsarc_msg_set_key_bytes(m, bin, 2); /* hashed as its base64 text "AP8=" */
    ck_assert_int_eq(pc_router_choose(&r, m, 7, -1), pc_router_hash(PC_HASH_JAVA_STRING, "AP8=", 4) % 7);
    pulsarc_msg_destroy(m);
}
END_TEST

START_TEST(test_round_robin_rules) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pc_router_t r = router("RoundRobinPartition", "Murmur3_32Hash", "false");
    int first = pc_router_choose(&r, m, 7, -1);
    for (int i = 1; i < 20; i++) /* unbatched: the next partition every message */
        ck_assert_int_eq(pc_router_choose(&r, m, 7, -1), (first + i) % 7);
    r = router("RoundRobinPartition", "Murmur3_32Hash", "true");
    /* batched: one partition per 10 x 1 ms window of wall-clock time */
    int a = pc_router_choose(&r, m, 7, 1000000), b = pc_router_choose(&r, m, 7, 1000009);
    int c = pc_router_choose(&r, m, 7, 1000010);
    ck_assert_int_eq(a, b);
    ck_assert_int_eq(c, (a + 1) % 7);
    r = router("SinglePartition", "Murmur3_32Hash", "true");
    int fixed = pc_router_choose(&r, m, 7, -1);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(pc_router_choose(&r, m, 7, 1000 * i), fixed);
    pulsarc_msg_destroy(m);
}
END_TEST

static int route_to_key_length(const pulsarc_msg_t *m, int n, void *opaque) {
    (void)opaque;
    return (int)(m->key ? strlen(m->key) : 0) % n;
}

START_TEST(test_custom_router_decides_everything) {
    pc_router_t r = router("CustomPartition", "JavaStringHash", "false");
    pulsarc_msg_t *m = pulsarc_msg_new();
    ck_assert_int_eq(pc_router_choose(&r, m, 7, -1), -1); /* no callback yet */
    r.custom = route_to_key_length;
    pulsarc_msg_set_key(m, "abcde");
    ck_assert_int_eq(pc_router_choose(&r, m, 7, -1), 5);
    ck_assert_int_eq(pc_router_choose(&r, m, 3, -1), 2);
    pulsarc_msg_destroy(m);
}
END_TEST

/* ---- batching ---- */

static send_item_t *item(const char *payload, const char *key, int64_t seq) {
    send_item_t *it = calloc(1, sizeof *it);
    it->msg = pulsarc_msg_new();
    it->owns_msg = 1;
    pulsarc_msg_set_payload(it->msg, payload, strlen(payload), PULSARC_MSG_F_COPY);
    if (key)
        pulsarc_msg_set_key(it->msg, key);
    it->seq = seq;
    return it;
}

static void free_group(pc_batch_group_t *g) {
    for (send_item_t *it = g->first, *next; it; it = next) {
        next = it->next;
        pulsarc_msg_destroy(it->msg);
        free(it);
    }
    pc_batch_group_free(g);
}

START_TEST(test_batch_limits_and_acceptance) {
    pc_batcher_t b;
    pc_batcher_init(&b, 0, 3, 10);
    pulsarc_msg_t *big = pulsarc_msg_new(), *delayed = pulsarc_msg_new();
    pulsarc_msg_set_payload(big, "0123456789A", 11, PULSARC_MSG_F_COPY);
    pulsarc_msg_set_payload(delayed, "x", 1, PULSARC_MSG_F_COPY);
    pulsarc_msg_set_deliver_after(delayed, 1000);
    ck_assert(!pc_batcher_accepts(&b, big));     /* above batchingMaxBytes: alone */
    ck_assert(!pc_batcher_accepts(&b, delayed)); /* delayed: never batched */
    ck_assert_int_eq(pc_batcher_add(&b, item("abcd", NULL, 0)), PULSARC_OK);
    ck_assert_int_eq(pc_batcher_add(&b, item("efgh", NULL, 1)), PULSARC_OK);
    send_item_t *next = item("ijk", NULL, 2);
    ck_assert(pc_batcher_would_overflow(&b, next->msg)); /* 4 + 4 + 3 > 10 bytes */
    ck_assert(!pc_batcher_full(&b));
    pc_batch_group_t *g = pc_batcher_take(&b);
    ck_assert_ptr_null(g->next);
    ck_assert_int_eq(g->n, 2);
    ck_assert(pc_batcher_empty(&b));
    free_group(g);
    for (int i = 0; i < 3; i++)
        pc_batcher_add(&b, i ? item("y", NULL, 3 + i) : next);
    ck_assert(pc_batcher_full(&b)); /* 3 messages */
    free_group(pc_batcher_take(&b));
    pulsarc_msg_destroy(big);
    pulsarc_msg_destroy(delayed);
}
END_TEST

START_TEST(test_key_based_groups) {
    pc_batcher_t b;
    pc_batcher_init(&b, 1, 100, 1000);
    pc_batcher_add(&b, item("1", "B", 5));
    pc_batcher_add(&b, item("2", "A", 6));
    pc_batcher_add(&b, item("3", "B", 7));
    pc_batcher_add(&b, item("4", NULL, 8));
    send_item_t *o = item("5", "A", 2); /* a user-set lower id: its group goes first */
    pulsarc_msg_set_ordering_key(o->msg, "C", 1);
    pc_batcher_add(&b, o);
    ck_assert_int_eq(b.n, 5);
    pc_batch_group_t *g = pc_batcher_take(&b);
    const char *want_first[] = {"5", "1", "2", "4"};
    int want_n[] = {1, 2, 1, 1}, i = 0;
    for (pc_batch_group_t *x = g; x; x = x->next, i++) {
        ck_assert_int_eq(x->n, want_n[i]);
        ck_assert(memcmp(x->first->msg->data, want_first[i], 1) == 0);
    }
    ck_assert_int_eq(i, 4);
    while (g) {
        pc_batch_group_t *next = g->next;
        free_group(g);
        g = next;
    }
}
END_TEST

START_TEST(test_batch_record_bytes) {
    pc_batcher_t b;
    pc_batcher_init(&b, 0, 100, 1000);
    send_item_t *a = item("hello", "k1", 40), *n = item("", NULL, 41);
    pulsarc_msg_set_property(a->msg, "p", "v");
    pulsarc_msg_set_event_time(a->msg, 1234);
    static const uint8_t bin[] = {1, 2, 3};
    pulsarc_msg_set_key_bytes(n->msg, bin, 3);
    pulsarc_msg_set_null_value(n->msg);
    pc_batcher_add(&b, a);
    pc_batcher_add(&b, n);
    pc_batch_group_t *g = pc_batcher_take(&b);
    pc_buf_t out;
    pc_buf_init(&out, 0);
    ck_assert_int_eq(pc_batch_serialize(g, &out), PULSARC_OK);
    const uint8_t *p = out.data;
    uint32_t len = pc_rd_u32(p);
    Pulsar__Proto__SingleMessageMetadata *sm =
        pulsar__proto__single_message_metadata__unpack(NULL, len, p + 4);
    ck_assert_ptr_nonnull(sm);
    ck_assert_int_eq(sm->payload_size, 5);
    ck_assert_str_eq(sm->partition_key, "k1");
    ck_assert(sm->has_sequence_id && sm->sequence_id == 40);
    ck_assert(sm->has_event_time && sm->event_time == 1234);
    ck_assert_uint_eq(sm->n_properties, 1);
    ck_assert_str_eq(sm->properties[0]->key, "p");
    ck_assert(memcmp(p + 4 + len, "hello", 5) == 0);
    pulsar__proto__single_message_metadata__free_unpacked(sm, NULL);
    p += 4 + len + 5;
    len = pc_rd_u32(p);
    sm = pulsar__proto__single_message_metadata__unpack(NULL, len, p + 4);
    ck_assert_str_eq(sm->partition_key, "AQID");
    ck_assert(sm->has_partition_key_b64_encoded && sm->partition_key_b64_encoded);
    ck_assert(sm->has_null_value && sm->null_value);
    ck_assert_int_eq(sm->payload_size, 0);
    ck_assert_uint_eq((size_t)(p + 4 + len - out.data), out.len); /* nothing after it */
    pulsar__proto__single_message_metadata__free_unpacked(sm, NULL);
    pc_buf_free(&out);
    free_group(g);
}
END_TEST

/* A plain message's batch record is written without protobuf-c: its bytes
 * must be exactly protobuf-c's packing of the same SingleMessageMetadata,
 * for small and multi-byte values, with and without event time and null. */
START_TEST(test_plain_record_matches_protobuf_c) {
    static const uint64_t seqs[] = {0, 127, 128, (uint64_t)1 << 40, INT64_MAX};
    static uint8_t big[300];
    for (int shape = 0; shape < 4; shape++) {
        for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
            pulsarc_msg_t *m = pulsarc_msg_new();
            size_t len = shape == 3 ? sizeof big : i;
            pulsarc_msg_set_payload(m, big, len, PULSARC_MSG_F_BORROW);
            if (shape & 1)
                pulsarc_msg_set_event_time(m, seqs[i] + 1);
            if (shape == 2)
                pulsarc_msg_set_null_value(m);
            pc_buf_t out;
            pc_buf_init(&out, 0);
            ck_assert_int_eq(pc_md_append_single(&out, m, (int64_t)seqs[i]), PULSARC_OK);
            Pulsar__Proto__SingleMessageMetadata sm = PULSAR__PROTO__SINGLE_MESSAGE_METADATA__INIT;
            sm.payload_size = (int32_t)m->len;
            sm.has_event_time = m->event_time != 0;
            sm.event_time = m->event_time;
            sm.has_sequence_id = 1;
            sm.sequence_id = seqs[i];
            sm.has_null_value = sm.null_value = m->null_value != 0;
            uint8_t want[64];
            size_t n = pulsar__proto__single_message_metadata__get_packed_size(&sm);
            ck_assert_uint_le(n, sizeof want);
            pulsar__proto__single_message_metadata__pack(&sm, want);
            ck_assert_uint_eq(pc_rd_u32(out.data), n);
            ck_assert_mem_eq(out.data + 4, want, n);
            ck_assert_uint_eq(out.len, 4 + n + m->len);
            pc_buf_free(&out);
            pulsarc_msg_destroy(m);
        }
    }
}
END_TEST

START_TEST(test_message_metadata_fields) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_key(m, "k");
    pulsarc_msg_set_ordering_key(m, "ok", 2);
    pulsarc_msg_set_deliver_at(m, 99999);
    pulsarc_msg_disable_replication(m);
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    pc_md_store_t st;
    ck_assert_int_eq(pc_md_fill_user(&md, &st, m), PULSARC_OK);
    ck_assert(md.has_deliver_at_time && md.deliver_at_time == 99999);
    ck_assert(md.has_ordering_key && md.ordering_key.len == 2);
    ck_assert_uint_eq(md.n_replicate_to, 1);
    ck_assert_str_eq(md.replicate_to[0], "__local__");
    ck_assert(!md.has_partition_key_b64_encoded);
    pc_md_store_free(&st);
    pulsarc_msg_destroy(m);
}
END_TEST

/* A finished op goes back to its pool with its frame buffer, up to the
 * pool's bound; a frame too big to keep is freed, its op too. */
START_TEST(test_send_op_pool_reuse_and_bounds) {
    pc_send_op_pool_t pool;
    pc_send_op_pool_init(&pool, 2);
    send_op_t *a = pc_send_op_new(&pool, 1, 1), *b = pc_send_op_new(&pool, 2, 3);
    send_op_t *c = pc_send_op_new(&pool, 4, 4);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(pc_buf_append(&a->frame, "frame", 5), PULSARC_OK);
    uint8_t *kept = a->frame.data;
    ck_assert_int_eq(pc_buf_reserve(&b->frame, PC_SEND_OP_KEEP_BYTES + 1), PULSARC_OK);
    pc_send_op_free(b); /* too big a frame: freed, not kept */
    ck_assert_int_eq(pool.n, 0);
    pc_send_op_free(a);
    pc_send_op_free(c);
    ck_assert_int_eq(pool.n, 2);
    send_op_t *d = pc_send_op_new(&pool, 9, 10), *e = pc_send_op_new(&pool, 11, 11);
    ck_assert(d->frame.data == kept || e->frame.data == kept); /* the buffer came back */
    ck_assert_uint_eq(d->frame.len + e->frame.len, 0);
    ck_assert(d->seq == 9 && d->highest_seq == 10 && !d->items && !d->tail && !d->batched);
    ck_assert_int_eq(pool.n, 0);
    send_op_t *f = pc_send_op_new(&pool, 12, 12); /* empty pool: a new one */
    ck_assert_ptr_nonnull(f);
    pc_send_op_free(d);
    pc_send_op_free(e);
    pc_send_op_free(f); /* past the bound: freed */
    ck_assert_int_eq(pool.n, 2);
    pc_send_op_pool_clear(&pool);
    ck_assert_int_eq(pool.n, 0);
    ck_assert_ptr_null(pool.free);
}
END_TEST

/* The frame of a batch as the connection gets it: its head, then, when
 * uncompressed, its records from the op's body (small payloads, op->tail)
 * or each record's head from the body followed by its payload from the
 * item's own message (large payloads, gathered); compressed, all of it in
 * the frame with the body given back. The checksum must hold over the
 * pieces. big: payloads long enough to be gathered. */
static void batch_frame_check(pc_codec_t codec, int big) {
    pc_send_op_pool_t pool;
    pc_send_op_pool_init(&pool, 4);
    pc_entry_conf_t f = {.producer_id = 7, .producer_name = "prod", .codec = codec,
                         .max_size = 1 << 20, .chunk_limit = 1 << 20, .op_pool = &pool};
    pc_batcher_t b;
    pc_batcher_init(&b, 0, 100, 100000);
    char large[2000];
    memset(large, 'x', sizeof large - 1);
    large[sizeof large - 1] = '\0';
    pc_batcher_add(&b, item(big ? large : "hello", "k1", 40));
    pc_batcher_add(&b, item("", NULL, 41));
    pc_batcher_add(&b, item(big ? large + 3 : "third message", NULL, 42));
    pc_batch_group_t *g = pc_batcher_take(&b);
    pc_buf_t want;
    pc_buf_init(&want, 0);
    ck_assert_int_eq(pc_batch_serialize(g, &want), PULSARC_OK);
    send_op_t *op = NULL;
    char e[256];
    ck_assert_int_eq(pc_entry_batch(&f, g, &op, e, sizeof e), PULSARC_OK);
    ck_assert_ptr_nonnull(op);
    pc_buf_t wire;
    pc_buf_init(&wire, 0);
    ck_assert_int_eq(pc_buf_append(&wire, op->frame.data, op->frame.len), PULSARC_OK);
    if (codec == PC_CODEC_NONE && !big) {
        ck_assert(!op->gathered && op->tail == op->body.data && op->tail_len == want.len);
        ck_assert_int_eq(pc_buf_append(&wire, op->tail, op->tail_len), PULSARC_OK);
    } else if (codec == PC_CODEC_NONE) {
        ck_assert(op->gathered && op->tail == NULL && op->tail_len == 0);
        size_t off = 0;
        for (const send_item_t *it = op->items; it; it = it->next) {
            size_t head = 4 + pc_rd_u32(op->body.data + off);
            ck_assert_uint_le(off + head, op->body.len);
            ck_assert_int_eq(pc_buf_append(&wire, op->body.data + off, head), PULSARC_OK);
            ck_assert_int_eq(pc_buf_append(&wire, it->msg->data, it->msg->len), PULSARC_OK);
            off += head;
        }
        ck_assert_uint_eq(off, op->body.len); /* heads only, nothing else */
    } else {
        ck_assert(op->tail == NULL && op->tail_len == 0 && op->body.len == 0);
    }
    pc_frame_t fr;
    ck_assert_int_eq(pc_frame_parse(wire.data, wire.len, 1 << 21, &fr, e, sizeof e), (long)wire.len);
    ck_assert(fr.has_payload && fr.has_checksum && fr.checksum_ok);
    Pulsar__Proto__CommandSend *s = fr.cmd->send;
    ck_assert(s->producer_id == 7 && s->sequence_id == 40 && s->has_num_messages && s->num_messages == 3);
    ck_assert(s->has_highest_sequence_id && s->highest_sequence_id == 42);
    Pulsar__Proto__MessageMetadata *md =
        pulsar__proto__message_metadata__unpack(NULL, fr.meta_len, fr.meta);
    ck_assert_ptr_nonnull(md);
    ck_assert(md->num_messages_in_batch == 3 && md->uncompressed_size == want.len);
    ck_assert_int_eq(md->has_compression, codec != PC_CODEC_NONE);
    uint8_t *raw = malloc(want.len);
    ck_assert_int_eq(pc_codec_decompress(codec, fr.payload, fr.payload_len, raw, want.len, e, sizeof e),
                     PULSARC_OK);
    ck_assert_mem_eq(raw, want.data, want.len);
    pulsar__proto__message_metadata__free_unpacked(md, NULL);
    pc_frame_clear(&fr);
    free(raw);
    pc_buf_free(&wire);
    pc_buf_free(&want);
    g->first = op->items;
    free_group(g);
    pc_send_op_free(op);
    pc_send_op_pool_clear(&pool);
}

START_TEST(test_batch_frame_from_op_body) {
    batch_frame_check(PC_CODEC_NONE, 0);
    batch_frame_check(PC_CODEC_NONE, 1);
    batch_frame_check(PC_CODEC_LZ4, 0);
    batch_frame_check(PC_CODEC_LZ4, 1);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-unit");
    TCase *t = tcase_create("router+batch");
    tcase_add_test(t, test_java_hash_vectors);
    tcase_add_test(t, test_keyed_routing_ignores_ordering_key);
    tcase_add_test(t, test_round_robin_rules);
    tcase_add_test(t, test_custom_router_decides_everything);
    tcase_add_test(t, test_batch_limits_and_acceptance);
    tcase_add_test(t, test_key_based_groups);
    tcase_add_test(t, test_batch_record_bytes);
    tcase_add_test(t, test_plain_record_matches_protobuf_c);
    tcase_add_test(t, test_message_metadata_fields);
    tcase_add_test(t, test_send_op_pool_reuse_and_bounds);
    tcase_add_test(t, test_batch_frame_from_op_body);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
