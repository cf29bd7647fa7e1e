/*
 * Live-broker tests of producer and consumer interceptors: every hook is
 * called once per event (sends that succeed, time out, find the queue
 * full or are cut short by close; acks, cumulative acks, nacks and ack
 * timeouts sent for redelivery), hooks run in the order they were added,
 * what before_send changes reaches a consumer, and what before_consume
 * hands on is what receive and the listener see. Counts only, no timings.
 *
 * Sends are kept pending the way test_producer_errors.c does: the topic is
 * unloaded while the client's reconnect backoff is one minute.
 */
#include <stdlib.h>

#include "producer_util.h"

/* What the hooks of one interceptor saw; every field under lock. */
typedef struct seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char name;                   /* 'A', 'B': appended to the "trail" property */
    int before_send, acks_ok, acks_failed, partitions_calls, partitions, closes;
    pulsarc_err_t last_err;
    int consumed, consumed_after_a, acked, acked_cumulative, nack_notices, timeout_notices;
    pulsarc_msgid_t last_notice_id;
    size_t notice_ids;
} seen_t;

static void seen_init(seen_t *s, char name) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->name = name;
}

static void bump(seen_t *s, int *field) {
    pthread_mutex_lock(&s->lock);
    (*field)++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* Waits until *field reaches n (the Check timeout bounds a hang). */
static void wait_for(seen_t *s, const int *field, int n) {
    pthread_mutex_lock(&s->lock);
    while (*field < n)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

static int read_field(seen_t *s, const int *field) {
    pthread_mutex_lock(&s->lock);
    int v = *field;
    pthread_mutex_unlock(&s->lock);
    return v;
}

/* ---------- producer hooks ---------- */

static pulsarc_err_t p_before_send(pulsarc_producer_t *p, pulsarc_msg_t *m, void *opaque) {
    (void)p;
    seen_t *s = opaque;
    char trail[64];
    const char *was = pulsarc_msg_property(m, "trail");
    snprintf(trail, sizeof trail, "%s%c", was ? was : "", s->name);
    pulsarc_msg_set_property(m, "trail", trail);
    bump(s, &s->before_send);
    if (s->name == 'A') { /* the first hook changes value, time and (in vain) the sequence id */
        char body[128];
        snprintf(body, sizeof body, "A:%.*s", (int)pulsarc_msg_len(m), (const char *)pulsarc_msg_payload(m));
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_event_time(m, 4242);
        pulsarc_msg_set_sequence_id(m, 999);
        return PULSARC_ERR_STATE; /* a failing hook: the chain must go on */
    }
    return PULSARC_OK;
}

static void p_on_ack(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                     const pulsarc_msg_t *m, void *opaque) {
    (void)p;
    (void)m;
    seen_t *s = opaque;
    pthread_mutex_lock(&s->lock);
    if (err) {
        s->acks_failed++;
        s->last_err = err;
    } else {
        s->acks_ok += id != NULL;
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void p_partitions(pulsarc_producer_t *p, const char *topic, int n, void *opaque) {
    (void)p;
    (void)topic;
    seen_t *s = opaque;
    pthread_mutex_lock(&s->lock); /* after growth it runs on the callback thread */
    s->partitions = n;
    pthread_mutex_unlock(&s->lock);
    bump(s, &s->partitions_calls);
}

static void on_close(void *opaque) {
    seen_t *s = opaque;
    bump(s, &s->closes);
}

static pulsarc_producer_interceptor_t producer_hooks(seen_t *s) {
    pulsarc_producer_interceptor_t h = {p_before_send, p_on_ack, p_partitions, on_close, s};
    return h;
}

static pulsarc_producer_t *intercepted_producer(pulsarc_client_t *c, const char *topic,
                                                const char *const *kv, seen_t *a, seen_t *b) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_interceptor_t ha = producer_hooks(a), hb = producer_hooks(b);
    ck_assert_int_eq(pulsarc_conf_add_producer_interceptor(conf, &ha), PULSARC_OK);
    ck_assert_int_eq(pulsarc_conf_add_producer_interceptor(conf, &hb), PULSARC_OK);
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf); /* the producer keeps its own copy of the chain */
    ck_assert_msg(e == PULSARC_OK, "producer on %s: %s", topic, err);
    return p;
}

static pulsarc_msg_t *text_msg(const char *text, int i) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    char v[16];
    snprintf(v, sizeof v, "%d", i);
    pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY);
    pulsarc_msg_set_property(m, "i", v);
    return m;
}

