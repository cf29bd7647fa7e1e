/*
 * Design notes: the application's acknowledgement calls and what they
 * become on the wire. Calls are posted to the io thread, where the ack
 * tracker groups them (ack_tracker.c) and the redelivery tracker turns
 * nacks and ack timeouts into REDELIVER commands (redelivery.c). Every
 * ACK carries a request id when the broker answers acks (protocol 17 on):
 * its ACK_RESPONSE tells the tracker the ack arrived, and what never got
 * one is sent again after the next subscribe. With ackReceiptEnabled the
 * call also waits for that answer, so its result is the broker's (an ack
 * whose connection dropped fails with DISCONNECTED, and is still resent).
 *
 * Redelivery of specific ids is only honoured by the broker on Shared and
 * Key_Shared subscriptions; on Exclusive and Failover a request becomes
 * "redeliver everything unacked" under a new consumer epoch, and the
 * local queue is emptied since the broker sends it all again.
 *
 * The public calls take any kind of consumer: its route operation names
 * the single-topic consumer that received the message (or owns the id),
 * and the work is done there. Acks in a transaction are sent one by one
 * with a request id, after the subscription joined the transaction
 * (txn.h, called downward).
 */
#include <stdlib.h>
#include <string.h>

#include "client/consumer/interceptors.h"
#include "client/consumer/single.h"
#include "client/txn/txn.h"
#include "core/err.h"

enum { OP_ACK, OP_CUMULATIVE, OP_NACK, OP_REDELIVER_ALL };

/* ---------- wire ---------- */

static void fill_ids(Pulsar__Proto__MessageIdData *mids, Pulsar__Proto__MessageIdData **ptrs,
                     const pc_ack_item_t *items, size_t n) {
    for (size_t i = 0; i < n; i++) {
        pulsar__proto__message_id_data__init(&mids[i]);
        mids[i].ledgerid = (uint64_t)items[i].ledger_id;
        mids[i].entryid = (uint64_t)items[i].entry_id;
        mids[i].n_ack_set = items[i].n_ack_set;
        mids[i].ack_set = items[i].ack_set;
        ptrs[i] = &mids[i];
    }
}

/* A transactional ack's answer: the broker's verdict for the waiting call. */
static void on_ack_response(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    pc_op_t *w = arg;
    if (!err && f->cmd->ackresponse->has_error) {
        err = pc_err_from_server(f->cmd->ackresponse->error);
        msg = f->cmd->ackresponse->message;
    }
    pc_op_done(w, err, msg);
}

/* One ACK's request id, for its ACK_RESPONSE; holds a reference on the consumer. */
typedef struct ack_receipt {
    pc_single_t *c;
    uint64_t request_id;
    pc_op_t *waiter; /* ackReceiptEnabled: the application's call waiting for it, or NULL */
} ack_receipt_t;

/*
 * Only a success confirms the ack. An error (the consumer is being closed
 * or re-created on the broker, say) or no answer at all (timeout,
 * connection gone) leaves it unconfirmed: the next subscribe sends it
 * again, which is harmless if the broker did apply it.
 */
static void on_ack_receipt(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    ack_receipt_t *r = arg;
    if (!err && f->cmd->ackresponse->has_error) {
        err = pc_err_from_server(f->cmd->ackresponse->error);
        msg = f->cmd->ackresponse->message;
    } else if (!err) {
        pc_ack_confirmed(&r->c->acks, r->request_id);
    }
    if (r->waiter)
        pc_op_done(r->waiter, err, msg);
    pc_consumer_unref(&r->c->base);
    free(r);
}

/* Ack receipts came with protocol version 17; the application may ask for them anyway. */
static int wants_receipt(const pc_single_t *c) {
    return c->ack_waiter || pc_conn_protocol_version(c->h.conn) >= 17;
}

