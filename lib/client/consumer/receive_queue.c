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
 * Receives that find the queue empty wait in line (`receivers`, a
 * pc_op_queue_t of pc_receive_t ops), sync and receive_async alike: the
 * io thread's append hands each message to the oldest waiter (its permit
 * owed as a receive's take owes it) and completes the op after letting go
 * of the lock, so a receiver wakes with its message instead of racing
 * others for it; a message therefore never sits queued while a receiver
 * waits. Close and end of topic fail the line (pc_queue_wake_locked). A
 * receive that finds a message queued takes it with no op and no clock.
 * Batch receive keeps its own wait on `cond`: it wants "full or
 * timeout", several messages per wait; in the line it would take one
 * message per hand-over and need to queue again for each, and its
 * deadline covers the whole batch.
 *
 * The queue belongs to the common handle (consumer_int.h), whatever kind
 * it is; a multi-topic consumer's members deliver into their parent's.
 * Lock order: the queue's lock, then the receiving consumer's when they
 * differ.
 *
 * Kinds that do not prefetch (zero_queue.c) wait in the same line; their
 * hooks refuse what they cannot serve and ask the broker for each
 * receiver; they run their own listener and decide the permits a fresh
 * subscription asks for.
 *
 * Threads: append on the io thread; receive and the listener on
 * application threads, receive_async's callback on the callback thread;
 * `lock` guards everything shared, the line included.
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

static pulsarc_msg_t *take_locked(pulsarc_consumer_t *q, pulsarc_consumer_t **flow);

/* Gives each waiting receiver, oldest first, one queued message (lock held); their ops go to given. */
static void hand_over_locked(pulsarc_consumer_t *q, pc_op_queue_t *given, pulsarc_consumer_t **flow) {
    while (q->qhead && q->receivers.head) {
        pc_op_t *op = pc_op_queue_pop(&q->receivers);
        ((pc_receive_t *)op)->msg = take_locked(q, flow);
        pc_op_queue_push(given, op);
    }
}

int pc_queue_append(pulsarc_consumer_t *q, pulsarc_msg_t *first, pulsarc_msg_t *last, size_t n,
                    size_t bytes) {
    pc_op_queue_t given = {0};
    pulsarc_consumer_t *flow = NULL;
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
        if (q->receivers.head)
            hand_over_locked(q, &given, &flow);
        if (q->qhead)
            pthread_cond_broadcast(&q->cond);
    }
    int listen = q->listener && n && !q->listener_posted;
    if (listen)
        q->listener_posted = 1;
    pthread_mutex_unlock(&q->lock);
    pc_op_queue_complete_all(&given, PULSARC_OK, NULL); /* no lock: the last touch of each op */
    if (flow)
        post_flow(flow);
    return listen;
}

/* a at or before b; b's batch index -1 covers its whole entry. */
static int at_or_before(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    if (a->ledger_id != b->ledger_id)
        return a->ledger_id < b->ledger_id;
    if (a->entry_id != b->entry_id)
        return a->entry_id < b->entry_id;
    return b->batch_index < 0 || a->batch_index <= b->batch_index;
}

/*
 * Drops the queued messages owner received: all of them without id, else
 * those at id's position, or at or before it with upto.
 */
