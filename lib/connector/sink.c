/*
 * Design notes: the sink's write path and its checkpoints.
 *
 * A sink owns one client (so a close can join every callback it caused)
 * and one producer per partition-list entry or router-chosen topic, opened
 * on first use and kept until close.
 *
 * Accounting. Every message handed to a producer counts as pending until
 * its send callback runs on the client's callback thread; the callback is
 * the only writer of acked / failed and of the first send error, all under
 * sk->lock, and signals sk->cond when pending drops. The application thread
 * reads them under the same lock. That one counter is what both
 * AT_LEAST_ONCE ("the checkpoint returns once everything before it is
 * acknowledged") and EXACTLY_ONCE ("the transaction holds every message
 * before the checkpoint") wait on.
 *
 * Errors. With NONE a failed send is only counted (fire and forget). With
 * the other guarantees the first failure is kept and returned by every
 * later write, flush and checkpoint, so it surfaces at the next call rather
 * than through a mailbox; waits have deadlines and never spin (the Flink
 * connector spins on flush() under backpressure).
 *
 * Close order: flush (bounded), abort the EXACTLY_ONCE transaction that no
 * checkpoint covers, destroy producers, then the client — which runs the
 * remaining callbacks and joins its threads — and only then the lock the
 * callbacks use.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connector/sink_int.h"
#include "core/err.h"

/* ---------- errors and the pending counter ---------- */

void pc_sink_set_error(pulsarc_sink_t *sk, pulsarc_err_t err, const char *fmt, ...) {
    pthread_mutex_lock(&sk->lock);
    if (!sk->send_err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sk->send_err_text, sizeof sk->send_err_text, fmt, ap);
        va_end(ap);
        sk->send_err = err;
    }
    pthread_mutex_unlock(&sk->lock);
}

/* The first send error (AT_LEAST_ONCE / EXACTLY_ONCE), PULSARC_OK if none. */
pulsarc_err_t pc_sink_report(pulsarc_sink_t *sk, char *errstr, size_t errlen) {
    if (sk->s.guarantee == PULSARC_SINK_NONE)
        return PULSARC_OK;
    pthread_mutex_lock(&sk->lock);
    pulsarc_err_t err = sk->send_err;
    if (err)
        pc_seterr(errstr, errlen, err, "%s", sk->send_err_text);
    pthread_mutex_unlock(&sk->lock);
    return err;
}

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    pulsarc_sink_t *sk = opaque;
    (void)id;
    (void)msg;
    if (err)
        pc_sink_set_error(sk, err, "Failed to send data to Pulsar: %s (%s)",
                          p ? pulsarc_producer_topic(p) : "?", pulsarc_strerror(err));
    pthread_mutex_lock(&sk->lock);
    if (err)
        sk->failed++;
    else
        sk->acked++;
    sk->pending--;
    pthread_cond_broadcast(&sk->cond);
    pthread_mutex_unlock(&sk->lock);
}

static void deadline_after(struct timespec *dl, int timeout_ms) {
    clock_gettime(CLOCK_REALTIME, dl);
    dl->tv_sec += timeout_ms / 1000;
    dl->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl->tv_nsec >= 1000000000L) {
        dl->tv_sec++;
        dl->tv_nsec -= 1000000000L;
    }
}

pulsarc_err_t pc_sink_wait_pending(pulsarc_sink_t *sk, int timeout_ms, char *errstr,
                                   size_t errlen) {
    struct timespec dl;
    if (timeout_ms >= 0)
        deadline_after(&dl, timeout_ms);
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&sk->lock);
    while (sk->pending && !err) {
        if (timeout_ms < 0)
            pthread_cond_wait(&sk->cond, &sk->lock);
        else if (pthread_cond_timedwait(&sk->cond, &sk->lock, &dl))
            err = PULSARC_ERR_TIMEOUT;
    }
    uint64_t left = sk->pending;
    pthread_mutex_unlock(&sk->lock);
    if (err)
        pc_seterr(errstr, errlen, err, "sink flush: %llu messages still unacknowledged",
                  (unsigned long long)left);
    return err;
}

/* ---------- producers ---------- */

