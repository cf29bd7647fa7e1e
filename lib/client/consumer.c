/*
 * Design notes: a consumer is a state machine on the loop thread
 * (CONNECTING -> READY -> CLOSING -> CLOSED, back to CONNECTING on a lost
 * connection or a broker CLOSE_CONSUMER) feeding a receive queue that
 * application threads drain.
 *
 * Flow control: after every successful SUBSCRIBE the queue is cleared (the
 * broker redelivers what was not acked) and FLOW(receiverQueueSize) is
 * sent; each message handed to the application, or dropped by us, returns
 * one permit, and permits go back to the broker in one FLOW once half the
 * queue's worth has accumulated. Permits are recomputed from scratch on
 * every subscribe, so none are lost or doubled across reconnects.
 *
 * Threads: `lock` guards the queue, the permit counter and the closing
 * flags, shared with application threads; everything else is loop-thread
 * state. Reference counted like the producer.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stddef.h>

#include "client/client_int.h"
#include "client/handler.h"
#include "client/message.h"
#include "client/rx_decode.h"
#include "core/err.h"
#include "net/conn.h"

struct pulsarc_consumer_s {
    pc_handle_t handle;
    pulsarc_client_t *client;
    pc_topic_t topic;
    char *sub;
    atomic_int refs;
    uint64_t id;
    /* loop thread */
    pc_handler_t h;          /* connection state machine */
    pc_waiter_t *create_waiter;
    pc_rxpool_t *pool;       /* memory of received messages */
    pc_waiter_t *unsub_waiter;
    /* configuration */
    int sub_type;
    int initial_position;
    int queue_size;
    int priority;
    char name[256];
    /* shared with application threads, under lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pulsarc_msg_t *qhead, *qtail;
    size_t qlen;
    uint32_t permits;        /* owed back to the broker */
    int flow_posted;
    int closing, closed, close_posted;
    int end_of_topic;
};

/* ---------- lifetime ---------- */

static void c_ref(pulsarc_consumer_t *c) { atomic_fetch_add(&c->refs, 1); }

static void clear_queue_locked(pulsarc_consumer_t *c) {
    while (c->qhead) {
        pulsarc_msg_t *m = c->qhead;
        c->qhead = m->next;
        pulsarc_msg_destroy(m);
    }
    c->qtail = NULL;
    c->qlen = 0;
}

static void c_unref(pulsarc_consumer_t *c) {
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    clear_queue_locked(c);
    pc_rxpool_release(c->pool);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    free(c->sub);
    free(c);
}

const char *pulsarc_consumer_topic(const pulsarc_consumer_t *c) { return c ? c->topic.full : NULL; }
const char *pulsarc_consumer_subscription(const pulsarc_consumer_t *c) { return c ? c->sub : NULL; }

/* ---------- flow permits ---------- */

static void send_flow(pulsarc_consumer_t *c, uint32_t n) {
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
    send_flow(c, n);
    c_unref(c);
}

/* Returns n permits; posts a FLOW once half the queue is owed. Lock held. */
static int owe_permits_locked(pulsarc_consumer_t *c, uint32_t n) {
    c->permits += n;
    if (c->flow_posted || c->permits < (uint32_t)(c->queue_size + 1) / 2)
        return 0;
    c->flow_posted = 1;
    return 1;
}

static void post_flow(pulsarc_consumer_t *c) {
    c_ref(c);
    if (pc_client_post(c->client, do_flow, c) != PULSARC_OK)
        c_unref(c);
}

/* ---------- incoming messages ---------- */

static void send_ack(pulsarc_consumer_t *c, const pulsarc_msgid_t *id, int validation_error) {
    if (c->h.state != PC_H_READY || !c->h.conn)
        return;
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__MessageIdData *mids[1] = {&mid};
    mid.ledgerid = (uint64_t)id->ledger_id;
    mid.entryid = (uint64_t)id->entry_id;
    int64_t set[(id->batch_size + 63) / 64 + 1];
    if (id->batch_index >= 0 && id->batch_size > 0) {
        /* batch-index ack: bits still set are the ones left unacked */
        size_t words = ((size_t)id->batch_size + 63) / 64;
        for (size_t w = 0; w < words; w++) {
            int bits = id->batch_size - (int)w * 64;
            set[w] = bits >= 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1);
        }
        set[id->batch_index / 64] &= ~(int64_t)(UINT64_C(1) << (id->batch_index % 64));
        mid.n_ack_set = words;
        mid.ack_set = set;
    }
    Pulsar__Proto__CommandAck ack = PULSAR__PROTO__COMMAND_ACK__INIT;
    ack.consumer_id = c->id;
    ack.ack_type = PULSAR__PROTO__COMMAND_ACK__ACK_TYPE__Individual;
    ack.n_message_id = 1;
    ack.message_id = mids;
    if (validation_error >= 0) {
        ack.has_validation_error = 1;
        ack.validation_error = validation_error;
    }
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ACK;
    cmd.ack = &ack;
    pc_conn_send(c->h.conn, &cmd);
}

