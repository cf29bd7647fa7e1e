/*
 * Design notes: the single-topic consumer (single.h): its table of
 * operations, its life cycle and its side of the broker conversation:
 * SUBSCRIBE (through the shared handler cycle), the frames the broker
 * pushes (MESSAGE, CLOSE_CONSUMER, ACTIVE_CONSUMER_CHANGE,
 * REACHED_END_OF_TOPIC), close and unsubscribe. Decoded entries go to the
 * queue through deliver.c; acknowledging lives in ack.c, seeking in
 * seek.c, a reader's start position in start_position.c.
 *
 * After every successful SUBSCRIBE the local queue is emptied (the broker
 * redelivers whatever was not acked), acks the broker never confirmed are
 * sent again with the pending ones, and then a full FLOW(receiverQueueSize)
 * is sent: permits are recomputed from scratch, so none are lost or
 * doubled across reconnects. A redelivered entry the application already
 * acknowledged is dropped on arrival (deliver.c).
 *
 * A member of a multi-topic consumer is the same object delivering into
 * its parent's queue (`queue`) and holding a reference on it; events it
 * sees are reported through that queue's handle.
 *
 * Threads: loop-thread state except what single.h marks as shared;
 * the close and unsubscribe calls run on application threads and wait
 * for the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/single.h"
#include "core/err.h"
#include "crypto/crypto.h"

/* ---------- lifetime ---------- */

static void single_free(pulsarc_consumer_t *base) {
    pc_single_t *c = pc_single_of(base);
    if (c->queue != &c->base)
        pc_consumer_unref(c->queue);
    free(c->ackq);
    free(c->ackq_spare);
    pc_chunks_free(&c->chunks);
    pc_dlq_free(c);
    pc_reader_pos_free(c);
    pc_rx_result_discard(&c->pend); /* normally empty: flushed as each hand-off of reads ends */
    pc_ack_tracker_free(&c->acks);
    pc_entry_set_free(&c->delivered);
    pc_redelivery_free(&c->redelivery);
    pc_rxpool_release(c->pool);
    pc_schema_clear(&c->schema);
    pc_decryptor_free(c->decryptor);
    pc_queue_clear_locked(&c->base); /* last reference: nobody else can hold the lock */
    pc_op_destroy(&c->closed_op);
    pc_consumer_base_free(&c->base);
    free(c);
}

static int single_is_connected(pulsarc_consumer_t *base) {
    pthread_mutex_lock(&base->lock);
    int v = pc_single_of(base)->connected;
    pthread_mutex_unlock(&base->lock);
    return v;
}

static void single_add_stats(pulsarc_consumer_t *base, pulsarc_consumer_stats_t *out) {
    (void)base; /* its own counters are the handle's */
    (void)out;
}

static void set_connected(pc_single_t *c, int v) {
    pthread_mutex_lock(&c->base.lock);
    c->connected = v;
    pthread_mutex_unlock(&c->base.lock);
}

/* ---------- broker events ---------- */

static void handle_message(pc_single_t *c, pc_conn_t *conn, const pc_frame_t *f) {
    const Pulsar__Proto__CommandMessage *cm = f->cmd->message;
    if (c->h.state != PC_H_READY || conn != c->h.conn || !cm->message_id)
        return;
    pc_handler_proved(&c->h);
    if (c->seeking) { /* from before the seek: the broker re-sends from the new position */
        pc_single_refund(c, 1);
        return;
    }
    /* After "redeliver all" the broker stamps a new epoch; older deliveries are stale. */
    if (cm->has_consumer_epoch && cm->consumer_epoch != UINT64_MAX && cm->consumer_epoch < c->epoch) {
        pc_single_refund(c, 1);
        return;
    }
    pc_rx_opts_t o = {c->base.topic.partition, NULL, c->decryptor, c->crypto_action, &c->base,
                      c->resend_epoch};
    pulsarc_msgid_t skip;
    if (c->start && pc_reader_skip_upto(c, &skip))
        o.skip_upto = &skip;
    pc_rx_result_t r;
    pc_rx_decode(c->pool, f, &o, &r);
    pc_single_apply_queued_acks(c); /* acks the application made before this arrived count */
    if (pc_single_drop_acked(c, &r))
        return;
    if (r.chunk_entry) {
        pc_rx_result_t whole;
        int rc = pc_chunks_add(&c->chunks, &r, cm, &o, pc_single_drop_chunks, c, &whole);
        if (rc == 0) { /* kept for later: only the last chunk's permit waits for the message */
            pc_single_refund(c, 1);
            return;
        }
        r = whole;
    }
    pc_single_deliver(c, &r);
}

