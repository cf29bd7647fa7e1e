/*
 * Design notes: how a single-topic consumer hands what it decoded to its
 * receive queue. Entries decoded during a run of reads of the connection
 * (up to 256 KiB, or until the socket is drained) are gathered in `pend`
 * and reach the queue (its own, or the multi-topic consumer's it belongs
 * to) in one append when the run is done: one lock, one wake-up and one
 * permit count per run instead of per frame or per entry. Anything that
 * empties the queue on the io thread flushes `pend` first
 * (pc_single_drop_queued), so nothing gathered before it is queued
 * after. Entries that failed validation are discarded, reported, and
 * their permits returned at once. Every message delivered is remembered
 * by the redelivery tracker (ack timeout) and, when dead-lettering is on,
 * may become a dead-letter candidate.
 *
 * What this consumer already acknowledged is dropped before it is
 * gathered: after a reconnect the broker resends whatever it had not seen
 * acked, which includes acks lost with the old connection until their
 * resent copies land. Such a redelivery is acked again (the broker may
 * have lost the first ack for good, in a restart) and its permits
 * returned; of a batch only the messages not acked are delivered.
 *
 * Threads: the io thread only.
 */
#include <stdio.h>

#include "client/consumer/single.h"

/*
 * What the trackers must know of each message. Its consumer and resend
 * epoch were stamped as it was decoded (pc_rx_opts_t); a walk here, after
 * a whole run's entries, would find them out of cache. Without an ack
 * timeout (set once, at creation) the tracker keeps nothing: no walk then.
 */
static void track_delivered(pc_single_t *c, const pc_rx_result_t *r) {
    pc_dlq_on_delivered(c, r->first);
    if (c->redelivery.ack_timeout_ms <= 0)
        return;
    for (pulsarc_msg_t *m = r->first; m; m = m->next)
        pc_redelivery_delivered(&c->redelivery, &m->id);
}

/* A chunk of a chunked message already acked: all its chunks were. */
static int drop_acked_chunk(pc_single_t *c, pc_rx_result_t *r) {
    if (!pc_ack_is_acked(&c->acks, &r->entry_id))
        return 0;
    pc_entry_unref(r->chunk_entry);
    r->chunk_entry = NULL;
    pc_ack_again(&c->acks, &r->entry_id);
    pc_single_refund(c, r->permits);
    return 1;
}

/*
 * An entry the broker sent a second time unasked (it re-dispatches after a
 * reconnect while an earlier read is still on its way): the first copy is
 * queued or with the application already.
 */
static int drop_second_copy(pc_single_t *c, pc_rx_result_t *r) {
    if (pc_entry_set_insert(&c->delivered, r->entry_id.ledger_id, r->entry_id.entry_id))
        return 0; /* the first copy */
    pc_rx_result_discard(r);
    pc_single_refund(c, r->permits);
    return 1;
}

int pc_single_drop_acked(pc_single_t *c, pc_rx_result_t *r) {
    if (r->validation_error != -1)
        return 0;
    if (r->chunk_entry)
        return drop_acked_chunk(c, r);
    /* The common case, a new entry, is settled once for all its messages. */
    if (pc_ack_entry_untouched(&c->acks, r->entry_id.ledger_id, r->entry_id.entry_id))
        return r->n ? drop_second_copy(c, r) : 0;
    pulsarc_msg_t **pp = &r->first, *kept = NULL;
    pulsarc_msgid_t acked = {0};
    size_t dropped = 0;
    while (*pp) {
        pulsarc_msg_t *m = *pp;
        if (!pc_ack_is_acked(&c->acks, &m->id)) {
            kept = m;
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        acked = m->id;
        dropped++;
        r->bytes -= m->len;
        pulsarc_msg_destroy(m);
    }
    if (dropped) {
        r->last = kept;
        r->n -= dropped;
        pc_ack_again(&c->acks, &acked); /* once per entry */
    }
    if (!r->n && dropped) {
        pc_single_refund(c, r->permits);
        return 1;
    }
    return r->n ? drop_second_copy(c, r) : 0;
}

static void report_discard(pc_single_t *c, const pc_rx_result_t *r) {
    fprintf(stderr, "pulsarc: %s [%s]: entry discarded: %s\n", c->base.topic.full, c->base.sub,
            r->error);
}

/*
 * Takes a decoded entry: discard it and say why, or gather its messages.
 * They reach the queue when the connection has dispatched the run of
 * reads (pc_single_flush): one lock, one wake-up and one permit count per
 * run instead of per frame.
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
        p->bytes += r->bytes;
    }
    p->permits += r->permits;
}

void pc_single_flush(pc_single_t *c) {
    pc_rx_result_t *r = &c->pend;
    if (!r->permits && !r->n)
        return;
    track_delivered(c, r);
    pulsarc_consumer_t *q = c->queue;
    int listen = pc_queue_append(q, r->first, r->last, r->n, r->bytes);
    if (q != &c->base) { /* the member counts what reached it too */
        pthread_mutex_lock(&c->base.lock);
        c->base.stats.received += r->n;
        pthread_mutex_unlock(&c->base.lock);
    }
    uint32_t refund = r->permits > r->n ? r->permits - (uint32_t)r->n : 0;
    r->first = r->last = NULL;
    r->n = 0;
    r->bytes = 0;
    r->permits = 0;
    if (refund)
        pc_single_refund(c, refund);
    if (listen)
        pc_queue_post_listener(q);
}
