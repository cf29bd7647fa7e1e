/*
 * Live-broker tests of the producer's life on the broker: reconnecting
 * after the broker closes it (topic unload) with every pending message
 * resent in order, no duplicates with broker deduplication on, the
 * sequence id continuing from the broker's last_sequence_id for a named
 * producer, and the access modes (Exclusive, ExclusiveWithFencing,
 * WaitForExclusive).
 *
 * The unload test prints, per unload, the time from the unload call's
 * return to the producer's first send receipt after it, and their median
 * and max ("recovery:" lines, recovery.h); a producer with messages pending
 * that gets no receipt for 60 s fails as a hang.
 */
#include <stdlib.h>

#include "producer_util.h"
#include "recovery.h"

/* A namespace of our own with deduplication on. Returns "public/<ns>". */
static const char *dedup_namespace(void) {
    static char ns[128];
    snprintf(ns, sizeof ns, "public/dedup-%d-%ld", (int)getpid(), (long)time(NULL));
    pct_create_dedup_namespace(ns); /* through the project's admin client */
    return ns;
}

static pulsarc_msg_t *indexed(int i) {
    char v[16];
    snprintf(v, sizeof v, "%d", i);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
    pulsarc_msg_set_property(m, "i", v);
    return m;
}

#define N_RECONNECT 3000

/* The send log plus the producer's recovery after each unload. */
typedef struct rec_log {
    sent_log_t log; /* first: on_sent_cb takes the same pointer */
    pct_recovery_t rec;
    int queued;     /* sends issued so far (test thread) */
} rec_log_t;

static void on_sent_rec(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                        pulsarc_msg_t *msg, void *opaque) {
    on_sent_cb(p, err, id, msg, opaque);
    if (!err)
        pct_recovery_ok(&((rec_log_t *)opaque)->rec);
}

/* A receipt can still come: some issued send has no callback yet. */
static int sends_pending(void *arg) {
    rec_log_t *r = arg;
    pthread_mutex_lock(&r->log.lock);
    int pending = r->log.n < r->queued;
    pthread_mutex_unlock(&r->log.lock);
    return pending;
}

/* Unloads the topic and waits for the producer's first receipt after it. */
static void unload_and_recover(rec_log_t *r, const char *topic) {
    unload_topic(topic);
    pct_recovery_mark(&r->rec, 0);
    int64_t took = pct_recovery_wait(&r->rec, sends_pending, r);
    printf("recovery-event: unload producer_ms=%lld\n", (long long)took);
    ck_assert_msg(took != -1, "no send receipt for %d s after the unload", PCT_RECOVERY_HANG_MS / 1000);
}

/*
 * _i: batching off (0) / on (1). Unloads the topic twice while sends are in
 * flight; every send succeeds exactly once and the consumer sees each
 * message exactly once, in order.
 */
START_TEST(test_reconnect_resends_without_duplicates) {
    const char *ns = dedup_namespace();
    char topic[512];
    snprintf(topic, sizeof topic, "%s/%s", ns, pct_topic("reconnect"));
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    const char *kv[] = {"producerName", "dedup-writer", "batchingEnabled", _i ? "true" : "false",
                        "maxPendingMessages", "5000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    static rec_log_t rl;
    sent_log_init(&rl.log);
    pct_recovery_init(&rl.rec, "producer");
    rl.queued = 0;
    sent_log_t *lp = &rl.log;
    for (int i = 0; i < N_RECONNECT; i++) {
        ck_assert_int_eq(pulsarc_producer_send_async(p, indexed(i), on_sent_rec, &rl), PULSARC_OK);
        rl.queued = i + 1;
        if (i == N_RECONNECT / 3 || i == 2 * N_RECONNECT / 3)
            unload_and_recover(&rl, topic);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 60000), PULSARC_OK);
    sent_log_wait(lp, N_RECONNECT);
    ck_assert_msg(lp->ok == N_RECONNECT, "%d of %d sends failed, last with %s", lp->failed, N_RECONNECT,
                  pulsarc_errname(lp->last_err));
    for (int i = 0; i < N_RECONNECT; i++)
        ck_assert_int_eq(lp->calls_for[i], 1);
    ck_assert_int_eq(pulsarc_producer_last_sequence_id(p), N_RECONNECT - 1);
    for (int i = 0; i < N_RECONNECT; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        ck_assert_int_eq(atoi(pulsarc_msg_property(m, "i")), i);
        ck_assert_int_eq(pulsarc_msg_sequence_id(m), i);
        pulsarc_msg_destroy(m);
    }
    expect_no_more(cons);
    pulsarc_producer_destroy(p);
    /* Same name again: the broker's last sequence id seeds the next one. */
    p = make_producer(c, topic, kv);
    ck_assert_int_eq(pulsarc_producer_last_sequence_id(p), N_RECONNECT - 1);
    pulsarc_msgid_t id;
    pulsarc_msg_t *m = indexed(N_RECONNECT);
    ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), -1); /* the caller's message is untouched */
    pulsarc_msg_destroy(m);
    pulsarc_msg_t *r = receive_one(cons, N_RECONNECT);
    ck_assert_int_eq(pulsarc_msg_sequence_id(r), N_RECONNECT);
    pulsarc_msg_destroy(r);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pct_recovery_print(_i ? "unload batching" : "unload", &rl.rec); /* callbacks done */
}
END_TEST

