/*
 * Live-broker tests of the producer's send path: every codec with batching
 * on and off (bytes, keys, properties, event times, sequence ids checked
 * by the project's consumer), batch limits by count, bytes and delay,
 * key-based batching, message metadata (ordering key, binary keys, null
 * value, replication clusters, explicit sequence ids), delayed delivery,
 * stats, and close completing every pending send exactly once; batches of
 * large uncompressed records, whose payloads go out from the messages.
 */
#include <stdlib.h>
#include <time.h>

#include "producer_util.h"

static const char *const codecs[] = {"NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY"};

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A payload that compresses (repeated text) with a per-message tail. */
static size_t payload_for(int i, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "message %d: ", i);
    size_t len = (size_t)n + (size_t)(i % 50) * 13;
    for (size_t k = (size_t)n; k < len && k < cap; k++)
        buf[k] = "pulsarc batching and compression "[k % 33];
    return len < cap ? len : cap;
}

static pulsarc_msg_t *rich_msg(int i, const char *codec) {
    char buf[1024], v[32], key[32];
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, buf, payload_for(i, buf, sizeof buf), PULSARC_MSG_F_COPY);
    snprintf(v, sizeof v, "%d", i);
    snprintf(key, sizeof key, "key-%d", i % 7);
    pulsarc_msg_set_property(m, "i", v);
    pulsarc_msg_set_property(m, "codec", codec);
    pulsarc_msg_set_key(m, key);
    pulsarc_msg_set_event_time(m, 1700000000000ULL + (uint64_t)i);
    return m;
}

static void check_rich(const pulsarc_msg_t *m, int i, const char *codec) {
    char buf[1024], v[32], key[32];
    size_t len = payload_for(i, buf, sizeof buf);
    snprintf(v, sizeof v, "%d", i);
    snprintf(key, sizeof key, "key-%d", i % 7);
    ck_assert_uint_eq(pulsarc_msg_len(m), len);
    ck_assert_msg(memcmp(pulsarc_msg_payload(m), buf, len) == 0, "payload of #%d differs", i);
    ck_assert_str_eq(pulsarc_msg_key(m), key);
    ck_assert_str_eq(pulsarc_msg_property(m, "i"), v);
    ck_assert_str_eq(pulsarc_msg_property(m, "codec"), codec);
    ck_assert_uint_eq(pulsarc_msg_property_count(m), 2);
    ck_assert_uint_eq(pulsarc_msg_event_time(m), 1700000000000ULL + (uint64_t)i);
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), i);
}

#define N_CODEC 100

/* _i: codec index * 2 + batching (0/1). */
START_TEST(test_codec_roundtrip) {
    const char *codec = codecs[_i / 2];
    int batching = _i % 2;
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic(batching ? "codec-batch" : "codec-single");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    const char *kv[] = {"compressionType", codec, "batchingEnabled", batching ? "true" : "false",
                        "batchingMaxMessages", "25", "batchingMaxPublishDelayMicros", "10000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < N_CODEC; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, rich_msg(i, codec), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, N_CODEC);
    ck_assert_int_eq(log.ok, N_CODEC);
    for (int i = 0; i < N_CODEC; i++) {
        ck_assert_int_eq(log.calls_for[i], 1);
        ck_assert_int_eq(log.ids[i].batch_size, batching ? 25 : 0);
        ck_assert_int_eq(log.ids[i].batch_index, batching ? i % 25 : -1);
    }
    for (int i = 0; i < N_CODEC; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        check_rich(m, i, codec);
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        ck_assert_int_eq(id.ledger_id, log.ids[i].ledger_id);
        ck_assert_int_eq(id.entry_id, log.ids[i].entry_id);
        ck_assert_int_eq(id.batch_index, log.ids[i].batch_index);
        pulsarc_msg_destroy(m);
    }
    expect_no_more(cons);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static void send_sized(pulsarc_producer_t *p, sent_log_t *log, int i, size_t len) {
    char *buf = calloc(1, len + 1), v[16];
    memset(buf, 'a' + i % 26, len);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, buf, len, PULSARC_MSG_F_FREE);
    snprintf(v, sizeof v, "%d", i);
    pulsarc_msg_set_property(m, "i", v);
    ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_sent_cb, log), PULSARC_OK);
}