/* Sends cmd with a request id; 0 when the broker's answer will not come (no memory). */
static uint64_t send_with_receipt(pc_single_t *c, pc_cmd_t *cmd) {
    ack_receipt_t *r = calloc(1, sizeof *r);
    if (!r) {
        if (c->ack_waiter)
            pc_op_done(c->ack_waiter, PULSARC_ERR_NOMEM, "out of memory");
        c->ack_waiter = NULL;
        pc_conn_send(c->h.conn, cmd);
        return 0;
    }
    r->c = c;
    r->request_id = c->base.client->next_id++;
    r->waiter = c->ack_waiter;
    c->ack_waiter = NULL;
    cmd->ack->has_request_id = 1;
    cmd->ack->request_id = r->request_id;
    pc_consumer_ref(&c->base);
    uint64_t id = r->request_id; /* r may be gone when this returns (a closed connection) */
    pc_conn_request(c->h.conn, cmd, id, c->base.client->op_timeout_ms, on_ack_receipt, r);
    return id;
}

/* The tracker's output: one ACK command; 0 when written. */
static int send_acks(void *owner, const pc_ack_item_t *items, size_t n, int cumulative,
                     uint64_t *receipt) {
    pc_single_t *c = owner;
    *receipt = 0;
    if ((c->h.state != PC_H_READY && c->h.state != PC_H_CLOSING) || !c->h.conn)
        return -1;
    Pulsar__Proto__MessageIdData *mids = calloc(n, sizeof *mids);
    Pulsar__Proto__MessageIdData **ptrs = calloc(n, sizeof *ptrs);
    if (!mids || !ptrs) {
        free(mids);
        free(ptrs);
        return -1;
    }
    fill_ids(mids, ptrs, items, n);
    Pulsar__Proto__CommandAck ack = PULSAR__PROTO__COMMAND_ACK__INIT;
    ack.consumer_id = c->id;
    ack.ack_type = cumulative ? PULSAR__PROTO__COMMAND_ACK__ACK_TYPE__Cumulative
                              : PULSAR__PROTO__COMMAND_ACK__ACK_TYPE__Individual;
    ack.n_message_id = n;
    ack.message_id = ptrs;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ACK;
    cmd.ack = &ack;
    if (wants_receipt(c))
        *receipt = send_with_receipt(c, &cmd);
    else
        pc_conn_send(c->h.conn, &cmd);
    free(mids);
    free(ptrs);
    return 0;
}

void pc_single_send_validation_ack(pc_single_t *c, const pulsarc_msgid_t *id, int why) {
    if (c->h.state != PC_H_READY || !c->h.conn)
        return;
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__MessageIdData *ptr = &mid;
    mid.ledgerid = (uint64_t)id->ledger_id;
    mid.entryid = (uint64_t)id->entry_id;
    Pulsar__Proto__CommandAck ack = PULSAR__PROTO__COMMAND_ACK__INIT;
    ack.consumer_id = c->id;
    ack.n_message_id = 1;
    ack.message_id = &ptr;
    ack.has_validation_error = 1;
    ack.validation_error = why;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ACK;
    cmd.ack = &ack;
    pc_conn_send(c->h.conn, &cmd);
}

/* ---------- redelivery ---------- */

static void send_redeliver(pc_single_t *c, const pulsarc_msgid_t *ids, size_t n) {
    Pulsar__Proto__MessageIdData *mids = n ? calloc(n, sizeof *mids) : NULL;
    Pulsar__Proto__MessageIdData **ptrs = n ? calloc(n, sizeof *ptrs) : NULL;
    if (n && (!mids || !ptrs))
        n = 0; /* OOM: fall back to "redeliver all", which needs no list */
    for (size_t i = 0; i < n; i++) {
        pulsar__proto__message_id_data__init(&mids[i]);
        mids[i].ledgerid = (uint64_t)ids[i].ledger_id;
        mids[i].entryid = (uint64_t)ids[i].entry_id;
        ptrs[i] = &mids[i];
    }
    Pulsar__Proto__CommandRedeliverUnacknowledgedMessages rd =
        PULSAR__PROTO__COMMAND_REDELIVER_UNACKNOWLEDGED_MESSAGES__INIT;
    rd.consumer_id = c->id;
    rd.n_message_ids = n;
    rd.message_ids = ptrs;
    rd.has_consumer_epoch = 1;
    rd.consumer_epoch = c->epoch;
    pc_entry_set_clear(&c->delivered); /* these come again, and rightly so */
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__REDELIVER_UNACKNOWLEDGED_MESSAGES;
    cmd.redeliverunacknowledgedmessages = &rd;
    pc_conn_send(c->h.conn, &cmd);
    free(mids);
    free(ptrs);
}

