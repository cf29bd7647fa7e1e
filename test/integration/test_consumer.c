/*
 * Live-broker behaviour of consumers: what the broker actually delivers
 * for each subscription type, acknowledgement mode, redelivery path,
 * seek, last-message-id, readers and end of topic.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/hash.h"
#include "testutil.h"

/* ---------- helpers ---------- */

static pulsarc_producer_t *producer(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

/* Sends "msg-<i>" for i in [from, to), key "k<i % nkeys>" when nkeys > 0. */
static void send_range(pulsarc_producer_t *p, int from, int to, int nkeys, pulsarc_msgid_t *ids) {
    for (int i = from; i < to; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char body[32], key[16];
        snprintf(body, sizeof body, "msg-%d", i);
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        if (nkeys > 0) {
            snprintf(key, sizeof key, "k%d", i % nkeys);
            pulsarc_msg_set_key(m, key);
        }
        pulsarc_msgid_t id;
        ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
        if (ids)
            ids[i - from] = id;
        pulsarc_msg_destroy(m);
    }
}

static pulsarc_consumer_t *consumer_kv(pulsarc_client_t *c, const char *topic, const char *sub,
                                       const char *const *kv, pulsarc_err_t expect) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, sub, conf, &cons, err, sizeof err);
    ck_assert_msg(e == expect, "subscribe: got %s (%s), expected %s", pulsarc_errname(e), err,
                  pulsarc_errname(expect));
    pulsarc_conf_destroy(conf);
    return cons;
}

static int body_index(const pulsarc_msg_t *m) {
    char buf[32];
    size_t n = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(buf, pulsarc_msg_payload(m), n);
    buf[n] = '\0';
    int i = -1;
    sscanf(buf, "msg-%d", &i);
    return i;
}

/* How long a receive that must succeed may wait: a hang bound, not a speed
 * check (a loaded machine's broker can take seconds to dispatch). */
#define RECV_WAIT_MS 30000

/* Receives one message and returns its index (-1 on timeout); acks when asked. */
static int recv_index(pulsarc_consumer_t *c, int timeout_ms, int ack) {
    pulsarc_msg_t *m = NULL;
    if (pulsarc_consumer_receive(c, &m, timeout_ms) != PULSARC_OK)
        return -1;
    int i = body_index(m);
    if (ack)
        ck_assert_int_eq(pulsarc_consumer_ack(c, m), PULSARC_OK);
    pulsarc_msg_destroy(m);
    return i;
}

/* ---------- subscription types ---------- */

START_TEST(test_exclusive_rejects_second_consumer) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("excl");
    pulsarc_consumer_t *a = consumer_kv(c, topic, "s", NULL, PULSARC_OK);
    consumer_kv(c, topic, "s", NULL, PULSARC_ERR_BROKER_CONSUMER_BUSY);
    const char *shared[] = {"subscriptionType", "Shared", NULL};
    consumer_kv(c, topic, "s", shared, PULSARC_ERR_BROKER_CONSUMER_BUSY); /* type conflict */
    pulsarc_consumer_destroy(a);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_shared_spreads_without_duplicates) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("shared");
    const char *kv[] = {"subscriptionType", "Shared", "receiverQueueSize", "10", NULL};
    pulsarc_consumer_t *a = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    pulsarc_consumer_t *b = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 100, 0, NULL);
    int seen[100] = {0}, na = 0, nb = 0, i;
    /* in turn until all 100 came (or a minute of nothing), then a last look
     * for duplicates */
    for (int idle = 0, got = 0; na + nb < 100 && idle < 300; idle = got ? 0 : idle + 1) {
        got = 0;
        if ((i = recv_index(a, 100, 1)) >= 0 && ++na && ++got)
            seen[i]++;
        if ((i = recv_index(b, 100, 1)) >= 0 && ++nb && ++got)
            seen[i]++;
    }
    while ((i = recv_index(a, 500, 1)) >= 0 && ++na)
        seen[i]++;
    while ((i = recv_index(b, 500, 1)) >= 0 && ++nb)
        seen[i]++;
    printf("shared: consumer a got %d, b got %d\n", na, nb);
    for (i = 0; i < 100; i++)
        ck_assert_msg(seen[i] == 1, "message %d seen %d times", i, seen[i]);
    ck_assert_int_gt(na, 0);
    ck_assert_int_gt(nb, 0);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(a);
    pulsarc_consumer_destroy(b);
    pulsarc_client_destroy(c);
}
END_TEST