static void enqueue_msgs(pulsarc_consumer_t *c, pulsarc_msg_t *first, pulsarc_msg_t *last,
                         size_t n, uint32_t refund) {
    pthread_mutex_lock(&c->lock);
    if (first) {
        if (c->qtail)
            c->qtail->next = first;
        else
            c->qhead = first;
        c->qtail = last;
        c->qlen += n;
        pthread_cond_broadcast(&c->cond);
    }
    int flow = refund && owe_permits_locked(c, refund);
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(c);
}

/* Drops an entry we cannot use: tells the broker why and refunds its permits. */
static void discard_entry(pulsarc_consumer_t *c, const pulsarc_msgid_t *id, int why, uint32_t permits) {
    send_ack(c, id, why);
    enqueue_msgs(c, NULL, NULL, 0, permits);
}

static void report_discard(pulsarc_consumer_t *c, const char *why) {
    fprintf(stderr, "pulsarc: %s/%s: entry discarded: %s\n", c->topic.full, c->sub, why);
}

static void handle_message(pulsarc_consumer_t *c, pc_conn_t *conn, const pc_frame_t *f) {
    const Pulsar__Proto__CommandMessage *cm = f->cmd->message;
    if (c->h.state != PC_H_READY || conn != c->h.conn || !cm->message_id)
        return;
    pc_rx_opts_t o = {c->topic.partition, NULL};
    pc_rx_result_t r;
    pc_rx_decode(c->pool, f, &o, &r);
    if (r.chunk_entry) { /* chunked messages: not supported yet, see chunk assembler */
        pc_entry_unref(r.chunk_entry);
        r.validation_error = PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__DecompressionError;
        snprintf(r.error, sizeof r.error, "chunked message not supported by this consumer");
    }
    if (r.validation_error != -1) {
        pulsarc_msgid_t eid = {(int64_t)cm->message_id->ledgerid, (int64_t)cm->message_id->entryid,
                               c->topic.partition, -1, 0};
        report_discard(c, r.error);
        if (r.validation_error >= 0)
            discard_entry(c, &eid, r.validation_error, r.permits);
        else
            enqueue_msgs(c, NULL, NULL, 0, r.permits);
        return;
    }
    uint32_t refund = r.permits > r.n ? r.permits - (uint32_t)r.n : 0;
    enqueue_msgs(c, r.first, r.last, r.n, refund);
}

/* ---------- connection events ---------- */

#define C_OF(hp) ((pulsarc_consumer_t *)((char *)(hp) - offsetof(pulsarc_consumer_t, h)))

static void lose_connection(pulsarc_consumer_t *c) {
    if (c->h.conn)
        pc_conn_detach_consumer(c->h.conn, c->id);
    pc_handler_lost(&c->h);
}

static void on_frame(void *obj, pc_conn_t *conn, const pc_frame_t *f) {
    pulsarc_consumer_t *c = obj;
    switch (f->cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE:
        handle_message(c, conn, f);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER:
        lose_connection(c);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__REACHED_END_OF_TOPIC:
        pthread_mutex_lock(&c->lock);
        c->end_of_topic = 1;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
        break;
    default:
        break;
    }
}

static void on_conn_closed(void *obj, pc_conn_t *conn, pulsarc_err_t why) {
    pulsarc_consumer_t *c = obj;
    (void)conn;
    (void)why;
    pc_handler_lost(&c->h);
}

static const pc_conn_handler_t consumer_handler = {on_frame, on_conn_closed};

/* ---------- subscribing ---------- */

static void finish_create(pulsarc_consumer_t *c, pulsarc_err_t err, const char *msg) {
    if (c->create_waiter) {
        pc_waiter_done(c->create_waiter, err, msg);
        c->create_waiter = NULL;
    }
}

static void h_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    finish_create(C_OF(h), err, msg);
}

static void h_ready(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply) {
    pulsarc_consumer_t *c = C_OF(h);
    (void)reply;
    pc_conn_attach_consumer(conn, c->id, &consumer_handler, c);
    pthread_mutex_lock(&c->lock);
    clear_queue_locked(c); /* the broker redelivers everything unacked */
    c->permits = 0;
    pthread_mutex_unlock(&c->lock);
    send_flow(c, (uint32_t)c->queue_size);
    finish_create(c, PULSARC_OK, NULL);
}