/* With dedup on, re-sending an old sequence id is dropped by the broker. */
START_TEST(test_dedup_drops_old_sequence_ids) {
    const char *ns = dedup_namespace();
    char topic[512];
    snprintf(topic, sizeof topic, "%s/%s", ns, pct_topic("dedup"));
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = make_consumer(c, topic, "Exclusive");
    const char *kv[] = {"producerName", "seq-writer", "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    for (int i = 0; i < 3; i++) {
        pulsarc_msg_t *m = indexed(i);
        pulsarc_msg_set_sequence_id(m, 10 + i);
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_msg_t *dup = indexed(99);
    pulsarc_msg_set_sequence_id(dup, 11);
    pulsarc_msgid_t id;
    ck_assert_int_eq(pulsarc_producer_send(p, dup, &id), PULSARC_OK);
    ck_assert_int_eq(id.ledger_id, -1); /* (-1, -1): dropped as a duplicate */
    ck_assert_int_eq(id.entry_id, -1);
    pulsarc_msg_destroy(dup);
    for (int i = 0; i < 3; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        ck_assert_int_eq(pulsarc_msg_sequence_id(m), 10 + i);
        pulsarc_msg_destroy(m);
    }
    expect_no_more(cons);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_exclusive_refuses_second_producer) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("exclusive");
    const char *kv[] = {"accessMode", "Exclusive", NULL};
    pulsarc_producer_t *p1 = make_producer(c, topic, kv), *p2 = NULL;
    pulsarc_conf_t *conf = pct_conf(kv);
    char err[512];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p2, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_BROKER_PRODUCER_BUSY || e == PULSARC_ERR_BROKER_PRODUCER_FENCED,
                  "second exclusive producer: %s (%s)", pulsarc_errname(e), err);
    /* A Shared producer is refused too while the exclusive one holds the topic. */
    e = pulsarc_producer_new(c, topic, NULL, &p2, err, sizeof err);
    ck_assert_int_ne(e, PULSARC_OK);
    send_text(p1, "still mine");
    pulsarc_producer_destroy(p1);
    ck_assert_int_eq(pulsarc_producer_new(c, topic, conf, &p2, err, sizeof err), PULSARC_OK);
    pulsarc_producer_destroy(p2);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_exclusive_with_fencing) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("fencing");
    const char *kv1[] = {"accessMode", "Exclusive", "batchingEnabled", "false", NULL};
    const char *kv2[] = {"accessMode", "ExclusiveWithFencing", NULL};
    pulsarc_producer_t *p1 = make_producer(c, topic, kv1);
    send_text(p1, "first");
    pulsarc_producer_t *p2 = make_producer(c, topic, kv2); /* takes over */
    send_text(p2, "second");
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY);
    pulsarc_err_t e = pulsarc_producer_send(p1, m, NULL);
    pulsarc_msg_destroy(m);
    ck_assert_msg(e == PULSARC_ERR_BROKER_PRODUCER_FENCED || e == PULSARC_ERR_BROKER_PRODUCER_BUSY,
                  "fenced producer's send: %s", pulsarc_errname(e));
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    pulsarc_client_destroy(c);
}
END_TEST

typedef struct waiting {
    pulsarc_client_t *c;
    const char *topic;
    pulsarc_producer_t *p;
    pulsarc_err_t err;
    char errstr[512];
} waiting_t;

static void *create_waiting(void *arg) {
    waiting_t *w = arg;
    const char *kv[] = {"accessMode", "WaitForExclusive", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    w->err = pulsarc_producer_new(w->c, w->topic, conf, &w->p, w->errstr, sizeof w->errstr);
    pulsarc_conf_destroy(conf);
    return NULL;
}

/* WaitForExclusive: creation waits (no timeout) until the holder leaves. */
START_TEST(test_wait_for_exclusive) {
    const char *ckv[] = {"operationTimeoutMs", "2000", NULL}; /* waiting must outlast it */
    pulsarc_client_t *c = pct_client_with(ckv);
    const char *topic = pct_topic("wait-excl");
    const char *kv[] = {"accessMode", "Exclusive", NULL};
    pulsarc_producer_t *holder = make_producer(c, topic, kv);
    waiting_t w = {.c = c, .topic = topic};
    pthread_t th;
    pthread_create(&th, NULL, create_waiting, &w);
    sleep(4); /* longer than operationTimeoutMs: waiting is not a timeout */
    send_text(holder, "holder writes meanwhile"); /* so the waiter has not taken over */
    pulsarc_producer_destroy(holder);
    pthread_join(th, NULL);
    ck_assert_msg(w.err == PULSARC_OK, "waiting producer: %s", w.errstr);
    send_text(w.p, "my turn");
    pulsarc_producer_destroy(w.p);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-reconnect");
    TCase *t = tcase_create("reconnect");
    tcase_set_timeout(t, 180);
    tcase_add_loop_test(t, test_reconnect_resends_without_duplicates, 0, 2);
    tcase_add_test(t, test_dedup_drops_old_sequence_ids);
    tcase_add_test(t, test_exclusive_refuses_second_producer);
    tcase_add_test(t, test_exclusive_with_fencing);
    tcase_add_test(t, test_wait_for_exclusive);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
