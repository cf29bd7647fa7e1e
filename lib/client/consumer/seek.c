/*
 * Design notes: moving a subscription (SEEK by id or publish time) and
 * asking where the topic ends (GET_LAST_MESSAGE_ID), plus
 * has-message-available built on it. A seek flushes pending acks first,
 * then drops the local queue and everything decoded until the broker has
 * closed and re-opened the consumer at the new position (it always does
 * after a seek), so no message from before the seek leaks out after it.
 * Readers also move their own start position, which their next subscribe
 * sends. Calls block the application thread on a waiter; the work runs on
 * the io thread.
 *
 * A request that finds the consumer reconnecting (after a seek, an unload,
 * a lost connection) waits for it instead of failing: it is parked on the
 * consumer's reconnecting handler (pc_handler_wait, client/handler.h) and
 * sent when the consumer is subscribed again, so "seek, then
 * has-message-available" works without the caller retrying. The whole
 * call stays within operationTimeoutMs (the wait and the request share
 * one deadline); closing the consumer completes parked requests with
 * CLOSED at once.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/single.h"
#include "core/err.h"

typedef struct seek_op {
    pc_single_t *c;
    int by_time;
    pulsarc_msgid_t id;
    uint64_t time_ms;
    pc_op_t w;
    pulsarc_msgid_t last;      /* GET_LAST_MESSAGE_ID result */
    pulsarc_msgid_t mark;      /* its mark-delete position, when sent */
    int has_mark;
    uint64_t subscribes;       /* the consumer's subscribe count when SEEK went out */
    pc_loop_fn send;           /* what to run once the consumer is ready */
    int64_t deadline_ms;       /* operationTimeoutMs after the call reached the loop */
    pc_handler_wait_t wait;    /* parked on the consumer's handler */
} seek_op_t;

static void reset_local_state(pc_single_t *c, seek_op_t *op) {
    if (c->subscribes != op->subscribes) {
        /* The broker's re-subscribe at the new position already happened (its
         * close can overtake the SEEK reply): what is queued now is valid. */
        return;
    }
    pc_redelivery_clear(&c->redelivery);
    pc_ack_forget_batches(&c->acks);
    pc_single_drop_queued(c); /* permits are recomputed by the re-subscribe the broker forces */
    pthread_mutex_lock(&c->base.lock);
    c->base.has_dequeued = 0;
    c->base.end_of_topic = 0;
    pthread_mutex_unlock(&c->base.lock);
    if (c->start && !op->by_time)
        pc_reader_moved(c, &op->id);
    c->seeking = 1;
}

static void on_seek_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    seek_op_t *op = arg;
    pc_single_t *c = op->c; /* op lives on the caller's stack: gone once done */
    (void)f;
    if (!err)
        reset_local_state(c, op);
    pc_op_done(&op->w, err, msg);
    pc_consumer_unref(&c->base);
}

/* ---------- waiting for the consumer to be subscribed ---------- */

/* Loop thread: completes a request that never went to the broker. */
static void finish_unsent(seek_op_t *op, pulsarc_err_t err, const char *msg) {
    pc_single_t *c = op->c;
    pc_op_done(&op->w, err, msg);
    pc_consumer_unref(&c->base); /* op lives on the caller's stack: gone once done */
}

#define OP_OF_WAIT(w) ((seek_op_t *)((char *)(w) - offsetof(seek_op_t, wait)))

static void on_ready_again(pc_handler_wait_t *w) {
    seek_op_t *op = OP_OF_WAIT(w);
    op->send(op); /* may park again if the consumer dropped meanwhile */
}

static void on_wait_failed(pc_handler_wait_t *w, pulsarc_err_t err, const char *msg) {
    if (err == PULSARC_ERR_TIMEOUT)
        msg = "consumer was not subscribed again within operationTimeoutMs";
    finish_unsent(OP_OF_WAIT(w), err, msg);
}

/*
 * Loop thread: 1 when the consumer can take the request now. Otherwise the
 * request waits for the next subscribe (parked), or fails with CLOSED when
 * the consumer is going away. Right after a seek the consumer still looks
 * ready, but the broker is about to close it: that waits too.
 */
static int ready_or_wait(seek_op_t *op, pc_loop_fn send) {
    pc_single_t *c = op->c;
    if (!op->deadline_ms)
        op->deadline_ms = pc_now_ms() + c->base.client->op_timeout_ms;
    if (c->h.state == PC_H_READY && c->h.conn && !c->seeking)
        return 1;
    if (c->h.state == PC_H_CLOSING || c->h.state == PC_H_CLOSED) {
        finish_unsent(op, PULSARC_ERR_CLOSED, "consumer is closed");
        return 0;
    }
    op->send = send;
    op->wait.run = on_ready_again;
    op->wait.fail = on_wait_failed;
    pc_handler_wait(&c->h, &op->wait, op->deadline_ms);
    return 0;
}

/* What is left of the call's operationTimeoutMs for the request itself. */
static int request_timeout(const seek_op_t *op) {
    int64_t left = op->deadline_ms - pc_now_ms();
    return left > 1 ? (int)left : 1;
}

