/*
 * Transactions against the live broker: what consumers see of
 * committed and aborted sends, what happens to acks in committed and
 * aborted transactions, the broker's timeout, and conflicting acks. Each
 * test prints how long it took, so the cost of transactions stays visible.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* ---------- helpers ---------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define TIMED_START double t0_ = now_s()
#define TIMED_END(name) printf("[txn] %-34s %6.2f s\n", name, now_s() - t0_)

static pulsarc_client_t *txn_client(void) {
    const char *kv[] = {"enableTransaction", "true", NULL};
    return pct_client_with(kv);
}

static pulsarc_txn_t *txn_new(pulsarc_client_t *c, int timeout_ms) {
    pulsarc_txn_t *t = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_txn_new(c, timeout_ms, &t, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "txn_new: %s (%s)", pulsarc_errname(e), err);
    return t;
}

static void commit_ok(pulsarc_txn_t *t) {
    char err[256];
    pulsarc_err_t e = pulsarc_txn_commit(t, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "commit: %s (%s)", pulsarc_errname(e), err);
}

static void abort_ok(pulsarc_txn_t *t) {
    char err[256];
    pulsarc_err_t e = pulsarc_txn_abort(t, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "abort: %s (%s)", pulsarc_errname(e), err);
}

static pulsarc_producer_t *producer(pulsarc_client_t *c, const char *topic, int batching) {
    const char *kv[] = {"batchingEnabled", batching ? "true" : "false", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

static pulsarc_consumer_t *consumer(pulsarc_client_t *c, const char *topic, const char *sub,
                                    const char *type) {
    const char *kv[] = {"subscriptionType", type, "subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, sub, conf, &cons, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "subscribe: %s (%s)", pulsarc_errname(e), err);
    pulsarc_conf_destroy(conf);
    return cons;
}

static pulsarc_msg_t *body(int i) {
    char b[32];
    snprintf(b, sizeof b, "msg-%d", i);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, b, strlen(b), PULSARC_MSG_F_COPY);
    return m;
}

/* Sends "msg-<i>" for i in [from, to), in t when t is set. */
static void send_range(pulsarc_producer_t *p, pulsarc_txn_t *t, int from, int to,
                       pulsarc_msgid_t *ids) {
    for (int i = from; i < to; i++) {
        pulsarc_msg_t *m = body(i);
        pulsarc_msgid_t id;
        pulsarc_err_t e = t ? pulsarc_producer_send_txn(p, t, m, &id) : pulsarc_producer_send(p, m, &id);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_errname(e));
        if (ids)
            ids[i - from] = id;
        pulsarc_msg_destroy(m);
    }
}

static int index_of(const pulsarc_msg_t *m) {
    char buf[32];
    size_t n = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(buf, pulsarc_msg_payload(m), n);
    buf[n] = '\0';
    int i = -1;
    sscanf(buf, "msg-%d", &i);
    return i;
}

/* Receives one message: its index (or -1 on timeout) and, if asked, its id. */
static int recv_index(pulsarc_consumer_t *c, int timeout_ms, pulsarc_msgid_t *id) {
    pulsarc_msg_t *m = NULL;
    if (pulsarc_consumer_receive(c, &m, timeout_ms) != PULSARC_OK)
        return -1;
    int i = index_of(m);
    if (id)
        *id = pulsarc_msg_id(m);
    pulsarc_msg_destroy(m);
    return i;
}

/* Counts what arrives until quiet_ms pass with nothing; seen[i] per index < n. */
static int drain(pulsarc_consumer_t *c, int *seen, int n, int quiet_ms) {
    int total = 0, i;
    while ((i = recv_index(c, quiet_ms, NULL)) >= 0) {
        ck_assert_msg(i < n, "unexpected message msg-%d", i);
        seen[i]++;
        total++;
    }
    return total;
}

/* ---------- sends ---------- */

START_TEST(test_committed_seen_exactly_once) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-commit");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Exclusive");
    pulsarc_producer_t *p = producer(c, topic, 1);
    pulsarc_txn_t *t = txn_new(c, 30000);
    uint64_t most, least;
    ck_assert_int_eq(pulsarc_txn_id(t, &most, &least), PULSARC_OK);
    printf("[txn] transaction %llu:%llu\n", (unsigned long long)most, (unsigned long long)least);
    send_range(p, t, 0, 10, NULL);
    ck_assert_msg(recv_index(cons, 1000, NULL) < 0, "an uncommitted message was delivered");
    commit_ok(t);
    int seen[10] = {0};
    ck_assert_int_eq(drain(cons, seen, 10, 2000), 10);
    for (int i = 0; i < 10; i++)
        ck_assert_msg(seen[i] == 1, "msg-%d seen %d times", i, seen[i]);
    pulsarc_txn_destroy(t);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("committed seen exactly once");
}
END_TEST

