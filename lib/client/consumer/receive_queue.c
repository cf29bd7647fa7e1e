/*
 * Design notes: the receive queue between the io thread and the
 * application. The io thread appends decoded messages (one lock per
 * entry, not per message); application threads take them with receive,
 * batch receive, or through the message listener run on the client's
 * callback thread. Every message taken returns one flow permit; permits
 * go back to the broker as one FLOW once half the queue's worth is owed.
 * Entries we had to drop return their permits at once, so the broker
 * never stalls on permits we silently ate.
 *
 * Threads: deliver/refund/send_flow on the io thread; receive and the
 * listener on application threads; `lock` guards everything shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "core/err.h"

/* ---------- permits ---------- */

void pc_consumer_send_flow(pulsarc_consumer_t *c, uint32_t n) {
    if (c->h.state != PC_H_READY || !c->h.conn || n == 0)
        return;
    Pulsar__Proto__CommandFlow fl = PULSAR__PROTO__COMMAND_FLOW__INIT;
    fl.consumer_id = c->id;
    fl.messagepermits = n;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__FLOW;
    cmd.flow = &fl;
    pc_conn_send(c->h.conn, &cmd);
}

static void do_flow(void *arg) {
    pulsarc_consumer_t *c = arg;
    pthread_mutex_lock(&c->lock);
    uint32_t n = c->permits;
    c->permits = 0;
    c->flow_posted = 0;
    pthread_mutex_unlock(&c->lock);
    pc_consumer_send_flow(c, n);
    pc_consumer_unref(c);
}

/* Owes n permits back; 1 when the caller must post a FLOW. Lock held. */
static int owe_locked(pulsarc_consumer_t *c, uint32_t n) {
    c->permits += n;
    if (c->flow_posted || c->permits < (uint32_t)(c->queue_size + 1) / 2)
        return 0;
    c->flow_posted = 1;
    return 1;
}

static void post_flow(pulsarc_consumer_t *c) {
    if (pc_loop_in_thread(c->client->loop)) {
        pc_consumer_ref(c);
        do_flow(c);
    } else {
        pc_consumer_post(c, do_flow, c);
    }
}

void pc_consumer_refund(pulsarc_consumer_t *c, uint32_t permits) {
    pthread_mutex_lock(&c->lock);
    int flow = permits && owe_locked(c, permits);
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(c);
}

/* ---------- the queue ---------- */

size_t pc_consumer_clear_queue_locked(pulsarc_consumer_t *c) {
    size_t n = c->qlen;
    while (c->qhead) {
        pulsarc_msg_t *m = c->qhead;
        c->qhead = m->next;
        pulsarc_msg_destroy(m);
    }
    c->qtail = NULL;
    c->qlen = 0;
    c->qbytes = 0;
    return n;
}

static void post_listener(pulsarc_consumer_t *c);

static void append_locked(pulsarc_consumer_t *c, pc_rx_result_t *r) {
    size_t bytes = 0;
    for (pulsarc_msg_t *m = r->first; m; m = m->next)
        bytes += m->len;
    if (c->qtail)
        c->qtail->next = r->first;
    else
        c->qhead = r->first;
    c->qtail = r->last;
    c->qlen += r->n;
    c->qbytes += bytes;
    c->stats.received += r->n;
    pthread_cond_broadcast(&c->cond);
}

static void track_delivered(pulsarc_consumer_t *c, const pc_rx_result_t *r) {
    pc_dlq_on_delivered(c, r->first);
    for (pulsarc_msg_t *m = r->first; m; m = m->next) {
        m->rx_owner = c;
        pc_redelivery_delivered(&c->redelivery, &m->id);
    }
}

static void report_discard(pulsarc_consumer_t *c, const pc_rx_result_t *r) {
    fprintf(stderr, "pulsarc: %s [%s]: entry discarded: %s\n", c->topic.full, c->sub, r->error);
}

/*
 * Takes a decoded entry: discard it and say why, or gather its messages.
 * They reach the queue when the connection has dispatched the whole read
 * (pc_consumer_flush): one lock, one wake-up and one permit count per
 * read instead of per frame, which is what unbatched topics need.
 */
void pc_consumer_deliver(pulsarc_consumer_t *c, pc_rx_result_t *r) {
    if (r->validation_error != -1) {
        report_discard(c, r);
        if (r->validation_error >= 0) /* tell the broker why it will not be acked normally */
            pc_consumer_send_validation_ack(c, &r->entry_id, r->validation_error);
        pthread_mutex_lock(&c->lock);
        c->stats.discarded++;
        pthread_mutex_unlock(&c->lock);
        pc_consumer_refund(c, r->permits);
        return;
    }
    pc_rx_result_t *p = &c->pend;
    if (r->n) {
        if (p->last)
            p->last->next = r->first;
        else
            p->first = r->first;
        p->last = r->last;
        p->n += r->n;
    }
    p->permits += r->permits;
}

