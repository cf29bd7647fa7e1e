/*
 * Live-broker tests of producing to a partitioned topic through one handle:
 * keyed messages land on hash(key) mod N under both hashing schemes (the
 * values the Java client computes, checked in test/unit/test_router.c and
 * against the Java client in test/interop), round robin without batching
 * spreads evenly, SinglePartition keeps unkeyed messages on one partition,
 * a custom router decides everything, a message is read back from the
 * partition its id names, and partitions added to the topic while a
 * producer sends get messages once the producer has picked them up, with
 * every send reported once and nothing lost or misrouted.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "producer_util.h"

#define NPARTS 4

static const char *partitioned_topic(const char *prefix) {
    const char *topic = pct_topic(prefix);
    int code = pct_admin("PUT", topic_path(topic, "/partitions"), "4");
    ck_assert_msg(code == 204 || code == 200, "create partitioned topic: HTTP %d", code);
    return topic;
}

static int send_keyed(pulsarc_producer_t *p, const char *key) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "k", 1, PULSARC_MSG_F_COPY);
    if (key)
        pulsarc_msg_set_key(m, key);
    pulsarc_msgid_t id;
    pulsarc_err_t e = pulsarc_producer_send(p, m, &id);
    pulsarc_msg_destroy(m);
    ck_assert_msg(e == PULSARC_OK, "send: %s", pulsarc_strerror(e));
    ck_assert(id.partition >= 0 && id.partition < NPARTS);
    return id.partition;
}

/* Java: "key-1".hashCode() etc.; Murmur3 values from pc_hash_murmur3. */
START_TEST(test_key_routing_java_string_hash) {
    pulsarc_client_t *c = pct_client();
    pulsarc_producer_t *p = make_producer(c, partitioned_topic("route-jsh"), NULL);
    ck_assert_int_eq(pulsarc_producer_partitions(p), NPARTS);
    /* String.hashCode: "a" = 97 -> 1, "b" = 98 -> 2, "keykeykey2" = 42978643 -> 3 */
    ck_assert_int_eq(send_keyed(p, "a"), 1);
    ck_assert_int_eq(send_keyed(p, "b"), 2);
    ck_assert_int_eq(send_keyed(p, "keykeykey2"), 42978643 % NPARTS);
    ck_assert_int_eq(send_keyed(p, "keykeykeykeykey1"), 434058482 % NPARTS);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_key_routing_murmur3) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"hashingScheme", "Murmur3_32Hash", NULL};
    pulsarc_producer_t *p = make_producer(c, partitioned_topic("route-m3"), kv);
    ck_assert_int_eq(send_keyed(p, "k1"), 2110152746 % NPARTS);
    ck_assert_int_eq(send_keyed(p, "key1"), 462881061 % NPARTS);
    ck_assert_int_eq(send_keyed(p, "key02"), 751761803 % NPARTS);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_round_robin_unbatched) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, partitioned_topic("route-rr"), kv);
    int count[NPARTS] = {0}, first = send_keyed(p, NULL);
    count[first]++;
    for (int i = 1; i < 4 * NPARTS; i++) {
        int part = send_keyed(p, NULL);
        ck_assert_int_eq(part, (first + i) % NPARTS);
        count[part]++;
    }
    for (int i = 0; i < NPARTS; i++)
        ck_assert_int_eq(count[i], 4);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_single_partition_mode) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"messageRoutingMode", "SinglePartition", NULL};
    pulsarc_producer_t *p = make_producer(c, partitioned_topic("route-single"), kv);
    int first = send_keyed(p, NULL);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(send_keyed(p, NULL), first);
    ck_assert_int_eq(send_keyed(p, "b"), 2); /* keys still hash */
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

static int always_three(const pulsarc_msg_t *msg, int n, void *opaque) {
    (void)msg;
    (*(int *)opaque)++;
    return 3 % n;
}

static int out_of_range(const pulsarc_msg_t *msg, int n, void *opaque) {
    (void)msg, (void)opaque;
    return n;
}

START_TEST(test_custom_router) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"messageRoutingMode", "CustomPartition", NULL};
    pulsarc_producer_t *p = make_producer(c, partitioned_topic("route-custom"), kv);
    pulsarc_msg_t *m = pulsarc_msg_new();
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_STATE); /* none set yet */
    int calls = 0;
    ck_assert_int_eq(pulsarc_producer_set_router(p, always_three, &calls), PULSARC_OK);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(send_keyed(p, i % 2 ? "a" : NULL), 3);
    ck_assert_int_eq(calls, 5);
    ck_assert_int_eq(pulsarc_producer_set_router(p, out_of_range, NULL), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_INVALID_ARG);
    pulsarc_msg_destroy(m);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

static void on_part_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                         pulsarc_msg_t *msg, void *opaque) {
    ck_assert_ptr_eq(p, ((void **)opaque)[1]); /* callbacks show the handle the user holds */
    on_sent_cb(p, err, id, msg, ((void **)opaque)[0]);
}