typedef struct events {
    pthread_mutex_t lock;
    int active, inactive, eot;
    int last; /* 1 active, 0 inactive, -1 nothing yet */
} events_t;

static void on_event(pulsarc_consumer_t *c, pulsarc_consumer_event_t ev, void *opaque) {
    events_t *e = opaque;
    (void)c;
    pthread_mutex_lock(&e->lock);
    e->active += ev == PULSARC_CONSUMER_ACTIVE;
    e->inactive += ev == PULSARC_CONSUMER_INACTIVE;
    e->eot += ev == PULSARC_CONSUMER_END_OF_TOPIC;
    if (ev != PULSARC_CONSUMER_END_OF_TOPIC)
        e->last = ev == PULSARC_CONSUMER_ACTIVE;
    pthread_mutex_unlock(&e->lock);
}

static int last_state(events_t *e) {
    pthread_mutex_lock(&e->lock);
    int v = e->last;
    pthread_mutex_unlock(&e->lock);
    return v;
}

static pulsarc_consumer_t *failover_consumer(pulsarc_client_t *c, const char *topic, const char *name,
                                             events_t *ev) {
    const char *kv[] = {"subscriptionType", "Failover", "consumerName", name, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set_consumer_event_listener(conf, on_event, ev);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "fo", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

/* Events come from the broker's dispatcher on its own schedule: allow it 20 s. */
static int wait_count(events_t *e, int *field, int want) {
    for (int i = 0; i < 400; i++) {
        pthread_mutex_lock(&e->lock);
        int v = *field;
        pthread_mutex_unlock(&e->lock);
        if (v >= want)
            return v;
        usleep(50000);
    }
    return *field;
}

/* Waits until the broker has told both consumers their role; returns the active one's index. */
static int wait_roles(events_t *ev) {
    for (int i = 0; i < 400; i++) {
        int a = last_state(&ev[0]), b = last_state(&ev[1]);
        if (a >= 0 && b >= 0 && a != b)
            return a ? 0 : 1;
        usleep(50000);
    }
    return -1;
}

START_TEST(test_failover_switches_active_consumer) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("failover");
    events_t ev[2] = {{PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, -1}, {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, -1}};
    pulsarc_consumer_t *cons[2];
    cons[0] = failover_consumer(c, topic, "a-first", &ev[0]);
    cons[1] = failover_consumer(c, topic, "b-second", &ev[1]);
    /* The broker picks the active one (not necessarily by name for a plain topic). */
    int act = wait_roles(ev);
    ck_assert_msg(act >= 0, "no active/inactive roles reported (a=%d b=%d)", last_state(&ev[0]),
                  last_state(&ev[1]));
    int standby = 1 - act;
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 10, 0, NULL);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(recv_index(cons[act], RECV_WAIT_MS, 1), i);
    ck_assert_int_eq(recv_index(cons[standby], 500, 1), -1); /* the standby gets nothing */
    int before = ev[standby].active;
    pulsarc_consumer_destroy(cons[act]); /* fail over */
    ck_assert_int_gt(wait_count(&ev[standby], &ev[standby].active, before + 1), before);
    send_range(p, 10, 20, 0, NULL);
    for (int i = 10; i < 20; i++)
        ck_assert_int_eq(recv_index(cons[standby], RECV_WAIT_MS, 1), i);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons[standby]);
    pulsarc_client_destroy(c);
}
END_TEST

/* One message from cons (consumer `who`) within timeout_ms, its key's owner
 * and order checked, acknowledged: 1; nothing: 0. */