static void detach(pc_single_t *c) {
    pc_single_flush(c); /* what this connection delivered comes before what follows */
    if (c->attached)
        pc_conn_detach_consumer(c->attached, c->id);
    c->attached = NULL;
}

static void lose_connection(pc_single_t *c) {
    detach(c);
    set_connected(c, 0);
    pc_handler_lost(&c->h);
}

static void on_frame(void *obj, pc_conn_t *conn, const pc_frame_t *f) {
    pc_single_t *c = obj;
    if (f->cmd->type != PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE)
        pc_single_flush(c); /* messages before the event that follows them */
    switch (f->cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE:
        handle_message(c, conn, f);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER:
        /* A seek ends this way, and may come before its reply: what was acked
         * before it may rightly come again, and must not be acked again. */
        pc_ack_forget_batches(&c->acks);
        lose_connection(c);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ACTIVE_CONSUMER_CHANGE:
        pc_entry_set_clear(&c->delivered); /* an active consumer gets the backlog again */
        pc_consumer_notify_event(c->queue, f->cmd->active_consumer_change->is_active
                                        ? PULSARC_CONSUMER_ACTIVE : PULSARC_CONSUMER_INACTIVE);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__REACHED_END_OF_TOPIC:
        pthread_mutex_lock(&c->base.lock);
        c->base.end_of_topic = 1;
        pc_queue_wake_locked(&c->base);
        pthread_mutex_unlock(&c->base.lock);
        c->queue->ops->member_ended(c->queue);
        break;
    default:
        break;
    }
}

static void on_conn_closed(void *obj, pc_conn_t *conn, pulsarc_err_t why) {
    pc_single_t *c = obj;
    (void)conn;
    (void)why;
    pc_single_flush(c);
    c->attached = NULL; /* the connection already forgot us */
    set_connected(c, 0);
    pc_handler_lost(&c->h);
}

static void on_input_done(void *obj, pc_conn_t *conn) {
    (void)conn;
    pc_single_flush(obj);
}

static const pc_conn_handler_t consumer_handler = {on_frame, on_conn_closed, on_input_done};

/* ---------- subscribing ---------- */

static void finish_create(pc_single_t *c, pulsarc_err_t err, const char *msg) {
    if (c->create_waiter) {
        pc_op_done(c->create_waiter, err, msg);
        c->create_waiter = NULL;
    }
}

static void h_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pc_single_t *c = PC_SINGLE_OF_HANDLER(h);
    detach(c);
    finish_create(c, err, msg); /* then the handler fails the requests parked on it */
}

/* The auto-scaled queue's idle check, every autoScaledReceiverQueueIdleMs until closed. */
static void on_idle_timer(void *arg) {
    pc_single_t *c = arg;
    if (c->h.state == PC_H_CLOSED)
        return;
    pc_single_idle_check(c);
    pc_timer_start(c->base.client->loop, &c->idle_timer, c->base.idle_shrink_ms);
}

static void start_idle_timer(pc_single_t *c) {
    if (!c->base.auto_scale || c->base.idle_shrink_ms <= 0 || c->queue != &c->base ||
        pc_timer_active(&c->idle_timer))
        return;
    pc_timer_start(c->base.client->loop, &c->idle_timer, c->base.idle_shrink_ms);
}