/* "%s" in the template becomes a random id; without one, "-<id>" is added. */
static void producer_name(const char *tmpl, char *out, size_t len) {
    char id[17];
    snprintf(id, sizeof id, "%08zx%08zx", pc_sink_random_below(0xffffffffu),
             pc_sink_random_below(0xffffffffu));
    const char *at = strstr(tmpl, "%s");
    if (!at)
        snprintf(out, len, "%s-%s", tmpl, id);
    else
        snprintf(out, len, "%.*s%s%s", (int)(at - tmpl), tmpl, id, at + 2);
}

static pulsarc_err_t open_producer(pulsarc_sink_t *sk, const char *topic,
                                   pulsarc_producer_t **out, char *errstr, size_t errlen) {
    pulsarc_conf_t *conf = sk->pconf;
    pulsarc_conf_t *named = NULL;
    if (sk->s.producer_name) {
        char name[512];
        producer_name(sk->s.producer_name, name, sizeof name);
        named = pulsarc_conf_dup(sk->pconf);
        if (!named)
            return PULSARC_ERR_NOMEM;
        pulsarc_err_t err = pulsarc_conf_set(named, "producerName", name, errstr, errlen);
        if (err) {
            pulsarc_conf_destroy(named);
            return err;
        }
        conf = named;
    }
    pulsarc_err_t err = pulsarc_producer_new(sk->client, topic, conf, out, errstr, errlen);
    pulsarc_conf_destroy(named);
    return err;
}

static pulsarc_err_t remember_producer(pulsarc_sink_t *sk, const char *topic,
                                       pulsarc_producer_t *p) {
    if (sk->nprods == sk->capprods) {
        size_t cap = sk->capprods ? 2 * sk->capprods : 8;
        pc_sink_producer_t *v = realloc(sk->prods, cap * sizeof *v);
        if (!v)
            return PULSARC_ERR_NOMEM;
        sk->prods = v;
        sk->capprods = cap;
    }
    char *name = strdup(topic);
    if (!name)
        return PULSARC_ERR_NOMEM;
    sk->prods[sk->nprods++] = (pc_sink_producer_t){name, p};
    return PULSARC_OK;
}

static pulsarc_err_t producer_for(pulsarc_sink_t *sk, const char *topic,
                                  pulsarc_producer_t **out, char *errstr, size_t errlen) {
    for (size_t i = 0; i < sk->nprods; i++)
        if (!strcmp(sk->prods[i].topic, topic)) {
            *out = sk->prods[i].producer;
            return PULSARC_OK;
        }
    pulsarc_err_t err = open_producer(sk, topic, out, errstr, errlen);
    if (err)
        return err;
    err = remember_producer(sk, topic, *out);
    if (err)
        pulsarc_producer_destroy(*out);
    return err;
}

/* ---------- opening ---------- */

static pulsarc_sink_t *sink_alloc(const pulsarc_sink_builder_t *b) {
    pulsarc_sink_t *sk = calloc(1, sizeof *sk);
    if (!sk)
        return NULL;
    pthread_mutex_init(&sk->lock, NULL);
    pthread_cond_init(&sk->cond, NULL);
    if (pc_sink_settings_copy(&sk->s, &b->s) != PULSARC_OK) {
        pulsarc_sink_destroy(sk);
        return NULL;
    }
    return sk;
}

static uint32_t writers(const pulsarc_sink_t *sk) {
    return sk->s.writer_count ? sk->s.writer_count : 1;
}

/* A blob of writer i of N restores into that writer only; a merged one into any. */
static pulsarc_err_t check_writer(const pulsarc_sink_t *sk, const pc_sink_state_t *st,
                                  char *errstr, size_t errlen) {
    if (st->writers == 1 || (st->writers == writers(sk) && st->writer == sk->s.writer_index))
        return PULSARC_OK;
    return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                     "the sink state is writer %u of %u's, this sink is writer %u of %u: merge "
                     "the states of all %u writers first (pulsarc_sink_state_merge)",
                     st->writer, st->writers, sk->s.writer_index, writers(sk), st->writers);
}