static int take_key(pulsarc_consumer_t *cons, int who, int *owner, int *last, int timeout_ms) {
    pulsarc_msg_t *m;
    if (pulsarc_consumer_receive(cons, &m, timeout_ms) != PULSARC_OK)
        return 0;
    int i = body_index(m), k = -1;
    sscanf(pulsarc_msg_key(m), "k%d", &k);
    ck_assert_msg(owner[k] == -1 || owner[k] == who, "key k%d went to two consumers", k);
    owner[k] = who;
    ck_assert_msg(i > last[k], "key k%d out of order: %d after %d", k, i, last[k]);
    last[k] = i;
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    return 1;
}

/* Receives from a (0) and b (1) in turn until want messages came (or a
 * minute of nothing), then looks a moment longer for extras, recording per
 * key which consumer got it and in which order; counts into n. In turn,
 * not one after the other with a quiet spell as the end: a loaded broker's
 * pauses are longer than any such spell. */
static void drain_keys(pulsarc_consumer_t *a, pulsarc_consumer_t *b, int want, int *owner,
                       int *last, int n[2]) {
    n[0] = n[1] = 0;
    for (int idle = 0; n[0] + n[1] < want && idle < 300;) {
        int ga = take_key(a, 0, owner, last, 100), gb = take_key(b, 1, owner, last, 100);
        n[0] += ga;
        n[1] += gb;
        idle = ga || gb ? 0 : idle + 1;
    }
    while (take_key(a, 0, owner, last, 500))
        n[0]++;
    while (take_key(b, 1, owner, last, 500))
        n[1]++;
}

START_TEST(test_key_shared_keeps_keys_together_and_ordered) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("keyshared");
    const char *kv[] = {"subscriptionType", "Key_Shared", NULL};
    pulsarc_consumer_t *a = consumer_kv(c, topic, "ks", kv, PULSARC_OK);
    pulsarc_consumer_t *b = consumer_kv(c, topic, "ks", kv, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 300, 20, NULL);
    int owner[20], last[20];
    for (int k = 0; k < 20; k++)
        owner[k] = last[k] = -1;
    int n[2];
    drain_keys(a, b, 300, owner, last, n);
    int na = n[0], nb = n[1];
    printf("key_shared: a got %d, b got %d\n", na, nb);
    ck_assert_int_eq(na + nb, 300);
    ck_assert_int_gt(na, 0);
    ck_assert_int_gt(nb, 0);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(a);
    pulsarc_consumer_destroy(b);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_key_shared_sticky_ranges) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("sticky");
    const char *ka[] = {"subscriptionType", "Key_Shared", "keySharedMode", "STICKY",
                        "keySharedHashRanges", "0-32767", NULL};
    const char *kb[] = {"subscriptionType", "Key_Shared", "keySharedMode", "STICKY",
                        "keySharedHashRanges", "32768-65535", NULL};
    const char *overlap[] = {"subscriptionType", "Key_Shared", "keySharedMode", "STICKY",
                             "keySharedHashRanges", "30000-40000", NULL};
    pulsarc_consumer_t *a = consumer_kv(c, topic, "st", ka, PULSARC_OK);
    pulsarc_consumer_t *b = consumer_kv(c, topic, "st", kb, PULSARC_OK);
    consumer_kv(c, topic, "st", overlap, PULSARC_ERR_BROKER_CONSUMER_ASSIGN);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 100, 10, NULL);
    int owner[10], last[10];
    for (int k = 0; k < 10; k++)
        owner[k] = last[k] = -1;
    int n[2];
    drain_keys(a, b, 100, owner, last, n);
    ck_assert_int_eq(n[0] + n[1], 100);
    for (int k = 0; k < 10; k++) { /* the broker's slot: Murmur3(key) % 65536 */
        char key[16];
        snprintf(key, sizeof key, "k%d", k);
        int slot = pc_hash_murmur3(key, strlen(key)) % 65536;
        ck_assert_msg(owner[k] == (slot <= 32767 ? 0 : 1), "key %s (slot %d) went to %d", key, slot, owner[k]);
    }
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(a);
    pulsarc_consumer_destroy(b);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- receiving ---------- */