static void h_ready(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply) {
    pc_single_t *c = PC_SINGLE_OF_HANDLER(h);
    (void)reply;
    (void)conn; /* attached before SUBSCRIBE went out */
    pc_single_drop_queued(c); /* the broker redelivers everything unacked */
    pc_single_held_across(c);
    pthread_mutex_lock(&c->base.lock);
    c->permits = 0;
    c->connected = 1;
    c->seeking = 0;
    c->subscribes++;
    if (!c->create_waiter)
        c->base.stats.reconnects++;
    pthread_mutex_unlock(&c->base.lock);
    pc_ack_resend(&c->acks); /* before FLOW: the broker must know them before it dispatches */
    pc_single_send_flow(c, pc_single_subscribed_permits(c));
    start_idle_timer(c);
    finish_create(c, PULSARC_OK, NULL); /* then the handler runs the requests parked on it */
}

static void send_close_consumer(pc_handler_t *h, pc_conn_t *conn) {
    pc_single_t *c = PC_SINGLE_OF_HANDLER(h);
    Pulsar__Proto__CommandCloseConsumer cc = PULSAR__PROTO__COMMAND_CLOSE_CONSUMER__INIT;
    cc.consumer_id = c->id;
    cc.request_id = c->base.client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER;
    cmd.close_consumer = &cc;
    pc_conn_send(conn, &cmd);
}

/* Readers restart after the last message handed out, else at their start. */
static void set_start_position(pc_single_t *c, Pulsar__Proto__CommandSubscribe *s,
                               Pulsar__Proto__MessageIdData *mid) {
    pulsarc_msgid_t start;
    pc_reader_start_at(c, &start);
    mid->ledgerid = (uint64_t)start.ledger_id;
    mid->entryid = (uint64_t)start.entry_id;
    if (start.batch_index >= 0) {
        mid->has_batch_index = 1;
        mid->batch_index = start.batch_index;
    }
    s->start_message_id = mid;
}

static void set_key_shared(pc_single_t *c, Pulsar__Proto__CommandSubscribe *s,
                           Pulsar__Proto__KeySharedMeta *ks, Pulsar__Proto__IntRange *ranges,
                           Pulsar__Proto__IntRange **rp) {
    ks->keysharedmode = c->ks_mode;
    ks->has_allowoutoforderdelivery = 1;
    ks->allowoutoforderdelivery = c->ks_allow_ooo;
    for (int i = 0; c->ks_mode == PULSAR__PROTO__KEY_SHARED_MODE__STICKY && i < c->ks_nranges; i++) {
        pulsar__proto__int_range__init(&ranges[i]);
        ranges[i].start = c->ks_ranges[i][0];
        ranges[i].end = c->ks_ranges[i][1];
        rp[i] = &ranges[i];
        ks->n_hashranges = (size_t)i + 1;
    }
    ks->hashranges = rp;
    s->keysharedmeta = ks;
}

static void h_send_create(pc_handler_t *h, pc_conn_t *conn) {
    pc_single_t *c = PC_SINGLE_OF_HANDLER(h);
    Pulsar__Proto__CommandSubscribe s = PULSAR__PROTO__COMMAND_SUBSCRIBE__INIT;
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__KeySharedMeta ks = PULSAR__PROTO__KEY_SHARED_META__INIT;
    Pulsar__Proto__IntRange ranges[PC_MAX_HASH_RANGES], *rp[PC_MAX_HASH_RANGES];
    s.topic = c->base.topic.full;
    s.subscription = c->base.sub;
    s.subtype = c->base.sub_type;
    s.consumer_id = c->id;
    s.request_id = c->base.client->next_id++;
    s.consumer_name = c->name[0] ? c->name : NULL;
    s.has_priority_level = 1;
    s.priority_level = c->priority;
    s.has_initialposition = 1;
    s.initialposition = c->initial_position;
    s.has_durable = 1;
    s.durable = c->start == NULL;
    s.has_read_compacted = 1;
    s.read_compacted = c->read_compacted;
    s.has_consumer_epoch = 1;
    s.consumer_epoch = c->epoch;
    if (c->start)
        set_start_position(c, &s, &mid);
    if (c->base.sub_type == PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Key_Shared)
        set_key_shared(c, &s, &ks, ranges, rp);
    Pulsar__Proto__Schema schema = PULSAR__PROTO__SCHEMA__INIT;
    s.schema = pc_schema_wire(&c->schema, &schema);
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SUBSCRIBE;
    cmd.subscribe = &s;
    /* Attach first: the broker may send ACTIVE_CONSUMER_CHANGE before its reply. */
    detach(c);
    pc_conn_attach_consumer(conn, c->id, &consumer_handler, c);
    c->attached = conn;
    pc_handler_request_create(h, conn, &cmd, s.request_id, c->base.client->op_timeout_ms);
}

