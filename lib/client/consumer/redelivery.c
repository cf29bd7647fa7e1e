/*
 * Design notes: owns the timers that turn negative acks and ack timeouts
 * into REDELIVER_UNACKNOWLEDGED_MESSAGES. Nacks are kept per entry (the
 * batch index dropped, since the broker redelivers whole entries); ack
 * timeouts per message. One timer serves both, armed for the earliest due
 * time. The owner decides how ids go on the wire (selectively for Shared
 * and Key_Shared, "all" otherwise), and may be told what each sweep sent
 * (notify: the interceptors' redelivery notices). Loop thread only.
 */
#include "client/consumer/redelivery.h"

#include <stdlib.h>

#define SWEEP_MAX 1000

static void arm(pc_redelivery_t *r);

static void sweep(pc_redelivery_t *r, pc_idmap_t *m) {
    pulsarc_msgid_t ids[SWEEP_MAX];
    size_t n;
    while ((n = pc_idmap_take_due(m, pc_now_ms(), ids, SWEEP_MAX)) > 0) {
        r->redeliver(r->owner, ids, n);
        if (r->notify)
            r->notify(r->owner, m == &r->unacked, ids, n);
    }
}

static void on_timer(void *arg) {
    pc_redelivery_t *r = arg;
    sweep(r, &r->nacked);
    sweep(r, &r->unacked);
    arm(r);
}

static void arm(pc_redelivery_t *r) {
    int64_t due = pc_idmap_min(&r->nacked);
    int64_t due2 = pc_idmap_min(&r->unacked);
    if (due2 < due)
        due = due2;
    if (due == INT64_MAX) {
        pc_timer_stop(r->loop, &r->timer);
        return;
    }
    /* Round to the tick so a burst of deadlines shares one sweep. */
    int64_t delay = due - pc_now_ms();
    if (delay < r->tick_ms)
        delay = r->tick_ms;
    if (!pc_timer_active(&r->timer) || r->timer.due_ms > pc_now_ms() + delay)
        pc_timer_start(r->loop, &r->timer, delay);
}

void pc_redelivery_init(pc_redelivery_t *r, pc_loop_t *loop, pc_redeliver_fn fn, void *owner,
                        int64_t nack_delay_ms, int64_t ack_timeout_ms, int64_t tick_ms) {
    r->loop = loop;
    r->redeliver = fn;
    r->notify = NULL;
    r->owner = owner;
    r->nack_delay_ms = nack_delay_ms;
    r->ack_timeout_ms = ack_timeout_ms;
    r->tick_ms = tick_ms > 0 ? tick_ms : 100;
    pc_idmap_init(&r->nacked);
    pc_idmap_init(&r->unacked);
    pc_timer_init(&r->timer, on_timer, r);
}

void pc_redelivery_stop(pc_redelivery_t *r) {
    if (r->loop)
        pc_timer_stop(r->loop, &r->timer);
}

void pc_redelivery_free(pc_redelivery_t *r) {
    pc_idmap_free(&r->nacked);
    pc_idmap_free(&r->unacked);
}

void pc_redelivery_delivered(pc_redelivery_t *r, const pulsarc_msgid_t *id) {
    if (r->ack_timeout_ms <= 0)
        return;
    pc_idmap_put(&r->unacked, id, pc_now_ms() + r->ack_timeout_ms);
    arm(r);
}

void pc_redelivery_acked(pc_redelivery_t *r, const pulsarc_msgid_t *id) {
    if (r->ack_timeout_ms > 0)
        pc_idmap_del(&r->unacked, id);
}

void pc_redelivery_nack(pc_redelivery_t *r, const pulsarc_msgid_t *id) {
    pulsarc_msgid_t entry = *id;
    entry.batch_index = -1;
    entry.batch_size = 0;
    pc_redelivery_acked(r, id); /* a nacked message no longer times out */
    pc_idmap_put(&r->nacked, &entry, pc_now_ms() + r->nack_delay_ms);
    arm(r);
}

void pc_redelivery_clear(pc_redelivery_t *r) {
    pc_idmap_clear(&r->nacked);
    pc_idmap_clear(&r->unacked);
    pc_timer_stop(r->loop, &r->timer);
}