/* From a merged (or single-writer) state, writer i of M settles transactions k with k mod M == i. */
static void keep_own_txns(const pulsarc_sink_t *sk, pc_sink_state_t *st) {
    if (st->writers != 1 || writers(sk) == 1)
        return;
    size_t kept = 0;
    for (size_t k = 0; k < st->ntxns; k++)
        if (k % writers(sk) == sk->s.writer_index)
            st->txns[kept++] = st->txns[k];
    st->ntxns = kept;
}

static pulsarc_err_t restore(pulsarc_sink_t *sk, const void *state, size_t len, char *errstr,
                             size_t errlen) {
    pc_sink_state_t st;
    pulsarc_err_t err = pc_sink_state_decode(state, len, &st, errstr, errlen);
    if (err)
        return err;
    err = check_writer(sk, &st, errstr, errlen);
    if (!err)
        keep_own_txns(sk, &st);
    if (!err)
        err = pc_sink_txn_restore(sk, &st, errstr, errlen);
    pc_sink_state_free(&st);
    return err;
}

/* A corrupt blob, or another writer's, is refused before anything connects. */
static pulsarc_err_t check_blob(const pulsarc_sink_t *sk, const void *state, size_t len,
                                char *errstr, size_t errlen) {
    pc_sink_state_t st;
    pulsarc_err_t err = pc_sink_state_decode(state, len, &st, errstr, errlen);
    if (!err) {
        err = check_writer(sk, &st, errstr, errlen);
        pc_sink_state_free(&st);
    }
    return err;
}

pulsarc_err_t pulsarc_sink_state_merge(const void *const *blobs, const size_t *lens, size_t n,
                                       void **out, size_t *out_len, char *errstr,
                                       size_t errlen) {
    if (!blobs || !lens || !out || !out_len || n == 0 || n > PC_SINK_STATE_MAX_WRITERS)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "merge: blobs, lens, out and out_len are required, n from 1 to %u",
                         PC_SINK_STATE_MAX_WRITERS);
    pc_sink_state_t *sts = calloc(n, sizeof *sts), merged;
    if (!sts)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    char why[256] = "";
    for (size_t i = 0; i < n && !err; i++)
        if ((err = pc_sink_state_decode(blobs[i], lens[i], &sts[i], why, sizeof why)))
            pc_seterr(errstr, errlen, err, "sink state %zu: %s", i, why);
    if (!err)
        err = pc_sink_state_merge(sts, n, &merged, errstr, errlen);
    if (!err) {
        uint8_t *buf = NULL;
        if ((err = pc_sink_state_encode(&merged, &buf, out_len)))
            pc_seterr(errstr, errlen, err, "merge: cannot encode the merged sink state");
        *out = buf;
        pc_sink_state_free(&merged);
    }
    for (size_t i = 0; i < n; i++)
        pc_sink_state_free(&sts[i]);
    free(sts);
    return err;
}

static pulsarc_err_t sink_open(pulsarc_sink_t *sk, const pulsarc_sink_builder_t *b,
                               const void *state, size_t len, char *errstr, size_t errlen) {
    pulsarc_err_t err = pc_sink_client_conf(b, &sk->pconf, errstr, errlen);
    if (!err && state)
        err = check_blob(sk, state, len, errstr, errlen);
    if (!err)
        err = pulsarc_client_new(sk->pconf, &sk->client, errstr, errlen);
    if (!err)
        err = pc_sink_routes_load(sk, errstr, errlen);
    if (!err && state)
        err = restore(sk, state, len, errstr, errlen);
    return err;
}