/* "Everything again": new epoch, local queue emptied and its permits returned.
 * Acks still grouped go first, or the broker would send their messages too. */
static void redeliver_all(pc_single_t *c) {
    pc_ack_flush(&c->acks);
    c->epoch++;
    pc_redelivery_clear(&c->redelivery);
    size_t dropped = pc_single_drop_queued(c);
    pc_single_held_across(c);
    send_redeliver(c, NULL, 0);
    pc_single_refund(c, (uint32_t)dropped);
}

void pc_single_redeliver(pc_single_t *c, const pulsarc_msgid_t *ids, size_t n) {
    if (c->h.state != PC_H_READY || !c->h.conn)
        return; /* the next subscribe redelivers everything anyway */
    pthread_mutex_lock(&c->base.lock);
    c->base.stats.redelivery_requests++;
    pthread_mutex_unlock(&c->base.lock);
    if (n && pc_consumer_is_shared(&c->base))
        send_redeliver(c, ids, n);
    else
        redeliver_all(c);
}

/* Chunks the assembler gave up on: acked (never assemblable) or redelivered. */
void pc_single_drop_chunks(void *owner, const pulsarc_msgid_t *ids, size_t n, int ack) {
    pc_single_t *c = owner;
    for (size_t i = 0; ack && i < n; i++)
        pc_ack_individual(&c->acks, &ids[i]);
    if (!ack)
        pc_single_redeliver(c, ids, n);
}

/* A chunked message is acked as all of its chunks. (Nacked or timed out, it
 * stays known by its last chunk until due: dead_letter.c then asks for all.) */
static int each_chunk(pc_single_t *c, const pulsarc_msgid_t *id) {
    size_t n;
    const pulsarc_msgid_t *ids = pc_chunks_ids(&c->chunks, id, &n);
    if (!ids)
        return 0;
    for (size_t i = 0; i < n; i++)
        pc_ack_individual(&c->acks, &ids[i]);
    pc_chunks_forget(&c->chunks, id);
    return 1;
}

/*
 * How many acknowledged ids a consumer remembers (and at most how many it
 * keeps unconfirmed). An acked id can come back only while the broker has
 * not applied its ack: it was grouped or in flight when a connection
 * dropped (a group is at most maxAcknowledgmentGroupSize), or the
 * application held the message while the connection turned over (at most
 * what it drained from the receive queue, a few times over when reconnects
 * come in quick succession). With the defaults (1000 and 1000): 5000 ids,
 * about 120 KB once full; the set grows only as acks come.
 */
static size_t remember_bound(const pc_single_t *c) {
    size_t n = 4 * (size_t)c->base.queue_size + c->acks.max_group;
    return n < 4096 ? 4096 : n > 262144 ? 262144 : n;
}

/* The redelivery tracker's notices go to the interceptors of the handle the application holds. */
static void notify_interceptors(void *owner, int timed_out, const pulsarc_msgid_t *ids, size_t n) {
    pc_consumer_icpts_redelivered(((pc_single_t *)owner)->queue, timed_out, ids, n);
}

void pc_single_acks_init(pc_single_t *c, pc_redeliver_fn due) {
    int64_t group = c->receipts ? 0 : c->acks.group_ms;
    pc_ack_tracker_init(&c->acks, c->base.client->loop, send_acks, c, group, c->acks.max_group,
                        c->acks.batch_index_ack, remember_bound(c));
    pc_entry_set_init(&c->delivered, remember_bound(c));
    pc_redelivery_init(&c->redelivery, c->base.client->loop, due, c,
                       c->redelivery.nack_delay_ms, c->redelivery.ack_timeout_ms,
                       c->redelivery.tick_ms);
    c->redelivery.notify = notify_interceptors;
}

/* ---------- the public calls ---------- */

typedef struct ack_op {
    pc_single_t *c;
    int kind;
    int held;        /* the message arrived before the latest resend (held_across_locked) */
    pulsarc_msgid_t id;
    pc_op_t *waiter; /* receipts: completed by the ACK_RESPONSE */
    pc_op_t *applied; /* held: completed once the io thread applied the call */
} ack_op_t;