void pc_consumer_flush(pulsarc_consumer_t *c) {
    pc_rx_result_t *r = &c->pend;
    if (!r->permits && !r->n)
        return;
    track_delivered(c, r);
    pulsarc_consumer_t *q = pc_consumer_queue_of(c);
    pthread_mutex_lock(&q->lock);
    if (r->n)
        append_locked(q, r);
    int listen = q->listener && r->n && !q->listener_posted;
    if (listen)
        q->listener_posted = 1;
    pthread_mutex_unlock(&q->lock);
    if (q != c) {
        pthread_mutex_lock(&c->lock);
        c->stats.received += r->n;
        pthread_mutex_unlock(&c->lock);
    }
    uint32_t refund = r->permits > r->n ? r->permits - (uint32_t)r->n : 0;
    r->first = r->last = NULL;
    r->n = 0;
    r->permits = 0;
    if (refund)
        pc_consumer_refund(c, refund);
    if (listen)
        post_listener(q);
}

size_t pc_consumer_drop_queued(pulsarc_consumer_t *c) {
    pulsarc_consumer_t *q = pc_consumer_queue_of(c);
    size_t n = 0;
    pthread_mutex_lock(&q->lock);
    if (q == c) {
        n = pc_consumer_clear_queue_locked(q);
    } else {
        pulsarc_msg_t **pp = &q->qhead;
        q->qtail = NULL;
        while (*pp) {
            pulsarc_msg_t *m = *pp;
            if (m->rx_owner != c) {
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
    }
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* A child's permit, returned while its parent's queue lock is held (parent -> child order). */
static void owe_child(pulsarc_consumer_t *child) {
    pthread_mutex_lock(&child->lock);
    child->stats.delivered++;
    int flow = owe_locked(child, 1);
    pthread_mutex_unlock(&child->lock);
    if (flow)
        post_flow(child);
}

/* Removes the head (lock held); returns the FLOW-needed flag via *flow. */
static pulsarc_msg_t *pop_locked(pulsarc_consumer_t *c, int *flow) {
    pulsarc_msg_t *m = c->qhead;
    c->qhead = m->next;
    if (!c->qhead)
        c->qtail = NULL;
    c->qlen--;
    c->qbytes -= m->len;
    m->next = NULL;
    c->last_dequeued = m->id;
    c->has_dequeued = 1;
    c->stats.delivered++;
    if (m->rx_owner && m->rx_owner != c)
        owe_child(m->rx_owner);
    else
        *flow |= owe_locked(c, 1);
    return m; /* rx_owner stays: acks of a multi-topic consumer route by it */
}

/*
 * Waits (lock held) until a message, close, end of topic or the deadline.
 * *dl is computed on the first wait only (tv_sec < 0 until then): a
 * receive that finds a message queued reads no clock.
 */
static pulsarc_err_t wait_locked(pulsarc_consumer_t *c, int timeout_ms, struct timespec *dl) {
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
            pthread_cond_wait(&c->cond, &c->lock);
        else if (pthread_cond_timedwait(&c->cond, &c->lock, dl))
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
    struct timespec dl = {.tv_sec = -1};
    int flow = 0;
    pthread_mutex_lock(&c->lock);
    pulsarc_err_t err = wait_locked(c, timeout_ms, &dl);
    if (!err)
        *msgp = pop_locked(c, &flow);
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(c);
    return err;
}

pulsarc_err_t pulsarc_consumer_batch_receive(pulsarc_consumer_t *c, pulsarc_msg_t **msgs, size_t cap,
                                             size_t *n) {
    if (!c || !msgs || !n || !cap)
        return PULSARC_ERR_INVALID_ARG;
    *n = 0;
    if (c->listener)
        return PULSARC_ERR_STATE;
    size_t max = cap < c->batch_max_msgs ? cap : c->batch_max_msgs;
    struct timespec dl;
    pc_deadline(&dl, c->batch_timeout_ms);
    int flow = 0;
    size_t bytes = 0;
    pthread_mutex_lock(&c->lock);
    pulsarc_err_t err = PULSARC_OK;
    while (*n < max && bytes < c->batch_max_bytes) {
        err = wait_locked(c, c->batch_timeout_ms, &dl);
        if (err)
            break;
        msgs[*n] = pop_locked(c, &flow);
        bytes += msgs[(*n)++]->len;
    }
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(c);
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

/* Runs on the callback thread: hands out everything queued, one by one. */
static void run_listener(pc_cb_item_t *it) {
    pulsarc_consumer_t *c = ((listener_run_t *)it)->c;
    free(it);
    for (;;) {
        int flow = 0;
        pthread_mutex_lock(&c->lock);
        pulsarc_msg_t *m = c->qhead && !c->closing ? pop_locked(c, &flow) : NULL;
        if (!m)
            c->listener_posted = 0;
        pthread_mutex_unlock(&c->lock);
        if (flow)
            post_flow(c);
        if (!m)
            break;
        c->listener(c, m, c->listener_opaque);
    }
    pc_consumer_unref(c);
}

static void post_listener(pulsarc_consumer_t *c) {
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
    c = pc_consumer_queue_of(c); /* the application knows the parent */
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
