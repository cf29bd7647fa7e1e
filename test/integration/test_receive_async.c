/*
 * Live-broker tests of pulsarc_consumer_receive_async and of the line of
 * waiting receivers behind every receive: messages reach pending receives
 * (sync or async) one each, oldest first; closing completes each pending
 * one once with PULSARC_ERR_CLOSED (before close returns when the client
 * has a callback thread), and one asked for once the consumer is closing
 * is refused at once, so a callback that always asks again cannot keep
 * close waiting; a callback may ask for the next message; the
 * zero-queue consumer asks the broker for exactly one message per pending
 * receive; a multi-topic consumer serves them from all its members; end
 * of topic completes pending ones; a listener refuses them; interceptors'
 * before_consume runs for them; a timed receive racing arrivals loses
 * nothing. Runs in loop mode too
 * (PULSARC_TEST_LOOP_MODE=1), where callbacks run in the driver's step.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/consumer/consumer_int.h"
#include "testutil.h"

#define SLOTS 64
#define HANG_MS 30000 /* a bound on waiting for callbacks, not a timing assertion */

/* What the callbacks saw, in the order they ran. */
typedef struct seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n;
    int slot[SLOTS];          /* which receive_async (opaque's slot) each call answered */
    int index[SLOTS];         /* the "<tag>-<i>" of its message, -1 without one */
    pulsarc_err_t err[SLOTS];
    int calls[SLOTS];         /* calls per slot */
    int rearm_until;          /* from_callback: ask again until this many messages */
    pulsarc_consumer_t *rearm_on;
    int ack;                  /* ack what arrives */
} seen_t;

typedef struct ticket {
    seen_t *seen;
    int slot;
} ticket_t;

static ticket_t tickets[SLOTS];

static void seen_init(seen_t *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    for (int i = 0; i < SLOTS; i++)
        tickets[i] = (ticket_t){s, i};
}

static void seen_free(seen_t *s) {
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
}

/* i of a "<tag>-<i>" payload, or -1. */
static int body_index(const pulsarc_msg_t *m) {
    char body[64];
    size_t len = pulsarc_msg_len(m) < sizeof body - 1 ? pulsarc_msg_len(m) : sizeof body - 1;
    memcpy(body, pulsarc_msg_payload(m), len);
    body[len] = '\0';
    const char *dash = strrchr(body, '-');
    return dash ? atoi(dash + 1) : -1;
}

static void on_receive(pulsarc_consumer_t *c, pulsarc_err_t err, pulsarc_msg_t *m, void *opaque) {
    ticket_t *t = opaque;
    seen_t *s = t->seen;
    if (err)
        ck_assert_ptr_null(m);
    else
        ck_assert_ptr_nonnull(m);
    if (m && s->ack) /* set before the first receive: read without the lock */
        ck_assert_int_eq(pulsarc_consumer_ack(c, m), PULSARC_OK);
    pthread_mutex_lock(&s->lock);
    int k = s->n++;
    ck_assert_int_lt(k, SLOTS);
    s->slot[k] = t->slot;
    s->index[k] = m ? body_index(m) : -1;
    s->err[k] = err;
    s->calls[t->slot]++;
    int again = s->rearm_on == c && !err && s->n < s->rearm_until;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pulsarc_msg_destroy(m);
    if (again) /* the next receive from inside this callback */
        ck_assert_int_eq(pulsarc_consumer_receive_async(c, on_receive, &tickets[k + 1]), PULSARC_OK);
}

/* Waits (bounded) until n callbacks ran; returns how many did. */
static int await_calls(seen_t *s, int n) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += HANG_MS / 1000;
    pthread_mutex_lock(&s->lock);
    while (s->n < n && pthread_cond_timedwait(&s->cond, &s->lock, &dl) == 0)
        ;
    int got = s->n;
    pthread_mutex_unlock(&s->lock);
    return got;
}