static void send_close_consumer(pc_handler_t *h, pc_conn_t *conn) {
    pulsarc_consumer_t *c = C_OF(h);
    Pulsar__Proto__CommandCloseConsumer cc = PULSAR__PROTO__COMMAND_CLOSE_CONSUMER__INIT;
    cc.consumer_id = c->id;
    cc.request_id = c->client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER;
    cmd.close_consumer = &cc;
    pc_conn_send(conn, &cmd);
}

static void h_send_create(pc_handler_t *h, pc_conn_t *conn) {
    pulsarc_consumer_t *c = C_OF(h);
    Pulsar__Proto__CommandSubscribe s = PULSAR__PROTO__COMMAND_SUBSCRIBE__INIT;
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
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SUBSCRIBE;
    cmd.subscribe = &s;
    pc_conn_request(conn, &cmd, s.request_id, c->client->op_timeout_ms, pc_handler_created, h);
}

static void h_ref(pc_handler_t *h) { c_ref(C_OF(h)); }
static void h_unref(pc_handler_t *h) { c_unref(C_OF(h)); }

static const pc_handler_ops_t consumer_ops = {
    h_send_create, send_close_consumer, h_ready, h_failed, NULL, h_ref, h_unref,
};

static void do_start(void *arg) {
    pulsarc_consumer_t *c = arg;
    c->id = c->client->next_id++;
    pc_handler_start(&c->h);
}

/* ---------- closing and unsubscribing ---------- */

static void mark_closed(pulsarc_consumer_t *c) {
    c->h.state = PC_H_CLOSED;
    pthread_mutex_lock(&c->lock);
    c->closed = 1;
    c->closing = 1;
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
    c_unref(c);
}

/* Sends CLOSE_CONSUMER (or UNSUBSCRIBE) and finishes in on_close_reply. */
static void close_on_broker(pulsarc_consumer_t *c, pc_conn_t *conn, int unsubscribe) {
    pc_conn_detach_consumer(conn, c->id);
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
    pc_conn_t *conn = pc_handler_stop(&c->h);
    if (conn) {
        close_on_broker(c, conn, unsubscribe);
        return; /* on_close_reply keeps the reference */
    }
    if (c->unsub_waiter) {
        pc_waiter_done(c->unsub_waiter, was_closed ? PULSARC_ERR_CLOSED : PULSARC_ERR_DISCONNECTED,
                       "consumer is not connected");
        c->unsub_waiter = NULL;
    }
    mark_closed(c);
    c_unref(c);
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
    c_ref(c);
    if (pc_client_post(c->client, fn, c) == PULSARC_OK)
        return 1;
    c_unref(c);
    return 0;
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
    if (!post_close(c, do_close)) {
        pthread_mutex_lock(&c->lock);
        c->closed = 1;
        pthread_mutex_unlock(&c->lock);
    }
    if (!pc_in_callback())
        wait_closed(c);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_unsubscribe(pulsarc_consumer_t *c) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pc_waiter_t w;
    pc_waiter_init(&w);
    c->unsub_waiter = &w; /* read only by the loop after the post below */
    pulsarc_err_t err;
    if (post_close(c, do_unsubscribe)) {
        err = pc_waiter_wait(&w, NULL, 0);
        wait_closed(c);
    } else {
        err = PULSARC_ERR_CLOSED;
    }
    pc_waiter_destroy(&w);
    return err;
}

static void handle_close(pc_handle_t *h) { pulsarc_consumer_close((pulsarc_consumer_t *)h); }
static void handle_destroy(pc_handle_t *h) { pulsarc_consumer_destroy((pulsarc_consumer_t *)h); }

void pulsarc_consumer_destroy(pulsarc_consumer_t *c) {
    if (!c)
        return;
    pulsarc_consumer_close(c);
    pc_client_unregister(c->client, &c->handle);
    c_unref(c);
}

/* ---------- receiving and acknowledging ---------- */

pulsarc_err_t pulsarc_consumer_receive(pulsarc_consumer_t *c, pulsarc_msg_t **msgp, int timeout_ms) {
    if (!c || !msgp)
        return PULSARC_ERR_INVALID_ARG;
    *msgp = NULL;
    struct timespec dl;
    if (timeout_ms > 0)
        pc_deadline(&dl, timeout_ms);
    pthread_mutex_lock(&c->lock);
    pulsarc_err_t err = PULSARC_OK;
    while (!c->qhead && !err) {
        if (c->closing)
            err = PULSARC_ERR_CLOSED;
        else if (c->end_of_topic)
            err = PULSARC_ERR_END_OF_TOPIC;
        else if (timeout_ms == 0)
            err = PULSARC_ERR_NO_MESSAGE;
        else if (timeout_ms < 0)
            pthread_cond_wait(&c->cond, &c->lock);
        else if (pthread_cond_timedwait(&c->cond, &c->lock, &dl))
            err = PULSARC_ERR_NO_MESSAGE;
    }
    int flow = 0;
    if (!err) {
        pulsarc_msg_t *m = c->qhead;
        c->qhead = m->next;
        if (!c->qhead)
            c->qtail = NULL;
        c->qlen--;
        m->next = NULL;
        *msgp = m;
        flow = owe_permits_locked(c, 1);
    }
    pthread_mutex_unlock(&c->lock);
    if (flow)
        post_flow(c);
    return err;
}