static void h_ref(pc_handler_t *h) { pc_consumer_ref(&PC_SINGLE_OF_HANDLER(h)->base); }
static void h_unref(pc_handler_t *h) { pc_consumer_unref(&PC_SINGLE_OF_HANDLER(h)->base); }

static const pc_handler_ops_t consumer_ops = {
    h_send_create, send_close_consumer, h_ready, h_failed, NULL, h_ref, h_unref,
};

static void do_start(void *arg) {
    pc_single_t *c = arg;
    c->id = c->base.client->next_id++;
    pc_single_acks_init(c, pc_dlq_redeliver_due);
    pc_handler_start(&c->h);
}

void pc_single_start_async(pc_single_t *c) { do_start(c); }

/* ---------- closing and unsubscribing ---------- */

/*
 * Closed: the flags for receivers (woken through the queue's condition
 * variable, which they wait on) and the close op for closers. Any thread.
 */
static void set_closed(pc_single_t *c) {
    pthread_mutex_lock(&c->base.lock);
    c->base.closed = 1;
    c->base.closing = 1;
    pc_queue_wake_locked(&c->base); /* waiting receivers get CLOSED */
    pthread_mutex_unlock(&c->base.lock);
    pc_op_done(&c->closed_op, PULSARC_OK, NULL);
}

static void mark_closed(pc_single_t *c) {
    c->h.state = PC_H_CLOSED;
    pc_ack_tracker_stop(&c->acks);
    pc_redelivery_stop(&c->redelivery);
    if (pc_timer_active(&c->idle_timer))
        pc_timer_stop(c->base.client->loop, &c->idle_timer);
    pthread_mutex_lock(&c->base.lock);
    c->connected = 0;
    pthread_mutex_unlock(&c->base.lock);
    set_closed(c);
}

static void on_close_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    pc_single_t *c = arg;
    (void)f;
    if (c->unsub_waiter) {
        pc_op_done(c->unsub_waiter, err, msg);
        c->unsub_waiter = NULL;
    }
    mark_closed(c);
    pc_consumer_unref(&c->base);
}

/* Sends CLOSE_CONSUMER (or UNSUBSCRIBE) and finishes in on_close_reply. */
static void close_on_broker(pc_single_t *c, pc_conn_t *conn, int unsubscribe) {
    pc_ack_flush(&c->acks); /* while the connection is still ours */
    detach(c);
    uint64_t rid = c->base.client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandCloseConsumer cc = PULSAR__PROTO__COMMAND_CLOSE_CONSUMER__INIT;
    Pulsar__Proto__CommandUnsubscribe us = PULSAR__PROTO__COMMAND_UNSUBSCRIBE__INIT;
    if (unsubscribe) {
        us.consumer_id = c->id;
        us.request_id = rid;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__UNSUBSCRIBE;
        cmd.unsubscribe = &us;
    } else {
        cc.consumer_id = c->id;
        cc.request_id = rid;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER;
        cmd.close_consumer = &cc;
    }
    pc_conn_request(conn, &cmd, rid, c->base.client->op_timeout_ms, on_close_reply, c);
}

static void do_close_common(pc_single_t *c, int unsubscribe) {
    finish_create(c, PULSARC_ERR_CLOSED, "consumer closed while subscribing");
    pc_handler_fail_waiting(&c->h, PULSARC_ERR_CLOSED, "consumer closed"); /* not after the broker's reply */
    int was_closed = c->h.state == PC_H_CLOSED;
    pc_conn_t *conn = c->h.state == PC_H_READY ? c->h.conn : NULL;
    if (conn) {
        c->h.state = PC_H_CLOSING; /* acks may still flush on conn */
        close_on_broker(c, conn, unsubscribe);
        pc_handler_stop(&c->h);
        return; /* on_close_reply keeps the reference */
    }
    pc_handler_stop(&c->h);
    detach(c);
    if (c->unsub_waiter) {
        pc_op_done(c->unsub_waiter, was_closed ? PULSARC_ERR_CLOSED : PULSARC_ERR_DISCONNECTED,
                       "consumer is not connected");
        c->unsub_waiter = NULL;
    }
    mark_closed(c);
    pc_consumer_unref(&c->base);
}