START_TEST(test_aborted_never_seen) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-abort");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Exclusive");
    pulsarc_producer_t *p = producer(c, topic, 1);
    pulsarc_txn_t *t = txn_new(c, 30000);
    send_range(p, t, 0, 5, NULL);
    abort_ok(t);
    send_range(p, NULL, 5, 6, NULL); /* a plain message after the aborted ones */
    int seen[6] = {0};
    ck_assert_int_eq(drain(cons, seen, 6, 2000), 1);
    ck_assert_int_eq(seen[5], 1);
    /* A new subscription from the start sees the same: the aborted ones are gone. */
    pulsarc_consumer_t *late = consumer(c, topic, "late", "Exclusive");
    memset(seen, 0, sizeof seen);
    ck_assert_int_eq(drain(late, seen, 6, 2000), 1);
    ck_assert_int_eq(seen[5], 1);
    char err[256];
    pulsarc_msg_t *m = body(9);
    ck_assert_int_eq(pulsarc_producer_send_txn(p, t, m, NULL), PULSARC_ERR_STATE);
    ck_assert_int_eq(pulsarc_txn_commit(t, err, sizeof err), PULSARC_ERR_STATE);
    pulsarc_msg_destroy(m);
    pulsarc_txn_destroy(t);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(late);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("aborted never seen");
}
END_TEST

typedef struct async_count {
    int ok, failed;
} async_count_t;

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    async_count_t *n = opaque;
    (void)p, (void)id, (void)msg;
    __atomic_add_fetch(err ? &n->failed : &n->ok, 1, __ATOMIC_SEQ_CST);
}

START_TEST(test_commit_waits_for_async_sends) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-async");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Exclusive");
    pulsarc_producer_t *p = producer(c, topic, 1);
    pulsarc_txn_t *t = txn_new(c, 30000);
    async_count_t n = {0, 0};
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(pulsarc_producer_send_async_txn(p, t, body(i), on_sent, &n), PULSARC_OK);
    commit_ok(t); /* returns only after every send has its receipt */
    pulsarc_producer_flush(p, 10000);
    ck_assert_int_eq(__atomic_load_n(&n.failed, __ATOMIC_SEQ_CST), 0);
    int seen[50] = {0};
    ck_assert_int_eq(drain(cons, seen, 50, 2000), 50);
    for (int i = 0; i < 50; i++)
        ck_assert_msg(seen[i] == 1, "msg-%d seen %d times", i, seen[i]);
    pulsarc_txn_destroy(t);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("commit waits for async sends");
}
END_TEST

START_TEST(test_partitioned_topic) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-parts");
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", topic);
    int code = pct_admin("PUT", path, "3");
    ck_assert_msg(code == 204 || code == 200, "create partitioned topic: HTTP %d", code);
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Exclusive");
    pulsarc_producer_t *p = producer(c, topic, 0);
    pulsarc_txn_t *t = txn_new(c, 30000);
    send_range(p, t, 0, 9, NULL); /* round robin: every partition joins the transaction */
    ck_assert_msg(recv_index(cons, 1000, NULL) < 0, "an uncommitted message was delivered");
    commit_ok(t);
    int seen[9] = {0};
    ck_assert_int_eq(drain(cons, seen, 9, 2000), 9);
    pulsarc_txn_destroy(t);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("partitioned topic");
}
END_TEST

/* ---------- acks ---------- */