START_TEST(test_before_send_changes_reach_the_consumer) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-send");
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = intercepted_producer(c, topic, kv, &a, &b);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, text_msg("async", i), on_sent_cb, &log),
                         PULSARC_OK);
    pulsarc_msg_t *sync = text_msg("sync", 3);
    pulsarc_msgid_t sync_id;
    ck_assert_int_eq(pulsarc_producer_send(p, sync, &sync_id), PULSARC_OK);
    ck_assert_ptr_null(pulsarc_msg_property(sync, "trail")); /* the caller's message is untouched */
    pulsarc_msg_destroy(sync);
    sent_log_wait(&log, 3);
    ck_assert_int_eq(log.ok, 3);
    wait_for(&b, &b.acks_ok, 4);
    ck_assert_int_eq(read_field(&a, &a.before_send), 4);
    ck_assert_int_eq(read_field(&a, &a.acks_ok), 4);
    ck_assert_int_eq(read_field(&b, &b.acks_failed), 0);
    ck_assert_int_eq(read_field(&a, &a.partitions_calls), 0); /* not partitioned */
    for (int i = 0; i < 4; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        ck_assert_str_eq(pulsarc_msg_property(m, "trail"), "AB"); /* chain order, A's error ignored */
        char want[32];
        snprintf(want, sizeof want, "A:%s", i < 3 ? "async" : "sync");
        ck_assert_uint_eq(pulsarc_msg_len(m), strlen(want));
        ck_assert(memcmp(pulsarc_msg_payload(m), want, strlen(want)) == 0);
        ck_assert_uint_eq(pulsarc_msg_event_time(m), 4242);
        ck_assert_int_eq(pulsarc_msg_sequence_id(m), i); /* the hook's 999 was undone */
        if (i == 3) { /* the id the synchronous send returned is the one received */
            ck_assert_int_eq(sync_id.ledger_id, pulsarc_msg_id(m).ledger_id);
            ck_assert_int_eq(sync_id.entry_id, pulsarc_msg_id(m).entry_id);
        }
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(read_field(&a, &a.closes), 0);
    pulsarc_producer_destroy(p);
    ck_assert_int_eq(read_field(&a, &a.closes), 1);
    ck_assert_int_eq(read_field(&b, &b.closes), 1);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Send timeout, full queue and close: on_send_ack once per message, with the error. */
START_TEST(test_on_send_ack_for_failed_sends) {
    const char *ckv[] = {"initialBackoffIntervalMs", "60000", "maxBackoffIntervalMs", "60000", NULL};
    pulsarc_client_t *c = pct_client_with(ckv);
    const char *topic = pct_topic("icpt-fail");
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"sendTimeoutMs", "300", "batchingEnabled", "false", "maxPendingMessages", "2",
                        NULL};
    pulsarc_producer_t *p = intercepted_producer(c, topic, kv, &a, &b);
    send_text(p, "before the stall");
    unload_topic(topic);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, text_msg("x", i), on_sent_cb, &log), PULSARC_OK);
    sent_log_wait(&log, 2);
    ck_assert_int_eq(log.errs[0], PULSARC_ERR_TIMEOUT);
    wait_for(&b, &b.acks_failed, 2);
    ck_assert_int_eq(read_field(&a, &a.acks_failed), 2);
    ck_assert_int_eq(a.last_err, PULSARC_ERR_TIMEOUT);
    pulsarc_msg_t *m = text_msg("sync", 9);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_TIMEOUT);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(read_field(&a, &a.acks_failed), 3); /* a sync send's hook ran before it returned */
    pulsarc_producer_destroy(p);
    ck_assert_int_eq(read_field(&a, &a.closes), 1);

    /* a new producer: two sends pending, the third refused, then close */
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *topic2 = pct_topic("icpt-full");
    const char *kv2[] = {"batchingEnabled", "false", "maxPendingMessages", "2", NULL};
    p = intercepted_producer(c, topic2, kv2, &a, &b);
    send_text(p, "before the stall");
    unload_topic(topic2);
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, text_msg("x", 0), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_send_async(p, text_msg("x", 1), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_send_async(p, text_msg("x", 2), on_sent_cb, &log),
                     PULSARC_ERR_QUEUE_FULL);
    ck_assert_int_eq(read_field(&b, &b.acks_failed), 1); /* told at once, on the sending thread */
    ck_assert_int_eq(b.last_err, PULSARC_ERR_QUEUE_FULL);
    pulsarc_producer_close(p);
    sent_log_wait(&log, 3);
    wait_for(&b, &b.acks_failed, 3);
    ck_assert_int_eq(b.last_err, PULSARC_ERR_CLOSED);
    pulsarc_producer_destroy(p);
    ck_assert_int_eq(read_field(&a, &a.before_send), 4);
    ck_assert_int_eq(read_field(&a, &a.acks_ok), 1);
    ck_assert_int_eq(read_field(&a, &a.acks_failed), 3);
    ck_assert_int_eq(read_field(&b, &b.closes), 1);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_partitions_hook) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-parts");
    pct_create_partitioned(topic, 3);
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    pulsarc_producer_t *p = intercepted_producer(c, topic, NULL, &a, &b);
    ck_assert_int_eq(read_field(&a, &a.partitions_calls), 1);
    ck_assert_int_eq(a.partitions, 3);
    ck_assert_int_eq(read_field(&b, &b.partitions_calls), 1);
    send_text(p, "one");
    ck_assert_int_eq(read_field(&a, &a.before_send), 1); /* once for the handle, not per partition */
    pulsarc_producer_destroy(p);
    ck_assert_int_eq(read_field(&a, &a.acks_ok), 1);
    pulsarc_client_destroy(c);
}
END_TEST

