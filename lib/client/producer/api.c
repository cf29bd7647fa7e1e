/*
 * Design notes: the public pulsarc_producer_* calls. Creation reads and
 * checks the configuration once, asks the broker whether the topic is
 * partitioned, and builds the matching kind (producer.c for one topic or
 * partition, partitioned.c for a handle over its partitions); every later
 * call checks its arguments, builds the send item and goes through the
 * kind's ops. Runs on application threads (and inside library callbacks,
 * where a close only starts). A send's outcome is reported exactly once,
 * also when it fails here before reaching any producer. The interceptors
 * of the handle (interceptors.c) run here too: before_send before the
 * message reaches the kind, on_send_ack through the send's callback (or,
 * for a synchronous send, once its result is known).
 */
#include <stdlib.h>
#include <string.h>

#include "client/producer/interceptors.h"
#include "client/producer/producer_int.h"
#include "client/txn/txn.h"
#include "core/err.h"

/* ---------- creation and lifetime ---------- */

static void handle_close(pc_handle_t *h);
static void handle_destroy(pc_handle_t *h);
static void handle_report(pc_handle_t *h, struct pc_metrics_entry *out);

/* The producer this topic needs: one per partition when partitioned. */
static pulsarc_err_t alloc_kind(pulsarc_client_t *c, const char *topic, const pc_topic_t *t,
                                const pulsarc_conf_t *conf, const pc_producer_settings_t *s,
                                pulsarc_producer_t **pp, char *errstr, size_t errlen) {
    int nparts = 0;
    if (t->partition < 0) {
        pulsarc_err_t err = pulsarc_client_partitions(c, t->full, &nparts, errstr, errlen);
        if (err)
            return err;
    }
    if (nparts > 0)
        return pc_partitioned_alloc(c, t, nparts, conf, s, pp, errstr, errlen);
    return pc_topic_producer_alloc(c, topic, conf, s, NULL, pp, errstr, errlen);
}

pulsarc_err_t pulsarc_producer_new(pulsarc_client_t *c, const char *topic,
                                   const pulsarc_conf_t *conf, pulsarc_producer_t **pp,
                                   char *errstr, size_t errlen) {
    if (!c || !topic || !pp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client, topic and producerp are required");
    *pp = NULL;
    pc_topic_t t;
    pc_producer_settings_t s;
    pulsarc_producer_t *p;
    pc_producer_icpts_t *icpts = NULL;
    pulsarc_err_t err = pc_client_parse_topic(c, topic, &t, errstr, errlen);
    if (!err)
        err = pc_producer_settings_read(&s, conf, &t, errstr, errlen);
    if (!err && (err = pc_producer_icpts_new(conf, &icpts)) != PULSARC_OK)
        pc_seterr(errstr, errlen, err, "out of memory for the producer interceptors");
    if (!err)
        err = alloc_kind(c, topic, &t, conf, &s, &p, errstr, errlen);
    if (err) {
        pc_producer_icpts_discard(icpts);
        return err;
    }
    p->icpts = icpts;
    p->handle.close = handle_close;
    p->handle.destroy = handle_destroy;
    if ((err = pc_client_register(c, &p->handle)) != PULSARC_OK)
        pc_seterr(errstr, errlen, err, "client is closed");
    else
        err = p->ops->create(p, conf, errstr, errlen);
    if (err) {
        pc_client_unregister(c, &p->handle);
        pc_producer_icpts_discard(p->icpts); /* no producer, so no close hook either */
        p->icpts = NULL;
        pc_producer_unref(p);
        return err;
    }
    pc_client_set_report(c, &p->handle, handle_report); /* its partitions exist only now */
    if (p->ops->partitions(p) > 0)
        pc_producer_icpts_partitions(p->icpts, p, p->topic.full, p->ops->partitions(p));
    *pp = p;
    return PULSARC_OK;
}

/*
 * With a callback thread, close also waits for the flush_async callbacks
 * still out (the close gave their sends an outcome, so they are on their
 * way), so that none runs after close returned. Inside a callback or in
 * poll/loop mode it cannot wait for the callback queue, as for sends.
 */
pulsarc_err_t pulsarc_producer_close(pulsarc_producer_t *p) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    p->ops->close(p);
    if (!pc_in_callback() && p->client->cbq.own_thread)
        pc_op_wait(&p->flushes_out, NULL, 0);
    return PULSARC_OK;
}

void pulsarc_producer_destroy(pulsarc_producer_t *p) {
    if (!p)
        return;
    pulsarc_producer_close(p);
    pc_client_unregister(p->client, &p->handle);
    p->ops->release(p);
    pc_producer_icpts_release(p->icpts); /* sends still reporting hold their own reference */
    p->icpts = NULL;
    pc_producer_unref(p);
}

static void handle_close(pc_handle_t *h) {
    pulsarc_producer_close((pulsarc_producer_t *)((char *)h - offsetof(pulsarc_producer_t, handle)));
}