static int calls_now(seen_t *s) {
    pthread_mutex_lock(&s->lock);
    int n = s->n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static pulsarc_consumer_t *consumer_kv(pulsarc_client_t *c, const char *topic, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "ra", conf, &cons, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    pulsarc_conf_destroy(conf);
    return cons;
}

static pulsarc_consumer_t *plain_consumer(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {NULL};
    return consumer_kv(c, topic, kv);
}

/* Receivers waiting in c's line now (white box: the test's view of the line). */
static int line_length(pulsarc_consumer_t *c) {
    int n = 0;
    pthread_mutex_lock(&c->lock);
    for (pc_op_t *op = c->receivers.head; op; op = op->qnext)
        n++;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* Waits (bounded, polling) until c's line holds n receivers. */
/* Each of the first n calls got message k for receive k, in that order. */
static void assert_in_order(const seen_t *s, int n) {
    for (int k = 0; k < n; k++) {
        ck_assert_int_eq(s->err[k], PULSARC_OK);
        ck_assert_int_eq(s->slot[k], k);
        ck_assert_int_eq(s->index[k], k);
    }
}

static void finish(pulsarc_consumer_t *cons, pulsarc_client_t *c, seen_t *s) {
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    seen_free(s);
}

static void await_line(pulsarc_consumer_t *c, int n) {
    for (int i = 0; i < HANG_MS / 5 && line_length(c) != n; i++)
        usleep(5000);
    ck_assert_int_eq(line_length(c), n);
}

START_TEST(test_async_in_order) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-order");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    pct_send_tagged(c, topic, "m", 20);
    seen_t s;
    seen_init(&s);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    ck_assert_int_eq(await_calls(&s, 20), 20);
    assert_in_order(&s, 20);
    finish(cons, c, &s);
}
END_TEST

START_TEST(test_pending_complete_in_arrival_order) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-pending");
    /* A small queue: the later messages come only if handed-over ones returned their permits. */
    const char *kv[] = {"receiverQueueSize", "4", NULL};
    pulsarc_consumer_t *cons = consumer_kv(c, topic, kv);
    seen_t s;
    seen_init(&s);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    ck_assert_int_eq(line_length(cons), 10); /* nothing sent yet: all wait in line */
    ck_assert_int_eq(calls_now(&s), 0);
    pct_send_tagged(c, topic, "m", 10);
    ck_assert_int_eq(await_calls(&s, 10), 10);
    assert_in_order(&s, 10); /* oldest receive first */
    ck_assert_int_eq(line_length(cons), 0);
    finish(cons, c, &s);
}
END_TEST

typedef struct sync_recv {
    pulsarc_consumer_t *cons;
    int timeout_ms;
    pulsarc_err_t err;
    int index;
} sync_recv_t;

static void *sync_receive(void *arg) {
    sync_recv_t *r = arg;
    pulsarc_msg_t *m = NULL;
    r->err = pulsarc_consumer_receive(r->cons, &m, r->timeout_ms);
    r->index = m ? body_index(m) : -1;
    pulsarc_msg_destroy(m);
    return NULL;
}

START_TEST(test_mixed_with_sync_receive) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-mixed");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    seen_t s;
    seen_init(&s);
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[0]), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[1]), PULSARC_OK);
    sync_recv_t r = {.cons = cons, .timeout_ms = HANG_MS};
    pthread_t th;
    pthread_create(&th, NULL, sync_receive, &r);
    await_line(cons, 3); /* the sync receive waits third */
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[2]), PULSARC_OK);
    pct_send_tagged(c, topic, "m", 4);
    pthread_join(th, NULL);
    ck_assert_int_eq(r.err, PULSARC_OK);
    ck_assert_int_eq(r.index, 2);
    ck_assert_int_eq(await_calls(&s, 3), 3);
    int want_index[3] = {0, 1, 3};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(s.slot[k], k);
        ck_assert_int_eq(s.index[k], want_index[k]);
    }
    finish(cons, c, &s);
}
END_TEST

START_TEST(test_close_completes_pending) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-close");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    seen_t s;
    seen_init(&s);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    /* A sync receive waiting in the same line ends too. */
    sync_recv_t r = {.cons = cons, .timeout_ms = -1};
    pthread_t th;
    pthread_create(&th, NULL, sync_receive, &r);
    await_line(cons, 6);
    ck_assert_int_eq(pulsarc_consumer_close(cons), PULSARC_OK);
    if (!pct_loop_mode()) /* a callback thread: all ran before close returned */
        ck_assert_int_eq(calls_now(&s), 5);
    ck_assert_int_eq(await_calls(&s, 5), 5);
    pthread_join(th, NULL);
    ck_assert_int_eq(r.err, PULSARC_ERR_CLOSED);
    /* After close: refused at once with CLOSED, no callback. */
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[5]), PULSARC_ERR_CLOSED);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c); /* runs whatever was still queued: nothing must be */
    ck_assert_int_eq(s.n, 5);
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq(s.err[k], PULSARC_ERR_CLOSED);
        ck_assert_int_eq(s.calls[k], 1);
    }
    seen_free(&s);
}
END_TEST

