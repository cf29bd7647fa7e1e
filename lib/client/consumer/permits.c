/*
 * Design notes: a single-topic consumer's flow permits, what the broker
 * may push to it. Every message handed out of a receive queue owes one
 * permit back to the consumer that received it (its rx_owner), which may
 * deliver into a multi-topic consumer's queue; entries dropped on the way
 * (invalid, already acknowledged, skipped by a reader) are refunded at
 * once, so the broker never stalls on permits we silently ate. What is
 * owed goes out as one FLOW once half the queue's worth is owed.
 *
 * With autoScaledReceiverQueueSizeEnabled the queue's size moves: the
 * receive queue grows it (scale_locked there) and grants the difference
 * here; the idle check (pc_single_idle_check, every
 * autoScaledReceiverQueueIdleMs on the io thread) halves it, not below
 * one, when it stayed below a quarter of its size and fewer than a quarter
 * arrived. Permits the broker holds cannot be taken back: the halving's
 * worth is withheld from the next permits owed instead, and the pool of
 * received-message memory is trimmed to the new size.
 *
 * The receive queue reaches these through the receiver's table
 * (pc_single_receiver_ops, set on every single-topic consumer as it is
 * made) as it hands messages out; single.c calls down for a fresh
 * subscription's permits and the idle check. Nothing here calls either.
 *
 * Threads: FLOW is sent on the io thread (posted there from application
 * threads through the consumer's own post node, so a FLOW costs no
 * allocation; flow_posted keeps the node from being posted again while it
 * is queued); the counters are under the consumer's lock, or
 * the queue's when the consumer is its own queue (the same lock). Lock
 * order: the queue's lock, then the receiving consumer's when they differ.
 */
#include "client/consumer/single.h"

void pc_single_send_flow(pc_single_t *c, uint32_t n) {
    if (c->h.state != PC_H_READY || !c->h.conn || n == 0)
        return;
    Pulsar__Proto__CommandFlow fl = PULSAR__PROTO__COMMAND_FLOW__INIT;
    fl.consumer_id = c->id;
    fl.messagepermits = n;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__FLOW;
    cmd.flow = &fl;
    pc_conn_send(c->h.conn, &cmd);
    pthread_mutex_lock(&c->base.lock);
    c->base.permits_sent += n;
    pthread_mutex_unlock(&c->base.lock);
}

uint32_t pc_single_subscribed_permits(pc_single_t *c) {
    pulsarc_consumer_t *q = c->queue;
    if (q->ops->subscribed)
        return q->ops->subscribed(q, c);
    pthread_mutex_lock(&c->base.lock);
    uint32_t n = (uint32_t)c->base.cur_queue_size; /* the broker holds nothing: grant it all */
    c->withheld = 0;                               /* nor anything a shrink kept back */
    pthread_mutex_unlock(&c->base.lock);
    return n;
}

static pulsarc_err_t add_permits_sent(pc_single_t *s, void *arg) {
    pthread_mutex_lock(&s->base.lock);
    *(uint64_t *)arg += s->base.permits_sent;
    pthread_mutex_unlock(&s->base.lock);
    return PULSARC_OK;
}

uint64_t pc_consumer_permits_sent(pulsarc_consumer_t *c) {
    uint64_t n = 0;
    c->ops->each_single(c, add_permits_sent, &n);
    return n;
}

static void do_flow(void *arg) {
    pc_single_t *c = arg;
    pthread_mutex_lock(&c->base.lock);
    uint32_t n = c->permits;
    c->permits = 0;
    c->flow_posted = 0;
    pthread_mutex_unlock(&c->base.lock);
    pc_single_send_flow(c, n);
    pc_consumer_unref(&c->base);
}

/* A shrink's withheld permits are paid from those owed before any go out. Lock held. */
static void pay_withheld_locked(pc_single_t *c) {
    uint32_t keep = c->withheld < c->permits ? c->withheld : c->permits;
    c->withheld -= keep;
    c->permits -= keep;
}