static void count(pc_single_t *c, int kind) {
    pthread_mutex_lock(&c->base.lock);
    if (kind == OP_NACK)
        c->base.stats.nacked++;
    else if (kind != OP_REDELIVER_ALL)
        c->base.stats.acked++;
    pthread_mutex_unlock(&c->base.lock);
}

/* Messages handed out and neither acked nor nacked yet (counted as the calls came). */
static size_t held_by_application(pc_single_t *c) {
    pthread_mutex_lock(&c->base.lock);
    uint64_t out = c->base.stats.delivered, done = c->base.stats.acked + c->base.stats.nacked;
    pthread_mutex_unlock(&c->base.lock);
    return out > done ? (size_t)(out - done) : 0;
}

void pc_single_held_across(pc_single_t *c) {
    /* Before the queued acks are taken: an ack after this is one of a message
     * held across, and sees it (held_across_locked). */
    pthread_mutex_lock(&c->base.lock);
    c->resend_epoch++;
    pthread_mutex_unlock(&c->base.lock);
    pc_entry_set_clear(&c->delivered); /* what comes now is what we asked for */
    pc_single_apply_queued_acks(c); /* made before the event: their copies are filtered on arrival */
    size_t held = held_by_application(c);
    size_t bound = 4 * (size_t)c->base.queue_size; /* each check scans the queue: keep it finite */
    /* Acks of messages handed out after the event come in between: leave room for them. */
    c->acks_to_check = held ? (2 * held + 16 < bound ? 2 * held + 16 : bound) : 0;
}

/* A copy queued after the event of a message the application held (pc_single_held_across). */
static void drop_queued_copy(pc_single_t *c, const pulsarc_msgid_t *id) {
    if (c->acks_to_check)
        c->acks_to_check--;
    size_t n = pc_queue_drop_id(c->queue, &c->base, id);
    if (n)
        pc_single_refund(c, (uint32_t)n);
}

/* A cumulative ack's copies: what it covers and was queued again. */
static void drop_queued_upto(pc_single_t *c, const pulsarc_msgid_t *id) {
    size_t n = pc_queue_drop_upto(c->queue, &c->base, id);
    if (n)
        pc_single_refund(c, (uint32_t)n);
}

/* held: known to be a message that arrived before the latest resend. */
static void ack_one(pc_single_t *c, const pulsarc_msgid_t *id, int held) {
    if (held || c->acks_to_check)
        drop_queued_copy(c, id);
    pc_redelivery_acked(&c->redelivery, id);
    if (!each_chunk(c, id))
        pc_ack_individual(&c->acks, id);
}

static void do_ack_op(void *arg) {
    ack_op_t *a = arg;
    pc_single_t *c = a->c;
    c->ack_waiter = a->waiter;
    if (a->kind == OP_ACK) {
        ack_one(c, &a->id, a->held);
    } else if (a->kind == OP_CUMULATIVE) {
        pc_ack_cumulative(&c->acks, &a->id);
        if (a->held)
            drop_queued_upto(c, &a->id);
    } else if (a->kind == OP_NACK) {
        pc_redelivery_nack(&c->redelivery, &a->id);
    } else {
        pc_single_redeliver(c, NULL, 0);
    }
    if (c->ack_waiter) /* nothing went to the broker (e.g. a partial batch) */
        pc_op_done(c->ack_waiter, c->h.state == PC_H_READY ? PULSARC_OK : PULSARC_ERR_DISCONNECTED,
                       NULL);
    c->ack_waiter = NULL;
    count(c, a->kind);
    if (a->applied)
        pc_op_done(a->applied, PULSARC_OK, NULL);
    pc_consumer_unref(&c->base);
    free(a);
}

/* Takes the queued acks (swapping buffers); the ids are ours until the next take. */
static pulsarc_msgid_t *take_queued(pc_single_t *c, int drain_ran, size_t *n) {
    pthread_mutex_lock(&c->base.lock);
    pulsarc_msgid_t *ids = c->ackq;
    size_t cap = c->capackq;
    *n = c->nackq;
    if (*n) {
        c->ackq = c->ackq_spare;
        c->capackq = c->capspare;
        c->ackq_spare = ids;
        c->capspare = cap;
        c->nackq = 0;
    }
    if (drain_ran)
        c->ackq_posted = 0;
    pthread_mutex_unlock(&c->base.lock);
    return ids;
}