static void do_close(void *arg) { do_close_common(arg, 0); }
static void do_unsubscribe(void *arg) { do_close_common(arg, 1); }

static int post_close(pc_single_t *c, pc_loop_fn fn) {
    pthread_mutex_lock(&c->base.lock);
    int first = !c->base.close_posted;
    c->base.close_posted = 1;
    c->base.closing = 1;
    pc_queue_wake_locked(&c->base);
    pthread_mutex_unlock(&c->base.lock);
    if (!first)
        return 1;
    return pc_consumer_post(&c->base, fn, c) == PULSARC_OK;
}

static void wait_closed(pc_single_t *c) { pc_op_wait(&c->closed_op, NULL, 0); }

/* Close = post the close, then wait for its op (inside a callback it only starts). */
static void close_and_wait(pc_single_t *c) {
    if (!post_close(c, do_close))
        set_closed(c); /* the loop is gone: nothing is pending any more */
    if (!pc_in_callback())
        wait_closed(c);
}

void pc_single_close_async(pc_single_t *c) { post_close(c, do_close); }

static pulsarc_err_t unsubscribe_and_wait(pc_single_t *c) {
    pc_op_t w;
    pc_op_init(&w);
    c->unsub_waiter = &w; /* read only by the loop after the post below */
    pulsarc_err_t err = PULSARC_ERR_CLOSED;
    if (post_close(c, do_unsubscribe)) {
        err = pc_op_wait(&w, NULL, 0);
        wait_closed(c);
    }
    c->unsub_waiter = NULL;
    pc_op_destroy(&w);
    return err;
}

static pulsarc_err_t single_close(pulsarc_consumer_t *base, int unsubscribe) {
    pc_single_t *c = pc_single_of(base);
    if (unsubscribe)
        return unsubscribe_and_wait(c);
    close_and_wait(c);
    return PULSARC_OK;
}

/* Its letter-topic producers are closed with the consumer. */
static void single_release(pulsarc_consumer_t *base) { pc_dlq_close(pc_single_of(base)); }

/* ---------- configuration ---------- */

/* Parses "a-b,c-d" into inclusive ranges within 0..65535. */
static pulsarc_err_t parse_ranges(pc_single_t *c, const char *s, char *e, size_t el) {
    c->ks_nranges = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || *end != '-' || (b = strtol(end + 1, &end, 10), 0) || a < 0 || b > 65535 ||
            a > b || (*end && *end != ',') || c->ks_nranges == PC_MAX_HASH_RANGES)
            return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                             "keySharedHashRanges: '%s' is not a list of a-b ranges within 0..65535", s);
        c->ks_ranges[c->ks_nranges][0] = (int32_t)a;
        c->ks_ranges[c->ks_nranges][1] = (int32_t)b;
        c->ks_nranges++;
        s = *end ? end + 1 : end;
    }
    return PULSARC_OK;
}