/* Partitions added to the topic: on_partitions_change again, with the new count, in chain order. */
START_TEST(test_partitions_hook_after_growth) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-grow");
    pct_create_partitioned(topic, 2);
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"autoUpdatePartitionsInterval", "1", NULL};
    pulsarc_producer_t *p = intercepted_producer(c, topic, kv, &a, &b);
    ck_assert_int_eq(read_field(&a, &a.partitions_calls), 1);
    ck_assert_int_eq(read_field(&a, &a.partitions), 2);
    ck_assert_int_eq(pct_admin("POST", topic_path(topic, "/partitions"), "4"), 204);
    wait_for(&b, &b.partitions_calls, 2); /* B runs after A */
    ck_assert_int_eq(read_field(&a, &a.partitions_calls), 2);
    ck_assert_int_eq(read_field(&a, &a.partitions), 4);
    ck_assert_int_eq(read_field(&b, &b.partitions), 4);
    ck_assert_int_eq(pulsarc_producer_partitions(p), 4); /* the hook follows the switch */
    send_text(p, "after");
    pulsarc_producer_destroy(p);
    ck_assert_int_eq(read_field(&a, &a.partitions_calls), 2); /* nothing grew since */
    ck_assert_int_eq(read_field(&a, &a.acks_ok), 1);
    ck_assert_int_eq(read_field(&b, &b.closes), 1);
    pulsarc_client_destroy(c);
}
END_TEST

/* The broker refuses the producer: no handle, so no hook at all, close included. */
START_TEST(test_refused_producer_calls_no_hook) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-terminated");
    pulsarc_producer_t *first = make_producer(c, topic, NULL);
    send_text(first, "last words");
    pulsarc_producer_destroy(first);
    int code = pct_admin("POST", topic_path(topic, "/terminate"), NULL);
    ck_assert_msg(code == 200 || code == 204, "terminate: HTTP %d", code);
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_producer_interceptor_t ha = producer_hooks(&a);
    pulsarc_conf_add_producer_interceptor(conf, &ha);
    pulsarc_producer_t *p = NULL;
    char err[512];
    ck_assert_int_eq(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err),
                     PULSARC_ERR_BROKER_TOPIC_TERMINATED);
    pulsarc_conf_destroy(conf);
    ck_assert_int_eq(read_field(&a, &a.closes), 0);
    ck_assert_int_eq(read_field(&a, &a.before_send), 0);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- consumer hooks ---------- */