pulsarc_err_t pulsarc_sink_builder_build(const pulsarc_sink_builder_t *b, const void *state,
                                         size_t state_len, pulsarc_sink_t **sinkp,
                                         char *errstr, size_t errlen) {
    if (!sinkp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sinkp is NULL");
    pulsarc_err_t err = pc_sink_validate(b, errstr, errlen);
    if (err)
        return err;
    pulsarc_sink_t *sk = sink_alloc(b);
    if (!sk)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    err = sink_open(sk, b, state, state_len, errstr, errlen);
    if (err) {
        pulsarc_sink_destroy(sk);
        return err;
    }
    *sinkp = sk;
    return PULSARC_OK;
}

/* ---------- writing ---------- */

static uint64_t deliver_at(pulsarc_sink_t *sk, const pulsarc_msg_t *msg, uint64_t now) {
    if (sk->s.delayer)
        return sk->s.delayer(sk->s.delayer_opaque, msg, now);
    return sk->s.delay_ms ? now + sk->s.delay_ms : 0;
}

static pulsarc_err_t make_message(pulsarc_sink_t *sk, const void *element, uint64_t ts,
                                  pulsarc_msg_t **out, char *errstr, size_t errlen) {
    pulsarc_msg_t *msg = pulsarc_msg_new();
    if (!msg)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = sk->s.serialize(sk->s.serialize_opaque, element, msg);
    if (err) {
        pulsarc_msg_destroy(msg);
        return pc_seterr(errstr, errlen, err, "the serialiser failed: %s", pulsarc_strerror(err));
    }
    /* The message's own event time wins; the record timestamp fills in. */
    if (ts && !pulsarc_msg_event_time(msg))
        pulsarc_msg_set_event_time(msg, ts);
    uint64_t now = pc_sink_now_ms();
    uint64_t at = deliver_at(sk, msg, now);
    if (at > now)
        pulsarc_msg_set_deliver_at(msg, at);
    *out = msg;
    return PULSARC_OK;
}

static pulsarc_err_t send_one(pulsarc_sink_t *sk, pulsarc_producer_t *p, pulsarc_msg_t *msg,
                              char *errstr, size_t errlen) {
    pthread_mutex_lock(&sk->lock);
    sk->pending++;
    sk->written++;
    pthread_mutex_unlock(&sk->lock);
    /* Either call completes msg through on_sent exactly once, even when it
     * fails at once, so the counter needs no repair here. */
    pulsarc_err_t err = sk->s.guarantee == PULSARC_SINK_EXACTLY_ONCE
                            ? pc_sink_txn_send(sk, p, msg, on_sent, errstr, errlen)
                            : pulsarc_producer_send_async(p, msg, on_sent, sk);
    if (err)
        pc_seterr(errstr, errlen, err, "send to %s: %s", pulsarc_producer_topic(p),
                  pulsarc_strerror(err));
    return err;
}

pulsarc_err_t pulsarc_sink_write(pulsarc_sink_t *sk, const void *element, uint64_t timestamp_ms,
                                 char *errstr, size_t errlen) {
    if (!sk)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sink is NULL");
    if (sk->closed)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CLOSED, "sink is closed");
    pulsarc_err_t err = pc_sink_report(sk, errstr, errlen);
    if (err)
        return err;
    pc_sink_routes_maybe_refresh(sk);
    pulsarc_msg_t *msg = NULL;
    err = make_message(sk, element, timestamp_ms, &msg, errstr, errlen);
    if (err)
        return err;
    const char *topic = pc_sink_route(sk, msg, errstr, errlen);
    pulsarc_producer_t *p = NULL;
    err = topic ? producer_for(sk, topic, &p, errstr, errlen) : PULSARC_ERR_BAD_TOPIC;
    if (err) {
        pulsarc_msg_destroy(msg);
        return err;
    }
    return send_one(sk, p, msg, errstr, errlen);
}

/* ---------- flush and checkpoints ---------- */

static int remaining_ms(const struct timespec *start, int timeout_ms) {
    if (timeout_ms < 0)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long spent = (now.tv_sec - start->tv_sec) * 1000LL +
                      (now.tv_nsec - start->tv_nsec) / 1000000LL;
    return spent >= timeout_ms ? 0 : (int)(timeout_ms - spent);
}

pulsarc_err_t pulsarc_sink_flush(pulsarc_sink_t *sk, int timeout_ms, char *errstr,
                                 size_t errlen) {
    if (!sk)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sink is NULL");
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* Producer flushes push out half-full batches now instead of after
     * batchingMaxPublishDelay; the pending counter is the real condition. */
    for (size_t i = 0; i < sk->nprods; i++)
        pulsarc_producer_flush(sk->prods[i].producer, remaining_ms(&start, timeout_ms));
    pulsarc_err_t err = pc_sink_wait_pending(sk, remaining_ms(&start, timeout_ms), errstr, errlen);
    pulsarc_err_t sent = pc_sink_report(sk, errstr, errlen);
    return sent ? sent : err;
}