void pc_single_apply_queued_acks(pc_single_t *c) {
    size_t n;
    pulsarc_msgid_t *ids = take_queued(c, 0, &n); /* the posted drain still runs: it finds less */
    for (size_t i = 0; i < n; i++)
        ack_one(c, &ids[i], 0);
}

/* io thread: the drain posted by the first queued ack of a burst. */
static void do_ack_drain(void *arg) {
    pc_single_t *c = arg;
    size_t n;
    pulsarc_msgid_t *ids = take_queued(c, 1, &n);
    for (size_t i = 0; i < n; i++)
        ack_one(c, &ids[i], 0);
    pc_consumer_unref(&c->base);
}

/*
 * A message that arrived before the broker was last made to resend what is
 * unacked (lock held): its copy may be queued already, or on its way, and
 * the io thread drops it only once it has applied the ack, so the
 * application must not receive again before then. The resend epoch
 * changes under this lock before the io thread takes the acks queued so
 * far (pc_single_held_across); an ack that comes later sees it here.
 */
static int held_across_locked(const pc_single_t *c, const pulsarc_msg_t *msg) {
    return msg && msg->rx_owner == &c->base && msg->rx_epoch != c->resend_epoch;
}

/*
 * The common case: no allocation, one post per burst. Returns 1 with the
 * call's result in *err, or 0, queuing nothing, for a message held across.
 */
static int queue_ack(pc_single_t *c, const pulsarc_msgid_t *id, const pulsarc_msg_t *msg,
                     pulsarc_err_t *err) {
    *err = PULSARC_OK;
    pthread_mutex_lock(&c->base.lock);
    if (held_across_locked(c, msg)) {
        pthread_mutex_unlock(&c->base.lock);
        return 0;
    }
    if (c->nackq == c->capackq) {
        size_t cap = c->capackq ? c->capackq * 2 : 256;
        pulsarc_msgid_t *q = realloc(c->ackq, cap * sizeof *q);
        if (!q) {
            pthread_mutex_unlock(&c->base.lock);
            *err = PULSARC_ERR_NOMEM;
            return 1;
        }
        c->ackq = q;
        c->capackq = cap;
    }
    c->ackq[c->nackq++] = *id;
    c->base.stats.acked++;
    int post = !c->ackq_posted;
    c->ackq_posted = 1;
    pthread_mutex_unlock(&c->base.lock);
    if (post && pc_consumer_post(&c->base, do_ack_drain, c) != PULSARC_OK)
        *err = PULSARC_ERR_CLOSED;
    return 1;
}

/*
 * Posts the op (lock held), deciding under the lock whether it is an ack
 * of a message held across a resend: one posted before the resend epoch
 * changed runs on the io thread before any copy can arrive (posts run
 * after the turn's reads, and the copies need a round trip), one posted
 * after sees the change. Returns whether the caller must wait on w.
 */
static int post_locked(pc_single_t *c, ack_op_t *a, const pulsarc_msg_t *msg, pc_op_t *w,
                       pulsarc_err_t *err) {
    int acking = a->kind == OP_ACK || a->kind == OP_CUMULATIVE;
    a->held = acking && held_across_locked(c, msg);
    if (acking && c->receipts && !pc_in_callback())
        a->waiter = w; /* the broker's answer comes after the ack was applied */
    else if (a->held)
        a->applied = w; /* from a callback too: the io thread never waits for one */
    *err = pc_consumer_post(&c->base, do_ack_op, a);
    return !*err && (a->waiter || a->applied);
}

/*
 * msg: the message acked, when the call named one. An ack of a message
 * held across a resend returns once the io thread applied it: its copy is
 * then out of the queue, and a copy still to come is dropped on arrival.
 */