/* A replaces each message by a copy marked "seen", B only counts; both count acks. */
static pulsarc_msg_t *c_before_consume(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    (void)c;
    seen_t *s = opaque;
    bump(s, &s->consumed);
    if (s->name != 'A') {
        if (pulsarc_msg_property(m, "seen")) /* A ran first and B got its replacement */
            bump(s, &s->consumed_after_a);
        return NULL; /* "no change": the chain goes on with m */
    }
    pulsarc_msg_t *copy = pulsarc_msg_clone(m);
    ck_assert_ptr_nonnull(copy);
    pulsarc_msg_set_property(copy, "seen", "A");
    pulsarc_msg_destroy(m);
    return copy;
}

static void c_on_ack(pulsarc_consumer_t *c, const pulsarc_msgid_t *id, pulsarc_err_t err, void *opaque) {
    (void)c;
    (void)id;
    seen_t *s = opaque;
    if (!err)
        bump(s, &s->acked);
}

static void c_on_ack_cumulative(pulsarc_consumer_t *c, const pulsarc_msgid_t *id, pulsarc_err_t err,
                                void *opaque) {
    (void)c;
    (void)id;
    seen_t *s = opaque;
    if (!err) {
        bump(s, &s->acked_cumulative);
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->last_err = err;
    pthread_mutex_unlock(&s->lock);
    bump(s, &s->acks_failed);
}

static void notice(seen_t *s, int *field, const pulsarc_msgid_t *ids, size_t n) {
    pthread_mutex_lock(&s->lock);
    s->last_notice_id = ids[n - 1];
    s->notice_ids += n;
    (*field)++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void c_on_nacks(pulsarc_consumer_t *c, const pulsarc_msgid_t *ids, size_t n, void *opaque) {
    (void)c;
    seen_t *s = opaque;
    notice(s, &s->nack_notices, ids, n);
}

static void c_on_timeouts(pulsarc_consumer_t *c, const pulsarc_msgid_t *ids, size_t n, void *opaque) {
    (void)c;
    seen_t *s = opaque;
    notice(s, &s->timeout_notices, ids, n);
}

typedef struct listened {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n, marked;
} listened_t;

static void on_message(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    listened_t *l = opaque;
    const char *seen = pulsarc_msg_property(m, "seen");
    pulsarc_consumer_ack(c, m);
    pthread_mutex_lock(&l->lock);
    l->n++;
    l->marked += seen && strcmp(seen, "A") == 0;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    pulsarc_msg_destroy(m);
}

static pulsarc_consumer_t *intercepted_consumer(pulsarc_client_t *c, const char *topic,
                                                const char *const *kv, seen_t *a, seen_t *b,
                                                listened_t *l) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_interceptor_t ha = {c_before_consume, c_on_ack, c_on_ack_cumulative,
                                         c_on_nacks, c_on_timeouts, on_close, a};
    pulsarc_consumer_interceptor_t hb = ha;
    hb.opaque = b;
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(conf, &ha), PULSARC_OK);
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(conf, &hb), PULSARC_OK);
    if (l)
        pulsarc_conf_set_message_listener(conf, on_message, l);
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "sub", conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s", topic, err);
    return cons;
}

static void produce(pulsarc_client_t *c, const char *topic, int n) {
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    for (int i = 0; i < n; i++)
        send_text(p, "m");
    pulsarc_producer_destroy(p);
}

