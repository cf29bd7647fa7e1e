/*
 * Helpers shared by the producer's live tests (header-only: each test
 * program is one file). Counting send callbacks, subscribing before
 * producing, receiving N messages, and stalling a producer on purpose.
 */
#ifndef PC_PRODUCER_UTIL_H
#define PC_PRODUCER_UTIL_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* Outcomes of asynchronous sends, filled from the callback thread. */
typedef struct sent_log {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n, ok, failed, calls_for[4096];
    pulsarc_err_t last_err;
    pulsarc_msgid_t ids[4096];
    pulsarc_err_t errs[4096];
} sent_log_t;

static inline void sent_log_init(sent_log_t *l) {
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
}

/* opaque of each send: the log, with the message index in the property "i". */
static inline void on_sent_cb(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                       pulsarc_msg_t *msg, void *opaque) {
    (void)p;
    sent_log_t *l = opaque;
    const char *is = pulsarc_msg_property(msg, "i");
    int i = is ? atoi(is) : -1;
    pthread_mutex_lock(&l->lock);
    l->n++;
    if (err) {
        l->failed++;
        l->last_err = err;
    } else {
        l->ok++;
    }
    if (i >= 0 && i < 4096) {
        l->calls_for[i]++;
        l->errs[i] = err;
        if (id)
            l->ids[i] = *id;
    }
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

/* Waits until n callbacks ran (the test fails on the Check timeout otherwise). */
static inline void sent_log_wait(sent_log_t *l, int n) {
    pthread_mutex_lock(&l->lock);
    while (l->n < n)
        pthread_cond_wait(&l->cond, &l->lock);
    pthread_mutex_unlock(&l->lock);
}

/* As sent_log_wait, giving up after ms (a hang bound); 1 when n arrived. */
static inline int sent_log_wait_ms(sent_log_t *l, int n, int ms) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->lock);
    int rc = 0;
    while (l->n < n && rc == 0)
        rc = pthread_cond_timedwait(&l->cond, &l->lock, &until);
    int got = l->n >= n;
    pthread_mutex_unlock(&l->lock);
    return got;
}

static inline pulsarc_producer_t *make_producer(pulsarc_client_t *c, const char *topic,
                                                const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer on %s: %s", topic, err);
    return p;
}

static inline pulsarc_consumer_t *make_consumer(pulsarc_client_t *c, const char *topic,
                                                const char *type) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "subscriptionType", type, NULL};
    pulsarc_conf_t *cc = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "sub", cc, &cons, err, sizeof err);
    pulsarc_conf_destroy(cc);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s", topic, err);
    return cons;
}

static inline pulsarc_msg_t *receive_one(pulsarc_consumer_t *cons, int i) {
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, 20000);
    ck_assert_msg(e == PULSARC_OK, "receive #%d: %s", i, pulsarc_strerror(e));
    ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
    return m;
}

static inline void expect_no_more(pulsarc_consumer_t *cons) {
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, 1000);
    if (e == PULSARC_OK) {
        ck_abort_msg("unexpected extra message, sequence id %lld", (long long)pulsarc_msg_sequence_id(m));
    }
    ck_assert_int_eq(e, PULSARC_ERR_NO_MESSAGE);
}

/* "/admin/v2/persistent/<tenant>/<ns>/<local>" + suffix for a short or tenant/ns/local name. */
static inline const char *topic_path(const char *topic, const char *suffix) {
    static char buf[4][1024];
    static int slot;
    char *b = buf[slot++ % 4];
    if (strchr(topic, '/'))
        snprintf(b, 1024, "/admin/v2/persistent/%s%s", topic, suffix);
    else
        snprintf(b, 1024, "/admin/v2/persistent/public/default/%s%s", topic, suffix);
    return b;
}

/*
 * Makes the broker close the topic's producers (admin "unload"). A producer
 * whose client has a long initialBackoffIntervalMs then stays disconnected,
 * so what it sends stays pending: a deterministic stall, no timing games.
 */
static inline void unload_topic(const char *topic) {
    int code = pct_admin("PUT", topic_path(topic, "/unload"), NULL);
    ck_assert_msg(code == 204 || code == 200, "unload %s: HTTP %d", topic, code);
}

static inline void send_text(pulsarc_producer_t *p, const char *text) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY);
    pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
    pulsarc_msg_destroy(m);
    ck_assert_msg(e == PULSARC_OK, "send '%s': %s", text, pulsarc_strerror(e));
}

/* A client that waits backoff_ms between reconnects; k = v is one more setting (a NULL k: none). */
static inline pulsarc_client_t *backoff_client(const char *backoff_ms, const char *k, const char *v) {
    const char *kv[] = {"initialBackoffIntervalMs", backoff_ms, "maxBackoffIntervalMs", backoff_ms,
                        k, v, NULL};
    return pct_client_with(kv); /* a NULL k ends the list early */
}

/* A producer that is connected once, then cut off for as long as its client's backoff. */
static inline pulsarc_producer_t *stalled_producer(pulsarc_client_t *c, const char *topic,
                                                   const char *const *kv) {
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    send_text(p, "before the stall");
    unload_topic(topic);
    return p;
}

/* A message of len zero bytes carrying its number in property "i". */
static inline pulsarc_msg_t *msg_i(int i, size_t len) {
    char v[16], *buf = calloc(1, len + 1);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, buf, len, PULSARC_MSG_F_FREE);
    snprintf(v, sizeof v, "%d", i);
    pulsarc_msg_set_property(m, "i", v);
    return m;
}
#endif