/* An ack in an aborted transaction leaves the message; one in a committed one takes it. */
START_TEST(test_ack_abort_redelivers) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-ack");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Shared");
    pulsarc_producer_t *p = producer(c, topic, 0);
    send_range(p, NULL, 0, 2, NULL);
    pulsarc_msgid_t id0, id1;
    ck_assert_int_eq(recv_index(cons, 5000, &id0), 0);
    ck_assert_int_eq(recv_index(cons, 5000, &id1), 1);
    pulsarc_txn_t *aborted = txn_new(c, 30000), *committed = txn_new(c, 30000);
    ck_assert_int_eq(pulsarc_consumer_ack_id_txn(cons, aborted, &id0), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_ack_id_txn(cons, committed, &id1), PULSARC_OK);
    abort_ok(aborted);
    commit_ok(committed);
    /* The broker hands the aborted ack's message back to this consumer. */
    pulsarc_msgid_t again;
    int i = recv_index(cons, 5000, &again);
    printf("[txn] aborted ack: redelivered %s\n", i == 0 ? "to the same consumer" : "on resubscribe");
    if (i < 0) { /* or at the latest to the next subscriber */
        pulsarc_consumer_destroy(cons);
        cons = consumer(c, topic, "s", "Shared");
        i = recv_index(cons, 5000, &again);
    }
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(pulsarc_consumer_ack_id(cons, &again), PULSARC_OK);
    ck_assert_msg(recv_index(cons, 1500, NULL) < 0, "the committed ack's message came back");
    pulsarc_txn_destroy(aborted);
    pulsarc_txn_destroy(committed);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("ack in aborted txn redelivers");
}
END_TEST

/* Many ids in one call: every ack joins, the lot commits, nothing comes back; a conflict is named. */
START_TEST(test_ack_many_ids) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-ack-many");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Shared");
    pulsarc_producer_t *p = producer(c, topic, 0);
    for (int i = 0; i < 60; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, body(i), NULL, NULL), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    pulsarc_msgid_t ids[60];
    for (int i = 0; i < 60; i++)
        ck_assert_int_eq(recv_index(cons, 5000, &ids[i]), i);
    pulsarc_txn_t *held = txn_new(c, 30000), *t = txn_new(c, 30000);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn(cons, held, &ids[59], 1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn(cons, t, ids, 59), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn(cons, t, &ids[59], 1),
                     PULSARC_ERR_BROKER_TXN_CONFLICT);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn(cons, t, ids, 0), PULSARC_OK);
    abort_ok(held);
    char err[256];
    /* The conflict doomed t: its commit aborts instead and says so. */
    ck_assert_int_eq(pulsarc_txn_commit(t, err, sizeof err), PULSARC_ERR_STATE);
    pulsarc_txn_destroy(t);
    t = txn_new(c, 30000);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn(cons, t, ids, 60), PULSARC_OK);
    commit_ok(t);
    pulsarc_consumer_destroy(cons);
    cons = consumer(c, topic, "s", "Shared");
    int back = recv_index(cons, 1500, NULL);
    ck_assert_msg(back < 0, "message %d came back after the commit", back);
    pulsarc_txn_destroy(held);
    pulsarc_txn_destroy(t);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("60 acks in one call");
}
END_TEST

START_TEST(test_cumulative_ack) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-cum");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Failover");
    pulsarc_producer_t *p = producer(c, topic, 0);
    send_range(p, NULL, 0, 6, NULL);
    pulsarc_msgid_t ids[6];
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(recv_index(cons, 5000, &ids[i]), i);
    pulsarc_txn_t *aborted = txn_new(c, 30000);
    ck_assert_int_eq(pulsarc_consumer_ack_cumulative_id_txn(cons, aborted, &ids[5]), PULSARC_OK);
    abort_ok(aborted);
    pulsarc_txn_t *committed = txn_new(c, 30000);
    ck_assert_int_eq(pulsarc_consumer_ack_cumulative_id_txn(cons, committed, &ids[3]), PULSARC_OK);
    commit_ok(committed);
    /* A fresh consumer starts after the committed position: msg-4 and msg-5 remain. */
    pulsarc_consumer_destroy(cons);
    cons = consumer(c, topic, "s", "Failover");
    int seen[6] = {0};
    ck_assert_int_eq(drain(cons, seen, 6, 2000), 2);
    ck_assert_int_eq(seen[4], 1);
    ck_assert_int_eq(seen[5], 1);
    pulsarc_txn_destroy(aborted);
    pulsarc_txn_destroy(committed);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("cumulative ack");
}
END_TEST