static pulsarc_err_t read_conf(pc_single_t *c, const pulsarc_conf_t *conf, char *e, size_t el) {
    if (pc_consumer_read_common_conf(&c->base, conf))
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory for the consumer interceptors");
    c->initial_position = (int)pc_conf_int(conf, PC_PROP_SUBSCRIPTION_INITIAL_POSITION);
    c->priority = (int)pc_conf_int(conf, PC_PROP_PRIORITY_LEVEL);
    c->read_compacted = (int)pc_conf_int(conf, PC_PROP_READ_COMPACTED);
    c->receipts = (int)pc_conf_int(conf, PC_PROP_ACK_RECEIPT_ENABLED);
    c->ks_mode = (int)pc_conf_int(conf, PC_PROP_KEY_SHARED_MODE);
    c->ks_allow_ooo = (int)pc_conf_int(conf, PC_PROP_KEY_SHARED_OOO);
    snprintf(c->name, sizeof c->name, "%s", pc_conf_str(conf, PC_PROP_CONSUMER_NAME));
    pulsarc_err_t err = parse_ranges(c, pc_conf_str(conf, PC_PROP_KEY_SHARED_RANGES), e, el);
    if (!err && c->ks_mode == PULSAR__PROTO__KEY_SHARED_MODE__STICKY && !c->ks_nranges)
        err = pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "keySharedMode STICKY needs keySharedHashRanges");
    if (!err)
        err = pc_schema_from_conf(&c->schema, conf, e, el);
    pc_any_fn reader; /* pulsarc_conf_set_crypto_key_reader */
    void *reader_opaque;
    pc_conf_get_cb(conf, PC_CB_CRYPTO_KEY_READER, &reader, &reader_opaque);
    c->crypto_action = (int)pc_conf_int(conf, PC_PROP_CRYPTO_FAILURE_ACTION);
    if (!err)
        err = pc_decryptor_from_conf(pc_conf_str(conf, PC_PROP_CRYPTO_PRIVATE_KEY_PATH),
                                     (pulsarc_crypto_key_reader_cb)reader, reader_opaque,
                                     &c->decryptor, e, el);
    return err;
}

/* A single-topic consumer is its only member: it routes every ack to itself. */
static pc_single_t *single_route(pulsarc_consumer_t *base, const pulsarc_msgid_t *id,
                                 const pulsarc_msg_t *msg) {
    (void)id;
    (void)msg;
    return pc_single_of(base);
}

static pulsarc_err_t single_each(pulsarc_consumer_t *base, pulsarc_err_t (*fn)(pc_single_t *, void *),
                                 void *arg) {
    return fn(pc_single_of(base), arg);
}

static void single_member_ended(pulsarc_consumer_t *base) {
    pc_consumer_notify_event(base, PULSARC_CONSUMER_END_OF_TOPIC);
}

static const pc_consumer_ops_t single_ops = {
    .close = single_close,
    .release = single_release,
    .free = single_free,
    .route = single_route,
    .each_single = single_each,
    .seek = pc_single_seek,
    .last_message_id = pc_single_last_message_id,
    .available_on_broker = pc_single_available_on_broker,
    .is_connected = single_is_connected,
    .add_stats = single_add_stats,
    .member_ended = single_member_ended,
};

static pc_single_t *single_alloc(pulsarc_client_t *cl, const char *sub) {
    pc_single_t *c = calloc(1, sizeof *c);
    if (!c || pc_consumer_base_init(&c->base, &single_ops, cl, sub)) {
        free(c);
        return NULL;
    }
    c->queue = &c->base;
    pc_op_init(&c->closed_op);
    pc_timer_init(&c->idle_timer, on_idle_timer, c);
    c->base.rx_ops = &pc_single_receiver_ops;
    return c;
}

/* Subscribes and waits; a consumer of its own (not a multi-topic member) registers with the client. */
pulsarc_err_t pc_single_start(pc_single_t *c, int own_handle, char *errstr, size_t errlen) {
    pulsarc_client_t *cl = c->base.client;
    pc_op_t w;
    pc_op_init(&w);
    c->create_waiter = &w;
    pc_consumer_ref(&c->base);
    pulsarc_err_t err = own_handle ? pc_client_register(cl, &c->base.handle) : PULSARC_OK;
    if (!err && (err = pc_client_post(cl, do_start, c)) != PULSARC_OK)
        pc_client_unregister(cl, &c->base.handle);
    if (err) {
        pc_op_destroy(&w);
        pc_consumer_unref(&c->base);
        return pc_seterr(errstr, errlen, err, "client is closed");
    }
    err = pc_op_wait(&w, errstr, errlen);
    pc_op_destroy(&w);
    if (err) {
        set_closed(c); /* the loop already set PC_H_CLOSED */
        pc_client_unregister(cl, &c->base.handle);
    }
    pc_consumer_unref(&c->base);
    return err;
}

