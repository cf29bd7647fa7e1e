/*
 * Design notes: the receive queue between the io thread and the
 * application. The io thread appends decoded messages (deliver.c: one
 * lock per read, not per message); application threads take them with receive,
 * batch receive, or through the message listener run on the client's
 * callback thread. Every message taken owes one flow permit to the
 * consumer that received it (its rx_owner); the queue tells it through
 * the receiver's table (pc_queue_receiver_ops_t, consumer_int.h) and knows
 * nothing else of it. The permits themselves, their FLOW and the idle
 * check that shrinks an auto-scaled queue are the single-topic consumer's
 * (permits.c fills the table). With autoScaledReceiverQueueSizeEnabled
 * "the queue" is its current size: one message at first, doubled whenever
 * the application finds it empty after the broker had used up its permits
 * (scale_locked).
 *
 * The queue belongs to the common handle (consumer_int.h), whatever kind
 * it is; a multi-topic consumer's members deliver into their parent's.
 * Lock order: the queue's lock, then the receiving consumer's when they
 * differ.
 *
 * Kinds that do not prefetch (zero_queue.c) take messages through their
 * own receive and listener operations, built on the wait and take here,
 * and decide the permits a fresh subscription asks for.
 *
 * Threads: append on the io thread; receive and the listener on
 * application threads; `lock` guards everything shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "client/consumer/interceptors.h"
#include "core/err.h"

/* ---------- permits, through the receiver's table ---------- */

static int owe_locked(pulsarc_consumer_t *rx, uint32_t n) { return rx->rx_ops->owe_locked(rx, n); }

static void owe_member(pulsarc_consumer_t *rx) { rx->rx_ops->owe_member(rx); }

static void post_flow(pulsarc_consumer_t *rx) { rx->rx_ops->post_flow(rx); }

/* ---------- the queue ---------- */

size_t pc_queue_clear_locked(pulsarc_consumer_t *q) {
    size_t n = q->qlen;
    while (q->qhead) {
        pulsarc_msg_t *m = q->qhead;
        q->qhead = m->next;
        pulsarc_msg_destroy(m);
    }
    q->qtail = NULL;
    q->qlen = 0;
    q->qbytes = 0;
    return n;
}

size_t pc_queue_clear(pulsarc_consumer_t *q) {
    pthread_mutex_lock(&q->lock);
    size_t n = pc_queue_clear_locked(q);
    pthread_mutex_unlock(&q->lock);
    return n;
}

int pc_queue_append(pulsarc_consumer_t *q, pulsarc_msg_t *first, pulsarc_msg_t *last, size_t n) {
    size_t bytes = 0;
    for (pulsarc_msg_t *m = first; m; m = m->next)
        bytes += m->len;
    pthread_mutex_lock(&q->lock);
    if (n) {
        if (q->qtail)
            q->qtail->next = first;
        else
            q->qhead = first;
        q->qtail = last;
        q->qlen += n;
        q->qbytes += bytes;
        q->rx_bytes += bytes;
        q->stats.received += n;
        if (q->qlen > q->qlen_peak)
            q->qlen_peak = q->qlen;
        /* An auto-scaling queue's own consumer (its permits are under this lock): is the pipeline full? */
        if (q->auto_scale && first->rx_owner == q)
            q->scale_hint = q->rx_ops->owed_locked(q) + q->qlen >= (size_t)q->cur_queue_size;
        pthread_cond_broadcast(&q->cond);
    }
    int listen = q->listener && n && !q->listener_posted;
    if (listen)
        q->listener_posted = 1;
    pthread_mutex_unlock(&q->lock);
    return listen;
}