static size_t drop_matching(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                            const pulsarc_msgid_t *id, int upto) {
    size_t n = 0;
    pthread_mutex_lock(&q->lock);
    pulsarc_msg_t **pp = &q->qhead;
    q->qtail = NULL;
    while (*pp) {
        pulsarc_msg_t *m = *pp;
        if (m->rx_owner != owner ||
            (id && !(upto ? at_or_before(&m->id, id) : pulsarc_msgid_compare(&m->id, id) == 0))) {
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
    return drop_matching(q, owner, NULL, 0);
}

size_t pc_queue_drop_id(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                        const pulsarc_msgid_t *id) {
    return drop_matching(q, owner, id, 0);
}

size_t pc_queue_drop_upto(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                          const pulsarc_msgid_t *id) {
    return drop_matching(q, owner, id, 1);
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

void pc_queue_wake_locked(pulsarc_consumer_t *c) {
    pthread_cond_broadcast(&c->cond);
    if (c->qhead)
        return; /* receivers wait only on an empty queue */
    if (c->closing)
        pc_op_queue_complete_all(&c->receivers, PULSARC_ERR_CLOSED, "consumer closed");
    else if (c->end_of_topic)
        pc_op_queue_complete_all(&c->receivers, PULSARC_ERR_END_OF_TOPIC,
                             "the topic was terminated and every message received");
}

/* Kinds that prefetch owe the taken message's permit; the others asked for it one by one. */
static pulsarc_msg_t *take_locked(pulsarc_consumer_t *q, pulsarc_consumer_t **flow) {
    return q->ops->receive_begin ? pc_queue_take_locked(q) : pop_locked(q, flow);
}

/*
 * A receive's first look (lock held, dropped meanwhile when a grown queue
 * grants permits): 1 when it is over at once, with *m taken or *err set;
 * 0 when the queue is empty and the receive is to wait in line.
 */
static int receive_now_locked(pulsarc_consumer_t *c, pulsarc_msg_t **m, pulsarc_err_t *err,
                              int timeout_ms, pulsarc_consumer_t **flow) {
    *err = c->ops->receive_begin ? c->ops->receive_begin(c, timeout_ms) : PULSARC_OK;
    if (*err)
        return 1;
    if (!c->qhead)
        scale_before_wait_locked(c);
    if (c->qhead) {
        *m = take_locked(c, flow);
        return 1;
    }
    if (c->closing)
        *err = PULSARC_ERR_CLOSED;
    else if (c->end_of_topic)
        *err = PULSARC_ERR_END_OF_TOPIC;
    else if (timeout_ms == 0)
        *err = PULSARC_ERR_NO_MESSAGE;
    return *err != PULSARC_OK;
}

/*
 * A sync receive on an empty queue (lock held): one op in the line of
 * receivers and one wait for it. Kinds that ask the broker for each
 * receiver learn of it once it is in line, and wait without a deadline.
 */
static pulsarc_err_t wait_in_line_locked(pulsarc_consumer_t *c, pulsarc_msg_t **m, int timeout_ms,
                                         pulsarc_consumer_t **flow) {
    pc_receive_t r = {.msg = NULL};
    pc_op_init(&r.op);
    int done;
    if (c->ops->receiver_queued) {
        pc_op_queue_push(&c->receivers, &r.op);
        pthread_mutex_unlock(&c->lock);
        c->ops->receiver_queued(c);
        done = pc_op_wait_until(&r.op, NULL);
        pthread_mutex_lock(&c->lock);
    } else {
        struct timespec dl;
        if (timeout_ms > 0)
            pc_deadline(&dl, timeout_ms);
        done = pc_op_queue_wait(&c->receivers, &r.op, &c->lock, timeout_ms < 0 ? NULL : &dl);
    }
    pulsarc_err_t err = done ? pc_op_result(&r.op, NULL, 0) : PULSARC_ERR_NO_MESSAGE;
    if (!done && c->qhead) { /* arrived as the time ran out, after this receiver left the line */
        r.msg = take_locked(c, flow);
        err = PULSARC_OK;
    }
    pc_op_destroy(&r.op);
    *m = r.msg;
    return err;
}

pulsarc_err_t pulsarc_consumer_receive(pulsarc_consumer_t *c, pulsarc_msg_t **msgp, int timeout_ms) {
    if (!c || !msgp)
        return PULSARC_ERR_INVALID_ARG;
    *msgp = NULL;
    if (c->listener)
        return PULSARC_ERR_STATE; /* messages go to the listener */
    pulsarc_consumer_t *flow = NULL;
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&c->lock);
    if (c->qhead && !c->ops->receive_begin)
        m = pop_locked(c, &flow); /* the fast path: no op, no clock */
    else if (!receive_now_locked(c, &m, &err, timeout_ms, &flow))
        err = wait_in_line_locked(c, &m, timeout_ms, &flow);
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(flow);
    if (c->ops->receive_end)
        err = c->ops->receive_end(c, &m, err);
    if (!err)
        pc_consumer_icpts_before_consume(c, &m, 1);
    *msgp = m;
    return err;
}

/* ---------- receive_async ---------- */

typedef struct receive_async {
    pc_receive_t r; /* first: the op completed is this */
    pulsarc_consumer_t *c;
    pulsarc_receive_cb cb;
    void *opaque;
} receive_async_t;

/* One receive_async callback fewer owed: the last wakes the closers waiting. Lock held. */
static void callback_settled_locked(pulsarc_consumer_t *c) {
    if (--c->receive_callbacks == 0)
        pc_op_queue_complete_all(&c->drain_line, PULSARC_OK, NULL);
}

/* Callback thread (or pulsarc_client_poll), no library lock held. */
static void receive_async_done(pc_op_t *op, void *arg) {
    receive_async_t *ra = arg;
    pulsarc_consumer_t *c = ra->c;
    pulsarc_receive_cb cb = ra->cb;
    void *opaque = ra->opaque;
    pulsarc_msg_t *m = ra->r.msg;
    pulsarc_err_t err = pc_op_result(op, NULL, 0);
    pc_op_destroy(op);
    free(ra);
    if (c->ops->receive_end)
        err = c->ops->receive_end(c, &m, err);
    if (!err)
        pc_consumer_icpts_before_consume(c, &m, 1);
    cb(c, err, err ? NULL : m, opaque);
    pthread_mutex_lock(&c->lock);
    callback_settled_locked(c);
    pthread_mutex_unlock(&c->lock);
    pc_consumer_unref(c);
}

/*
 * The client closed between the take and the hand-off: its callback queue
 * refused the callback, so nothing calls back; the caller hears CLOSED
 * and what receive_async_done would release is released here.
 */
static pulsarc_err_t receive_async_refused(receive_async_t *ra) {
    pulsarc_consumer_t *c = ra->c;
    pulsarc_msg_destroy(ra->r.msg); /* taken just now; the consumer is closed */
    pc_op_destroy(&ra->r.op);
    free(ra);
    pthread_mutex_lock(&c->lock);
    callback_settled_locked(c);
    pthread_mutex_unlock(&c->lock);
    pc_consumer_unref(c);
    return PULSARC_ERR_CLOSED;
}

pulsarc_err_t pulsarc_consumer_receive_async(pulsarc_consumer_t *c, pulsarc_receive_cb cb,
                                             void *opaque) {
    if (!c || !cb)
        return PULSARC_ERR_INVALID_ARG;
    receive_async_t *ra = calloc(1, sizeof *ra);
    if (!ra)
        return PULSARC_ERR_NOMEM;
    pc_op_init(&ra->r.op);
    pc_op_call_back(&ra->r.op, &c->client->cbq, receive_async_done, ra);
    ra->c = c;
    ra->cb = cb;
    ra->opaque = opaque;
    pc_consumer_ref(c);
    pulsarc_consumer_t *flow = NULL;
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&c->lock);
    if (c->closing) {
        /* Refused at once, no callback: one owed now would keep a close
         * waiting for its callbacks (pc_queue_wait_callbacks) behind a
         * callback that re-arms on CLOSED, for ever. */
        pthread_mutex_unlock(&c->lock);
        pc_consumer_unref(c);
        pc_op_destroy(&ra->r.op);
        free(ra);
        return PULSARC_ERR_CLOSED;
    }
    c->receive_callbacks++;
    int now = 1;
    if (c->listener)
        err = PULSARC_ERR_STATE; /* messages go to the listener */
    else if (!(now = receive_now_locked(c, &ra->r.msg, &err, -1, &flow)))
        pc_op_queue_push(&c->receivers, &ra->r.op);
    int tell = !now && c->ops->receiver_queued;
    if (tell)
        pc_consumer_ref(c); /* ra's reference may go with a callback that runs first */
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(flow);
    if (now && pc_op_done(&ra->r.op, err, NULL))
        return receive_async_refused(ra);
    if (tell) {
        c->ops->receiver_queued(c);
        pc_consumer_unref(c);
    }
    return PULSARC_OK;
}

/*
 * With a callback thread, close returns only after the receive_async
 * callbacks it completed ran, so none runs after close returned. Not from
 * a callback (it would wait for itself), and not without a callback
 * thread: those run at the application's next poll or step.
 */
void pc_queue_wait_callbacks(pulsarc_consumer_t *c) {
    if (!c->client->cbq.own_thread || pc_in_callback())
        return;
    pthread_mutex_lock(&c->lock);
    /* A receiver still in line has no callback queued yet (none after close completed them all). */
    while (c->receive_callbacks > 0 && !c->receivers.head) {
        pc_op_t drained; /* completed by the callback that brings the count to 0 */
        pc_op_init(&drained);
        pc_op_queue_wait(&c->drain_line, &drained, &c->lock, NULL);
        pc_op_destroy(&drained);
    }
    pthread_mutex_unlock(&c->lock);
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