static pulsarc_err_t submit_one(pc_single_t *c, int kind, const pulsarc_msgid_t *id,
                                const pulsarc_msg_t *msg) {
    pulsarc_err_t err;
    if (kind == OP_ACK && !c->receipts && queue_ack(c, id, msg, &err))
        return err;
    ack_op_t *a = calloc(1, sizeof *a);
    if (!a)
        return PULSARC_ERR_NOMEM;
    a->c = c;
    a->kind = kind;
    if (id)
        a->id = *id;
    pc_op_t w;
    pc_op_init(&w);
    pthread_mutex_lock(&c->base.lock);
    int wait = post_locked(c, a, msg, &w, &err);
    pthread_mutex_unlock(&c->base.lock);
    if (err)
        free(a);
    else if (wait)
        err = pc_op_wait(&w, NULL, 0);
    pc_op_destroy(&w);
    return err;
}

/* The single-topic consumer that received the message (or owns the id) takes the call. */
static pulsarc_err_t submit_msg(pulsarc_consumer_t *c, int kind, const pulsarc_msgid_t *id,
                                const pulsarc_msg_t *msg) {
    pc_single_t *owner = c->ops->route(c, id, msg);
    return owner ? submit_one(owner, kind, id, msg) : PULSARC_ERR_INVALID_ARG;
}

static pulsarc_err_t submit(pulsarc_consumer_t *c, int kind, const pulsarc_msgid_t *id) {
    return submit_msg(c, kind, id, NULL);
}

static pulsarc_err_t redeliver_all_of(pc_single_t *s, void *arg) {
    (void)arg;
    return submit_one(s, OP_REDELIVER_ALL, NULL, NULL);
}
static pulsarc_err_t check_id(const pulsarc_consumer_t *c, const pulsarc_msgid_t *id) {
    if (!c || !id || id->ledger_id < 0 || id->entry_id < 0)
        return PULSARC_ERR_INVALID_ARG;
    if (id->batch_index >= 0 && id->batch_size > 0 && id->batch_index >= id->batch_size)
        return PULSARC_ERR_INVALID_ARG;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_ack_id(pulsarc_consumer_t *c, const pulsarc_msgid_t *id) {
    pulsarc_err_t err = check_id(c, id);
    return pc_consumer_icpts_acked(c, id, 0, err ? err : submit(c, OP_ACK, id));
}

pulsarc_err_t pulsarc_consumer_ack(pulsarc_consumer_t *c, const pulsarc_msg_t *msg) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = check_id(c, &msg->id);
    return pc_consumer_icpts_acked(c, &msg->id, 0, err ? err : submit_msg(c, OP_ACK, &msg->id, msg));
}

pulsarc_err_t pulsarc_consumer_ack_cumulative_id(pulsarc_consumer_t *c, const pulsarc_msgid_t *id) {
    pulsarc_err_t err = check_id(c, id);
    if (!err) /* the broker rejects cumulative acks on shared subscriptions */
        err = pc_consumer_is_shared(c) ? PULSARC_ERR_STATE : submit(c, OP_CUMULATIVE, id);
    return pc_consumer_icpts_acked(c, id, 1, err);
}

pulsarc_err_t pulsarc_consumer_ack_cumulative(pulsarc_consumer_t *c, const pulsarc_msg_t *msg) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = check_id(c, &msg->id);
    if (!err)
        err = pc_consumer_is_shared(c) ? PULSARC_ERR_STATE
                                       : submit_msg(c, OP_CUMULATIVE, &msg->id, msg);
    return pc_consumer_icpts_acked(c, &msg->id, 1, err);
}

pulsarc_err_t pulsarc_consumer_nack_id(pulsarc_consumer_t *c, const pulsarc_msgid_t *id) {
    pulsarc_err_t err = check_id(c, id);
    return err ? err : submit(c, OP_NACK, id);
}

pulsarc_err_t pulsarc_consumer_nack(pulsarc_consumer_t *c, const pulsarc_msg_t *msg) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = check_id(c, &msg->id);
    return err ? err : submit_msg(c, OP_NACK, &msg->id, msg);
}

pulsarc_err_t pulsarc_consumer_redeliver_unacked(pulsarc_consumer_t *c) {
    return c ? c->ops->each_single(c, redeliver_all_of, NULL) : PULSARC_ERR_INVALID_ARG;
}

