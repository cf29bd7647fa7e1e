/*
 * Design notes: the consumer's life cycle and its side of the broker
 * conversation: SUBSCRIBE (through the shared handler cycle), the frames
 * the broker pushes (MESSAGE, CLOSE_CONSUMER, ACTIVE_CONSUMER_CHANGE,
 * REACHED_END_OF_TOPIC), close and unsubscribe. Receiving lives in
 * receive_queue.c, acknowledging in ack.c, seeking in
 * seek.c.
 *
 * After every successful SUBSCRIBE the local queue is emptied (the broker
 * redelivers whatever was not acked), pending acks are flushed, and a full
 * FLOW(receiverQueueSize) is sent: permits are recomputed from scratch, so
 * none are lost or doubled across reconnects.
 *
 * Threads: loop-thread state except what consumer_int.h marks as shared;
 * reference counted (atomic) because loop callbacks and listener
 * callbacks may outlive pulsarc_consumer_destroy().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "core/err.h"
#include "crypto/crypto.h"

/* ---------- lifetime ---------- */

void pc_consumer_ref(pulsarc_consumer_t *c) { atomic_fetch_add(&c->refs, 1); }

void pc_consumer_unref(pulsarc_consumer_t *c) {
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    pc_multi_free(c);
    free(c->ackq);
    free(c->ackq_spare);
    pc_chunks_free(&c->chunks);
    pc_dlq_free(c);
    pc_rx_result_discard(&c->pend); /* normally empty: flushed after every read */
    pc_consumer_clear_queue_locked(c);
    pc_ack_tracker_free(&c->acks);
    pc_redelivery_free(&c->redelivery);
    pc_rxpool_release(c->pool);
    pc_schema_clear(&c->schema);
    pc_decryptor_free(c->decryptor);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    free(c->sub);
    free(c);
}

int pc_consumer_is_shared(const pulsarc_consumer_t *c) {
    return c->sub_type == PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Shared ||
           c->sub_type == PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Key_Shared;
}

pulsarc_err_t pc_consumer_post(pulsarc_consumer_t *c, pc_loop_fn fn, void *arg) {
    pc_consumer_ref(c);
    pulsarc_err_t err = pc_client_post(c->client, fn, arg);
    if (err)
        pc_consumer_unref(c);
    return err;
}

const char *pulsarc_consumer_topic(const pulsarc_consumer_t *c) { return c ? c->topic.full : NULL; }
const char *pulsarc_consumer_subscription(const pulsarc_consumer_t *c) { return c ? c->sub : NULL; }

int pulsarc_consumer_is_connected(pulsarc_consumer_t *c) {
    if (!c)
        return 0;
    pthread_mutex_lock(&c->lock);
    int v = c->connected;
    for (size_t i = 0; c->is_multi && i < c->nchildren; i++)
        v = i == 0 ? pulsarc_consumer_is_connected(c->children[i])
                   : v && pulsarc_consumer_is_connected(c->children[i]);
    pthread_mutex_unlock(&c->lock);
    return v;
}

static void add_stats(pulsarc_consumer_stats_t *to, const pulsarc_consumer_stats_t *from) {
    to->received += from->received;
    to->acked += from->acked;
    to->nacked += from->nacked;
    to->redelivery_requests += from->redelivery_requests;
    to->discarded += from->discarded;
    to->reconnects += from->reconnects;
}