/* Owes n permits back; 1 when the caller must post a FLOW. Lock held. */
static int owe_locked(pc_single_t *c, uint32_t n) {
    c->permits += n;
    pay_withheld_locked(c);
    if (c->flow_posted || c->permits == 0 || c->permits < (uint32_t)(c->base.cur_queue_size + 1) / 2)
        return 0;
    c->flow_posted = 1;
    return 1;
}

/* Off the loop thread, flow_posted just set: the node is not queued. */
static void post_flow_node(pc_single_t *c) {
    pc_consumer_ref(&c->base); /* do_flow's; dropped here if the loop refuses */
    if (pc_loop_post_node(c->base.client->loop, &c->flow_node, do_flow, c) != PULSARC_OK)
        pc_consumer_unref(&c->base); /* closing: flow_posted stays, no FLOW is due */
}

static void post_flow(pc_single_t *c) {
    if (pc_loop_in_thread(c->base.client->loop)) {
        pc_consumer_ref(&c->base);
        do_flow(c);
    } else {
        post_flow_node(c);
    }
}

void pc_single_refund(pc_single_t *c, uint32_t permits) {
    pthread_mutex_lock(&c->base.lock);
    int flow = permits && owe_locked(c, permits);
    pthread_mutex_unlock(&c->base.lock);
    if (flow)
        post_flow(c);
}

/* A member's permit, returned while the queue's lock is held (queue -> member order). */
static void owe_member(pc_single_t *member) {
    pthread_mutex_lock(&member->base.lock);
    member->base.stats.delivered++;
    int flow = owe_locked(member, 1);
    pthread_mutex_unlock(&member->base.lock);
    if (flow)
        post_flow(member);
}

void pc_single_idle_check(pc_single_t *c) {
    pulsarc_consumer_t *q = &c->base;
    int shrunk = 0;
    pthread_mutex_lock(&q->lock);
    uint64_t arrived = q->stats.received - q->received_at_check;
    size_t cur = (size_t)q->cur_queue_size;
    if (cur > 1 && q->qlen_peak * 4 < cur && arrived * 4 < cur) {
        shrunk = (int)cur / 2;
        q->cur_queue_size = shrunk;
        q->scale_hint = 0;
        c->withheld += (uint32_t)(cur - (size_t)shrunk);
        pay_withheld_locked(c);
        /* Never more than the broker may still push: what is withheld is
         * paid by messages arriving, and a debt nothing can pay would stall. */
        uint64_t out = q->permits_sent > q->stats.received ? q->permits_sent - q->stats.received : 0;
        if (c->withheld > out)
            c->withheld = (uint32_t)out;
    }
    q->received_at_check = q->stats.received;
    q->qlen_peak = q->qlen;
    pthread_mutex_unlock(&q->lock);
    if (shrunk)
        pc_rxpool_set_queue(c->pool, (size_t)shrunk);
}

/* ---------- the receive queue's table (consumer_int.h) ---------- */

static int rx_owe_locked(pulsarc_consumer_t *rx, uint32_t n) {
    return owe_locked(pc_single_of(rx), n);
}

static void rx_owe_member(pulsarc_consumer_t *rx) { owe_member(pc_single_of(rx)); }

static void rx_post_flow(pulsarc_consumer_t *rx) { post_flow(pc_single_of(rx)); }

static uint32_t rx_owed_locked(pulsarc_consumer_t *rx) { return pc_single_of(rx)->permits; }

static void rx_resized(pulsarc_consumer_t *rx, size_t n) {
    pc_rxpool_set_queue(pc_single_of(rx)->pool, n); /* its lock is a leaf */
}

const pc_queue_receiver_ops_t pc_single_receiver_ops = {
    .owe_locked = rx_owe_locked,
    .owe_member = rx_owe_member,
    .post_flow = rx_post_flow,
    .owed_locked = rx_owed_locked,
    .resized = rx_resized,
};