/* ---------- acknowledging in a transaction ----------
 * Not grouped with plain acks: each one carries the transaction id and a
 * request id, and the caller waits for its ACK_RESPONSE, because the broker
 * decides there (TransactionConflict when another transaction holds the
 * message). A batch message is acked by its index: ack_set holds the bits
 * left unacked, as for batch-index acks outside transactions. */

typedef struct txn_ack_op {
    pc_single_t *c;
    pulsarc_msgid_t id;
    uint64_t most, least;
    int cumulative;
    pc_op_t *waiter;
} txn_ack_op_t;

/* Bits still unacked once id is acked (individually or up to it); 0 words: the whole entry. */
static size_t txn_ack_set(const txn_ack_op_t *a, int64_t **set) {
    int32_t size = a->id.batch_size, idx = a->id.batch_index;
    *set = NULL;
    if (idx < 0 || size <= 1 || (a->cumulative && idx == size - 1))
        return 0;
    size_t words = ((size_t)size + 63) / 64;
    if (!(*set = calloc(words, sizeof **set)))
        return 0;
    for (int32_t i = a->cumulative ? idx + 1 : 0; i < size; i++)
        if (a->cumulative || i != idx)
            (*set)[i / 64] |= (int64_t)((uint64_t)1 << (i % 64));
    return words;
}

static void send_txn_ack(pc_single_t *c, txn_ack_op_t *a) {
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__MessageIdData *ptr = &mid;
    mid.ledgerid = (uint64_t)a->id.ledger_id;
    mid.entryid = (uint64_t)a->id.entry_id;
    mid.n_ack_set = txn_ack_set(a, &mid.ack_set);
    mid.has_batch_size = mid.n_ack_set > 0;
    mid.batch_size = a->id.batch_size;
    Pulsar__Proto__CommandAck ack = PULSAR__PROTO__COMMAND_ACK__INIT;
    ack.consumer_id = c->id;
    ack.ack_type = a->cumulative ? PULSAR__PROTO__COMMAND_ACK__ACK_TYPE__Cumulative
                                 : PULSAR__PROTO__COMMAND_ACK__ACK_TYPE__Individual;
    ack.n_message_id = 1;
    ack.message_id = &ptr;
    ack.has_txnid_most_bits = ack.has_txnid_least_bits = 1;
    ack.txnid_most_bits = a->most;
    ack.txnid_least_bits = a->least;
    ack.has_request_id = 1;
    ack.request_id = c->base.client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ACK;
    cmd.ack = &ack;
    pc_conn_request(c->h.conn, &cmd, ack.request_id, c->base.client->op_timeout_ms, on_ack_response,
                    a->waiter);
    free(mid.ack_set);
}

static void do_txn_ack(void *arg) {
    txn_ack_op_t *a = arg;
    pc_single_t *c = a->c;
    if (c->h.state != PC_H_READY || !c->h.conn) {
        pc_op_done(a->waiter, PULSARC_ERR_DISCONNECTED, "consumer is not connected");
    } else {
        if (!a->cumulative) /* the ack timeout no longer applies; abort redelivers */
            pc_redelivery_acked(&c->redelivery, &a->id);
        send_txn_ack(c, a);
    }
    count(c, OP_ACK);
    pc_consumer_unref(&c->base);
    free(a);
}

static pulsarc_err_t post_txn_ack(pc_single_t *c, pulsarc_txn_t *t,
                                  const pulsarc_msgid_t *id, int cumulative, pc_op_t *w) {
    txn_ack_op_t *a = calloc(1, sizeof *a);
    if (!a)
        return PULSARC_ERR_NOMEM;
    a->c = c;
    a->id = *id;
    a->cumulative = cumulative;
    a->waiter = w;
    pc_txn_ids(t, &a->most, &a->least);
    pulsarc_err_t err = pc_consumer_post(&c->base, do_txn_ack, a);
    if (err)
        free(a);
    return err;
}

