/*
 * Design notes: the zero-queue consumer (receiverQueueSize 0). Nothing is
 * fetched ahead: the broker gets one permit for each receive call that
 * waits, or, with a listener, one each time the listener is idle (after
 * subscribing and after every call returns). The application thereby
 * holds at most the messages it asked for, which is what a Shared
 * subscription needs to spread work only to consumers that are free.
 *
 * It behaves as the Java client's zero-queue consumer does:
 *  - one non-partitioned topic only (create.c and multi_topic.c refuse
 *    partitioned, multi-topic, pattern and retry consumers with queue 0);
 *  - receive with a timeout (including 0) is refused with
 *    PULSARC_ERR_STATE: a permit granted for a receive that gave up would
 *    bring a message nobody asked for; batch receive likewise;
 *  - a batched entry cannot be taken one message per permit: the
 *    consumer is closed and the receive fails with PULSARC_ERR_UNSUPPORTED
 *    (the entry stays unacknowledged for other consumers);
 *  - a chunked message is reassembled: each chunk but the last returns its
 *    permit at once (chunk_assembler.c), so one receive costs the broker
 *    one permit per chunk.
 *
 * Built as multi_topic.c is: the handle owns the receive queue, one
 * single-topic consumer (single.c) delivers into it. Permits are decided on
 * the io thread only (reconcile): the broker should hold as many as there
 * are receivers waiting (plus an idle listener), less what is queued
 * already; what it holds is what was granted less what arrived since.
 * After a re-subscription the broker holds none, and `subscribed` asks
 * again for whoever is still waiting.
 *
 * Receives (sync and receive_async) wait in the handle's line of
 * receivers (receive_queue.c); the hooks here refuse timed receives, ask
 * for a permit once a receiver is in line and refuse batched entries.
 *
 * Threads: the line, `listening`, `refused` and `child` under base.lock
 * (application, callback and io threads); `asked` and `seen` are the io
 * thread's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "client/consumer/single.h"
#include "core/err.h"

typedef struct pc_zero_queue {
    pulsarc_consumer_t base;
    pc_single_t *child;          /* the topic's consumer; NULL once released */
    int listening;               /* the listener is running a message */
    pulsarc_err_t refused;       /* set once a batch closed the consumer */
    uint32_t asked;              /* permits the broker still holds (io thread) */
    uint64_t seen;               /* child's received count when asked was last settled (io thread) */
} pc_zero_queue_t;

static pc_zero_queue_t *zq_of(pulsarc_consumer_t *c) { return (pc_zero_queue_t *)c; }

/* The child with a reference, or NULL once released. */
static pc_single_t *child_ref(pc_zero_queue_t *z) {
    pthread_mutex_lock(&z->base.lock);
    pc_single_t *s = z->child;
    if (s)
        pc_consumer_ref(&s->base);
    pthread_mutex_unlock(&z->base.lock);
    return s;
}

/* ---------- permits (io thread) ---------- */

/* Receivers waiting in line (lock held); a message handed to one has left it. */
static size_t receivers_waiting(const pc_zero_queue_t *z) {
    size_t n = 0;
    for (const pc_op_t *op = z->base.receivers.head; op; op = op->qnext)
        n++;
    return n;
}

/* Messages wanted and not queued yet (lock held). */
static uint32_t wanted_locked(const pc_zero_queue_t *z) {
    if (z->base.closing || z->refused)
        return 0;
    size_t want = receivers_waiting(z) + (z->base.listener && !z->listening);
    return want > z->base.qlen ? (uint32_t)(want - z->base.qlen) : 0;
}

/* Takes what arrived since the last look off the permits the broker holds. */
static void settle_arrivals(pc_zero_queue_t *z, pc_single_t *s) {
    pthread_mutex_lock(&s->base.lock);
    uint64_t received = s->base.stats.received;
    pthread_mutex_unlock(&s->base.lock);
    uint64_t arrived = received - z->seen;
    z->seen = received;
    z->asked = arrived >= z->asked ? 0 : z->asked - (uint32_t)arrived;
}