pulsarc_err_t pulsarc_consumer_stats(pulsarc_consumer_t *c, pulsarc_consumer_stats_t *out) {
    if (!c || !out)
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    *out = c->stats;
    out->queue_len = c->qlen;
    out->queue_size = (size_t)c->queue_size;
    if (c->is_multi) { /* children count what reached the broker; the parent what was handed out */
        out->received = out->acked = out->nacked = out->redelivery_requests = 0;
        out->discarded = out->reconnects = 0;
        for (size_t i = 0; i < c->nchildren; i++) {
            pulsarc_consumer_stats_t cs;
            pulsarc_consumer_stats(c->children[i], &cs);
            add_stats(out, &cs);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return PULSARC_OK;
}

static void set_connected(pulsarc_consumer_t *c, int v) {
    pthread_mutex_lock(&c->lock);
    c->connected = v;
    pthread_mutex_unlock(&c->lock);
}

/* ---------- broker events ---------- */

static void handle_message(pulsarc_consumer_t *c, pc_conn_t *conn, const pc_frame_t *f) {
    const Pulsar__Proto__CommandMessage *cm = f->cmd->message;
    if (c->h.state != PC_H_READY || conn != c->h.conn || !cm->message_id)
        return;
    pc_handler_proved(&c->h);
    if (c->seeking) { /* from before the seek: the broker re-sends from the new position */
        pc_consumer_refund(c, 1);
        return;
    }
    /* After "redeliver all" the broker stamps a new epoch; older deliveries are stale. */
    if (cm->has_consumer_epoch && cm->consumer_epoch != UINT64_MAX && cm->consumer_epoch < c->epoch) {
        pc_consumer_refund(c, 1);
        return;
    }
    pc_rx_opts_t o = {c->topic.partition, NULL, c->decryptor, c->crypto_action};
    pulsarc_msgid_t skip;
    if (!c->durable && c->has_start && pc_reader_skip_upto(c, &skip))
        o.skip_upto = &skip;
    pc_rx_result_t r;
    pc_rx_decode(c->pool, f, &o, &r);
    if (r.chunk_entry) {
        pc_rx_result_t whole;
        int rc = pc_chunks_add(&c->chunks, &r, cm, &o, pc_consumer_drop_chunks, c, &whole);
        if (rc == 0) { /* kept for later: only the last chunk's permit waits for the message */
            pc_consumer_refund(c, 1);
            return;
        }
        r = whole;
    }
    pc_consumer_deliver(c, &r);
}

static void detach(pulsarc_consumer_t *c) {
    pc_consumer_flush(c); /* what this connection delivered comes before what follows */
    if (c->attached)
        pc_conn_detach_consumer(c->attached, c->id);
    c->attached = NULL;
}

static void lose_connection(pulsarc_consumer_t *c) {
    detach(c);
    set_connected(c, 0);
    pc_handler_lost(&c->h);
}

static void on_frame(void *obj, pc_conn_t *conn, const pc_frame_t *f) {
    pulsarc_consumer_t *c = obj;
    if (f->cmd->type != PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE)
        pc_consumer_flush(c); /* messages before the event that follows them */
    switch (f->cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE:
        handle_message(c, conn, f);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER:
        lose_connection(c);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ACTIVE_CONSUMER_CHANGE:
        pc_consumer_notify_event(c, f->cmd->active_consumer_change->is_active
                                        ? PULSARC_CONSUMER_ACTIVE : PULSARC_CONSUMER_INACTIVE);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__REACHED_END_OF_TOPIC:
        pthread_mutex_lock(&c->lock);
        c->end_of_topic = 1;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
        if (c->parent)
            pc_multi_child_ended(c->parent);
        else
            pc_consumer_notify_event(c, PULSARC_CONSUMER_END_OF_TOPIC);
        break;
    default:
        break;
    }
}

static void on_conn_closed(void *obj, pc_conn_t *conn, pulsarc_err_t why) {
    pulsarc_consumer_t *c = obj;
    (void)conn;
    (void)why;
    pc_consumer_flush(c);
    c->attached = NULL; /* the connection already forgot us */
    set_connected(c, 0);
    pc_handler_lost(&c->h);
}

static void on_input_done(void *obj, pc_conn_t *conn) {
    (void)conn;
    pc_consumer_flush(obj);
}

static const pc_conn_handler_t consumer_handler = {on_frame, on_conn_closed, on_input_done};

/* ---------- subscribing ---------- */

static void finish_create(pulsarc_consumer_t *c, pulsarc_err_t err, const char *msg) {
    if (c->create_waiter) {
        pc_waiter_done(c->create_waiter, err, msg);
        c->create_waiter = NULL;
    }
}

static void h_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pulsarc_consumer_t *c = PC_CONSUMER_OF_HANDLER(h);
    detach(c);
    finish_create(c, err, msg);
}

static void h_ready(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply) {
    pulsarc_consumer_t *c = PC_CONSUMER_OF_HANDLER(h);
    (void)reply;
    (void)conn; /* attached before SUBSCRIBE went out */
    pc_consumer_drop_queued(c); /* the broker redelivers everything unacked */
    pthread_mutex_lock(&c->lock);
    c->permits = 0;
    c->connected = 1;
    c->seeking = 0;
    c->subscribes++;
    if (!c->create_waiter)
        c->stats.reconnects++;
    pthread_mutex_unlock(&c->lock);
    pc_ack_flush(&c->acks);
    pc_consumer_send_flow(c, (uint32_t)c->queue_size);
    finish_create(c, PULSARC_OK, NULL);
}

static void send_close_consumer(pc_handler_t *h, pc_conn_t *conn) {
    pulsarc_consumer_t *c = PC_CONSUMER_OF_HANDLER(h);
    Pulsar__Proto__CommandCloseConsumer cc = PULSAR__PROTO__COMMAND_CLOSE_CONSUMER__INIT;
    cc.consumer_id = c->id;
    cc.request_id = c->client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER;
    cmd.close_consumer = &cc;
    pc_conn_send(conn, &cmd);
}

/* Readers restart after the last message handed out, else at their start. */
static void set_start_position(pulsarc_consumer_t *c, Pulsar__Proto__CommandSubscribe *s,
                               Pulsar__Proto__MessageIdData *mid) {
    pthread_mutex_lock(&c->lock);
    if (c->has_dequeued) {
        c->start_id = c->last_dequeued;
        c->start_inclusive = 0;
    }
    pthread_mutex_unlock(&c->lock);
    mid->ledgerid = (uint64_t)c->start_id.ledger_id;
    mid->entryid = (uint64_t)c->start_id.entry_id;
    if (c->start_id.batch_index >= 0) {
        mid->has_batch_index = 1;
        mid->batch_index = c->start_id.batch_index;
    }
    s->start_message_id = mid;
}

static void set_key_shared(pulsarc_consumer_t *c, Pulsar__Proto__CommandSubscribe *s,
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
    pulsarc_consumer_t *c = PC_CONSUMER_OF_HANDLER(h);
    Pulsar__Proto__CommandSubscribe s = PULSAR__PROTO__COMMAND_SUBSCRIBE__INIT;
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__KeySharedMeta ks = PULSAR__PROTO__KEY_SHARED_META__INIT;
    Pulsar__Proto__IntRange ranges[PC_MAX_HASH_RANGES], *rp[PC_MAX_HASH_RANGES];
    s.topic = c->topic.full;
    s.subscription = c->sub;
    s.subtype = c->sub_type;
    s.consumer_id = c->id;
    s.request_id = c->client->next_id++;
    s.consumer_name = c->name[0] ? c->name : NULL;
    s.has_priority_level = 1;
    s.priority_level = c->priority;
    s.has_initialposition = 1;
    s.initialposition = c->initial_position;
    s.has_durable = 1;
    s.durable = c->durable;
    s.has_read_compacted = 1;
    s.read_compacted = c->read_compacted;
    s.has_consumer_epoch = 1;
    s.consumer_epoch = c->epoch;
    if (!c->durable && c->has_start)
        set_start_position(c, &s, &mid);
    if (c->sub_type == PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Key_Shared)
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
    pc_handler_request_create(h, conn, &cmd, s.request_id, c->client->op_timeout_ms);
}

static void h_ref(pc_handler_t *h) { pc_consumer_ref(PC_CONSUMER_OF_HANDLER(h)); }
static void h_unref(pc_handler_t *h) { pc_consumer_unref(PC_CONSUMER_OF_HANDLER(h)); }

static const pc_handler_ops_t consumer_ops = {
    h_send_create, send_close_consumer, h_ready, h_failed, NULL, h_ref, h_unref,
};

static void do_start(void *arg) {
    pulsarc_consumer_t *c = arg;
    c->id = c->client->next_id++;
    pc_consumer_acks_init(c);
    pc_handler_start(&c->h);
}

void pc_consumer_start_async(pulsarc_consumer_t *c) { do_start(c); }

/* ---------- closing and unsubscribing ---------- */

static void mark_closed(pulsarc_consumer_t *c) {
    c->h.state = PC_H_CLOSED;
    pc_ack_tracker_stop(&c->acks);
    pc_redelivery_stop(&c->redelivery);
    pthread_mutex_lock(&c->lock);
    c->closed = 1;
    c->closing = 1;
    c->connected = 0;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void on_close_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    pulsarc_consumer_t *c = arg;
    (void)f;
    if (c->unsub_waiter) {
        pc_waiter_done(c->unsub_waiter, err, msg);
        c->unsub_waiter = NULL;
    }
    mark_closed(c);
    pc_consumer_unref(c);
}

/* Sends CLOSE_CONSUMER (or UNSUBSCRIBE) and finishes in on_close_reply. */
static void close_on_broker(pulsarc_consumer_t *c, pc_conn_t *conn, int unsubscribe) {
    pc_ack_flush(&c->acks); /* while the connection is still ours */
    detach(c);
    uint64_t rid = c->client->next_id++;
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
    pc_conn_request(conn, &cmd, rid, c->client->op_timeout_ms, on_close_reply, c);
}

static void do_close_common(pulsarc_consumer_t *c, int unsubscribe) {
    finish_create(c, PULSARC_ERR_CLOSED, "consumer closed while subscribing");
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
        pc_waiter_done(c->unsub_waiter, was_closed ? PULSARC_ERR_CLOSED : PULSARC_ERR_DISCONNECTED,
                       "consumer is not connected");
        c->unsub_waiter = NULL;
    }
    mark_closed(c);
    pc_consumer_unref(c);
}