/* Async, batched, all partitions: every message is on the partition its id names. */
START_TEST(test_partitioned_roundtrip) {
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("route-rt");
    const char *kv[] = {"batchingMaxPublishDelayMicros", "5000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    void *ctx[2] = {&log, p};
    for (int i = 0; i < 200; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char v[16], k[16];
        snprintf(v, sizeof v, "%d", i);
        snprintf(k, sizeof k, "key-%d", i % 13);
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_property(m, "i", v);
        pulsarc_msg_set_key(m, k);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_part_sent, ctx), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, 200);
    ck_assert_int_eq(log.ok, 200);
    for (int part = 0; part < NPARTS; part++) {
        char name[512];
        snprintf(name, sizeof name, "%s-partition-%d", topic, part);
        pulsarc_consumer_t *cons = make_consumer(c, name, "Exclusive");
        int expect = 0;
        for (int i = 0; i < 200; i++)
            expect += log.ids[i].partition == part;
        for (int n = 0; n < expect; n++) {
            pulsarc_msg_t *m = receive_one(cons, n);
            int i = atoi(pulsarc_msg_property(m, "i"));
            ck_assert_int_eq(log.ids[i].partition, part);
            pulsarc_msg_destroy(m);
        }
        expect_no_more(cons);
        pulsarc_consumer_destroy(cons);
    }
    pulsarc_producer_stats_t st;
    pulsarc_producer_stats(p, &st);
    ck_assert_uint_eq(st.msgs_sent, 200);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* Reads every partition of topic: each message is where its send's id said. */
static void expect_on_named_partitions(pulsarc_client_t *c, const char *topic, int nparts,
                                       const sent_log_t *log, int sent) {
    for (int part = 0; part < nparts; part++) {
        char name[512];
        snprintf(name, sizeof name, "%s-partition-%d", topic, part);
        pulsarc_consumer_t *cons = make_consumer(c, name, "Exclusive");
        int expect = 0;
        for (int i = 0; i < sent; i++)
            expect += log->ids[i].partition == part;
        for (int n = 0; n < expect; n++) {
            pulsarc_msg_t *m = receive_one(cons, n);
            int i = atoi(pulsarc_msg_property(m, "i"));
            ck_assert_int_eq(log->ids[i].partition, part);
            pulsarc_msg_destroy(m);
        }
        expect_no_more(cons);
        pulsarc_consumer_destroy(cons);
    }
}

static void send_numbered(pulsarc_producer_t *p, int i, sent_log_t *log) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    char v[16];
    snprintf(v, sizeof v, "%d", i);
    pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
    pulsarc_msg_set_property(m, "i", v);
    ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_sent_cb, log), PULSARC_OK);
}

/*
 * 2 partitions grown to 4 while round robin sends: the handle keeps
 * routing over 2 until the producers of partitions 2 and 3 are up, then
 * over 4. Sends are paced only so that the topic grows while they go on.
 */
START_TEST(test_follows_added_partitions) {
    enum { MAX_SENDS = 4000, AFTER = 40 };
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("route-grow");
    pct_create_partitioned(topic, 2);
    const char *kv[] = {"autoUpdatePartitionsInterval", "1", "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    ck_assert_int_eq(pulsarc_producer_partitions(p), 2);
    static sent_log_t log; /* large: off the stack */
    sent_log_init(&log);
    int sent = 0;
    for (; sent < 10; sent++)
        send_numbered(p, sent, &log);
    ck_assert_int_eq(pct_admin("POST", topic_path(topic, "/partitions"), "4"), 204);
    int grown_at = -1;
    while (sent < MAX_SENDS && (grown_at < 0 || sent < grown_at + AFTER)) {
        if (grown_at < 0 && pulsarc_producer_partitions(p) == 4)
            grown_at = sent;
        send_numbered(p, sent++, &log);
        if (grown_at < 0)
            usleep(10000);
    }
    ck_assert_msg(grown_at >= 0, "the producer never picked up partitions 2 and 3");
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, sent);
    ck_assert_int_eq(log.ok, sent);
    int count[4] = {0};
    for (int i = 0; i < sent; i++) {
        ck_assert_int_eq(log.calls_for[i], 1);
        ck_assert(log.ids[i].partition >= 0 && log.ids[i].partition < 4);
        count[log.ids[i].partition]++;
    }
    ck_assert_int_gt(count[2], 0);
    ck_assert_int_gt(count[3], 0);
    for (int i = 0; i < 10; i++) /* sent before the topic grew */
        ck_assert_int_lt(log.ids[i].partition, 2);
    expect_on_named_partitions(c, topic, 4, &log, sent);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * Destroyed while partitions are being added (many, so their creation
 * takes a while; the pacing aims at that window, nothing depends on it): the sends already made are all reported and nothing
 * is left behind (ASan and valgrind see the rest).
 */
START_TEST(test_destroy_while_partitions_are_added) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("route-grow-close");
    pct_create_partitioned(topic, 2);
    const char *kv[] = {"autoUpdatePartitionsInterval", "1", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    static sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pct_admin("POST", topic_path(topic, "/partitions"), "128"), 204);
    int sent = 0;
    /* Paced to just past the first check (1 s), while 126 partitions are
     * being created; a growth already adopted makes this an ordinary destroy. */
    while (sent < 110 && pulsarc_producer_partitions(p) == 2) {
        send_numbered(p, sent++, &log);
        usleep(10000);
    }
    pulsarc_producer_destroy(p);
    sent_log_wait(&log, sent);
    ck_assert_int_eq(log.n, sent);
    for (int i = 0; i < sent; i++)
        ck_assert_int_eq(log.calls_for[i], 1);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * Destroyed after its client was closed, while it follows the partition
 * count: the watch (a timer and perhaps a lookup on the io thread) goes
 * with the handle, nothing is left behind (valgrind and ASan see the
 * rest), and the handle answers CLOSED in between.
 */
START_TEST(test_destroy_after_client_close) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("route-watch-closed");
    pct_create_partitioned(topic, 2);
    const char *kv[] = {"autoUpdatePartitionsInterval", "1", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    send_keyed(p, "k");
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_CLOSED);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(pulsarc_producer_flush_async(p, NULL, NULL), PULSARC_ERR_CLOSED);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * A producer asked for while the client is closing, after close took its
 * list of handles: refused with CLOSED. Admitted, it was never closed by
 * the client's close, and its own close, posted to the stopped loop, never
 * cancelled its partition watch, which then kept the handle (and itself)
 * alive after destroy. The close is held open deterministically: with a
 * callback thread a consumer's close waits for its receive_async
 * callbacks, and the test's callback waits at a gate until the producer
 * was asked for. Loop mode closes handles inline with no such wait, so
 * there the window cannot be held and the check does not apply.
 */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int entered, released;
} gate_t;