static void do_reconcile(void *arg) {
    pc_zero_queue_t *z = arg;
    pc_single_t *s = child_ref(z);
    if (s) {
        settle_arrivals(z, s);
        pthread_mutex_lock(&z->base.lock);
        uint32_t want = wanted_locked(z);
        pthread_mutex_unlock(&z->base.lock);
        if (want > z->asked && s->h.state == PC_H_READY && s->h.conn) {
            pc_single_send_flow(s, want - z->asked);
            z->asked = want;
        }
        pc_consumer_unref(&s->base);
    }
    pc_consumer_unref(&z->base);
}

static pulsarc_err_t reconcile(pc_zero_queue_t *z) {
    return pc_consumer_post(&z->base, do_reconcile, z);
}

/* A fresh subscription holds no permits: ask for whoever waits. */
static uint32_t zq_subscribed(pulsarc_consumer_t *base, pc_single_t *member) {
    pc_zero_queue_t *z = zq_of(base);
    pthread_mutex_lock(&member->base.lock);
    z->seen = member->base.stats.received;
    pthread_mutex_unlock(&member->base.lock);
    pthread_mutex_lock(&z->base.lock);
    z->asked = wanted_locked(z);
    pthread_mutex_unlock(&z->base.lock);
    return z->asked;
}

/* ---------- taking messages ---------- */

static int is_batched(const pulsarc_msg_t *m) { return m->id.batch_index >= 0; }

/* A batch cannot be taken one message per permit: close, as the Java client does. */
static void refuse_batch(pc_zero_queue_t *z, pulsarc_msg_t *m) {
    fprintf(stderr,
            "pulsarc: %s [%s]: batched entry %lld:%lld received with receiverQueueSize 0; a "
            "zero-queue consumer takes one message per permit and cannot take batches: "
            "consumer closed\n",
            z->base.topic.full, z->base.sub, (long long)m->id.ledger_id, (long long)m->id.entry_id);
    pulsarc_msg_destroy(m);
    pthread_mutex_lock(&z->base.lock);
    z->refused = PULSARC_ERR_UNSUPPORTED;
    pthread_mutex_unlock(&z->base.lock);
    pulsarc_consumer_close(&z->base);
}

/* Lock held: a permit granted for a receive that gave up would bring a message nobody asked for. */
static pulsarc_err_t zq_receive_begin(pulsarc_consumer_t *base, int timeout_ms) {
    if (timeout_ms >= 0)
        return PULSARC_ERR_STATE;
    return zq_of(base)->refused;
}

/* A receiver joined the line: the io thread asks the broker for its message. */
static void zq_receiver_queued(pulsarc_consumer_t *base) { reconcile(zq_of(base)); }

/* A batched entry closes the consumer; a receive the closing ended tells why. */
static pulsarc_err_t zq_receive_end(pulsarc_consumer_t *base, pulsarc_msg_t **msgp,
                                    pulsarc_err_t err) {
    pc_zero_queue_t *z = zq_of(base);
    if (*msgp && is_batched(*msgp)) {
        refuse_batch(z, *msgp);
        *msgp = NULL;
        return PULSARC_ERR_UNSUPPORTED;
    }
    if (err == PULSARC_ERR_CLOSED) {
        pthread_mutex_lock(&base->lock);
        if (z->refused)
            err = z->refused;
        pthread_mutex_unlock(&base->lock);
    }
    return err;
}

static pulsarc_err_t zq_batch_receive(pulsarc_consumer_t *base, pulsarc_msg_t **msgs, size_t cap,
                                      size_t *n) {
    (void)base;
    (void)msgs;
    (void)cap;
    (void)n;
    return PULSARC_ERR_STATE; /* it waits with a timeout: see zq_receive_begin */
}

