/*
 * Live-broker tests of the zero-queue consumer (receiverQueueSize 0): the
 * broker pushes only what was asked for, one permit per receive call or
 * listener delivery, counted against the FLOW permits the library sent
 * (pc_consumer_permits_sent) and the messages that reached the consumer
 * (stats.received); a Shared subscription serves whoever asks; a
 * re-subscription (topic unload, seek) re-asks for a receive still
 * waiting; ack-timeout redeliveries come on demand; chunked messages
 * come whole; what the Java client refuses is refused: receive with a
 * timeout, batched entries (the consumer closes), partitioned, multi-topic
 * and retry consumers, readers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/consumer/consumer_int.h"
#include "testutil.h"

#define QUIET_MS 700 /* how long "nothing more arrives" is watched */

static pulsarc_producer_t *producer_kv(pulsarc_client_t *c, const char *topic, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

static pulsarc_producer_t *plain_producer(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"batchingEnabled", "false", NULL};
    return producer_kv(c, topic, kv);
}

static void send_range(pulsarc_producer_t *p, int from, int to) {
    for (int i = from; i < to; i++) {
        char body[32];
        snprintf(body, sizeof body, "msg-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
}

static pulsarc_conf_t *zero_conf(const char *sub_type) {
    const char *kv[] = {"receiverQueueSize", "0", "subscriptionType", sub_type,
                        "subscriptionInitialPosition", "Earliest", NULL};
    return pct_conf(kv);
}

static pulsarc_consumer_t *zero_consumer(pulsarc_client_t *c, const char *topic, const char *sub_type) {
    pulsarc_conf_t *conf = zero_conf(sub_type);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "zq", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

static uint64_t received(pulsarc_consumer_t *cons) {
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    return st.received;
}

/* i of a "msg-<i>" payload (not NUL-terminated), or -1. */
static int body_index(const pulsarc_msg_t *m) {
    char body[32];
    size_t len = pulsarc_msg_len(m) < sizeof body - 1 ? pulsarc_msg_len(m) : sizeof body - 1;
    memcpy(body, pulsarc_msg_payload(m), len);
    body[len] = '\0';
    int i = -1;
    return sscanf(body, "msg-%d", &i) == 1 ? i : -1;
}

/* Blocking receive of "msg-<i>": returns i. */
static int recv_index(pulsarc_consumer_t *cons) {
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, -1);
    ck_assert_msg(e == PULSARC_OK, "receive: %s", pulsarc_strerror(e));
    int i = body_index(m);
    ck_assert_int_ge(i, 0);
    ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
    pulsarc_msg_destroy(m);
    return i;
}

/* Polls (bounded) until the consumer has granted `want` permits; returns what it has. */
static uint64_t await_permits(pulsarc_consumer_t *cons, uint64_t want) {
    uint64_t n = 0;
    for (int i = 0; i < 300 && (n = pc_consumer_permits_sent(cons)) < want; i++)
        usleep(20000);
    return n;
}

START_TEST(test_one_permit_per_receive) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-permits");
    pulsarc_consumer_t *cons = zero_consumer(c, topic, "Exclusive");
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 10);
    usleep(QUIET_MS * 1000);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 0); /* nobody asked yet */
    ck_assert_uint_eq(received(cons), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(recv_index(cons), i);
        ck_assert_uint_eq(pc_consumer_permits_sent(cons), (uint64_t)i + 1);
        ck_assert_uint_eq(received(cons), (uint64_t)i + 1);
    }
    usleep(QUIET_MS * 1000);
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(cons, &st);
    ck_assert_uint_eq(st.received, 4); /* six more are on the topic: none came unasked */
    ck_assert_uint_eq(st.delivered, 4);
    ck_assert_uint_eq(st.queue_len, 0);
    ck_assert_uint_eq(st.queue_size, 0);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 4);
    for (int i = 4; i < 10; i++)
        ck_assert_int_eq(recv_index(cons), i);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 10);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Shared: only the consumer that asks gets a message, so two take turns exactly. */
START_TEST(test_shared_serves_who_asks) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-shared");
    pulsarc_consumer_t *a = zero_consumer(c, topic, "Shared");
    pulsarc_consumer_t *b = zero_consumer(c, topic, "Shared");
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 8);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(recv_index(i % 2 ? b : a), i);
    ck_assert_uint_eq(received(a), 4);
    ck_assert_uint_eq(received(b), 4);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(a);
    pulsarc_consumer_destroy(b);
    pulsarc_client_destroy(c);
}
END_TEST

/* As in the Java client: a permit granted for a receive that gave up would bring an unasked message. */
START_TEST(test_timed_receive_refused) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-timeout");
    pulsarc_consumer_t *cons = zero_consumer(c, topic, "Exclusive");
    pulsarc_msg_t *m = NULL, *batch[4];
    size_t n = 9;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 0), PULSARC_ERR_STATE);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 200), PULSARC_ERR_STATE);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(pulsarc_consumer_batch_receive(cons, batch, 4, &n), PULSARC_ERR_STATE);
    ck_assert_uint_eq(n, 0);
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 2);
    usleep(QUIET_MS * 1000);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 0); /* the refused calls asked for nothing */
    ck_assert_uint_eq(received(cons), 0);
    ck_assert_int_eq(recv_index(cons), 0);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 1);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- listener ---------- */