static void do_close(void *arg) { do_close_common(arg, 0); }
static void do_unsubscribe(void *arg) { do_close_common(arg, 1); }

static int post_close(pulsarc_consumer_t *c, pc_loop_fn fn) {
    pthread_mutex_lock(&c->lock);
    int first = !c->close_posted;
    c->close_posted = 1;
    c->closing = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    if (!first)
        return 1;
    return pc_consumer_post(c, fn, c) == PULSARC_OK;
}

static void wait_closed(pulsarc_consumer_t *c) {
    pthread_mutex_lock(&c->lock);
    while (!c->closed)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

pulsarc_err_t pulsarc_consumer_close(pulsarc_consumer_t *c) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    if (c->is_multi)
        return pc_multi_close(c, 0);
    if (!post_close(c, do_close)) {
        pthread_mutex_lock(&c->lock);
        c->closed = 1; /* the loop is gone: nothing is pending any more */
        pthread_mutex_unlock(&c->lock);
    }
    if (!pc_in_callback())
        wait_closed(c);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_unsubscribe(pulsarc_consumer_t *c) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    if (c->is_multi)
        return pc_multi_close(c, 1);
    pc_waiter_t w;
    pc_waiter_init(&w);
    c->unsub_waiter = &w; /* read only by the loop after the post below */
    pulsarc_err_t err = PULSARC_ERR_CLOSED;
    if (post_close(c, do_unsubscribe)) {
        err = pc_waiter_wait(&w, NULL, 0);
        wait_closed(c);
    }
    c->unsub_waiter = NULL;
    pc_waiter_destroy(&w);
    return err;
}