pulsarc_err_t pulsarc_sink_checkpoint(pulsarc_sink_t *sk, uint64_t checkpoint_id,
                                      int timeout_ms, void **blob, size_t *len, char *errstr,
                                      size_t errlen) {
    if (!sk || !blob || !len)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sink, blob and len are required");
    if (sk->closed)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CLOSED, "sink is closed");
    pulsarc_err_t err = PULSARC_OK;
    if (sk->s.guarantee != PULSARC_SINK_NONE)
        err = pulsarc_sink_flush(sk, timeout_ms, errstr, errlen);
    pc_sink_state_t st = {(uint8_t)sk->s.guarantee, checkpoint_id, 0, NULL,
                          sk->s.writer_index, writers(sk)};
    if (!err && sk->s.guarantee == PULSARC_SINK_EXACTLY_ONCE)
        err = pc_sink_txn_checkpoint(sk, checkpoint_id, &st, errstr, errlen);
    uint8_t *out = NULL;
    if (!err)
        err = pc_sink_state_encode(&st, &out, len);
    pc_sink_state_free(&st);
    if (err)
        return err;
    *blob = out;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_checkpoint_complete(pulsarc_sink_t *sk, uint64_t checkpoint_id,
                                               char *errstr, size_t errlen) {
    if (!sk)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sink is NULL");
    if (sk->s.guarantee != PULSARC_SINK_EXACTLY_ONCE)
        return PULSARC_OK;
    return pc_sink_txn_complete(sk, checkpoint_id, errstr, errlen);
}

pulsarc_err_t pulsarc_sink_stats(pulsarc_sink_t *sk, pulsarc_sink_stats_t *out) {
    if (!sk || !out)
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&sk->lock);
    *out = (pulsarc_sink_stats_t){sk->written, sk->acked, sk->failed, sk->pending,
                                  sk->routes.n, sk->nprods, sk->txn_committed, sk->txn_aborted,
                                  sk->txn_found_committed};
    pthread_mutex_unlock(&sk->lock);
    return PULSARC_OK;
}

/* ---------- closing ---------- */

static int close_timeout_ms(const pulsarc_sink_t *sk) {
    char buf[32];
    size_t len = sizeof buf;
    if (!sk->pconf || pulsarc_conf_get(sk->pconf, "operationTimeoutMs", buf, &len))
        return 30000;
    return atoi(buf);
}

static void drop_producers(pulsarc_sink_t *sk) {
    for (size_t i = 0; i < sk->nprods; i++) {
        pulsarc_producer_destroy(sk->prods[i].producer);
        free(sk->prods[i].topic);
    }
    free(sk->prods);
    sk->prods = NULL;
    sk->nprods = sk->capprods = 0;
}

pulsarc_err_t pulsarc_sink_close(pulsarc_sink_t *sk, char *errstr, size_t errlen) {
    if (!sk)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sink is NULL");
    if (sk->closed)
        return PULSARC_OK;
    pulsarc_err_t err = PULSARC_OK;
    if (sk->client)
        err = pulsarc_sink_flush(sk, close_timeout_ms(sk), errstr, errlen);
    if (sk->client && sk->s.guarantee == PULSARC_SINK_EXACTLY_ONCE)
        pc_sink_txn_close(sk);
    sk->closed = 1;
    drop_producers(sk);
    pulsarc_client_destroy(sk->client); /* runs the callbacks left, joins its threads */
    sk->client = NULL;
    return err;
}

void pulsarc_sink_destroy(pulsarc_sink_t *sk) {
    if (!sk)
        return;
    pulsarc_sink_close(sk, NULL, 0);
    pc_sink_routes_free(&sk->routes);
    pulsarc_conf_destroy(sk->pconf);
    pc_sink_settings_free(&sk->s);
    pthread_cond_destroy(&sk->cond);
    pthread_mutex_destroy(&sk->lock);
    free(sk);
}