START_TEST(test_batch_receive_limits) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("batchrecv");
    const char *kv[] = {"batchReceiveMaxNumMessages", "20", "batchReceiveTimeoutMs", "1000", NULL};
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 50, 0, NULL);
    pulsarc_msg_t *msgs[64];
    size_t n, total = 0, sizes[8], rounds = 0;
    while (total < 50 && rounds < 8) {
        ck_assert_int_eq(pulsarc_consumer_batch_receive(cons, msgs, 64, &n), PULSARC_OK);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(body_index(msgs[i]), (int)(total + i));
            pulsarc_consumer_ack(cons, msgs[i]);
            pulsarc_msg_destroy(msgs[i]);
        }
        sizes[rounds++] = n;
        total += n;
    }
    ck_assert_uint_eq(total, 50);
    ck_assert_uint_eq(sizes[0], 20); /* the count limit, with 50 waiting */
    ck_assert_int_eq(pulsarc_consumer_batch_receive(cons, msgs, 64, &n), PULSARC_OK);
    ck_assert_uint_eq(n, 0); /* timeout with nothing: an empty batch */
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

typedef struct listened {
    pthread_mutex_t lock;
    int n, in_order;
} listened_t;

static void on_msg(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    listened_t *l = opaque;
    pthread_mutex_lock(&l->lock);
    if (body_index(m) != l->n)
        l->in_order = 0;
    l->n++;
    pthread_mutex_unlock(&l->lock);
    pulsarc_consumer_ack(c, m);
    pulsarc_msg_destroy(m);
}

START_TEST(test_message_listener) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("listener");
    listened_t l = {PTHREAD_MUTEX_INITIALIZER, 0, 1};
    pulsarc_conf_t *conf = pct_conf(NULL);
    pulsarc_conf_set_message_listener(conf, on_msg, &l);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert(pulsarc_consumer_new(c, topic, "s", conf, &cons, err, sizeof err) == PULSARC_OK);
    pulsarc_msg_t *m;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10), PULSARC_ERR_STATE);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 300, 0, NULL);
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&l.lock);
        int n = l.n;
        pthread_mutex_unlock(&l.lock);
        if (n == 300)
            break;
        usleep(50000);
    }
    ck_assert_int_eq(l.n, 300);
    ck_assert(l.in_order);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- acknowledgement ---------- */

START_TEST(test_cumulative_ack) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("cumulative");
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", NULL, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 10, 0, NULL);
    pulsarc_msg_t *m = NULL;
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, RECV_WAIT_MS), PULSARC_OK);
        if (i == 5)
            ck_assert_int_eq(pulsarc_consumer_ack_cumulative(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(cons);
    cons = consumer_kv(c, topic, "s", NULL, PULSARC_OK);
    for (int i = 6; i < 10; i++)
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 0), i);
    ck_assert_int_eq(recv_index(cons, 500, 0), -1);
    pulsarc_consumer_destroy(cons);
    const char *kv[] = {"subscriptionType", "Shared", NULL};
    cons = consumer_kv(c, topic, "s2", kv, PULSARC_OK);
    ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 0), 0);
    pulsarc_msgid_t id = {0, 0, -1, -1, 0};
    ck_assert_int_eq(pulsarc_consumer_ack_cumulative_id(cons, &id), PULSARC_ERR_STATE);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_ack_receipts) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("receipts");
    const char *kv[] = {"ackReceiptEnabled", "true", NULL};
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 5, 0, NULL);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), i); /* each ack waited for its receipt */
    pulsarc_consumer_destroy(cons);
    cons = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    ck_assert_int_eq(recv_index(cons, 1000, 0), -1);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_nack_redelivers_with_count) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("nack");
    const char *kv[] = {"subscriptionType", "Shared", "negativeAckRedeliveryDelayMicros", "300000",
                        "tickDurationMillis", "100", NULL};
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 3, 0, NULL);
    pulsarc_msg_t *m;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, RECV_WAIT_MS), PULSARC_OK);
    ck_assert_int_eq(body_index(m), 0);
    ck_assert_uint_eq(pulsarc_msg_redelivery_count(m), 0);
    ck_assert_int_eq(pulsarc_consumer_nack(cons, m), PULSARC_OK);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), 1);
    ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), 2);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, RECV_WAIT_MS), PULSARC_OK);
    ck_assert_int_eq(body_index(m), 0);
    ck_assert_uint_eq(pulsarc_msg_redelivery_count(m), 1);
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    ck_assert_uint_eq(st.nacked, 1);
    ck_assert_uint_ge(st.redelivery_requests, 1);
    ck_assert_uint_eq(st.delivered, 4);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Exclusive: "redeliver all" rewinds (the broker keeps no count there); Shared: per id, counted. */