static void handle_close(pc_handle_t *h) { pulsarc_consumer_close((pulsarc_consumer_t *)h); }
static void handle_destroy(pc_handle_t *h) { pulsarc_consumer_destroy((pulsarc_consumer_t *)h); }

void pulsarc_consumer_destroy(pulsarc_consumer_t *c) {
    if (!c)
        return;
    pulsarc_consumer_close(c);
    pc_dlq_close(c);
    if (c->is_multi)
        pc_multi_release_children(c);
    pc_client_unregister(c->client, &c->handle);
    pc_consumer_unref(c);
}

/* ---------- configuration ---------- */

/* Parses "a-b,c-d" into inclusive ranges within 0..65535. */
static pulsarc_err_t parse_ranges(pulsarc_consumer_t *c, const char *s, char *e, size_t el) {
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

static pulsarc_err_t read_conf(pulsarc_consumer_t *c, const pulsarc_conf_t *conf, char *e, size_t el) {
    c->sub_type = (int)pc_conf_int(conf, PC_PROP_SUBSCRIPTION_TYPE);
    c->initial_position = (int)pc_conf_int(conf, PC_PROP_SUBSCRIPTION_INITIAL_POSITION);
    c->queue_size = (int)pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE);
    c->priority = (int)pc_conf_int(conf, PC_PROP_PRIORITY_LEVEL);
    c->read_compacted = (int)pc_conf_int(conf, PC_PROP_READ_COMPACTED);
    c->receipts = (int)pc_conf_int(conf, PC_PROP_ACK_RECEIPT_ENABLED);
    c->ks_mode = (int)pc_conf_int(conf, PC_PROP_KEY_SHARED_MODE);
    c->ks_allow_ooo = (int)pc_conf_int(conf, PC_PROP_KEY_SHARED_OOO);
    c->batch_max_msgs = (size_t)pc_conf_int(conf, PC_PROP_BATCH_RECV_MAX_MSGS);
    c->batch_max_bytes = (size_t)pc_conf_int(conf, PC_PROP_BATCH_RECV_MAX_BYTES);
    c->batch_timeout_ms = (int)pc_conf_int(conf, PC_PROP_BATCH_RECV_TIMEOUT_MS);
    snprintf(c->name, sizeof c->name, "%s", pc_conf_str(conf, PC_PROP_CONSUMER_NAME));
    pc_any_fn fn;
    void *reader_opaque;
    pc_conf_get_cb(conf, PC_CB_MESSAGE_LISTENER, &fn, &c->listener_opaque);
    c->listener = (pulsarc_message_listener_cb)fn;
    pc_conf_get_cb(conf, PC_CB_CONSUMER_EVENT, &fn, &c->event_opaque);
    c->event_cb = (pulsarc_consumer_event_cb)fn;
    pulsarc_err_t err = parse_ranges(c, pc_conf_str(conf, PC_PROP_KEY_SHARED_RANGES), e, el);
    if (!err && c->ks_mode == PULSAR__PROTO__KEY_SHARED_MODE__STICKY && !c->ks_nranges)
        err = pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "keySharedMode STICKY needs keySharedHashRanges");
    c->crypto_action = (int)pc_conf_int(conf, PC_PROP_CRYPTO_FAILURE_ACTION);
    pc_conf_get_cb(conf, PC_CB_CRYPTO_KEY_READER, &fn, &reader_opaque);
    if (!err)
        err = pc_decryptor_from_conf(pc_conf_str(conf, PC_PROP_CRYPTO_PRIVATE_KEY_PATH),
                                     (pulsarc_crypto_key_reader_cb)fn, reader_opaque,
                                     &c->decryptor, e, el);
    return err ? err : pc_schema_from_conf(&c->schema, conf, e, el);
}