START_TEST(test_before_consume_and_acks) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-consume");
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"subscriptionType", "Failover", NULL};
    pulsarc_consumer_t *cons = intercepted_consumer(c, topic, kv, &a, &b, NULL);
    produce(c, topic, 5);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 20000), PULSARC_OK);
    ck_assert_str_eq(pulsarc_msg_property(m, "seen"), "A"); /* A's replacement, B kept it */
    ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK); /* the copy carries the id */
    pulsarc_msg_destroy(m);
    pulsarc_msg_t *batch[8];
    size_t n = 0, got = 0;
    while (got < 4) {
        ck_assert_int_eq(pulsarc_consumer_batch_receive(cons, batch, 4 - got, &n), PULSARC_OK);
        for (size_t i = 0; i < n; i++) {
            ck_assert_str_eq(pulsarc_msg_property(batch[i], "seen"), "A");
            if (got + i + 1 == 4)
                ck_assert_int_eq(pulsarc_consumer_ack_cumulative(cons, batch[i]), PULSARC_OK);
            pulsarc_msg_destroy(batch[i]);
        }
        got += n;
    }
    ck_assert_int_eq(read_field(&a, &a.consumed), 5);
    ck_assert_int_eq(read_field(&b, &b.consumed), 5);
    ck_assert_int_eq(read_field(&b, &b.consumed_after_a), 5);
    ck_assert_int_eq(read_field(&b, &b.acked), 1);
    ck_assert_int_eq(read_field(&b, &b.acked_cumulative), 1);
    ck_assert_int_eq(read_field(&a, &a.acked_cumulative), 1);
    pulsarc_consumer_destroy(cons);
    ck_assert_int_eq(read_field(&a, &a.closes), 1);
    ck_assert_int_eq(read_field(&b, &b.closes), 1);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_before_consume_for_the_listener) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-listen");
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    listened_t l = {.n = 0};
    pthread_mutex_init(&l.lock, NULL);
    pthread_cond_init(&l.cond, NULL);
    pulsarc_consumer_t *cons = intercepted_consumer(c, topic, NULL, &a, &b, &l);
    produce(c, topic, 4);
    pthread_mutex_lock(&l.lock);
    while (l.n < 4)
        pthread_cond_wait(&l.cond, &l.lock);
    pthread_mutex_unlock(&l.lock);
    ck_assert_int_eq(l.marked, 4);
    ck_assert_int_eq(read_field(&b, &b.consumed), 4);
    ck_assert_int_eq(read_field(&b, &b.consumed_after_a), 4);
    wait_for(&a, &a.acked, 4);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_nack_and_ack_timeout_notices) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-redeliver");
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"subscriptionType", "Shared", "negativeAckRedeliveryDelayMicros", "100000",
                        "ackTimeoutMillis", "1000", "tickDurationMillis", "100", NULL};
    pulsarc_consumer_t *cons = intercepted_consumer(c, topic, kv, &a, &b, NULL);
    produce(c, topic, 2);
    pulsarc_msg_t *m1 = NULL, *m2 = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m1, 20000), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m2, 20000), PULSARC_OK);
    pulsarc_msgid_t id1 = pulsarc_msg_id(m1), id2 = pulsarc_msg_id(m2);
    /* a failed ack reaches the hook with its error: no cumulative acks on Shared */
    ck_assert_int_eq(pulsarc_consumer_ack_cumulative(cons, m2), PULSARC_ERR_STATE);
    ck_assert_int_eq(read_field(&b, &b.acks_failed), 1);
    ck_assert_int_eq(b.last_err, PULSARC_ERR_STATE);
    ck_assert_int_eq(read_field(&b, &b.acked_cumulative), 0);
    pulsarc_consumer_nack(cons, m1); /* m2 is neither acked nor nacked: it times out */
    wait_for(&b, &b.nack_notices, 1);
    pthread_mutex_lock(&b.lock);
    ck_assert_int_eq(b.last_notice_id.ledger_id, id1.ledger_id);
    ck_assert_int_eq(b.last_notice_id.entry_id, id1.entry_id);
    pthread_mutex_unlock(&b.lock);
    wait_for(&b, &b.timeout_notices, 1);
    pthread_mutex_lock(&b.lock);
    ck_assert_int_eq(b.last_notice_id.ledger_id, id2.ledger_id);
    ck_assert_int_eq(b.last_notice_id.entry_id, id2.entry_id);
    pthread_mutex_unlock(&b.lock);
    ck_assert_int_eq(read_field(&a, &a.nack_notices), 1);
    ck_assert_int_eq(read_field(&a, &a.timeout_notices), read_field(&b, &b.timeout_notices));
    pulsarc_msg_destroy(m1);
    pulsarc_msg_destroy(m2);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* A partitioned topic: the handle's hooks run once per message, members report to it. */
