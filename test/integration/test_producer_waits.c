/*
 * Live-broker tests of what a producer's caller waits on: senders blocked
 * on a full pending queue are served first come, first served; close while
 * senders block (for a pending slot or for the client's memory budget)
 * gives each of them CLOSED exactly once; flush_async calls back once,
 * after the callbacks of the messages sent before it (one topic and a
 * partitioned one, and at once on an idle producer), and close returns only
 * after the callback of a flush still waiting; flush_async after the
 * client closed is refused with CLOSED; and a close started
 * from inside a send callback finishes without deadlock.
 *
 * Sends are kept pending by unloading the topic while the client's
 * reconnect backoff is long (see test_producer_errors.c): deterministic,
 * no timing games. The tests watch the wait lines (internal counters) to
 * know a sender is in line before the next step.
 */
#include <stdlib.h>

#include "client/client_int.h"
#include "client/producer/producer_int.h"
#include "producer_util.h"

/* A sender thread: one send_async, its return value kept. */
typedef struct sender {
    pulsarc_producer_t *p;
    sent_log_t *log;
    int i;
    size_t len;
    pulsarc_err_t ret;
    pthread_t t;
} sender_t;

static void *sender_main(void *arg) {
    sender_t *s = arg;
    s->ret = pulsarc_producer_send_async(s->p, msg_i(s->i, s->len), on_sent_cb, s->log);
    return NULL;
}

static void start_sender(sender_t *s, pulsarc_producer_t *p, sent_log_t *log, int i, size_t len) {
    s->p = p;
    s->log = log;
    s->i = i;
    s->len = len;
    s->ret = PULSARC_ERR_STATE;
    ck_assert_int_eq(pthread_create(&s->t, NULL, sender_main, s), 0);
}

/* Until k senders wait for a slot (bounded: a hang fails the test). */
static void await_slot_waiters(pulsarc_producer_t *p, int k) {
    for (int i = 0; i < 40000 && pc_topic_producer_slot_waiters(p) != k; i++)
        usleep(500);
    ck_assert_int_eq(pc_topic_producer_slot_waiters(p), k);
}

static void await_mem_waiters(pulsarc_client_t *c, int k) {
    for (int i = 0; i < 40000 && pc_memlimit_waiting(&c->memlimit) != k; i++)
        usleep(500);
    ck_assert_int_eq(pc_memlimit_waiting(&c->memlimit), k);
}


/*
 * maxPendingMessages=1 and the producer cut off until its reconnect (4 s):
 * A then B block; the resend of the pending message frees the slot for A,
 * A's receipt frees it for B. The broker's entry ids show the order.
 */