static void ack_timeout_case(const char *type, int counted) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("acktimeout");
    const char *kv[] = {"subscriptionType", type, "ackTimeoutMillis", "1000", "tickDurationMillis", "100", NULL};
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", kv, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 2, 0, NULL);
    ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 0), 0); /* not acked */
    ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), 1);
    pulsarc_msg_t *m;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, RECV_WAIT_MS), PULSARC_OK);
    ck_assert_int_eq(body_index(m), 0);
    if (counted)
        ck_assert_uint_ge(pulsarc_msg_redelivery_count(m), 1);
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(recv_index(cons, 2500, 0), -1); /* acked ones stay acked */
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}

START_TEST(test_ack_timeout_redelivers) {
    ack_timeout_case("Shared", 1);
    ack_timeout_case("Exclusive", 0);
}
END_TEST

START_TEST(test_unacked_redelivered_after_topic_unload) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("unload");
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", NULL, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 6, 0, NULL);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, i < 3), i); /* ack 0..2 only */
    usleep(300000); /* let the grouped acks go out */
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/unload", topic);
    ck_assert_int_eq(pct_admin("PUT", path, NULL), 204);
    for (int i = 3; i < 6; i++)
        ck_assert_int_eq(recv_index(cons, 15000, 1), i);
    ck_assert_int_eq(recv_index(cons, 1000, 1), -1);
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(cons, &st);
    ck_assert_uint_ge(st.reconnects, 1);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- seek, last id, readers, end of topic ---------- */

START_TEST(test_seek_by_id_and_time) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("seek");
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", NULL, PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    pulsarc_msgid_t ids[10];
    send_range(p, 0, 5, 0, ids);
    usleep(50000);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t5 = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    usleep(50000);
    send_range(p, 5, 10, 0, ids + 5);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), i);
    ck_assert_int_eq(pulsarc_consumer_seek(cons, &ids[3]), PULSARC_OK);
    int first = recv_index(cons, 10000, 1);
    printf("seek to id of msg 3: next is msg %d\n", first);
    ck_assert_int_eq(first, 3);
    for (int i = 4; i < 10; i++)
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), i);
    ck_assert_int_eq(pulsarc_consumer_seek_time(cons, t5), PULSARC_OK);
    ck_assert_int_eq(recv_index(cons, 10000, 1), 5);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_last_message_id_and_has_available) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("lastid");
    pulsarc_consumer_t *cons = consumer_kv(c, topic, "s", NULL, PULSARC_OK);
    pulsarc_msgid_t last;
    int avail = -1;
    ck_assert_int_eq(pulsarc_consumer_last_message_id(cons, &last), PULSARC_OK);
    ck_assert_int_lt(last.entry_id, 0); /* empty topic */
    ck_assert_int_eq(pulsarc_consumer_has_message_available(cons, &avail), PULSARC_OK);
    ck_assert_int_eq(avail, 0);
    pulsarc_producer_t *p = producer(c, topic);
    pulsarc_msgid_t ids[3];
    send_range(p, 0, 3, 0, ids);
    ck_assert_int_eq(pulsarc_consumer_last_message_id(cons, &last), PULSARC_OK);
    ck_assert_int_eq(last.ledger_id, ids[2].ledger_id);
    ck_assert_int_eq(last.entry_id, ids[2].entry_id);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pulsarc_consumer_has_message_available(cons, &avail), PULSARC_OK);
        ck_assert_int_eq(avail, 1);
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), i);
    }
    ck_assert_int_eq(pulsarc_consumer_has_message_available(cons, &avail), PULSARC_OK);
    ck_assert_int_eq(avail, 0);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static int read_all(pulsarc_reader_t *r, int *out, int max) {
    int n = 0;
    pulsarc_msg_t *m;
    while (n < max && pulsarc_reader_read(r, &m, 1500) == PULSARC_OK) {
        out[n++] = body_index(m);
        pulsarc_msg_destroy(m);
    }
    return n;
}