typedef struct listened {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n, in_order, hold_first, released;
    size_t max_queued;
} listened_t;

static void on_msg(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    listened_t *l = opaque;
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(c, &st);
    int i = body_index(m);
    pthread_mutex_lock(&l->lock);
    if (st.queue_len > l->max_queued)
        l->max_queued = st.queue_len;
    if (i != l->n)
        l->in_order = 0;
    l->n++;
    pthread_cond_broadcast(&l->cond);
    while (l->hold_first && !l->released) /* the test watches what arrives meanwhile */
        pthread_cond_wait(&l->cond, &l->lock);
    pthread_mutex_unlock(&l->lock);
    pulsarc_consumer_ack(c, m);
    pulsarc_msg_destroy(m);
}

static int listened_count(listened_t *l, int want) {
    pthread_mutex_lock(&l->lock);
    for (int i = 0; i < 300 && l->n < want; i++) {
        pthread_mutex_unlock(&l->lock);
        usleep(20000);
        pthread_mutex_lock(&l->lock);
    }
    int n = l->n;
    pthread_mutex_unlock(&l->lock);
    return n;
}

START_TEST(test_listener_one_at_a_time) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-listener");
    listened_t l = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 1, 1, 0, 0};
    pulsarc_conf_t *conf = zero_conf("Exclusive");
    pulsarc_conf_set_message_listener(conf, on_msg, &l);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "zq", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_uint_eq(await_permits(cons, 1), 1); /* an idle listener asks for one */
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 20);
    ck_assert_int_eq(listened_count(&l, 1), 1);
    usleep(QUIET_MS * 1000); /* the listener still holds message 0 */
    ck_assert_uint_eq(received(cons), 1);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 1);
    pthread_mutex_lock(&l.lock);
    l.released = 1;
    pthread_cond_broadcast(&l.cond);
    pthread_mutex_unlock(&l.lock);
    ck_assert_int_eq(listened_count(&l, 20), 20);
    ck_assert(l.in_order);
    ck_assert_uint_eq(l.max_queued, 0); /* nothing waited behind the message in hand */
    /* One permit at subscription and one after each listener call: 21, 20 delivered. */
    ck_assert_uint_eq(await_permits(cons, 21), 21);
    ck_assert_uint_eq(received(cons), 20);
    pulsarc_msg_t *m;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, -1), PULSARC_ERR_STATE);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- entries that are not one message ---------- */

START_TEST(test_batch_closes_consumer) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-batch");
    pulsarc_consumer_t *cons = zero_consumer(c, topic, "Shared");
    pct_send_tagged_async(c, topic, "msg", 5, 5); /* one entry of 5 */
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, -1), PULSARC_ERR_UNSUPPORTED);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, -1), PULSARC_ERR_UNSUPPORTED);
    ck_assert(!pulsarc_consumer_is_connected(cons));
    pulsarc_consumer_destroy(cons);
    /* Nothing was acked: a prefetching consumer on the subscription gets the whole batch. */
    const char *shared[] = {"subscriptionType", "Shared", "subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *conf = pct_conf(shared);
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "zq", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(recv_index(cons), i);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* As in the Java client, a chunked message is reassembled; every chunk costs one permit. */
START_TEST(test_chunked_message_whole) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-chunks");
    pulsarc_consumer_t *cons = zero_consumer(c, topic, "Exclusive");
    const char *kv[] = {"batchingEnabled", "false", "chunkingEnabled", "true", NULL};
    pulsarc_producer_t *p = producer_kv(c, topic, kv);
    size_t big = 3 * 1024 * 1024 + 12345; /* the test broker's maxMessageSize is 1,024,000 */
    uint8_t *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (uint8_t)((i * 131 + (i >> 9)) & 0xff);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, data, big, PULSARC_MSG_F_COPY);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
    send_range(p, 0, 1);
    m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, -1), PULSARC_OK);
    ck_assert_uint_eq(pulsarc_msg_len(m), big);
    ck_assert(memcmp(pulsarc_msg_payload(m), data, big) == 0);
    ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
    pulsarc_msg_destroy(m);
    uint64_t chunks = pc_consumer_permits_sent(cons);
    ck_assert_uint_ge(chunks, 4); /* at least four chunks: one permit each */
    usleep(QUIET_MS * 1000);
    ck_assert_uint_eq(received(cons), 1); /* the small message was not asked for yet */
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), chunks);
    ck_assert_int_eq(recv_index(cons), 0);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), chunks + 1);
    free(data);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- re-subscription ---------- */

typedef struct waiting_recv {
    pulsarc_consumer_t *cons;
    int index;
} waiting_recv_t;

static void *recv_thread(void *arg) {
    waiting_recv_t *w = arg;
    w->index = recv_index(w->cons);
    return NULL;
}