/* After a failed subscribe: nothing to close on the broker (the loop set PC_H_CLOSED). */
static void mark_never_subscribed(pc_single_t *c) {
    pthread_mutex_lock(&c->base.lock);
    int never = c->subscribes == 0;
    pthread_mutex_unlock(&c->base.lock);
    if (never)
        set_closed(c);
}

/*
 * One op of n parts, each member's subscribe completing one: the requests
 * overlap, so n partitions cost about one round of lookups and subscribes
 * rather than n in a row.
 */
pulsarc_err_t pc_single_start_all(pc_single_t **kids, size_t n, char *errstr, size_t errlen) {
    if (n == 0)
        return PULSARC_OK;
    pc_op_t op;
    pc_op_init(&op);
    pc_op_add(&op, (int)n - 1);
    size_t posted = 0;
    for (; posted < n; posted++) {
        pc_single_t *c = kids[posted];
        c->create_waiter = &op;
        pc_consumer_ref(&c->base);
        if (pc_client_post(c->base.client, do_start, c) != PULSARC_OK) {
            c->create_waiter = NULL;
            pc_consumer_unref(&c->base);
            break;
        }
    }
    for (size_t i = posted; i < n; i++)
        pc_op_done(&op, PULSARC_ERR_CLOSED, "client is closed");
    pulsarc_err_t err = pc_op_wait(&op, errstr, errlen);
    pc_op_destroy(&op);
    for (size_t i = 0; i < n; i++) {
        if (err)
            mark_never_subscribed(kids[i]);
        if (i < posted)
            pc_consumer_unref(&kids[i]->base);
    }
    return err;
}

/* Allocates and configures a consumer without subscribing (readers add to it). */
pulsarc_err_t pc_single_prepare(pulsarc_client_t *cl, const char *topic, const char *sub,
                                const pulsarc_conf_t *conf, pc_single_t **cp, char *errstr,
                                size_t errlen) {
    pc_single_t *c = single_alloc(cl, sub);
    if (!c)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_client_parse_topic(cl, topic, &c->base.topic, errstr, errlen);
    if (!err)
        err = read_conf(c, conf, errstr, errlen);
    if (!err)
        err = pc_dlq_configure(c, conf);
    if (!err && !(c->pool = pc_rxpool_new(c->base.topic.full, (size_t)64 << 20, (size_t)c->base.queue_size)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (err) {
        pc_consumer_unref(&c->base);
        return err;
    }
    c->acks.loop = NULL;
    pc_handler_init(&c->h, &consumer_ops, cl, c->base.topic.full);
    /* Trackers need the conf; they start on the loop in do_start. */
    c->redelivery.nack_delay_ms = pc_conf_int(conf, PC_PROP_NACK_DELAY_US) / 1000;
    c->redelivery.ack_timeout_ms = pc_conf_int(conf, PC_PROP_ACK_TIMEOUT_MS);
    c->redelivery.tick_ms = pc_conf_int(conf, PC_PROP_ACK_TIMEOUT_TICK_MS);
    c->acks.group_ms = pc_conf_int(conf, PC_PROP_ACK_GROUP_TIME_US) / 1000;
    c->acks.max_group = (size_t)pc_conf_int(conf, PC_PROP_ACK_GROUP_MAX);
    c->acks.batch_index_ack = (int)pc_conf_int(conf, PC_PROP_BATCH_INDEX_ACK_ENABLED);
    c->chunks.max_pending = (size_t)pc_conf_int(conf, PC_PROP_MAX_PENDING_CHUNKED);
    c->chunks.expire_ms = pc_conf_int(conf, PC_PROP_CHUNK_EXPIRE_MS);
    c->chunks.auto_ack_oldest = (int)pc_conf_int(conf, PC_PROP_CHUNK_AUTO_ACK_OLDEST);
    c->chunks.max_bytes = (size_t)pc_conf_int(conf, PC_PROP_CHUNK_MAX_BYTES);
    *cp = c;
    return PULSARC_OK;
}