/*
 * A callback that asks again whatever it got, CLOSED included: the ask
 * made once the consumer is closing is refused at once (CLOSED returned,
 * no callback), so close, which waits for the callbacks it completed,
 * returns. Without that each callback would owe the next one and close
 * would wait for ever; the hang bound turns that into a failure.
 */
typedef struct rearm {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int callbacks;            /* callbacks run */
    int refused;              /* re-arms answered CLOSED by the call itself */
    int closed;               /* the closer thread's close returned */
} rearm_t;

static void rearm_always(pulsarc_consumer_t *c, pulsarc_err_t err, pulsarc_msg_t *m, void *opaque) {
    rearm_t *r = opaque;
    (void)err;
    pulsarc_msg_destroy(m);
    pulsarc_err_t again = pulsarc_consumer_receive_async(c, rearm_always, r);
    ck_assert(again == PULSARC_OK || again == PULSARC_ERR_CLOSED);
    pthread_mutex_lock(&r->lock);
    r->callbacks++;
    r->refused += again == PULSARC_ERR_CLOSED;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Waits (bounded) until *field, one of r's counters, reaches n; returns it. */
static int rearm_wait(rearm_t *r, const int *field, int n) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += HANG_MS / 1000;
    pthread_mutex_lock(&r->lock);
    while (*field < n && pthread_cond_timedwait(&r->cond, &r->lock, &dl) == 0)
        ;
    int got = *field;
    pthread_mutex_unlock(&r->lock);
    return got;
}

static void *close_consumer(void *arg) {
    void **a = arg;
    rearm_t *r = a[1];
    ck_assert_int_eq(pulsarc_consumer_close(a[0]), PULSARC_OK);
    pthread_mutex_lock(&r->lock);
    r->closed = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

START_TEST(test_close_with_callback_that_always_rearms) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-rearm");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    rearm_t r = {.callbacks = 0};
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.cond, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, rearm_always, &r), PULSARC_OK);
    pct_send_tagged(c, topic, "m", 5); /* callbacks run and re-arm before the close */
    ck_assert_int_eq(rearm_wait(&r, &r.callbacks, 5), 5);
    void *args[2] = {cons, &r};
    pthread_t th; /* close on a thread of its own: a close that never returns fails the bound */
    pthread_create(&th, NULL, close_consumer, args);
    ck_assert_msg(rearm_wait(&r, &r.closed, 1) == 1,
                  "close did not return within %d ms: it waits behind re-armed callbacks", HANG_MS);
    pthread_join(th, NULL);
    /* The 3 receives in line at the close got CLOSED, and each re-arm was refused. */
    ck_assert_int_eq(rearm_wait(&r, &r.refused, 3), 3);
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, rearm_always, &r), PULSARC_ERR_CLOSED);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    ck_assert_int_eq(r.callbacks, 8);
    ck_assert_int_eq(r.refused, 3);
    pthread_mutex_destroy(&r.lock);
    pthread_cond_destroy(&r.cond);
}
END_TEST

START_TEST(test_receive_async_from_callback) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-chain");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    seen_t s;
    seen_init(&s);
    s.rearm_on = cons;
    s.rearm_until = 30;
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[0]), PULSARC_OK);
    pct_send_tagged(c, topic, "m", 30);
    ck_assert_int_eq(await_calls(&s, 30), 30);
    assert_in_order(&s, 30);
    finish(cons, c, &s);
}
END_TEST