/* Callback thread: one message per permit; the next is asked for when the listener returns. */
static void zq_run_listener(pulsarc_consumer_t *base) {
    pc_zero_queue_t *z = zq_of(base);
    for (;;) {
        pthread_mutex_lock(&base->lock);
        pulsarc_msg_t *m = base->qhead && !base->closing ? pc_queue_take_locked(base) : NULL;
        if (m)
            z->listening = 1;
        else
            base->listener_posted = 0;
        pthread_mutex_unlock(&base->lock);
        if (!m)
            break;
        if (is_batched(m))
            refuse_batch(z, m); /* closing: the next round ends the loop */
        else
            base->listener(base, m, base->listener_opaque);
        pthread_mutex_lock(&base->lock);
        z->listening = 0;
        pthread_mutex_unlock(&base->lock);
        reconcile(z);
    }
}

/* ---------- the other operations: the child's ---------- */

static pulsarc_err_t zq_close(pulsarc_consumer_t *base, int unsubscribe) {
    pc_zero_queue_t *z = zq_of(base);
    pthread_mutex_lock(&base->lock);
    base->close_posted = base->closing = 1;
    pc_queue_wake_locked(base);
    pthread_mutex_unlock(&base->lock);
    pc_single_t *s = child_ref(z);
    pulsarc_err_t err = PULSARC_OK;
    if (s) {
        err = unsubscribe ? pulsarc_consumer_unsubscribe(&s->base) : pulsarc_consumer_close(&s->base);
        pc_consumer_unref(&s->base);
    }
    pthread_mutex_lock(&base->lock);
    base->closed = 1;
    pthread_cond_broadcast(&base->cond);
    pthread_mutex_unlock(&base->lock);
    return err;
}

/* Drops the reference on the child (pulsarc_consumer_destroy); it holds one on us. */
static void zq_release(pulsarc_consumer_t *base) {
    pc_zero_queue_t *z = zq_of(base);
    pthread_mutex_lock(&base->lock);
    pc_single_t *s = z->child;
    z->child = NULL;
    pthread_mutex_unlock(&base->lock);
    pc_queue_clear(base);
    if (s) {
        pc_dlq_close(s);
        pc_consumer_unref(&s->base);
    }
}

static void zq_free(pulsarc_consumer_t *base) {
    pc_queue_clear_locked(base); /* last reference: nobody else can hold the lock */
    pc_consumer_base_free(base);
    free(zq_of(base));
}

static pc_single_t *zq_route(pulsarc_consumer_t *base, const pulsarc_msgid_t *id,
                             const pulsarc_msg_t *msg) {
    (void)id;
    (void)msg;
    return zq_of(base)->child; /* NULL once destroyed */
}

static pulsarc_err_t zq_each(pulsarc_consumer_t *base, pulsarc_err_t (*fn)(pc_single_t *, void *),
                             void *arg) {
    pc_single_t *s = child_ref(zq_of(base));
    if (!s)
        return PULSARC_ERR_CLOSED;
    pulsarc_err_t err = fn(s, arg);
    pc_consumer_unref(&s->base);
    return err;
}

/* What was queued is from before the seek. */
static pulsarc_err_t zq_seek(pulsarc_consumer_t *base, int by_time, const pulsarc_msgid_t *id,
                             uint64_t ms) {
    pc_single_t *s = child_ref(zq_of(base));
    if (!s)
        return PULSARC_ERR_CLOSED;
    pulsarc_err_t err = pc_single_seek(&s->base, by_time, id, ms);
    pc_consumer_unref(&s->base);
    pc_queue_clear(base);
    return err;
}

static pulsarc_err_t zq_last_message_id(pulsarc_consumer_t *base, pulsarc_msgid_t *id) {
    pc_single_t *s = child_ref(zq_of(base));
    if (!s)
        return PULSARC_ERR_CLOSED;
    pulsarc_err_t err = pc_single_last_message_id(&s->base, id);
    pc_consumer_unref(&s->base);
    return err;
}

static pulsarc_err_t zq_available_on_broker(pulsarc_consumer_t *base, int *available) {
    pc_single_t *s = child_ref(zq_of(base));
    if (!s)
        return PULSARC_ERR_CLOSED;
    pulsarc_err_t err = pc_single_available_on_broker(&s->base, available);
    pc_consumer_unref(&s->base);
    return err;
}