/* ---------- seek ---------- */

static void do_seek(void *arg) {
    seek_op_t *op = arg;
    pc_single_t *c = op->c;
    if (!ready_or_wait(op, do_seek))
        return;
    pc_ack_flush(&c->acks);
    op->subscribes = c->subscribes;
    Pulsar__Proto__CommandSeek sk = PULSAR__PROTO__COMMAND_SEEK__INIT;
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    sk.consumer_id = c->id;
    sk.request_id = c->base.client->next_id++;
    if (op->by_time) {
        sk.has_message_publish_time = 1;
        sk.message_publish_time = op->time_ms;
    } else {
        mid.ledgerid = (uint64_t)op->id.ledger_id;
        mid.entryid = (uint64_t)op->id.entry_id;
        sk.message_id = &mid;
    }
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEEK;
    cmd.seek = &sk;
    pc_conn_request(c->h.conn, &cmd, sk.request_id, request_timeout(op), on_seek_reply, op);
}

static pulsarc_err_t run_op(pc_single_t *c, seek_op_t *op, pc_loop_fn fn) {
    op->c = c;
    pc_op_init(&op->w);
    pulsarc_err_t err = pc_consumer_post(&c->base, fn, op);
    if (!err)
        err = pc_op_wait(&op->w, NULL, 0);
    pc_op_destroy(&op->w);
    return err;
}

pulsarc_err_t pc_single_seek(pulsarc_consumer_t *base, int by_time, const pulsarc_msgid_t *id,
                             uint64_t ms) {
    seek_op_t op;
    memset(&op, 0, sizeof op);
    op.by_time = by_time;
    if (id)
        op.id = *id;
    op.time_ms = ms;
    return run_op(pc_single_of(base), &op, do_seek);
}

/* ---------- last message id ---------- */

static pulsarc_msgid_t from_wire(const Pulsar__Proto__MessageIdData *m, int32_t partition) {
    pulsarc_msgid_t id = {(int64_t)m->ledgerid, (int64_t)m->entryid, partition, -1, 0};
    if (m->has_batch_index)
        id.batch_index = m->batch_index;
    return id;
}

static void on_last_id(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    seek_op_t *op = arg;
    pc_single_t *c = op->c; /* op lives on the caller's stack: gone once done */
    if (!err) {
        const Pulsar__Proto__CommandGetLastMessageIdResponse *r = f->cmd->getlastmessageidresponse;
        op->last = from_wire(r->last_message_id, op->c->base.topic.partition);
        if (r->consumer_mark_delete_position) {
            op->mark = from_wire(r->consumer_mark_delete_position, op->c->base.topic.partition);
            op->has_mark = 1;
        }
    }
    pc_op_done(&op->w, err, msg);
    pc_consumer_unref(&c->base);
}

static void do_last_id(void *arg) {
    seek_op_t *op = arg;
    pc_single_t *c = op->c;
    if (!ready_or_wait(op, do_last_id))
        return;
    Pulsar__Proto__CommandGetLastMessageId g = PULSAR__PROTO__COMMAND_GET_LAST_MESSAGE_ID__INIT;
    g.consumer_id = c->id;
    g.request_id = c->base.client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_LAST_MESSAGE_ID;
    cmd.getlastmessageid = &g;
    pc_conn_request(c->h.conn, &cmd, g.request_id, request_timeout(op), on_last_id, op);
}

pulsarc_err_t pc_single_last_message_id(pulsarc_consumer_t *base, pulsarc_msgid_t *id) {
    seek_op_t op;
    memset(&op, 0, sizeof op);
    pulsarc_err_t err = run_op(pc_single_of(base), &op, do_last_id);
    if (!err)
        *id = op.last;
    return err;
}

/* Is a (the topic's last id) after b? By batch index too when the broker gave one. */
static int entry_after(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    if (a->ledger_id != b->ledger_id)
        return a->ledger_id > b->ledger_id;
    if (a->entry_id != b->entry_id)
        return a->entry_id > b->entry_id;
    return a->batch_index >= 0 && b->batch_index >= 0 && a->batch_index > b->batch_index;
}

/* The queue was empty: compares the topic's last id with what was handed out, or with the start. */
pulsarc_err_t pc_single_available_on_broker(pulsarc_consumer_t *base, int *available) {
    pthread_mutex_lock(&base->lock);
    int dequeued = base->has_dequeued;
    pulsarc_msgid_t last_seen = base->last_dequeued;
    pthread_mutex_unlock(&base->lock);
    pc_single_t *c = pc_single_of(base);
    seek_op_t op;
    memset(&op, 0, sizeof op);
    pulsarc_err_t err = run_op(c, &op, do_last_id);
    if (err || op.last.entry_id < 0)
        return err; /* an empty topic has nothing */
    if (dequeued)
        *available = entry_after(&op.last, &last_seen);
    else if (c->start)
        *available = pc_reader_may_read(c, &op.last);
    else
        *available = !op.has_mark || entry_after(&op.last, &op.mark);
    return PULSARC_OK;
}
