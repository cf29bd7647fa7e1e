/*
 * Design notes: how a single-topic consumer hands what it decoded to its
 * receive queue. Entries decoded during one read of the connection are
 * gathered in `pend` and reach the queue (its own, or the multi-topic
 * consumer's it belongs to) in one append when the read is done: one
 * lock, one wake-up and one permit count per read instead of per frame,
 * which is what unbatched topics need. Entries that failed validation are
 * discarded, reported, and their permits returned at once. Every message
 * delivered is remembered by the redelivery tracker (ack timeout) and,
 * when dead-lettering is on, may become a dead-letter candidate.
 *
 * Threads: the io thread only.
 */
#include <stdio.h>

#include "client/consumer/single.h"

static void track_delivered(pc_single_t *c, const pc_rx_result_t *r) {
    pc_dlq_on_delivered(c, r->first);
    for (pulsarc_msg_t *m = r->first; m; m = m->next) {
        m->rx_owner = &c->base;
        pc_redelivery_delivered(&c->redelivery, &m->id);
    }
}

static void report_discard(pc_single_t *c, const pc_rx_result_t *r) {
    fprintf(stderr, "pulsarc: %s [%s]: entry discarded: %s\n", c->base.topic.full, c->base.sub,
            r->error);
}

/*
 * Takes a decoded entry: discard it and say why, or gather its messages.
 * They reach the queue when the connection has dispatched the whole read
 * (pc_single_flush): one lock, one wake-up and one permit count per
 * read instead of per frame, which is what unbatched topics need.
 */
void pc_single_deliver(pc_single_t *c, pc_rx_result_t *r) {
    if (r->validation_error != -1) {
        report_discard(c, r);
        if (r->validation_error >= 0) /* tell the broker why it will not be acked normally */
            pc_single_send_validation_ack(c, &r->entry_id, r->validation_error);
        pthread_mutex_lock(&c->base.lock);
        c->base.stats.discarded++;
        pthread_mutex_unlock(&c->base.lock);
        pc_single_refund(c, r->permits);
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

void pc_single_flush(pc_single_t *c) {
    pc_rx_result_t *r = &c->pend;
    if (!r->permits && !r->n)
        return;
    track_delivered(c, r);
    pulsarc_consumer_t *q = c->queue;
    int listen = pc_queue_append(q, r->first, r->last, r->n);
    if (q != &c->base) { /* the member counts what reached it too */
        pthread_mutex_lock(&c->base.lock);
        c->base.stats.received += r->n;
        pthread_mutex_unlock(&c->base.lock);
    }
    uint32_t refund = r->permits > r->n ? r->permits - (uint32_t)r->n : 0;
    r->first = r->last = NULL;
    r->n = 0;
    r->permits = 0;
    if (refund)
        pc_single_refund(c, refund);
    if (listen)
        pc_queue_post_listener(q);
}