static void handle_destroy(pc_handle_t *h) {
    pulsarc_producer_destroy((pulsarc_producer_t *)((char *)h - offsetof(pulsarc_producer_t, handle)));
}

/* Under the client's registry lock (metrics.c): counters and durations. */
static void handle_report(pc_handle_t *h, struct pc_metrics_entry *out) {
    pulsarc_producer_t *p = (pulsarc_producer_t *)((char *)h - offsetof(pulsarc_producer_t, handle));
    out->kind = PC_METRICS_PRODUCER;
    out->topic = p->topic;
    pulsarc_producer_stats(p, &out->producer);
    pc_producer_stats_acc_t acc = {0};
    uint64_t pending = 0;
    p->ops->add_stats(p, &acc, &pending); /* what the public stats leave out */
    out->producer_reconnects = acc.reconnects;
    pc_hist_read(&p->send_hists.ok, &out->send_ok);
    pc_hist_read(&p->send_hists.failed, &out->send_failed);
}

/* ---------- sending ---------- */

/* Queues it, inside txn when set; on failure the item is not consumed. */
static pulsarc_err_t submit_in(pulsarc_producer_t *p, pulsarc_txn_t *txn, send_item_t *it) {
    pulsarc_err_t err = txn ? pc_txn_op_begin(txn) : PULSARC_OK;
    if (err)
        return err;
    it->txn = txn;
    err = p->ops->submit(p, it);
    if (err && txn)
        pc_txn_op_end(txn, err);
    return err;
}

/* Sends m (the loop writes the assigned sequence id into it) and waits. */
static pulsarc_err_t send_and_wait(pulsarc_producer_t *p, pulsarc_txn_t *txn, pulsarc_msg_t *m,
                                   pulsarc_msgid_t *id) {
    pc_op_t w;
    send_item_t *it = pc_item_get(p);
    if (!it)
        return PULSARC_ERR_NOMEM;
    pc_op_init(&w);
    it->msg = m;
    it->waiter = &w;
    it->id_out = id;
    pulsarc_err_t err = submit_in(p, txn, it);
    if (err)
        pc_item_put(it);
    else
        err = pc_op_wait(&w, NULL, 0);
    pc_op_destroy(&w);
    return err;
}

/* The interceptors change a copy: the caller's message is const. */
static pulsarc_err_t send_intercepted(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                      const pulsarc_msg_t *msg, pulsarc_msgid_t *id) {
    pulsarc_msg_t *copy = pulsarc_msg_clone(msg);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    pulsarc_msgid_t got = {0};
    pc_producer_icpts_before_send(p->icpts, p, copy);
    pulsarc_err_t err = send_and_wait(p, txn, copy, &got);
    pc_producer_icpts_on_ack(p->icpts, p, err, &got, copy);
    if (!err && id)
        *id = got;
    pulsarc_msg_destroy(copy);
    return err;
}

static pulsarc_err_t send_sync(pulsarc_producer_t *p, pulsarc_txn_t *txn, const pulsarc_msg_t *msg,
                               pulsarc_msgid_t *id) {
    if (!p || !msg)
        return PULSARC_ERR_INVALID_ARG;
    if (p->icpts)
        return send_intercepted(p, txn, msg, id);
    pulsarc_msg_t copy = *msg; /* shallow: only the sequence id is written */
    return send_and_wait(p, txn, &copy, id);
}

pulsarc_err_t pulsarc_producer_send(pulsarc_producer_t *p, const pulsarc_msg_t *msg,
                                    pulsarc_msgid_t *id) {
    return send_sync(p, NULL, msg, id);
}

pulsarc_err_t pulsarc_producer_send_txn(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                        const pulsarc_msg_t *msg, pulsarc_msgid_t *id) {
    return txn ? send_sync(p, txn, msg, id) : PULSARC_ERR_INVALID_ARG;
}

static pulsarc_err_t send_async(pulsarc_producer_t *p, pulsarc_txn_t *txn, pulsarc_msg_t *msg,
                                pulsarc_send_cb cb, void *opaque) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    send_item_t *it = p ? pc_item_get(p) : NULL;
    pulsarc_err_t err = !p ? PULSARC_ERR_INVALID_ARG : !it ? PULSARC_ERR_NOMEM : PULSARC_OK;
    if (!err && p->icpts && !(err = pc_producer_icpts_wrap(p->icpts, &cb, &opaque)))
        pc_producer_icpts_before_send(p->icpts, p, msg); /* on_send_ack now runs exactly once */
    if (!err) {
        it->msg = msg;
        it->owns_msg = 1;
        it->cb = cb;
        it->opaque = opaque;
        err = submit_in(p, txn, it);
    }
    if (err) { /* the callback still runs exactly once, here */
        if (it)
            pc_item_put(it);
        if (cb)
            cb(p, err, NULL, msg, opaque);
        pulsarc_msg_destroy(msg);
    }
    return err;
}

pulsarc_err_t pulsarc_producer_send_async(pulsarc_producer_t *p, pulsarc_msg_t *msg,
                                          pulsarc_send_cb cb, void *opaque) {
    return send_async(p, NULL, msg, cb, opaque);
}