/* Posts the ack of id in t without waiting; w learns the broker's answer. */
static pulsarc_err_t start_txn_ack(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                   const pulsarc_msgid_t *id, int cumulative, pc_op_t *w) {
    pulsarc_err_t err = check_id(c, id);
    if (err)
        return err;
    if (cumulative && pc_consumer_is_shared(c))
        return PULSARC_ERR_STATE; /* the broker rejects cumulative acks there */
    pc_single_t *target = c->ops->route(c, id, NULL);
    if (!target)
        return PULSARC_ERR_INVALID_ARG;
    /* The coordinator must know the subscription before the ack reaches it. */
    err = pc_txn_add_subscription(t, target->base.topic.full, target->base.sub, NULL, 0);
    return err ? err : post_txn_ack(target, t, id, cumulative, w);
}

/* One acknowledgement in t, waiting for the broker's ACK_RESPONSE. */
static pulsarc_err_t ack_txn_one(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                 const pulsarc_msgid_t *id, int cumulative) {
    pc_op_t w;
    pc_op_init(&w);
    pulsarc_err_t err = start_txn_ack(c, t, id, cumulative, &w);
    if (!err)
        err = pc_op_wait(&w, NULL, 0);
    pc_op_destroy(&w);
    return err;
}

/*
 * Individual acks of n ids in t, all sent before the first answer is
 * awaited (one round trip, not n); returns the first error, and each id's
 * outcome in errs[n] when not NULL. Not a transaction operation by
 * itself: callers wrap it in pc_txn_op_begin/end with the outcome that
 * should (or should not) doom t.
 */
static pulsarc_err_t ack_txn_many(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                  const pulsarc_msgid_t *ids, size_t n, pulsarc_err_t *errs) {
    pc_op_t *w = calloc(n ? n : 1, sizeof *w);
    if (!w)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t first = PULSARC_OK;
    size_t posted = 0;
    for (; posted < n && !first; posted++) {
        pc_op_init(&w[posted]);
        first = start_txn_ack(c, t, &ids[posted], 0, &w[posted]);
    }
    if (first) /* the failed one was never posted: nothing will answer it */
        pc_op_destroy(&w[--posted]);
    for (size_t i = posted; errs && i < n; i++)
        errs[i] = first; /* never sent */
    for (size_t i = 0; i < posted; i++) {
        pulsarc_err_t err = pc_op_wait(&w[i], NULL, 0);
        if (errs)
            errs[i] = err;
        if (err && !first)
            first = err;
        pc_op_destroy(&w[i]);
    }
    free(w);
    return first;
}

/* ---------- the public transactional calls ---------- */

static pulsarc_err_t ack_txn(pulsarc_consumer_t *c, pulsarc_txn_t *t, const pulsarc_msgid_t *id,
                             int cumulative) {
    if (!c || !t || !id)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = pc_txn_op_begin(t);
    if (err)
        return err;
    err = ack_txn_one(c, t, id, cumulative);
    pc_txn_op_end(t, err);
    return err;
}

pulsarc_err_t pulsarc_consumer_ack_id_txn(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                          const pulsarc_msgid_t *id) {
    return ack_txn(c, t, id, 0);
}

pulsarc_err_t pulsarc_consumer_ack_cumulative_id_txn(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                                     const pulsarc_msgid_t *id) {
    return ack_txn(c, t, id, 1);
}

pulsarc_err_t pulsarc_consumer_ack_ids_txn(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                           const pulsarc_msgid_t *ids, size_t n) {
    if (!c || !t || (!ids && n))
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = n ? pc_txn_op_begin(t) : PULSARC_OK;
    if (err || !n)
        return err;
    err = ack_txn_many(c, t, ids, n, NULL);
    pc_txn_op_end(t, err);
    return err;
}

/* A conflict (the acknowledgement is already there) is no reason to abort. */
static pulsarc_err_t first_dooming(const pulsarc_err_t *errs, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (errs[i] && errs[i] != PULSARC_ERR_BROKER_TXN_CONFLICT)
            return errs[i];
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_ack_ids_txn_each(pulsarc_consumer_t *c, pulsarc_txn_t *t,
                                                const pulsarc_msgid_t *ids, size_t n,
                                                pulsarc_err_t *errs) {
    if (!c || !t || (n && (!ids || !errs)))
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = n ? pc_txn_op_begin(t) : PULSARC_OK;
    if (err || !n)
        return err;
    ack_txn_many(c, t, ids, n, errs);
    err = first_dooming(errs, n);
    pc_txn_op_end(t, err);
    return err;
}