static int zq_is_connected(pulsarc_consumer_t *base) {
    pc_single_t *s = child_ref(zq_of(base));
    int v = s && pulsarc_consumer_is_connected(&s->base);
    if (s)
        pc_consumer_unref(&s->base);
    return v;
}

/* The child counts what reached the broker; the handle what was queued and handed out. */
static void zq_add_stats(pulsarc_consumer_t *base, pulsarc_consumer_stats_t *out) {
    pc_single_t *s = zq_of(base)->child; /* lock held: cannot be released meanwhile */
    if (!s)
        return;
    pulsarc_consumer_stats_t cs;
    pulsarc_consumer_stats(&s->base, &cs);
    out->acked = cs.acked;
    out->nacked = cs.nacked;
    out->redelivery_requests = cs.redelivery_requests;
    out->discarded = cs.discarded;
    out->reconnects = cs.reconnects;
}

static void zq_member_ended(pulsarc_consumer_t *base) {
    pthread_mutex_lock(&base->lock);
    base->end_of_topic = 1;
    pc_queue_wake_locked(base);
    pthread_mutex_unlock(&base->lock);
    pc_consumer_notify_event(base, PULSARC_CONSUMER_END_OF_TOPIC);
}

static const pc_consumer_ops_t zero_queue_ops = {
    .close = zq_close,
    .release = zq_release,
    .free = zq_free,
    .route = zq_route,
    .each_single = zq_each,
    .seek = zq_seek,
    .last_message_id = zq_last_message_id,
    .available_on_broker = zq_available_on_broker,
    .is_connected = zq_is_connected,
    .add_stats = zq_add_stats,
    .member_ended = zq_member_ended,
    .receive_begin = zq_receive_begin,
    .receiver_queued = zq_receiver_queued,
    .receive_end = zq_receive_end,
    .batch_receive = zq_batch_receive,
    .run_listener = zq_run_listener,
    .subscribed = zq_subscribed,
};

/* ---------- creation ---------- */

static pulsarc_err_t new_handle(pulsarc_client_t *cl, pc_single_t *s, const char *sub,
                                const pulsarc_conf_t *conf, pc_zero_queue_t **zp) {
    pc_zero_queue_t *z = calloc(1, sizeof *z);
    if (!z || pc_consumer_base_init(&z->base, &zero_queue_ops, cl, sub)) {
        free(z);
        return PULSARC_ERR_NOMEM;
    }
    z->base.topic = s->base.topic;
    if (pc_consumer_read_common_conf(&z->base, conf)) {
        pc_consumer_base_free(&z->base);
        free(z);
        return PULSARC_ERR_NOMEM;
    }
    z->child = s;
    s->queue = &z->base;
    pc_consumer_ref(&z->base); /* the child's, released when it is freed */
    s->base.listener = NULL;   /* our queue runs the listener */
    *zp = z;
    return PULSARC_OK;
}

pulsarc_err_t pc_zero_queue_new(pulsarc_client_t *cl, const char *topic, const char *sub,
                                const pulsarc_conf_t *conf, pulsarc_consumer_t **cp, char *errstr,
                                size_t errlen) {
    if (pc_conf_int(conf, PC_PROP_AUTO_SCALED_QUEUE)) /* as the Java client */
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "autoScaledReceiverQueueSizeEnabled needs a receive queue: not with "
                         "receiverQueueSize 0");
    pc_single_t *s;
    pulsarc_err_t err = pc_single_prepare(cl, topic, sub, conf, &s, errstr, errlen);
    if (err)
        return err;
    pc_zero_queue_t *z;
    if (new_handle(cl, s, sub, conf, &z)) {
        pc_consumer_unref(&s->base);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    if (pc_client_register(cl, &z->base.handle)) {
        zq_release(&z->base);
        pc_consumer_unref(&z->base);
        return pc_seterr(errstr, errlen, PULSARC_ERR_CLOSED, "client is closed");
    }
    if ((err = pc_single_start(s, 0, errstr, errlen))) {
        zq_close(&z->base, 0);
        pulsarc_consumer_destroy(&z->base);
        return err;
    }
    *cp = &z->base;
    return PULSARC_OK;
}