pulsarc_err_t pulsarc_producer_send_async_txn(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                              pulsarc_msg_t *msg, pulsarc_send_cb cb,
                                              void *opaque) {
    if (txn)
        return send_async(p, txn, msg, cb, opaque);
    if (cb && msg) /* the callback still runs exactly once */
        cb(p, PULSARC_ERR_INVALID_ARG, NULL, msg, opaque);
    pulsarc_msg_destroy(msg);
    return PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_producer_flush(pulsarc_producer_t *p, int timeout_ms) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    return p->ops->flush(p, timeout_ms);
}

/* The caller's flush_async: one op, one part per topic producer with
 * something pending, plus one held while the parts are added. */
typedef struct flush_call {
    pc_op_t op;
    pulsarc_producer_t *p;
    pulsarc_flush_cb cb;
    void *opaque;
} flush_call_t;

static void on_flushed(pc_op_t *op, void *arg) {
    flush_call_t *fc = arg;
    pulsarc_err_t err = pc_op_result(op, NULL, 0);
    if (fc->cb)
        fc->cb(fc->p, err, fc->opaque);
    pc_op_done(&fc->p->flushes_out, PULSARC_OK, NULL); /* a close may wait for the last */
    pc_producer_unref(fc->p);
    pc_op_destroy(&fc->op);
    free(fc);
}

/*
 * The client closed and its callback queue refused on_flushed: nothing
 * ever calls back, so the caller hears CLOSED and what on_flushed would
 * release is released here. Whatever completes the op last learns of the
 * refusal; after a client close that is this call (the closed producers
 * owe no parts).
 */
static pulsarc_err_t flush_refused(flush_call_t *fc) {
    pc_op_done(&fc->p->flushes_out, PULSARC_OK, NULL);
    pc_producer_unref(fc->p);
    pc_op_destroy(&fc->op);
    free(fc);
    return PULSARC_ERR_CLOSED;
}

pulsarc_err_t pulsarc_producer_flush_async(pulsarc_producer_t *p, pulsarc_flush_cb cb,
                                           void *opaque) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    /* Refused once its client is closing, as receive_async is: a callback
     * that flushes again would otherwise feed the closing drain for ever. */
    pthread_mutex_lock(&p->client->lock);
    int closing = p->client->closing || p->client->closed;
    pthread_mutex_unlock(&p->client->lock);
    if (closing)
        return PULSARC_ERR_CLOSED;
    flush_call_t *fc = calloc(1, sizeof *fc);
    if (!fc)
        return PULSARC_ERR_NOMEM;
    fc->p = p;
    fc->cb = cb;
    fc->opaque = opaque;
    pc_op_init(&fc->op); /* its one part: held until every producer added its own */
    pc_op_call_back(&fc->op, &p->client->cbq, on_flushed, fc);
    pc_producer_ref(p);
    pc_op_add(&p->flushes_out, 1);
    pulsarc_err_t err = p->ops->flush_async(p, &fc->op);
    /* Parts already added still report (to a callback form with OK or not),
     * so the op completes either way; the error only decides what it says. */
    if (pc_op_done(&fc->op, err, err ? "flush could not start on every partition" : NULL))
        return flush_refused(fc);
    return PULSARC_OK;
}

/* ---------- properties and stats ---------- */

const char *pulsarc_producer_name(const pulsarc_producer_t *p) { return p ? p->name : NULL; }
const char *pulsarc_producer_topic(const pulsarc_producer_t *p) { return p ? p->topic.full : NULL; }
int pulsarc_producer_partitions(const pulsarc_producer_t *p) { return p ? p->ops->partitions(p) : 0; }

int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *cp) {
    pulsarc_producer_t *p = (pulsarc_producer_t *)cp; /* reading takes the producer's lock */
    return p ? p->ops->last_sequence_id(p) : -1;
}

pulsarc_err_t pulsarc_producer_set_router(pulsarc_producer_t *p, pulsarc_router_cb cb, void *opaque) {
    if (!p || !cb)
        return PULSARC_ERR_INVALID_ARG;
    return p->ops->set_router(p, cb, opaque);
}

pulsarc_err_t pulsarc_producer_stats(pulsarc_producer_t *p, pulsarc_producer_stats_t *out) {
    if (!p || !out)
        return PULSARC_ERR_INVALID_ARG;
    pc_producer_stats_acc_t sum = {0};
    uint64_t pending = 0;
    p->ops->add_stats(p, &sum, &pending);
    memset(out, 0, sizeof *out);
    out->msgs_sent = sum.msgs_sent;
    out->bytes_sent = sum.bytes_sent;
    out->send_errors = sum.send_errors;
    out->pending = pending;
    out->latency_avg_ms = sum.msgs_sent ? (double)sum.latency_sum_ms / (double)sum.msgs_sent : 0;
    out->latency_max_ms = sum.latency_max_ms;
    return PULSARC_OK;
}
