/*
 * Live-broker behaviour that needs batches or several consumers at once:
 * acking single messages of a batch (batch-index acks) and Key_Shared
 * out-of-order delivery letting a newly joined consumer start at once;
 * entries large enough to be taken from the connection's read buffer
 * whole (batches of ~128 KB, single messages of 300 KB) arriving intact
 * and staying so while later entries are read, and after the close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static pulsarc_producer_t *batch_producer(pulsarc_client_t *c, const char *topic, int batching) {
    const char *kv[] = {"batchingEnabled", batching ? "true" : "false", "batchingMaxMessages", "10",
                        "batchingMaxPublishDelayMicros", "2000000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

/* Sends "msg-<i>" asynchronously (so batches fill), keyed k<i % nkeys> when nkeys > 0. */
static void send_async(pulsarc_producer_t *p, int from, int to, int nkeys) {
    for (int i = from; i < to; i++) {
        char body[32], key[16];
        snprintf(body, sizeof body, "msg-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        if (nkeys) {
            snprintf(key, sizeof key, "k%d", i % nkeys);
            pulsarc_msg_set_key(m, key);
        }
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, NULL, NULL), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
}

static pulsarc_consumer_t *sub(pulsarc_client_t *c, const char *topic, const char *name,
                               const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, name, conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

static int index_of(const pulsarc_msg_t *m) {
    int i = -1;
    char buf[32];
    size_t n = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(buf, pulsarc_msg_payload(m), n);
    buf[n] = 0;
    sscanf(buf, "msg-%d", &i);
    return i;
}

/* Receives everything; returns a bitmask of message indexes 0..31 seen. */
static unsigned drain(pulsarc_consumer_t *cons, const int *ack_only, int nack_only) {
    unsigned seen = 0;
    pulsarc_msg_t *m;
    while (pulsarc_consumer_receive(cons, &m, 2000) == PULSARC_OK) {
        int i = index_of(m);
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        ck_assert_int_eq(id.batch_size, 10); /* one batch entry of 10 */
        ck_assert_int_eq(id.batch_index, i);
        seen |= 1u << i;
        for (int k = 0; k < nack_only; k++)
            if (ack_only[k] == i)
                ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    return seen;
}

static unsigned ack_some_then_resubscribe(const char *batch_index_ack) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("batchack");
    const char *kv[] = {"batchIndexAckEnabled", batch_index_ack, NULL};
    pulsarc_consumer_t *cons = sub(c, topic, "s", kv);
    pulsarc_producer_t *p = batch_producer(c, topic, 1);
    send_async(p, 0, 10, 0);
    int acked[] = {3, 7};
    ck_assert_uint_eq(drain(cons, acked, 2), 0x3ffu);
    usleep(300000); /* grouped acks out */
    pulsarc_consumer_destroy(cons);
    cons = sub(c, topic, "s", kv);
    unsigned again = drain(cons, NULL, 0);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    return again;
}

START_TEST(test_batch_index_ack_acks_single_messages) {
    /* With batch-index acks the broker filters the two acked messages out. */
    ck_assert_uint_eq(ack_some_then_resubscribe("true"), 0x3ffu & ~((1u << 3) | (1u << 7)));
}
END_TEST

START_TEST(test_partial_batch_ack_held_back_by_default) {
    /* Without them nothing of the entry is acked until all of it is: all 10 come back. */
    ck_assert_uint_eq(ack_some_then_resubscribe("false"), 0x3ffu);
}
END_TEST

/* A holds unacked messages of every key; how many does a newly joined B get? */
static int newcomer_receives(const char *out_of_order) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("keyshared-ooo");
    /* Every consumer of the subscription must agree on the setting (the broker checks). */
    const char *ka[] = {"subscriptionType", "Key_Shared", "receiverQueueSize", "20",
                        "keySharedAllowOutOfOrderDelivery", out_of_order, NULL};
    pulsarc_consumer_t *a = sub(c, topic, "ks", ka);
    /* Unbatched: the broker routes a whole entry by one key, so mixed-key batches would not do. */
    pulsarc_producer_t *p = batch_producer(c, topic, 0);
    send_async(p, 0, 200, 8);
    pulsarc_msg_t *m;
    for (int i = 0; i < 5; i++) { /* A takes some and never acks */
        ck_assert_int_eq(pulsarc_consumer_receive(a, &m, 5000), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    const char *kb[] = {"subscriptionType", "Key_Shared", "keySharedAllowOutOfOrderDelivery", out_of_order, NULL};
    pulsarc_consumer_t *b = sub(c, topic, "ks", kb);
    int got = 0;
    while (pulsarc_consumer_receive(b, &m, 3000) == PULSARC_OK) {
        got++;
        pulsarc_consumer_ack(b, m);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(b);
    pulsarc_consumer_destroy(a);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    return got;
}

START_TEST(test_key_shared_out_of_order_lets_newcomer_start) {
    int ordered = newcomer_receives("false"), ooo = newcomer_receives("true");
    printf("key_shared newcomer received: %d in order, %d out of order\n", ordered, ooo);
    ck_assert_int_gt(ooo, 0);
    ck_assert_int_gt(ooo, ordered);
}
END_TEST

/* Shared: the broker serves the lower priority level first while it has permits. */
START_TEST(test_shared_priority_levels) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("priority");
    const char *hi[] = {"subscriptionType", "Shared", "priorityLevel", "0", NULL};
    const char *lo[] = {"subscriptionType", "Shared", "priorityLevel", "1", NULL};
    pulsarc_consumer_t *a = sub(c, topic, "prio", hi);
    pulsarc_consumer_t *b = sub(c, topic, "prio", lo);
    pulsarc_producer_t *p = batch_producer(c, topic, 0);
    send_async(p, 0, 50, 0);
    int ga = 0, gb = 0;
    pulsarc_msg_t *m;
    while (pulsarc_consumer_receive(a, &m, 1500) == PULSARC_OK && ++ga)
        pulsarc_consumer_ack(a, m), pulsarc_msg_destroy(m);
    while (pulsarc_consumer_receive(b, &m, 500) == PULSARC_OK && ++gb)
        pulsarc_consumer_ack(b, m), pulsarc_msg_destroy(m);
    printf("priority: level 0 got %d, level 1 got %d\n", ga, gb);
    ck_assert_int_eq(ga, 50);
    ck_assert_int_eq(gb, 0);
    pulsarc_consumer_destroy(a); /* now the lower level is served */
    send_async(p, 50, 60, 0);
    while (pulsarc_consumer_receive(b, &m, 3000) == PULSARC_OK && ++gb)
        pulsarc_consumer_ack(b, m), pulsarc_msg_destroy(m);
    ck_assert_int_eq(gb, 10);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(b);
    pulsarc_client_destroy(c);
}
END_TEST

/* Byte j of large message i: different for every message and position. */
static uint8_t pattern(int i, size_t j) { return (uint8_t)(i * 131 + j * 7 + (j >> 8)); }

static void send_patterned(pulsarc_producer_t *p, int from, int to, size_t len) {
    uint8_t *body = malloc(len);
    ck_assert_ptr_nonnull(body);
    for (int i = from; i < to; i++) {
        for (size_t j = 0; j < len; j++)
            body[j] = pattern(i, j);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, len, PULSARC_MSG_F_COPY);
        pulsarc_msg_set_sequence_id(m, i);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, NULL, NULL), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    free(body);
}

static void expect_patterned(const pulsarc_msg_t *m, int i, size_t len) {
    ck_assert_uint_eq(pulsarc_msg_len(m), len);
    const uint8_t *b = pulsarc_msg_payload(m);
    for (size_t j = 0; j < len; j++)
        if (b[j] != pattern(i, j))
            ck_abort_msg("message %d byte %zu: %u, want %u", i, j, b[j], pattern(i, j));
}

START_TEST(test_large_entries_intact) {
    enum { SMALL = 300, SMALL_LEN = 2000, BIG = 4, BIG_LEN = 300 * 1000, N = SMALL + BIG };
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("large");
    const char *kv[] = {"receiverQueueSize", "50", NULL}; /* several FLOWs: reads go on */
    pulsarc_consumer_t *cons = sub(c, topic, "large", kv);
    const char *batched[] = {"batchingEnabled", "true", "batchingMaxMessages", "1000",
                             "batchingMaxPublishDelayMicros", "2000000", NULL};
    pulsarc_conf_t *conf = pct_conf(batched);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    send_patterned(p, 0, SMALL, SMALL_LEN);   /* batches of batchingMaxBytes (128 KiB) */
    send_patterned(p, SMALL, N, BIG_LEN);     /* each alone: over batchingMaxBytes */
    pulsarc_msg_t *got[N] = {0};
    int batched_seen = 0;
    for (int k = 0; k < N; k++) {
        pulsarc_msg_t *m;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_OK);
        int i = (int)pulsarc_msg_sequence_id(m);
        ck_assert(i >= 0 && i < N && !got[i]);
        got[i] = m; /* all kept: later entries are read while these live */
        batched_seen += pulsarc_msg_id(m).batch_size > 1;
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
    }
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    printf("large entries: %d of %d messages came in batches\n", batched_seen, N);
    ck_assert_int_ge(batched_seen, SMALL / 2);
    for (int i = 0; i < N; i++) { /* after the close, as before it */
        expect_patterned(got[i], i, i < SMALL ? SMALL_LEN : BIG_LEN);
        pulsarc_msg_destroy(got[i]);
    }
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *batches_suite(void) {
    Suite *s = suite_create("live-consumer-batches");
    TCase *tc = tcase_create("batches");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_batch_index_ack_acks_single_messages);
    tcase_add_test(tc, test_partial_batch_ack_held_back_by_default);
    tcase_add_test(tc, test_key_shared_out_of_order_lets_newcomer_start);
    tcase_add_test(tc, test_shared_priority_levels);
    tcase_add_test(tc, test_large_entries_intact);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(batches_suite)