typedef struct ack_op {
    pulsarc_consumer_t *c;
    pulsarc_msgid_t id;
} ack_op_t;

static void do_ack(void *arg) {
    ack_op_t *a = arg;
    send_ack(a->c, &a->id, -1);
    c_unref(a->c);
    free(a);
}

pulsarc_err_t pulsarc_consumer_ack_id(pulsarc_consumer_t *c, const pulsarc_msgid_t *id) {
    if (!c || !id || id->ledger_id < 0 || id->entry_id < 0)
        return PULSARC_ERR_INVALID_ARG;
    if (id->batch_index >= 0 && id->batch_index >= id->batch_size && id->batch_size > 0)
        return PULSARC_ERR_INVALID_ARG;
    ack_op_t *a = malloc(sizeof *a);
    if (!a)
        return PULSARC_ERR_NOMEM;
    a->c = c;
    a->id = *id;
    c_ref(c);
    pulsarc_err_t err = pc_client_post(c->client, do_ack, a);
    if (err) {
        c_unref(c);
        free(a);
    }
    return err;
}

pulsarc_err_t pulsarc_consumer_ack(pulsarc_consumer_t *c, const pulsarc_msg_t *msg) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    return pulsarc_consumer_ack_id(c, &msg->id);
}

/* ---------- creation ---------- */

static pulsarc_consumer_t *c_alloc(pulsarc_client_t *cl, const char *sub, const pulsarc_conf_t *conf) {
    pulsarc_consumer_t *c = calloc(1, sizeof *c);
    if (!c || !(c->sub = strdup(sub))) {
        free(c);
        return NULL;
    }
    c->client = cl;
    atomic_init(&c->refs, 1);
    c->handle.close = handle_close;
    c->handle.destroy = handle_destroy;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &a);
    pthread_condattr_destroy(&a);
    c->sub_type = (int)pc_conf_int(conf, PC_PROP_SUBSCRIPTION_TYPE);
    c->initial_position = (int)pc_conf_int(conf, PC_PROP_SUBSCRIPTION_INITIAL_POSITION);
    c->queue_size = (int)pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE);
    c->priority = (int)pc_conf_int(conf, PC_PROP_PRIORITY_LEVEL);
    snprintf(c->name, sizeof c->name, "%s", pc_conf_str(conf, PC_PROP_CONSUMER_NAME));
    return c;
}

pulsarc_err_t pulsarc_consumer_new(pulsarc_client_t *cl, const char *topic, const char *sub,
                                   const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                   char *errstr, size_t errlen) {
    if (!cl || !topic || !sub || !cp || !*sub)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "client, topic, a non-empty subscription and consumerp are required");
    *cp = NULL;
    pulsarc_consumer_t *c = c_alloc(cl, sub, conf);
    if (!c)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_client_parse_topic(cl, topic, &c->topic, errstr, errlen);
    if (err) {
        c_unref(c);
        return err;
    }
    pc_handler_init(&c->h, &consumer_ops, cl, c->topic.full);
    c->pool = pc_rxpool_new(c->topic.full, (size_t)64 << 20); /* decompressed entry limit */
    if (!c->pool) {
        c_unref(c);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    pc_waiter_t w;
    pc_waiter_init(&w);
    c->create_waiter = &w;
    c_ref(c);
    err = pc_client_register(cl, &c->handle);
    if (!err && (err = pc_client_post(cl, do_start, c)) != PULSARC_OK)
        pc_client_unregister(cl, &c->handle);
    if (err) {
        pc_waiter_destroy(&w);
        c_unref(c);
        c_unref(c);
        return pc_seterr(errstr, errlen, err, "client is closed");
    }
    err = pc_waiter_wait(&w, errstr, errlen);
    pc_waiter_destroy(&w);
    if (err) {
        pthread_mutex_lock(&c->lock);
        c->closed = c->closing = 1; /* the loop already set C_CLOSED */
        pthread_mutex_unlock(&c->lock);
        pc_client_unregister(cl, &c->handle);
        c_unref(c);
        c_unref(c);
        return err;
    }
    c_unref(c);
    *cp = c;
    return PULSARC_OK;
}