static void init_sync(pulsarc_consumer_t *c) {
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &a);
    pthread_condattr_destroy(&a);
}

static pulsarc_consumer_t *c_alloc(pulsarc_client_t *cl, const char *sub) {
    pulsarc_consumer_t *c = calloc(1, sizeof *c);
    if (!c || !(c->sub = strdup(sub))) {
        free(c);
        return NULL;
    }
    c->client = cl;
    atomic_init(&c->refs, 1);
    c->handle.close = handle_close;
    c->handle.destroy = handle_destroy;
    c->durable = 1;
    init_sync(c);
    return c;
}

/* Shared by pulsarc_consumer_new and the reader: subscribes and waits. */
pulsarc_err_t pc_consumer_start(pulsarc_consumer_t *c, char *errstr, size_t errlen) {
    pulsarc_client_t *cl = c->client;
    pc_waiter_t w;
    pc_waiter_init(&w);
    c->create_waiter = &w;
    pc_consumer_ref(c);
    pulsarc_err_t err = c->parent ? PULSARC_OK : pc_client_register(cl, &c->handle);
    if (!err && (err = pc_client_post(cl, do_start, c)) != PULSARC_OK)
        pc_client_unregister(cl, &c->handle);
    if (err) {
        pc_waiter_destroy(&w);
        pc_consumer_unref(c);
        return pc_seterr(errstr, errlen, err, "client is closed");
    }
    err = pc_waiter_wait(&w, errstr, errlen);
    pc_waiter_destroy(&w);
    if (err) {
        pthread_mutex_lock(&c->lock);
        c->closed = c->closing = 1; /* the loop already set PC_H_CLOSED */
        pthread_mutex_unlock(&c->lock);
        pc_client_unregister(cl, &c->handle);
    }
    pc_consumer_unref(c);
    return err;
}