/* The payload of message i of test_large_batch_records: 600 to ~2,000
 * bytes, each byte depending on i and its position, so a record shifted,
 * cut or swapped with another shows. */
static size_t large_payload(int i, char *buf, size_t cap) {
    size_t len = 600 + (size_t)(i * 97 % 1400);
    for (size_t k = 0; k < len && k < cap; k++)
        buf[k] = (char)('A' + (i * 7 + (int)k) % 53);
    return len < cap ? len : cap;
}

/* Uncompressed batches of large records (sent from the messages' own bytes,
 * each record's head apart from its payload): the broker takes them (its
 * checksum holds) and the consumer gets every payload, property and id. */
START_TEST(test_large_batch_records) {
    enum { N = 60, PER_BATCH = 20 };
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("large-batch");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    const char *kv[] = {"batchingMaxMessages", "20", "batchingMaxBytes", "1000000",
                        "batchingMaxPublishDelayMicros", "10000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    char buf[2048], v[16];
    for (int i = 0; i < N; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, buf, large_payload(i, buf, sizeof buf), PULSARC_MSG_F_COPY);
        snprintf(v, sizeof v, "%d", i);
        pulsarc_msg_set_property(m, "i", v);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_sent_cb, &log), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, N);
    ck_assert_int_eq(log.ok, N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(log.ids[i].batch_size, PER_BATCH);
        ck_assert_int_eq(log.ids[i].batch_index, i % PER_BATCH);
    }
    for (int i = 0; i < N; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        size_t len = large_payload(i, buf, sizeof buf);
        ck_assert_uint_eq(pulsarc_msg_len(m), len);
        ck_assert_msg(memcmp(pulsarc_msg_payload(m), buf, len) == 0, "payload of #%d differs", i);
        snprintf(v, sizeof v, "%d", i);
        ck_assert_str_eq(pulsarc_msg_property(m, "i"), v);
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        ck_assert_int_eq(id.entry_id, log.ids[i].entry_id);
        ck_assert_int_eq(id.batch_index, log.ids[i].batch_index);
        pulsarc_msg_destroy(m);
    }
    expect_no_more(cons);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Count, bytes, and a message bigger than a batch going alone. */
START_TEST(test_batch_limits) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("batch-limits");
    const char *kv[] = {"batchingMaxMessages", "5", "batchingMaxBytes", "450",
                        "batchingMaxPublishDelayMicros", "10000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 10; i++) /* 10-byte messages: 5 per batch by count */
        send_sized(p, &log, i, 10);
    for (int i = 10; i < 18; i++) /* 100-byte messages: 4 per batch by bytes */
        send_sized(p, &log, i, 100);
    send_sized(p, &log, 18, 1000); /* bigger than a batch: alone */
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, 19);
    ck_assert_int_eq(log.ok, 19);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(log.ids[i].batch_size, 5);
    ck_assert_int_eq(log.ids[0].entry_id, log.ids[4].entry_id);
    ck_assert_int_ne(log.ids[4].entry_id, log.ids[5].entry_id);
    for (int i = 10; i < 18; i++)
        ck_assert_int_eq(log.ids[i].batch_size, 4);
    ck_assert_int_eq(log.ids[18].batch_index, -1);
    ck_assert_int_ne(log.ids[18].entry_id, log.ids[17].entry_id);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* A batch that fills goes at once, without flush and long before its delay,
 * also when the sends that fill it come while its delay timer runs. */