START_TEST(test_zero_queue_asks_one_per_receive) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-zq");
    const char *kv[] = {"receiverQueueSize", "0", NULL};
    pulsarc_consumer_t *cons = consumer_kv(c, topic, kv);
    pct_send_tagged(c, topic, "m", 8);
    seen_t s;
    seen_init(&s);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    ck_assert_int_eq(await_calls(&s, 3), 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(s.err[k], PULSARC_OK);
        ck_assert_int_eq(s.index[k], k);
    }
    /* Three receives, three permits: nothing more came. */
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 3);
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    ck_assert_uint_eq(st.received, 3);
    sync_recv_t r = {.cons = cons, .timeout_ms = -1};
    sync_receive(&r);
    ck_assert_int_eq(r.err, PULSARC_OK);
    ck_assert_int_eq(r.index, 3);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 4);
    /* Async after sync: the next one, for one more permit. */
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[3]), PULSARC_OK);
    ck_assert_int_eq(await_calls(&s, 4), 4);
    ck_assert_int_eq(s.index[3], 4);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), 5);
    finish(cons, c, &s);
}
END_TEST

START_TEST(test_multi_topic_serves_pending) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-parts");
    pct_create_partitioned(topic, 3);
    const char *kv[] = {"receiverQueueSize", "4", NULL}; /* members need their permits back */
    pulsarc_consumer_t *cons = consumer_kv(c, topic, kv);
    seen_t s;
    seen_init(&s);
    for (int i = 0; i < 30; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    for (int p = 0; p < 3; p++) {
        char name[512];
        snprintf(name, sizeof name, "%s-partition-%d", topic, p);
        char tag[8];
        snprintf(tag, sizeof tag, "p%d", p);
        pct_send_tagged(c, name, tag, 10);
    }
    ck_assert_int_eq(await_calls(&s, 30), 30);
    int times[10] = {0}; /* each index once per partition */
    for (int k = 0; k < 30; k++) {
        ck_assert_int_eq(s.err[k], PULSARC_OK);
        ck_assert_int_eq(s.slot[k], k);
        ck_assert(s.index[k] >= 0 && s.index[k] < 10);
        times[s.index[k]]++;
    }
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(times[i], 3);
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    ck_assert_uint_eq(st.delivered, 30);
    ck_assert_int_eq(line_length(cons), 0);
    finish(cons, c, &s);
}
END_TEST

START_TEST(test_end_of_topic_completes_pending) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-eot");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    pct_send_tagged(c, topic, "m", 2);
    seen_t s;
    seen_init(&s);
    s.ack = 1; /* the broker tells the end only once everything is acknowledged */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    ck_assert_int_eq(await_calls(&s, 2), 2);
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/terminate", topic);
    int code = pct_admin("POST", path, NULL);
    ck_assert_msg(code == 200 || code == 204, "terminate: HTTP %d", code);
    ck_assert_int_eq(await_calls(&s, 4), 4);
    ck_assert_int_eq(s.index[0], 0);
    ck_assert_int_eq(s.index[1], 1);
    ck_assert_int_eq(s.err[2], PULSARC_ERR_END_OF_TOPIC);
    ck_assert_int_eq(s.err[3], PULSARC_ERR_END_OF_TOPIC);
    /* and any later one at once */
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[4]), PULSARC_OK);
    ck_assert_int_eq(await_calls(&s, 5), 5);
    ck_assert_int_eq(s.err[4], PULSARC_ERR_END_OF_TOPIC);
    finish(cons, c, &s);
}
END_TEST

static void listener_unused(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    (void)c;
    (void)opaque;
    pulsarc_msg_destroy(m);
}

START_TEST(test_refused_with_listener) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-listener");
    pulsarc_conf_t *conf = pct_conf((const char *const[]){NULL});
    pulsarc_conf_set_message_listener(conf, listener_unused, NULL);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "ra", conf, &cons, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    pulsarc_conf_destroy(conf);
    seen_t s;
    seen_init(&s);
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[0]), PULSARC_OK);
    ck_assert_int_eq(await_calls(&s, 1), 1);
    ck_assert_int_eq(s.err[0], PULSARC_ERR_STATE);
    ck_assert_int_eq(pulsarc_consumer_receive_async(NULL, on_receive, &tickets[1]), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_consumer_receive_async(cons, NULL, NULL), PULSARC_ERR_INVALID_ARG);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    ck_assert_int_eq(s.n, 1);
    seen_free(&s);
}
END_TEST