START_TEST(test_blocked_senders_served_in_order) {
    pulsarc_client_t *c = backoff_client("4000", NULL, NULL);
    const char *topic = pct_topic("slot-order");
    const char *kv[] = {"maxPendingMessages", "1", "blockIfQueueFull", "true", "sendTimeoutMs", "0",
                        "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = stalled_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(0, 10), on_sent_cb, &log), PULSARC_OK);
    sender_t a, b;
    start_sender(&a, p, &log, 1, 10);
    await_slot_waiters(p, 1);
    start_sender(&b, p, &log, 2, 10);
    await_slot_waiters(p, 2);
    pthread_join(a.t, NULL);
    pthread_join(b.t, NULL);
    ck_assert_int_eq(a.ret, PULSARC_OK);
    ck_assert_int_eq(b.ret, PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_flush(p, -1), PULSARC_OK);
    sent_log_wait(&log, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(log.calls_for[i], 1);
        ck_assert_int_eq(log.errs[i], PULSARC_OK);
    }
    ck_assert_int_eq(log.ids[1].ledger_id, log.ids[2].ledger_id);
    ck_assert_int_lt(log.ids[0].entry_id, log.ids[1].entry_id);
    ck_assert_int_lt(log.ids[1].entry_id, log.ids[2].entry_id);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* Close with two senders waiting for a slot: each gets CLOSED once. */
START_TEST(test_close_fails_slot_waiters) {
    pulsarc_client_t *c = backoff_client("60000", NULL, NULL);
    const char *topic = pct_topic("slot-close");
    const char *kv[] = {"maxPendingMessages", "1", "blockIfQueueFull", "true", "sendTimeoutMs", "0",
                        "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = stalled_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(0, 10), on_sent_cb, &log), PULSARC_OK);
    sender_t a, b;
    start_sender(&a, p, &log, 1, 10);
    start_sender(&b, p, &log, 2, 10);
    await_slot_waiters(p, 2);
    ck_assert_int_eq(pulsarc_producer_close(p), PULSARC_OK);
    pthread_join(a.t, NULL);
    pthread_join(b.t, NULL);
    ck_assert_int_eq(a.ret, PULSARC_ERR_CLOSED);
    ck_assert_int_eq(b.ret, PULSARC_ERR_CLOSED);
    sent_log_wait(&log, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(log.calls_for[i], 1);
        ck_assert_int_eq(log.errs[i], PULSARC_ERR_CLOSED);
    }
    ck_assert_int_eq(log.n, 3);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* Close with a sender waiting for the client's memory budget: CLOSED once,
 * and its wait does not hold back another producer's sender behind it. */
START_TEST(test_close_fails_memory_waiters) {
    pulsarc_client_t *c = backoff_client("60000", "memoryLimitBytes", "1000");
    const char *t1 = pct_topic("mem-close-a"), *t2 = pct_topic("mem-close-b");
    const char *kv[] = {"batchingEnabled", "false", "sendTimeoutMs", "0", "blockIfQueueFull", "true",
                        NULL};
    pulsarc_producer_t *p1 = stalled_producer(c, t1, kv), *p2 = stalled_producer(c, t2, kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p1, msg_i(0, 900), on_sent_cb, &log), PULSARC_OK);
    sender_t a, b;
    start_sender(&a, p1, &log, 1, 500);
    await_mem_waiters(c, 1);
    start_sender(&b, p2, &log, 2, 50); /* would fit, but waits behind a */
    await_mem_waiters(c, 2);
    pulsarc_producer_close(p1); /* fails a's wait, then frees its 900 bytes */
    pthread_join(a.t, NULL);
    pthread_join(b.t, NULL);
    ck_assert_int_eq(a.ret, PULSARC_ERR_CLOSED);
    ck_assert_int_eq(b.ret, PULSARC_OK);
    sent_log_wait(&log, 2);
    ck_assert_int_eq(log.calls_for[0], 1);
    ck_assert_int_eq(log.errs[0], PULSARC_ERR_CLOSED);
    ck_assert_int_eq(log.calls_for[1], 1);
    ck_assert_int_eq(log.errs[1], PULSARC_ERR_CLOSED);
    pulsarc_producer_close(p2);
    sent_log_wait(&log, 3);
    ck_assert_int_eq(log.calls_for[2], 1);
    ck_assert_int_eq(pc_memlimit_used(&c->memlimit), 0);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    pulsarc_client_destroy(c);
}
END_TEST

/* What a flush callback saw: how many send callbacks had run by then. */
typedef struct flush_seen {
    sent_log_t *log;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls, sends_done;
    pulsarc_err_t err;
    pulsarc_producer_t *producer;
} flush_seen_t;

static void on_flushed(pulsarc_producer_t *p, pulsarc_err_t err, void *opaque) {
    flush_seen_t *f = opaque;
    pthread_mutex_lock(&f->log->lock);
    int done = f->log->n;
    pthread_mutex_unlock(&f->log->lock);
    pthread_mutex_lock(&f->lock);
    f->calls++;
    f->sends_done = done;
    f->err = err;
    f->producer = p;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

static void flush_seen_init(flush_seen_t *f, sent_log_t *log) {
    memset(f, 0, sizeof *f);
    f->log = log;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
}

static void flush_seen_wait(flush_seen_t *f) {
    pthread_mutex_lock(&f->lock);
    while (f->calls == 0)
        pthread_cond_wait(&f->cond, &f->lock);
    pthread_mutex_unlock(&f->lock);
}

#define N_FLUSH 300

/* _i: 0 one topic, 1 a topic of 3 partitions. Batches wait 10 s unless flushed. */
START_TEST(test_flush_async_after_receipts) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic(_i ? "flush-async-parts" : "flush-async");
    if (_i)
        pct_create_partitioned(topic, 3);
    const char *kv[] = {"batchingMaxPublishDelayMicros", "10000000", "batchingMaxMessages", "1000",
                        NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    flush_seen_t idle;
    flush_seen_init(&idle, &log);
    ck_assert_int_eq(pulsarc_producer_flush_async(p, on_flushed, &idle), PULSARC_OK);
    flush_seen_wait(&idle); /* nothing pending: called back at once */
    ck_assert_int_eq(idle.err, PULSARC_OK);
    ck_assert_ptr_eq(idle.producer, p);
    for (int i = 0; i < N_FLUSH; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(i, 20), on_sent_cb, &log), PULSARC_OK);
    flush_seen_t f;
    flush_seen_init(&f, &log);
    ck_assert_int_eq(pulsarc_producer_flush_async(p, on_flushed, &f), PULSARC_OK);
    flush_seen_wait(&f);
    ck_assert_int_eq(f.err, PULSARC_OK);
    ck_assert_int_eq(f.sends_done, N_FLUSH); /* every send's callback ran first */
    ck_assert_int_eq(log.ok, N_FLUSH);
    pulsarc_producer_close(p);
    ck_assert_int_eq(f.calls, 1);
    ck_assert_int_eq(idle.calls, 1);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* Close with a flush_async waiting on stalled sends: the sends fail with
 * CLOSED, and close returns only after the flush's callback has run. */
START_TEST(test_close_runs_flush_callback) {
    pulsarc_client_t *c = backoff_client("60000", NULL, NULL);
    const char *topic = pct_topic("flush-close");
    const char *kv[] = {"batchingEnabled", "false", "sendTimeoutMs", "0", NULL};
    pulsarc_producer_t *p = stalled_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(i, 10), on_sent_cb, &log), PULSARC_OK);
    flush_seen_t f;
    flush_seen_init(&f, &log);
    ck_assert_int_eq(pulsarc_producer_flush_async(p, on_flushed, &f), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_close(p), PULSARC_OK);
    if (!pct_loop_mode()) { /* with a callback thread: already run, no wait here */
        ck_assert_int_eq(f.calls, 1);
        ck_assert_int_eq(f.sends_done, 3);
    }
    sent_log_wait(&log, 3);
    flush_seen_wait(&f);
    ck_assert_int_eq(f.err, PULSARC_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(log.errs[i], PULSARC_ERR_CLOSED);
    pulsarc_producer_destroy(p);
    ck_assert_int_eq(f.calls, 1);
    pulsarc_client_destroy(c);
}
END_TEST

/* After the client closed, its callback queue is gone: flush_async refuses
 * (CLOSED, cb never called) instead of promising a callback nothing could
 * run, which destroy would then wait for. */
START_TEST(test_flush_async_after_client_close) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, pct_topic("flush-after-client-close"), kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(0, 10), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    sent_log_wait(&log, 1); /* the close gave the send its outcome */
    flush_seen_t f;
    flush_seen_init(&f, &log);
    ck_assert_int_eq(pulsarc_producer_flush_async(p, on_flushed, &f), PULSARC_ERR_CLOSED);
    pulsarc_producer_destroy(p); /* waits for no flush callback */
    ck_assert_int_eq(f.calls, 0);
    pulsarc_client_destroy(c);
}
END_TEST

/* A send callback that closes its producer (there close only starts). */
typedef struct closer {
    sent_log_t log;
    pulsarc_err_t close_ret;
    int closes;
} closer_t;

static void close_in_callback(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                              pulsarc_msg_t *msg, void *opaque) {
    closer_t *cl = opaque;
    if (cl->closes++ == 0)
        cl->close_ret = pulsarc_producer_close(p);
    on_sent_cb(p, err, id, msg, &cl->log);
}

START_TEST(test_close_from_send_callback) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, pct_topic("close-in-cb"), kv);
    closer_t cl;
    memset(&cl, 0, sizeof cl);
    sent_log_init(&cl.log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(0, 10), close_in_callback, &cl),
                     PULSARC_OK);
    if (pct_loop_mode()) /* the callback runs when this thread turns the client */
        ck_assert_int_eq(pulsarc_producer_flush(p, -1), PULSARC_OK);
    sent_log_wait(&cl.log, 1);
    ck_assert_int_eq(cl.log.errs[0], PULSARC_OK);
    ck_assert_int_eq(cl.close_ret, PULSARC_OK);
    pulsarc_producer_close(p); /* waits for the close the callback started */
    pulsarc_msg_t *m = msg_i(1, 10);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_CLOSED);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(cl.closes, 1);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-waits");
    TCase *t = tcase_create("waits");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_blocked_senders_served_in_order);
    tcase_add_test(t, test_close_fails_slot_waiters);
    tcase_add_test(t, test_close_fails_memory_waiters);
    tcase_add_loop_test(t, test_flush_async_after_receipts, 0, 2);
    tcase_add_test(t, test_close_runs_flush_callback);
    tcase_add_test(t, test_flush_async_after_client_close);
    tcase_add_test(t, test_close_from_send_callback);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