/* Drops the queued messages owner received (only those with id's position, when id is set). */
static size_t drop_matching(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                            const pulsarc_msgid_t *id) {
    size_t n = 0;
    pthread_mutex_lock(&q->lock);
    pulsarc_msg_t **pp = &q->qhead;
    q->qtail = NULL;
    while (*pp) {
        pulsarc_msg_t *m = *pp;
        if (m->rx_owner != owner ||
            (id && (m->id.ledger_id != id->ledger_id || m->id.entry_id != id->entry_id ||
                    m->id.batch_index != id->batch_index))) {
            q->qtail = m;
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        q->qlen--;
        q->qbytes -= m->len;
        pulsarc_msg_destroy(m);
        n++;
    }
    pthread_mutex_unlock(&q->lock);
    return n;
}

size_t pc_queue_drop_owned(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner) {
    return drop_matching(q, owner, NULL);
}

size_t pc_queue_drop_id(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                        const pulsarc_msgid_t *id) {
    return drop_matching(q, owner, id);
}

/* ---------- taking messages out (application threads) ---------- */

/*
 * Removes the head (lock held). Its permit goes back to the consumer that
 * received it: under the lock already held when that is the queue's own
 * consumer, and then *flow names it when a FLOW must be posted.
 */
pulsarc_msg_t *pc_queue_take_locked(pulsarc_consumer_t *q) {
    pulsarc_msg_t *m = q->qhead;
    q->qhead = m->next;
    if (!q->qhead)
        q->qtail = NULL;
    q->qlen--;
    q->qbytes -= m->len;
    m->next = NULL;
    q->last_dequeued = m->id;
    q->has_dequeued = 1;
    q->stats.delivered++;
    return m;
}

static pulsarc_msg_t *pop_locked(pulsarc_consumer_t *q, pulsarc_consumer_t **flow) {
    pulsarc_msg_t *m = pc_queue_take_locked(q);
    pulsarc_consumer_t *owner = m->rx_owner;
    if (owner != q)
        owe_member(owner);
    else if (owe_locked(owner, 1))
        *flow = owner;
    return m; /* rx_owner stays: acks of a multi-topic consumer route by it */
}

/*
 * Auto-scaling (lock held; only a consumer receiving into its own queue
 * scales, so q is the receiver and has its table),
 * as the Java client does it: found empty after the last arrival had used
 * up the pipeline, the application outran the queue: double it (up to
 * receiverQueueSize) and grant the difference now. A slow application never
 * finds it empty, so its queue stays small.
 */
static void scale_locked(pulsarc_consumer_t *q, pulsarc_consumer_t **flow) {
    int cur = q->cur_queue_size;
    if (!q->auto_scale || q->qhead || !q->scale_hint || cur >= q->queue_size)
        return;
    int grown = cur < q->queue_size / 2 ? cur * 2 : q->queue_size;
    q->cur_queue_size = grown;
    q->scale_hint = 0;
    q->rx_ops->resized(q, (size_t)grown);
    if (owe_locked(q, (uint32_t)(grown - cur)))
        *flow = q;
}

/* Scales before a receive waits; a grown queue's permits go out first (lock held, dropped meanwhile). */
static void scale_before_wait_locked(pulsarc_consumer_t *c) {
    pulsarc_consumer_t *flow = NULL;
    scale_locked(c, &flow);
    if (flow) {
        pthread_mutex_unlock(&c->lock);
        post_flow(flow);
        pthread_mutex_lock(&c->lock);
    }
}

/*
 * Waits (lock held) until a message, close, end of topic or the deadline.
 * *dl is computed on the first wait only (tv_sec < 0 until then): a
 * receive that finds a message queued reads no clock.
 */
pulsarc_err_t pc_queue_wait_locked(pulsarc_consumer_t *c, int timeout_ms, struct timespec *dl) {
    while (!c->qhead) {
        if (c->closing)
            return PULSARC_ERR_CLOSED;
        if (c->end_of_topic)
            return PULSARC_ERR_END_OF_TOPIC;
        if (timeout_ms == 0)
            return PULSARC_ERR_NO_MESSAGE;
        if (timeout_ms > 0 && dl->tv_sec < 0)
            pc_deadline(dl, timeout_ms);
        if (timeout_ms < 0)
            pc_loop_cond_wait(&c->cond, &c->lock);
        else if (pc_loop_cond_timedwait(&c->cond, &c->lock, dl))
            return c->qhead ? PULSARC_OK : PULSARC_ERR_NO_MESSAGE;
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_receive(pulsarc_consumer_t *c, pulsarc_msg_t **msgp, int timeout_ms) {
    if (!c || !msgp)
        return PULSARC_ERR_INVALID_ARG;
    *msgp = NULL;
    if (c->listener)
        return PULSARC_ERR_STATE; /* messages go to the listener */
    if (c->ops->receive) {
        pulsarc_err_t zerr = c->ops->receive(c, msgp, timeout_ms);
        if (!zerr)
            pc_consumer_icpts_before_consume(c, msgp, 1);
        return zerr;
    }
    struct timespec dl = {.tv_sec = -1};
    pulsarc_consumer_t *flow = NULL;
    pthread_mutex_lock(&c->lock);
    scale_before_wait_locked(c);
    pulsarc_err_t err = pc_queue_wait_locked(c, timeout_ms, &dl);
    if (!err)
        *msgp = pop_locked(c, &flow);
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(flow);
    if (!err)
        pc_consumer_icpts_before_consume(c, msgp, 1);
    return err;
}

/*
 * Batch receive's take (lock held, at least one message queued): what is
 * queued, up to max messages or until *bytes reaches max_bytes, into
 * msgs. As pop_locked for each, with the queue's own permits owed in one
 * sum: the flow (posted after the lock) is the same, the work per message
 * a few stores.
 */
static size_t pop_run_locked(pulsarc_consumer_t *q, pulsarc_msg_t **msgs, size_t max,
                             size_t *bytes, size_t max_bytes, pulsarc_consumer_t **flow) {
    size_t n = 0, taken_bytes = 0;
    uint32_t own = 0;
    pulsarc_msg_t *m = q->qhead, *last = NULL, *next;
    for (; m && n < max && *bytes + taken_bytes < max_bytes; m = next) {
        next = m->next;
        m->next = NULL; /* taken: linked to nothing, as pop_locked leaves it */
        if (m->rx_owner == q)
            own++;
        else
            owe_member(m->rx_owner);
        taken_bytes += m->len;
        msgs[n++] = last = m;
    }
    q->qhead = m;
    if (!m)
        q->qtail = NULL;
    q->qlen -= n;
    q->qbytes -= taken_bytes;
    q->last_dequeued = last->id;
    q->has_dequeued = 1;
    q->stats.delivered += n;
    if (own && owe_locked(q, own))
        *flow = q;
    *bytes += taken_bytes;
    return n;
}

pulsarc_err_t pulsarc_consumer_batch_receive(pulsarc_consumer_t *c, pulsarc_msg_t **msgs, size_t cap,
                                             size_t *n) {
    if (!c || !msgs || !n || !cap)
        return PULSARC_ERR_INVALID_ARG;
    *n = 0;
    if (c->listener)
        return PULSARC_ERR_STATE;
    if (c->ops->batch_receive) {
        pulsarc_err_t zerr = c->ops->batch_receive(c, msgs, cap, n);
        pc_consumer_icpts_before_consume(c, msgs, *n);
        return zerr;
    }
    size_t max = cap < c->batch_max_msgs ? cap : c->batch_max_msgs;
    struct timespec dl;
    pc_deadline(&dl, c->batch_timeout_ms);
    pulsarc_consumer_t *flow = NULL;
    size_t bytes = 0;
    pthread_mutex_lock(&c->lock);
    scale_before_wait_locked(c);
    pulsarc_err_t err = PULSARC_OK;
    while (*n < max && bytes < c->batch_max_bytes) {
        err = pc_queue_wait_locked(c, c->batch_timeout_ms, &dl);
        if (err)
            break;
        *n += pop_run_locked(c, msgs + *n, max - *n, &bytes, c->batch_max_bytes, &flow);
    }
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(flow);
    pc_consumer_icpts_before_consume(c, msgs, *n);
    /* A short or empty batch at the deadline is a normal outcome. */
    if (err == PULSARC_ERR_NO_MESSAGE || *n > 0)
        return PULSARC_OK;
    return err;
}

/* ---------- listener and events ---------- */

typedef struct listener_run {
    pc_cb_item_t item;
    pulsarc_consumer_t *c;
} listener_run_t;

/* Hands out everything queued, one by one; each message taken owes its permit. */
static void drain_to_listener(pulsarc_consumer_t *c) {
    for (;;) {
        pulsarc_consumer_t *flow = NULL;
        pthread_mutex_lock(&c->lock);
        pulsarc_msg_t *m = c->qhead && !c->closing ? pop_locked(c, &flow) : NULL;
        if (!m) {
            c->listener_posted = 0;
            scale_locked(c, &flow); /* drained: the listener outran the queue */
        }
        pthread_mutex_unlock(&c->lock);
        if (flow)
            post_flow(flow);
        if (!m)
            break;
        c->listener(c, m, c->listener_opaque);
    }
}

/* Runs on the callback thread. */
static void run_listener(pc_cb_item_t *it) {
    pulsarc_consumer_t *c = ((listener_run_t *)it)->c;
    free(it);
    if (c->ops->run_listener)
        c->ops->run_listener(c);
    else
        drain_to_listener(c);
    pc_consumer_unref(c);
}

void pc_queue_post_listener(pulsarc_consumer_t *c) {
    listener_run_t *r = calloc(1, sizeof *r);
    if (!r) {
        pthread_mutex_lock(&c->lock);
        c->listener_posted = 0;
        pthread_mutex_unlock(&c->lock);
        return;
    }
    r->item.run = run_listener;
    r->c = c;
    pc_consumer_ref(c);
    pc_cbq_push(&c->client->cbq, &r->item);
}

typedef struct event_run {
    pc_cb_item_t item;
    pulsarc_consumer_t *c;
    pulsarc_consumer_event_t ev;
} event_run_t;

static void run_event(pc_cb_item_t *it) {
    event_run_t *e = (event_run_t *)it;
    e->c->event_cb(e->c, e->ev, e->c->event_opaque);
    pc_consumer_unref(e->c);
    free(e);
}

void pc_consumer_notify_event(pulsarc_consumer_t *c, pulsarc_consumer_event_t ev) {
    if (!c->event_cb)
        return;
    event_run_t *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->item.run = run_event;
    e->c = c;
    e->ev = ev;
    pc_consumer_ref(c);
    pc_cbq_push(&c->client->cbq, &e->item);
}