static int gate_wait(gate_t *g, const int *flag) { /* bounded; returns the flag */
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 30;
    pthread_mutex_lock(&g->lock);
    while (!*flag && pthread_cond_timedwait(&g->cond, &g->lock, &dl) == 0)
        ;
    int v = *flag;
    pthread_mutex_unlock(&g->lock);
    return v;
}

static void gate_set(gate_t *g, int *flag) {
    pthread_mutex_lock(&g->lock);
    *flag = 1;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void held_callback(pulsarc_consumer_t *c, pulsarc_err_t err, pulsarc_msg_t *m, void *opaque) {
    gate_t *g = opaque;
    (void)c;
    ck_assert_int_eq(err, PULSARC_ERR_CLOSED); /* nothing was sent: only close answers it */
    pulsarc_msg_destroy(m);
    gate_set(g, &g->entered);
    gate_wait(g, &g->released);
}

static void *close_client(void *arg) {
    ck_assert_int_eq(pulsarc_client_close(arg, -1), PULSARC_OK);
    return NULL;
}

START_TEST(test_new_producer_refused_while_client_closes) {
    if (pct_loop_mode())
        return;
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("route-watch-closing");
    pct_create_partitioned(topic, 2);
    pulsarc_consumer_t *cons = make_consumer(c, pct_topic("route-watch-gate"), "Exclusive");
    gate_t g = {.entered = 0};
    pthread_mutex_init(&g.lock, NULL);
    pthread_cond_init(&g.cond, NULL);
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, held_callback, &g), PULSARC_OK);
    pthread_t closer;
    pthread_create(&closer, NULL, close_client, c);
    ck_assert_msg(gate_wait(&g, &g.entered), "client close never closed the consumer");
    pulsarc_conf_t *conf = pct_conf((const char *[]){"autoUpdatePartitionsInterval", "1", NULL});
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    gate_set(&g, &g.released);
    pthread_join(closer, NULL);
    pulsarc_producer_destroy(p); /* NULL when refused */
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pthread_mutex_destroy(&g.lock);
    pthread_cond_destroy(&g.cond);
    ck_assert_msg(e == PULSARC_ERR_CLOSED, "producer asked for during client close: %s (%s)",
                  pulsarc_strerror(e), err);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-partitioned");
    TCase *t = tcase_create("partitioned");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_key_routing_java_string_hash);
    tcase_add_test(t, test_key_routing_murmur3);
    tcase_add_test(t, test_round_robin_unbatched);
    tcase_add_test(t, test_single_partition_mode);
    tcase_add_test(t, test_custom_router);
    tcase_add_test(t, test_partitioned_roundtrip);
    tcase_add_test(t, test_follows_added_partitions);
    tcase_add_test(t, test_destroy_while_partitions_are_added);
    suite_add_tcase(s, t);
    TCase *closed = tcase_create("after-client-close");
    tcase_set_timeout(closed, 120);
    tcase_add_test(closed, test_destroy_after_client_close);
    tcase_add_test(closed, test_new_producer_refused_while_client_closes);
    suite_add_tcase(s, closed);
    return s;
}

PC_TEST_MAIN(suite)