/* A receive waiting across a topic unload is asked for again on the new subscription. */
START_TEST(test_waiting_receive_survives_unload) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-unload");
    pulsarc_consumer_t *cons = zero_consumer(c, topic, "Exclusive");
    waiting_recv_t w = {cons, -1};
    pthread_t t;
    pthread_create(&t, NULL, recv_thread, &w);
    ck_assert_uint_eq(await_permits(cons, 1), 1);
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/unload", topic);
    ck_assert_int_eq(pct_admin("PUT", path, NULL), 204);
    ck_assert_uint_eq(await_permits(cons, 2), 2); /* the new subscription holds one permit again */
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 3);
    pthread_join(t, NULL);
    ck_assert_int_eq(w.index, 0);
    usleep(QUIET_MS * 1000);
    ck_assert_uint_eq(received(cons), 1);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 2);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Unacked messages come back after the ack timeout, still one per receive. */
START_TEST(test_ack_timeout_redelivers_on_demand) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-redeliver");
    const char *kv[] = {"receiverQueueSize", "0", "subscriptionType", "Shared",
                        "ackTimeoutMillis", "1000", "tickDurationMillis", "100", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "zq", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 5);
    int seen[5] = {0};
    for (int i = 0; i < 10; i++) { /* never acked: each arrives twice */
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, -1), PULSARC_OK);
        int k = body_index(m);
        ck_assert(k >= 0 && k < 5);
        seen[k]++;
        pulsarc_msg_destroy(m);
    }
    for (int k = 0; k < 5; k++)
        ck_assert_int_eq(seen[k], 2);
    ck_assert_uint_eq(received(cons), 10);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 10);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* A seek re-subscribes; the receive after it asks again and gets the sought message. */
START_TEST(test_seek_then_receive) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("zq-seek");
    pulsarc_consumer_t *cons = zero_consumer(c, topic, "Exclusive");
    pulsarc_producer_t *p = plain_producer(c, topic);
    send_range(p, 0, 4);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(recv_index(cons), i);
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    ck_assert_int_eq(pulsarc_consumer_seek(cons, &earliest), PULSARC_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(recv_index(cons), i);
    usleep(QUIET_MS * 1000);
    ck_assert_uint_eq(received(cons), 7); /* one message per receive, none ahead */
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 7);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- what needs a queue ---------- */

static pulsarc_err_t try_new(pulsarc_client_t *c, const char *topic, const char *const *kv, char *err,
                             size_t errlen) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "zq", conf, &cons, err, errlen);
    pulsarc_conf_destroy(conf);
    if (cons)
        pulsarc_consumer_destroy(cons);
    return e;
}

START_TEST(test_refused_where_java_refuses) {
    pulsarc_client_t *c = pct_client();
    char err[256];
    const char *zero[] = {"receiverQueueSize", "0", NULL};
    const char *topic = pct_topic("zq-parts");
    pct_create_partitioned(topic, 2);
    ck_assert_int_eq(try_new(c, topic, zero, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "receiverQueueSize 0") && strstr(err, "2 partitions"), "%s", err);

    const char *plain = pct_topic("zq-plain");
    const char *retry[] = {"receiverQueueSize", "0", "retryEnable", "true", NULL};
    ck_assert_int_eq(try_new(c, plain, retry, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "retryEnable"), "%s", err);

    pulsarc_conf_t *conf = pct_conf(zero);
    pulsarc_consumer_t *cons = NULL;
    const char *two[] = {plain, pct_topic("zq-other")};
    ck_assert_int_eq(pulsarc_consumer_new_multi(c, two, 2, "zq", conf, &cons, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "multi-topic"), "%s", err);
    ck_assert_int_eq(pulsarc_consumer_new_pattern(c, "zq-plain.*", "zq", conf, &cons, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    pulsarc_reader_t *r = NULL;
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    ck_assert_int_eq(pulsarc_reader_new(c, plain, &earliest, 0, conf, &r, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "reader"), "%s", err);
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(cons);
    pulsarc_conf_destroy(conf);

    conf = pulsarc_conf_new();
    ck_assert_int_eq(pulsarc_conf_set(conf, "receiverQueueSize", "-1", err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *zero_queue_suite(void) {
    Suite *s = suite_create("live-zero-queue");
    TCase *tc = tcase_create("zero-queue");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_one_permit_per_receive);
    tcase_add_test(tc, test_shared_serves_who_asks);
    tcase_add_test(tc, test_timed_receive_refused);
    tcase_add_test(tc, test_listener_one_at_a_time);
    tcase_add_test(tc, test_batch_closes_consumer);
    tcase_add_test(tc, test_chunked_message_whole);
    tcase_add_test(tc, test_waiting_receive_survives_unload);
    tcase_add_test(tc, test_ack_timeout_redelivers_on_demand);
    tcase_add_test(tc, test_seek_then_receive);
    tcase_add_test(tc, test_refused_where_java_refuses);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(zero_queue_suite)