/* Allocates and configures a consumer without subscribing (readers add to it). */
pulsarc_err_t pc_consumer_prepare(pulsarc_client_t *cl, const char *topic, const char *sub,
                                  const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                  char *errstr, size_t errlen) {
    pulsarc_consumer_t *c = c_alloc(cl, sub);
    if (!c)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_client_parse_topic(cl, topic, &c->topic, errstr, errlen);
    if (!err)
        err = read_conf(c, conf, errstr, errlen);
    if (!err)
        err = pc_dlq_configure(c, conf);
    if (!err && !(c->pool = pc_rxpool_new(c->topic.full, (size_t)64 << 20, (size_t)c->queue_size)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (err) {
        pc_consumer_unref(c);
        return err;
    }
    c->acks.loop = NULL;
    pc_handler_init(&c->h, &consumer_ops, cl, c->topic.full);
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

/* retryEnable: the topic and its retry topic behind one handle, sharing letter topics. */
static pulsarc_err_t pc_retry_new(pulsarc_client_t *cl, const char *topic, const char *sub,
                                  const pulsarc_conf_t *conf, pulsarc_consumer_t **cp, int *handled,
                                  char *errstr, size_t errlen) {
    *handled = 0;
    if (!pc_conf_int(conf, PC_PROP_RETRY_ENABLE))
        return PULSARC_OK;
    pulsarc_consumer_t *probe;
    pulsarc_err_t err = pc_consumer_prepare(cl, topic, sub, conf, &probe, errstr, errlen);
    if (err)
        return err;
    char retry[PC_TOPIC_MAX], dlq[PC_TOPIC_MAX];
    snprintf(retry, sizeof retry, "%s", pc_dlq_retry_topic(probe));
    snprintf(dlq, sizeof dlq, "%s-%s-DLQ", probe->topic.base, sub);
    pc_consumer_unref(probe);
    pulsarc_conf_t *copy = conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new();
    if (!copy)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_conf_set(copy, "deadLetterPolicy.retryLetterTopic", retry, NULL, 0);
    if (!*pc_conf_str(conf, PC_PROP_DLQ_TOPIC))
        pulsarc_conf_set(copy, "deadLetterPolicy.deadLetterTopic", dlq, NULL, 0);
    const char *topics[2] = {topic, retry};
    *handled = 1;
    err = pulsarc_consumer_new_multi(cl, topics, 2, sub, copy, cp, errstr, errlen);
    pulsarc_conf_destroy(copy);
    return err;
}

pulsarc_err_t pulsarc_consumer_new(pulsarc_client_t *cl, const char *topic, const char *sub,
                                   const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                   char *errstr, size_t errlen) {
    if (!cl || !topic || !sub || !cp || !*sub)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "client, topic, a non-empty subscription and consumerp are required");
    *cp = NULL;
    int handled = 0;
    pulsarc_err_t err = pc_retry_new(cl, topic, sub, conf, cp, &handled, errstr, errlen);
    if (handled || err)
        return err;
    err = pc_multi_new_if_partitioned(cl, topic, sub, conf, cp, &handled, errstr, errlen);
    if (handled || err)
        return err;
    pulsarc_consumer_t *c;
    err = pc_consumer_prepare(cl, topic, sub, conf, &c, errstr, errlen);
    if (err)
        return err;
    if ((err = pc_consumer_start(c, errstr, errlen))) {
        pc_consumer_unref(c);
        return err;
    }
    *cp = c;
    return PULSARC_OK;
}