START_TEST(test_conflicting_acks) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-conflict");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Shared");
    pulsarc_producer_t *p = producer(c, topic, 0);
    send_range(p, NULL, 0, 1, NULL);
    pulsarc_msgid_t id;
    ck_assert_int_eq(recv_index(cons, 5000, &id), 0);
    pulsarc_txn_t *a = txn_new(c, 30000), *b = txn_new(c, 30000);
    ck_assert_int_eq(pulsarc_consumer_ack_id_txn(cons, a, &id), PULSARC_OK);
    pulsarc_err_t e = pulsarc_consumer_ack_id_txn(cons, b, &id);
    ck_assert_msg(e == PULSARC_ERR_BROKER_TXN_CONFLICT, "second ack: %s", pulsarc_errname(e));
    commit_ok(a);
    char err[256];
    e = pulsarc_txn_commit(b, err, sizeof err); /* its ack failed: it aborts instead */
    printf("[txn] commit after a conflict: %s (%s)\n", pulsarc_errname(e), err);
    ck_assert_int_eq(e, PULSARC_ERR_STATE);
    ck_assert_msg(recv_index(cons, 1500, NULL) < 0, "the acked message came back");
    pulsarc_txn_destroy(a);
    pulsarc_txn_destroy(b);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("two txns acking one message");
}
END_TEST

/* ---------- the broker's timeout, and a client without transactions ---------- */

START_TEST(test_open_txn_times_out) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-timeout");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Exclusive");
    pulsarc_producer_t *p = producer(c, topic, 0);
    pulsarc_txn_t *t = txn_new(c, 2000);
    send_range(p, t, 0, 3, NULL);
    sleep(5); /* past the 2 s timeout: the broker aborts it */
    send_range(p, NULL, 3, 4, NULL);
    int seen[4] = {0};
    ck_assert_int_eq(drain(cons, seen, 4, 2000), 1);
    ck_assert_int_eq(seen[3], 1);
    char err[256];
    pulsarc_err_t e = pulsarc_txn_commit(t, err, sizeof err);
    printf("[txn] commit after the timeout: %s (%s)\n", pulsarc_errname(e), err);
    ck_assert_msg(e == PULSARC_ERR_BROKER_INVALID_TXN_STATUS || e == PULSARC_ERR_BROKER_TXN_NOT_FOUND,
                  "commit after timeout: %s", pulsarc_errname(e));
    pulsarc_txn_destroy(t);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    TIMED_END("open txn times out");
}
END_TEST

START_TEST(test_disabled_by_default) {
    TIMED_START;
    pulsarc_client_t *c = pct_client();
    pulsarc_txn_t *t = NULL;
    char err[256];
    ck_assert_int_eq(pulsarc_txn_new(c, 1000, &t, err, sizeof err), PULSARC_ERR_STATE);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(err, "enableTransaction"));
    pulsarc_client_destroy(c);
    TIMED_END("disabled by default");
}
END_TEST

/* Destroying an open transaction aborts it; destroying the client first is safe. */
START_TEST(test_destroy_open_txn) {
    TIMED_START;
    pulsarc_client_t *c = txn_client();
    const char *topic = pct_topic("txn-destroy");
    pulsarc_consumer_t *cons = consumer(c, topic, "s", "Exclusive");
    pulsarc_producer_t *p = producer(c, topic, 0);
    pulsarc_txn_t *t = txn_new(c, 30000);
    send_range(p, t, 0, 2, NULL);
    pulsarc_txn_destroy(t);
    send_range(p, NULL, 2, 3, NULL);
    int seen[3] = {0};
    ck_assert_int_eq(drain(cons, seen, 3, 2000), 1);
    ck_assert_int_eq(seen[2], 1);
    pulsarc_txn_t *late = txn_new(c, 30000);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pulsarc_txn_destroy(late); /* the client is gone: only frees */
    TIMED_END("destroy open txn");
}
END_TEST

static Suite *txn_suite(void) {
    Suite *s = suite_create("live-txn");
    TCase *tc = tcase_create("txn");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_disabled_by_default);
    tcase_add_test(tc, test_committed_seen_exactly_once);
    tcase_add_test(tc, test_aborted_never_seen);
    tcase_add_test(tc, test_commit_waits_for_async_sends);
    tcase_add_test(tc, test_partitioned_topic);
    tcase_add_test(tc, test_ack_abort_redelivers);
    tcase_add_test(tc, test_ack_many_ids);
    tcase_add_test(tc, test_cumulative_ack);
    tcase_add_test(tc, test_conflicting_acks);
    tcase_add_test(tc, test_open_txn_times_out);
    tcase_add_test(tc, test_destroy_open_txn);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(txn_suite)