/* An interceptor that replaces each message "m-<i>" by a copy "seen-<i + 100>" and counts them. */
static pulsarc_msg_t *rename_on_consume(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    (void)c;
    int *count = opaque;
    (*count)++; /* one receiving thread at a time: the callback thread */
    char body[64];
    snprintf(body, sizeof body, "seen-%d", body_index(m) + 100);
    pulsarc_msg_t *copy = pulsarc_msg_clone(m);
    ck_assert_ptr_nonnull(copy);
    pulsarc_msg_set_payload(copy, body, strlen(body), PULSARC_MSG_F_COPY);
    pulsarc_msg_destroy(m);
    return copy;
}

START_TEST(test_before_consume_runs) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-icpt");
    int count = 0;
    pulsarc_consumer_interceptor_t icpt = {.before_consume = rename_on_consume, .opaque = &count};
    pulsarc_conf_t *conf = pct_conf((const char *const[]){NULL});
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(conf, &icpt), PULSARC_OK);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "ra", conf, &cons, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    pulsarc_conf_destroy(conf);
    seen_t s;
    seen_init(&s);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_consumer_receive_async(cons, on_receive, &tickets[i]), PULSARC_OK);
    pct_send_tagged(c, topic, "m", 3);
    ck_assert_int_eq(await_calls(&s, 3), 3);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(s.index[k], k + 100); /* the interceptor's copy reached the callback */
    pulsarc_consumer_destroy(cons);
    ck_assert_int_eq(count, 3);
    pulsarc_client_destroy(c);
    seen_free(&s);
}
END_TEST

/* ---------- timed receives racing arrivals ---------- */

typedef struct sender {
    pulsarc_client_t *c;
    const char *topic;
    int n;
} sender_t;

/* Sends "m-<i>" one by one with short pauses, so arrivals meet receives timing out. */
static void *send_spaced(void *arg) {
    sender_t *sd = arg;
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(sd->c, sd->topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    pulsarc_conf_destroy(conf);
    uint64_t rnd = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < sd->n; i++) {
        char body[32];
        snprintf(body, sizeof body, "m-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
        usleep((useconds_t)(pct_xorshift(&rnd) % 3000));
    }
    pulsarc_producer_destroy(p);
    return NULL;
}

START_TEST(test_timed_receive_racing_arrivals) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("ra-race");
    pulsarc_consumer_t *cons = plain_consumer(c, topic);
    sender_t sd = {c, topic, 400};
    pthread_t th;
    pthread_create(&th, NULL, send_spaced, &sd);
    uint64_t rnd = 12345;
    int next = 0, timeouts = 0;
    for (int round = 0; next < sd.n && round < 200000; round++) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t err = pulsarc_consumer_receive(cons, &m, (int)(pct_xorshift(&rnd) % 3));
        if (err == PULSARC_ERR_NO_MESSAGE) {
            timeouts++;
            continue;
        }
        ck_assert_int_eq(err, PULSARC_OK);
        ck_assert_int_eq(body_index(m), next); /* none lost, none twice */
        next++;
        pulsarc_msg_destroy(m);
    }
    pthread_join(th, NULL);
    ck_assert_int_eq(next, sd.n);
    ck_assert_int_eq(line_length(cons), 0); /* every timed-out receiver left the line */
    printf("timed receive race: %d messages, %d receives timed out\n", sd.n, timeouts);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *receive_async_suite(void) {
    Suite *s = suite_create("live-receive-async");
    TCase *tc = tcase_create("receive-async");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_async_in_order);
    tcase_add_test(tc, test_pending_complete_in_arrival_order);
    tcase_add_test(tc, test_mixed_with_sync_receive);
    tcase_add_test(tc, test_close_completes_pending);
    tcase_add_test(tc, test_receive_async_from_callback);
    tcase_add_test(tc, test_close_with_callback_that_always_rearms);
    tcase_add_test(tc, test_zero_queue_asks_one_per_receive);
    tcase_add_test(tc, test_multi_topic_serves_pending);
    tcase_add_test(tc, test_end_of_topic_completes_pending);
    tcase_add_test(tc, test_refused_with_listener);
    tcase_add_test(tc, test_before_consume_runs);
    tcase_add_test(tc, test_timed_receive_racing_arrivals);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(receive_async_suite)
