/*
 * When to ask the broker for messages again: negative acks after their
 * delay, and (with ackTimeoutMillis) messages delivered but not acked in
 * time.
 */
#ifndef PC_REDELIVERY_H
#define PC_REDELIVERY_H
#include "client/consumer/idmap.h"
#include "net/loop.h"

typedef void (*pc_redeliver_fn)(void *owner, const pulsarc_msgid_t *ids, size_t n);
/* Told what a sweep sent: timed_out 1 for ack timeouts, 0 for nacks. */
typedef void (*pc_redelivery_notify_fn)(void *owner, int timed_out, const pulsarc_msgid_t *ids,
                                        size_t n);

typedef struct pc_redelivery {
    pc_loop_t *loop;
    pc_redeliver_fn redeliver;
    pc_redelivery_notify_fn notify; /* NULL: nobody listens (set after init) */
    void *owner;
    int64_t nack_delay_ms;
    int64_t ack_timeout_ms;  /* 0: off */
    int64_t tick_ms;
    pc_idmap_t nacked;       /* entry ids (batch index dropped) -> due time */
    pc_idmap_t unacked;      /* message ids -> deadline */
    pc_timer_t timer;
} pc_redelivery_t;

/* Loop thread only. */
void pc_redelivery_init(pc_redelivery_t *r, pc_loop_t *loop, pc_redeliver_fn fn, void *owner,
                        int64_t nack_delay_ms, int64_t ack_timeout_ms, int64_t tick_ms);
void pc_redelivery_stop(pc_redelivery_t *r);
void pc_redelivery_free(pc_redelivery_t *r);
void pc_redelivery_delivered(pc_redelivery_t *r, const pulsarc_msgid_t *id);
void pc_redelivery_acked(pc_redelivery_t *r, const pulsarc_msgid_t *id);
void pc_redelivery_nack(pc_redelivery_t *r, const pulsarc_msgid_t *id);
/* Forgets everything (after "redeliver all" or a seek). */
void pc_redelivery_clear(pc_redelivery_t *r);
#endif