START_TEST(test_full_batch_goes_before_delay) {
    /* no timer of the client (keep-alive, send timeout) wakes its loop
     * within the bound, and the broker's first ping comes 30 s after the
     * handshake: only the full batch can send these */
    const char *ckv[] = {"keepAliveIntervalSeconds", "600", NULL};
    pulsarc_client_t *c = pct_client_with(ckv);
    const char *topic = pct_topic("batch-full");
    const char *kv[] = {"batchingMaxMessages", "5", "batchingMaxPublishDelayMicros", "120000000",
                        "sendTimeoutMs", "0", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    send_sized(p, &log, 0, 10);
    usleep(200 * 1000); /* the first message opens the batch and starts its timer */
    for (int i = 1; i < 5; i++)
        send_sized(p, &log, i, 10);
    ck_assert_msg(sent_log_wait_ms(&log, 5, 20000), "a full batch waited for its 120 s delay");
    ck_assert_int_eq(log.ok, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(log.ids[i].batch_size, 5);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* Without flush, a batch below the limits still goes when the delay passes. */
START_TEST(test_batch_sent_by_delay) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"batchingMaxMessages", "1000", "batchingMaxPublishDelayMicros", "200000", NULL};
    pulsarc_producer_t *p = make_producer(c, pct_topic("batch-delay"), kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 3; i++)
        send_sized(p, &log, i, 20);
    sent_log_wait(&log, 3); /* no flush: only the delay timer can send them */
    ck_assert_int_eq(log.ok, 3);
    ck_assert_int_eq(log.ids[0].batch_size, 3);
    ck_assert_int_eq(log.ids[2].batch_index, 2);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* KEY_BASED: one entry per key, each carrying only that key's messages. */
START_TEST(test_key_based_batching) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("batch-keys");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Key_Shared");
    const char *kv[] = {"batcherBuilder", "KEY_BASED", "batchingMaxPublishDelayMicros", "10000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    const char *keys[] = {"A", "B", "C"};
    for (int i = 0; i < 30; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_property(m, "i", v);
        if (i % 3 == 2)
            pulsarc_msg_set_ordering_key(m, "C", 1); /* ordering key groups too */
        else
            pulsarc_msg_set_key(m, keys[i % 3]);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_sent_cb, &log), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, 30);
    ck_assert_int_eq(log.ok, 30);
    for (int i = 0; i < 30; i++) {
        ck_assert_int_eq(log.ids[i].batch_size, 10);
        ck_assert_int_eq(log.ids[i].entry_id, log.ids[i % 3].entry_id);
        ck_assert_int_eq(log.ids[i].batch_index, i / 3);
    }
    ck_assert_int_ne(log.ids[0].entry_id, log.ids[1].entry_id);
    ck_assert_int_ne(log.ids[1].entry_id, log.ids[2].entry_id);
    for (int i = 0; i < 30; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        int k = atoi(pulsarc_msg_property(m, "i")) % 3;
        if (k == 2) {
            size_t n;
            const void *ok = pulsarc_msg_ordering_key(m, &n);
            ck_assert(n == 1 && memcmp(ok, "C", 1) == 0);
        } else {
            ck_assert_str_eq(pulsarc_msg_key(m), keys[k]);
        }
        pulsarc_msg_destroy(m);
    }
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static pulsarc_msg_t *meta_msg(int i) {
    static const uint8_t bin[] = {0x00, 0xff, 0x10, 0x80, 0x7f};
    pulsarc_msg_t *m = pulsarc_msg_new();
    char v[16];
    snprintf(v, sizeof v, "%d", i);
    pulsarc_msg_set_property(m, "i", v);
    pulsarc_msg_set_sequence_id(m, 1000 + i * 10);
    switch (i % 4) {
    case 0:
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_key_bytes(m, bin, sizeof bin);
        break;
    case 1:
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_ordering_key(m, "ord\0key", 7);
        pulsarc_msg_set_key(m, "plain");
        break;
    case 2:
        pulsarc_msg_set_null_value(m);
        pulsarc_msg_set_key(m, "tombstone");
        break;
    default: {
        const char *cl[] = {pct_cluster_name()};
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_replication_clusters(m, cl, 1);
    }
    }
    return m;
}

static void check_meta(const pulsarc_msg_t *m, int i) {
    static const uint8_t bin[] = {0x00, 0xff, 0x10, 0x80, 0x7f};
    size_t n = 0;
    const void *k;
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), 1000 + i * 10);
    switch (i % 4) {
    case 0:
        k = pulsarc_msg_key_bytes(m, &n);
        ck_assert(n == sizeof bin && memcmp(k, bin, n) == 0);
        ck_assert_str_eq(pulsarc_msg_key(m), "AP8QgH8="); /* base64 on the wire */
        break;
    case 1:
        k = pulsarc_msg_ordering_key(m, &n);
        ck_assert(n == 7 && memcmp(k, "ord\0key", 7) == 0);
        ck_assert_str_eq(pulsarc_msg_key(m), "plain");
        break;
    case 2:
        ck_assert_int_eq(pulsarc_msg_is_null_value(m), 1);
        ck_assert_uint_eq(pulsarc_msg_len(m), 0);
        break;
    default:
        ck_assert_int_eq(pulsarc_msg_is_null_value(m), 0);
    }
}