START_TEST(test_multi_topic_consumer_calls_the_handle_hooks) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-multi");
    pct_create_partitioned(topic, 2);
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"subscriptionType", "Shared", "negativeAckRedeliveryDelayMicros", "100000",
                        "tickDurationMillis", "100", NULL};
    pulsarc_consumer_t *cons = intercepted_consumer(c, topic, kv, &a, &b, NULL);
    const char *pkv[] = {"batchingEnabled", "false", "messageRoutingMode", "RoundRobinPartition", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, pkv);
    for (int i = 0; i < 4; i++)
        send_text(p, "m");
    pulsarc_producer_destroy(p);
    pulsarc_msgid_t nacked = {0};
    for (int i = 0; i < 4; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 20000), PULSARC_OK);
        ck_assert_str_eq(pulsarc_msg_property(m, "seen"), "A");
        if (i == 0) {
            nacked = pulsarc_msg_id(m);
            ck_assert_int_eq(pulsarc_consumer_nack(cons, m), PULSARC_OK); /* routed by the copy */
        } else {
            ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        }
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(read_field(&a, &a.consumed), 4);
    ck_assert_int_eq(read_field(&b, &b.acked), 3);
    wait_for(&b, &b.nack_notices, 1);
    pthread_mutex_lock(&b.lock);
    ck_assert_int_eq(b.last_notice_id.ledger_id, nacked.ledger_id);
    ck_assert_int_eq(b.last_notice_id.entry_id, nacked.entry_id);
    ck_assert_int_eq(b.last_notice_id.partition, nacked.partition);
    pthread_mutex_unlock(&b.lock);
    pulsarc_msg_t *again = NULL; /* the nacked one comes back, through the hooks again */
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &again, 20000), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_id(again).entry_id, nacked.entry_id);
    ck_assert_str_eq(pulsarc_msg_property(again, "seen"), "A");
    ck_assert_int_eq(pulsarc_consumer_ack(cons, again), PULSARC_OK);
    pulsarc_msg_destroy(again);
    ck_assert_int_eq(read_field(&b, &b.consumed), 5);
    pulsarc_consumer_destroy(cons);
    ck_assert_int_eq(read_field(&a, &a.closes), 1);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_zero_queue_consumer_receive) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-zq");
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    const char *kv[] = {"receiverQueueSize", "0", NULL};
    pulsarc_consumer_t *cons = intercepted_consumer(c, topic, kv, &a, &b, NULL);
    produce(c, topic, 2);
    for (int i = 0; i < 2; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, -1), PULSARC_OK);
        ck_assert_str_eq(pulsarc_msg_property(m, "seen"), "A");
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(read_field(&b, &b.consumed), 2);
    ck_assert_int_eq(read_field(&a, &a.acked), 2);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_reader_runs_before_consume) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("icpt-reader");
    produce(c, topic, 2);
    seen_t a, b;
    seen_init(&a, 'A');
    seen_init(&b, 'B');
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_consumer_interceptor_t ha = {.before_consume = c_before_consume, .close = on_close,
                                         .opaque = &a};
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(conf, &ha), PULSARC_OK);
    pulsarc_msgid_t start = pulsarc_msgid_earliest();
    pulsarc_reader_t *r = NULL;
    char err[256];
    ck_assert_msg(pulsarc_reader_new(c, topic, &start, 0, conf, &r, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_conf_destroy(conf);
    for (int i = 0; i < 2; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_reader_read(r, &m, 20000), PULSARC_OK);
        ck_assert_str_eq(pulsarc_msg_property(m, "seen"), "A");
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(read_field(&a, &a.consumed), 2);
    pulsarc_reader_destroy(r);
    ck_assert_int_eq(read_field(&a, &a.closes), 1);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interceptors");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_before_send_changes_reach_the_consumer);
    tcase_add_test(tc, test_on_send_ack_for_failed_sends);
    tcase_add_test(tc, test_partitions_hook);
    tcase_add_test(tc, test_partitions_hook_after_growth);
    tcase_add_test(tc, test_refused_producer_calls_no_hook);
    tcase_add_test(tc, test_before_consume_and_acks);
    tcase_add_test(tc, test_before_consume_for_the_listener);
    tcase_add_test(tc, test_nack_and_ack_timeout_notices);
    tcase_add_test(tc, test_multi_topic_consumer_calls_the_handle_hooks);
    tcase_add_test(tc, test_zero_queue_consumer_receive);
    tcase_add_test(tc, test_reader_runs_before_consume);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