static pulsarc_reader_t *reader(pulsarc_client_t *c, const char *topic, pulsarc_msgid_t start, int incl) {
    pulsarc_reader_t *r = NULL;
    char err[256];
    ck_assert_msg(pulsarc_reader_new(c, topic, &start, incl, NULL, &r, err, sizeof err) == PULSARC_OK, "%s", err);
    return r;
}

START_TEST(test_readers_from_positions) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("reader");
    pulsarc_producer_t *p = producer(c, topic);
    pulsarc_msgid_t ids[10];
    send_range(p, 0, 10, 0, ids);
    int got[16], n;
    pulsarc_reader_t *r = reader(c, topic, pulsarc_msgid_earliest(), 0);
    n = read_all(r, got, 16);
    ck_assert_int_eq(n, 10);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(got[i], i);
    int avail = -1;
    ck_assert_int_eq(pulsarc_reader_has_message_available(r, &avail), PULSARC_OK);
    ck_assert_int_eq(avail, 0);
    pulsarc_reader_destroy(r);
    r = reader(c, topic, ids[4], 0); /* exclusive: starts after msg 4 */
    n = read_all(r, got, 16);
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(got[0], 5);
    pulsarc_reader_destroy(r);
    r = reader(c, topic, ids[4], 1); /* inclusive: msg 4 first */
    n = read_all(r, got, 16);
    ck_assert_int_eq(n, 6);
    ck_assert_int_eq(got[0], 4);
    pulsarc_reader_destroy(r);
    r = reader(c, topic, pulsarc_msgid_latest(), 0);
    ck_assert_int_eq(pulsarc_reader_has_message_available(r, &avail), PULSARC_OK);
    ck_assert_int_eq(avail, 0);
    send_range(p, 10, 12, 0, NULL);
    n = read_all(r, got, 16);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(got[0], 10);
    pulsarc_reader_destroy(r);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_end_of_topic) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("terminate");
    events_t ev = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, -1};
    pulsarc_conf_t *conf = pct_conf(NULL);
    pulsarc_conf_set_consumer_event_listener(conf, on_event, &ev);
    pulsarc_consumer_t *cons = NULL;
    char err[256], path[512];
    ck_assert(pulsarc_consumer_new(c, topic, "s", conf, &cons, err, sizeof err) == PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic);
    send_range(p, 0, 3, 0, NULL);
    pulsarc_producer_destroy(p);
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/terminate", topic);
    ck_assert_int_eq(pct_admin("POST", path, NULL), 200);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(recv_index(cons, RECV_WAIT_MS, 1), i);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_ERR_END_OF_TOPIC);
    ck_assert_int_ge(wait_count(&ev, &ev.eot, 1), 1);
    pulsarc_consumer_destroy(cons);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *consumer_suite(void) {
    Suite *s = suite_create("live-consumer");
    TCase *tc = tcase_create("consumer");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_exclusive_rejects_second_consumer);
    tcase_add_test(tc, test_shared_spreads_without_duplicates);
    tcase_add_test(tc, test_failover_switches_active_consumer);
    tcase_add_test(tc, test_key_shared_keeps_keys_together_and_ordered);
    tcase_add_test(tc, test_key_shared_sticky_ranges);
    tcase_add_test(tc, test_batch_receive_limits);
    tcase_add_test(tc, test_message_listener);
    tcase_add_test(tc, test_cumulative_ack);
    tcase_add_test(tc, test_ack_receipts);
    tcase_add_test(tc, test_nack_redelivers_with_count);
    tcase_add_test(tc, test_ack_timeout_redelivers);
    tcase_add_test(tc, test_unacked_redelivered_after_topic_unload);
    tcase_add_test(tc, test_seek_by_id_and_time);
    tcase_add_test(tc, test_last_message_id_and_has_available);
    tcase_add_test(tc, test_readers_from_positions);
    tcase_add_test(tc, test_end_of_topic);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(consumer_suite)