/* _i: batching off (0) or on (1). */
START_TEST(test_metadata_fields) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("meta");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    const char *kv[] = {"batchingEnabled", _i ? "true" : "false", "batchingMaxPublishDelayMicros",
                        "10000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, meta_msg(i), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, 8);
    ck_assert_int_eq(log.ok, 8);
    ck_assert_int_eq(log.ids[7].batch_size, _i ? 8 : 0);
    ck_assert_int_eq(pulsarc_producer_last_sequence_id(p), 1070);
    for (int i = 0; i < 8; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        check_meta(m, i);
        pulsarc_msg_destroy(m);
    }
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* deliver_after: the broker holds it back; a later plain message overtakes it. */
START_TEST(test_delayed_delivery) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("delayed");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Shared");
    pulsarc_producer_t *p = make_producer(c, topic, NULL); /* batching on: delayed ones go alone */
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "late", 4, PULSARC_MSG_F_COPY);
    pulsarc_msg_set_deliver_after(m, 3000);
    uint64_t due = pulsarc_msg_deliver_at(m);
    pulsarc_msgid_t id;
    ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
    ck_assert_int_eq(id.batch_index, -1);
    pulsarc_msg_destroy(m);
    send_text(p, "early");
    pulsarc_msg_t *first = receive_one(cons, 0), *second = receive_one(cons, 1);
    uint64_t arrived = wall_ms();
    ck_assert(pulsarc_msg_len(first) == 5 && memcmp(pulsarc_msg_payload(first), "early", 5) == 0);
    ck_assert(pulsarc_msg_len(second) == 4 && memcmp(pulsarc_msg_payload(second), "late", 4) == 0);
    ck_assert_msg(arrived >= due, "delayed message arrived %llu ms early",
                  (unsigned long long)(due - arrived));
    pulsarc_msg_destroy(first);
    pulsarc_msg_destroy(second);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_stats) {
    pulsarc_client_t *c = pct_client();
    pulsarc_producer_t *p = make_producer(c, pct_topic("stats"), NULL);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 50; i++)
        send_sized(p, &log, i, 40);
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, 50);
    pulsarc_producer_stats_t st;
    ck_assert_int_eq(pulsarc_producer_stats(p, &st), PULSARC_OK);
    ck_assert_uint_eq(st.msgs_sent, 50);
    ck_assert_uint_eq(st.bytes_sent, 50 * 40);
    ck_assert_uint_eq(st.send_errors, 0);
    ck_assert_uint_eq(st.pending, 0);
    ck_assert(st.latency_avg_ms >= 0 && (double)st.latency_max_ms >= st.latency_avg_ms);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* Close with a batch still open: it is sent, and every send hears once. */
START_TEST(test_close_completes_pending_once) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("close-pending");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    const char *kv[] = {"batchingMaxMessages", "100000", "batchingMaxBytes", "10000000",
                        "batchingMaxPublishDelayMicros", "60000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 500; i++)
        send_sized(p, &log, i, 10);
    ck_assert_int_eq(pulsarc_producer_close(p), PULSARC_OK);
    sent_log_wait(&log, 500);
    for (int i = 0; i < 500; i++)
        ck_assert_int_eq(log.calls_for[i], 1);
    ck_assert_int_eq(log.ok, 500); /* close sends the open batch and waits for its receipt */
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_producer_send(p, m = pulsarc_msg_new(), NULL), PULSARC_ERR_CLOSED);
    pulsarc_msg_destroy(m);
    for (int i = 0; i < 500; i++)
        pulsarc_msg_destroy(receive_one(cons, i));
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer");
    TCase *t = tcase_create("send");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_codec_roundtrip, 0, 10);
    tcase_add_test(t, test_large_batch_records);
    tcase_add_test(t, test_batch_limits);
    tcase_add_test(t, test_full_batch_goes_before_delay);
    tcase_add_test(t, test_batch_sent_by_delay);
    tcase_add_test(t, test_key_based_batching);
    tcase_add_loop_test(t, test_metadata_fields, 0, 2);
    tcase_add_test(t, test_delayed_delivery);
    tcase_add_test(t, test_stats);
    tcase_add_test(t, test_close_completes_pending_once);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
