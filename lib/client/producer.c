/*
 * Design notes: a producer is a state machine on the loop thread
 * (CONNECTING -> READY -> CLOSING -> CLOSED, back to CONNECTING when its
 * connection drops or the broker closes it) plus a FIFO of pending sends.
 * Each send is framed once, on the loop thread, and kept byte for byte
 * until its receipt, so a reconnect resends exactly the same frames in the
 * same order (same name, same sequence ids, so broker deduplication can
 * drop what already landed).
 *
 * Threads: application threads only touch the slot counters under `lock`
 * and post closures; everything else is loop-thread state. Results go to
 * a blocked sender's waiter or to the client's callback queue. The struct
 * is reference counted (atomic) because loop callbacks and queued user
 * callbacks may outlive pulsarc_producer_destroy().
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
#include "core/err.h"
#include "net/conn.h"

typedef struct send_op {
    struct send_op *next;
    int64_t seq;
    pc_buf_t frame;
    pulsarc_msg_t *msg;     /* owned when owns_msg */
    int owns_msg;
    pulsarc_send_cb cb;
    void *opaque;
    pc_waiter_t *waiter;    /* synchronous send */
    pulsarc_msgid_t *id_out;
    int64_t deadline_ms;
} send_op_t;

struct pulsarc_producer_s {
    pc_handle_t handle;
    pulsarc_client_t *client;
    pc_topic_t topic;
    atomic_int refs;
    uint64_t id;
    /* loop thread */
    pc_handler_t h;          /* connection state machine */
    char name[256];
    int user_named;
    pc_timer_t send_timer;
    send_op_t *head, *tail;
    int64_t next_seq;
    pc_waiter_t *create_waiter;
    /* configuration */
    int send_timeout_ms;
    int max_pending;
    int block_if_full;
    /* shared with application threads, under lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int inflight;
    uint64_t enqueued, completed;
    int closing;             /* no new sends */
    int closed;              /* CLOSED reached */
    int close_posted;
    int64_t last_seq_acked;
};

static void p_fail_all(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg);

/* ---------- lifetime ---------- */

static void p_ref(pulsarc_producer_t *p) { atomic_fetch_add(&p->refs, 1); }

static void p_unref(pulsarc_producer_t *p) {
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p);
}

const char *pulsarc_producer_name(const pulsarc_producer_t *p) { return p ? p->name : NULL; }
const char *pulsarc_producer_topic(const pulsarc_producer_t *p) { return p ? p->topic.full : NULL; }

int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *p) {
    if (!p)
        return -1;
    pthread_mutex_lock((pthread_mutex_t *)&p->lock);
    int64_t v = p->last_seq_acked;
    pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
    return v;
}

/* ---------- completing sends ---------- */

typedef struct send_result {
    pc_cb_item_t item;
    pulsarc_producer_t *p;
    pulsarc_send_cb cb;
    void *opaque;
    pulsarc_err_t err;
    pulsarc_msgid_t id;
    pulsarc_msg_t *msg;
} send_result_t;

static void run_send_result(pc_cb_item_t *it) {
    send_result_t *r = (send_result_t *)it;
    r->cb(r->p, r->err, r->err ? NULL : &r->id, r->msg, r->opaque);
    pulsarc_msg_destroy(r->msg);
    p_unref(r->p);
    free(r);
}

static void release_slot(pulsarc_producer_t *p, pulsarc_err_t err, int64_t seq) {
    pthread_mutex_lock(&p->lock);
    p->inflight--;
    p->completed++;
    if (!err && seq > p->last_seq_acked)
        p->last_seq_acked = seq;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void deliver_async(pulsarc_producer_t *p, send_op_t *op, pulsarc_err_t err,
                          const pulsarc_msgid_t *id) {
    send_result_t *r = calloc(1, sizeof *r);
    if (!r) { /* cannot report; the message is still freed */
        if (op->owns_msg)
            pulsarc_msg_destroy(op->msg);
        return;
    }
    r->item.run = run_send_result;
    r->p = p;
    r->cb = op->cb;
    r->opaque = op->opaque;
    r->err = err;
    if (id)
        r->id = *id;
    r->msg = op->msg;
    p_ref(p);
    pc_cbq_push(&p->client->cbq, &r->item);
}

/* The single exit of every send: exactly one outcome per op. */
static void op_complete(pulsarc_producer_t *p, send_op_t *op, pulsarc_err_t err,
                        const char *errmsg, const pulsarc_msgid_t *id) {
    if (op->owns_msg && op->msg && id)
        op->msg->id = *id;
    release_slot(p, err, op->seq);
    if (op->waiter) {
        if (!err && op->id_out)
            *op->id_out = *id;
        pc_waiter_done(op->waiter, err, errmsg);
    } else if (op->cb) {
        deliver_async(p, op, err, id);
    } else if (op->owns_msg) {
        pulsarc_msg_destroy(op->msg);
    }
    pc_buf_free(&op->frame);
    free(op);
}

static send_op_t *pop_head(pulsarc_producer_t *p) {
    send_op_t *op = p->head;
    if (op) {
        p->head = op->next;
        if (!p->head)
            p->tail = NULL;
    }
    return op;
}

static void p_fail_all(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg) {
    send_op_t *op;
    pc_timer_stop(p->client->loop, &p->send_timer);
    while ((op = pop_head(p)))
        op_complete(p, op, err, msg, NULL);
}

/* ---------- send timeout ---------- */

static void arm_send_timer(pulsarc_producer_t *p) {
    if (p->send_timeout_ms <= 0 || !p->head || pc_timer_active(&p->send_timer))
        return;
    pc_timer_start(p->client->loop, &p->send_timer, p->head->deadline_ms - pc_now_ms());
}

static void on_send_timer(void *arg) {
    pulsarc_producer_t *p = arg;
    int64_t now = pc_now_ms();
    while (p->head && p->head->deadline_ms <= now) {
        char m[160];
        snprintf(m, sizeof m, "no receipt for sequence id %lld within sendTimeoutMs=%d",
                 (long long)p->head->seq, p->send_timeout_ms);
        op_complete(p, pop_head(p), PULSARC_ERR_TIMEOUT, m, NULL);
    }
    arm_send_timer(p);
}

/* ---------- framing a send ---------- */

static pulsarc_err_t encode_send(pulsarc_producer_t *p, send_op_t *op) {
    const pulsarc_msg_t *m = op->msg;
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    Pulsar__Proto__KeyValue kvs[m->nprops ? m->nprops : 1];
    Pulsar__Proto__KeyValue *kvp[m->nprops ? m->nprops : 1];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    md.producer_name = p->name;
    md.sequence_id = (uint64_t)op->seq;
    md.publish_time = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    for (size_t i = 0; i < m->nprops; i++) {
        pulsar__proto__key_value__init(&kvs[i]);
        kvs[i].key = m->props[i].name;
        kvs[i].value = m->props[i].value;
        kvp[i] = &kvs[i];
    }
    md.n_properties = m->nprops;
    md.properties = kvp;
    md.partition_key = m->key;
    md.has_event_time = m->event_time != 0;
    md.event_time = m->event_time;
    md.has_uncompressed_size = 1;
    md.uncompressed_size = (uint32_t)m->len;
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    send.producer_id = p->id;
    send.sequence_id = (uint64_t)op->seq;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &send;
    pc_buf_init(&op->frame, 0);
    return pc_frame_encode_payload(&op->frame, &cmd, &md, m->data, m->len);
}

static pulsarc_err_t check_size(pulsarc_producer_t *p, const send_op_t *op, char *m, size_t ml) {
    size_t max = p->h.conn ? pc_conn_max_message_size(p->h.conn) : PC_DEFAULT_MAX_MESSAGE_SIZE;
    if (op->msg->len <= max)
        return PULSARC_OK;
    return pc_seterr(m, ml, PULSARC_ERR_MSG_TOO_BIG,
                     "message of %zu bytes exceeds the broker's maximum of %zu bytes",
                     op->msg->len, max);
}

/* Loop thread: assigns the sequence id, frames, queues and writes. */
static void do_enqueue(void *arg) {
    send_op_t *op = arg;
    pulsarc_producer_t *p = (pulsarc_producer_t *)op->next;
    op->next = NULL;
    char m[200];
    pulsarc_err_t err = p->h.state >= PC_H_CLOSING ? PULSARC_ERR_CLOSED : check_size(p, op, m, sizeof m);
    if (err == PULSARC_ERR_CLOSED)
        snprintf(m, sizeof m, "producer is closed");
    if (!err) {
        op->seq = op->msg->has_seq ? op->msg->seq : p->next_seq;
        if (op->seq >= p->next_seq)
            p->next_seq = op->seq + 1;
        op->msg->seq = op->seq;
        err = encode_send(p, op);
        if (err)
            snprintf(m, sizeof m, "could not frame the message");
    }
    if (err) {
        op_complete(p, op, err, m, NULL);
    } else {
        op->deadline_ms = pc_now_ms() + p->send_timeout_ms;
        if (p->tail)
            p->tail->next = op;
        else
            p->head = op;
        p->tail = op;
        if (p->h.state == PC_H_READY)
            pc_conn_send_raw(p->h.conn, op->frame.data, op->frame.len);
        arm_send_timer(p);
    }
    p_unref(p);
}

/* ---------- receipts and broker events ---------- */

static void handle_receipt(pulsarc_producer_t *p, pc_conn_t *conn,
                           const Pulsar__Proto__CommandSendReceipt *r) {
    send_op_t *op = p->head;
    int64_t seq = (int64_t)r->sequence_id;
    if (!op || seq < op->seq)
        return; /* receipt for a send that already timed out */
    if (seq > op->seq) {
        pc_conn_close(conn, PULSARC_ERR_PROTOCOL, "receipt out of order; resending");
        return;
    }
    pulsarc_msgid_t id = {-1, -1, p->topic.partition, -1, 0};
    if (r->message_id) {
        id.ledger_id = (int64_t)r->message_id->ledgerid;
        id.entry_id = (int64_t)r->message_id->entryid;
    }
    pop_head(p);
    op_complete(p, op, PULSARC_OK, NULL, &id);
    pc_timer_stop(p->client->loop, &p->send_timer);
    arm_send_timer(p);
}

static void lose_connection(pulsarc_producer_t *p) {
    if (p->h.conn)
        pc_conn_detach_producer(p->h.conn, p->id);
    pc_handler_lost(&p->h);
}

static void send_close_producer(pc_handler_t *h, pc_conn_t *conn) {
    pulsarc_producer_t *p = (pulsarc_producer_t *)((char *)h - offsetof(pulsarc_producer_t, h));
    Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    cp.producer_id = p->id;
    cp.request_id = p->client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &cp;
    pc_conn_send(conn, &cmd);
}

static void on_frame(void *obj, pc_conn_t *conn, const pc_frame_t *f) {
    pulsarc_producer_t *p = obj;
    switch (f->cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT:
        handle_receipt(p, conn, f->cmd->send_receipt);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR:
        /* Re-create this producer; pending frames are resent in order. */
        send_close_producer(&p->h, conn);
        lose_connection(p);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        lose_connection(p);
        break;
    default:
        break;
    }
}

static void on_conn_closed(void *obj, pc_conn_t *conn, pulsarc_err_t why) {
    pulsarc_producer_t *p = obj;
    (void)conn;
    (void)why;
    pc_handler_lost(&p->h); /* the connection already forgot us */
}

static const pc_conn_handler_t producer_handler = {on_frame, on_conn_closed};

/* ---------- (re)creating on the broker ---------- */

#define P_OF(hp) ((pulsarc_producer_t *)((char *)(hp) - offsetof(pulsarc_producer_t, h)))

static void finish_create(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg) {
    if (p->create_waiter) {
        pc_waiter_done(p->create_waiter, err, msg);
        p->create_waiter = NULL;
    }
}

static int is_final_for_producer(pulsarc_err_t err) {
    return err == PULSARC_ERR_BROKER_TOPIC_TERMINATED || err == PULSARC_ERR_BROKER_PRODUCER_FENCED;
}

static void h_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pulsarc_producer_t *p = P_OF(h);
    if (p->create_waiter)
        finish_create(p, err, msg);
    else
        p_fail_all(p, err, msg);
}

static void adopt_success(pulsarc_producer_t *p, const Pulsar__Proto__CommandProducerSuccess *s) {
    if (!p->user_named && s->producer_name)
        snprintf(p->name, sizeof p->name, "%s", s->producer_name);
    if (p->create_waiter) { /* first creation only */
        int64_t last = s->has_last_sequence_id ? s->last_sequence_id : -1;
        if (last >= p->next_seq)
            p->next_seq = last + 1;
        pthread_mutex_lock(&p->lock);
        p->last_seq_acked = last;
        pthread_mutex_unlock(&p->lock);
    }
}

static void h_ready(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply) {
    pulsarc_producer_t *p = P_OF(h);
    adopt_success(p, reply->cmd->producer_success);
    pc_conn_attach_producer(conn, p->id, &producer_handler, p);
    for (send_op_t *op = p->head; op; op = op->next)
        pc_conn_send_raw(conn, op->frame.data, op->frame.len);
    finish_create(p, PULSARC_OK, NULL);
}

static void h_send_create(pc_handler_t *h, pc_conn_t *conn) {
    pulsarc_producer_t *p = P_OF(h);
    Pulsar__Proto__CommandProducer cp = PULSAR__PROTO__COMMAND_PRODUCER__INIT;
    cp.topic = p->topic.full;
    cp.producer_id = p->id;
    cp.request_id = p->client->next_id++;
    cp.producer_name = p->name[0] ? p->name : NULL;
    cp.has_epoch = 1;
    cp.epoch = h->epoch - 1;
    cp.has_user_provided_producer_name = 1;
    cp.user_provided_producer_name = p->user_named;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &cp;
    pc_conn_request(conn, &cmd, cp.request_id, p->client->op_timeout_ms, pc_handler_created, h);
}

static void h_ref(pc_handler_t *h) { p_ref(P_OF(h)); }
static void h_unref(pc_handler_t *h) { p_unref(P_OF(h)); }

static const pc_handler_ops_t producer_ops = {
    h_send_create, send_close_producer, h_ready, h_failed, is_final_for_producer, h_ref, h_unref,
};

static void do_start(void *arg) {
    pulsarc_producer_t *p = arg;
    p->id = p->client->next_id++;
    pc_handler_start(&p->h);
}

/* ---------- closing ---------- */

static void mark_closed(pulsarc_producer_t *p) {
    p->h.state = PC_H_CLOSED;
    pthread_mutex_lock(&p->lock);
    p->closed = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void on_close_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    pulsarc_producer_t *p = arg;
    (void)err, (void)f, (void)msg; /* gone either way */
    p_fail_all(p, PULSARC_ERR_CLOSED, "producer closed");
    mark_closed(p);
    p_unref(p);
}

static void do_close(void *arg) {
    pulsarc_producer_t *p = arg;
    finish_create(p, PULSARC_ERR_CLOSED, "producer closed while connecting");
    pc_conn_t *conn = pc_handler_stop(&p->h);
    if (conn) {
        pc_conn_detach_producer(conn, p->id);
        Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
        cp.producer_id = p->id;
        cp.request_id = p->client->next_id++;
        pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
        cmd.close_producer = &cp;
        pc_conn_request(conn, &cmd, cp.request_id, p->client->op_timeout_ms, on_close_reply, p);
        return; /* on_close_reply keeps the reference */
    }
    p_fail_all(p, PULSARC_ERR_CLOSED, "producer closed");
    mark_closed(p);
    p_unref(p);
}

/* Starts closing once; returns 0 if the loop refused (already stopped). */
static int post_close(pulsarc_producer_t *p) {
    pthread_mutex_lock(&p->lock);
    int first = !p->close_posted;
    p->close_posted = 1;
    p->closing = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (!first)
        return 1;
    p_ref(p);
    if (pc_client_post(p->client, do_close, p) == PULSARC_OK)
        return 1;
    p_unref(p);
    return 0;
}

pulsarc_err_t pulsarc_producer_close(pulsarc_producer_t *p) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    if (!post_close(p)) {
        pthread_mutex_lock(&p->lock);
        p->closed = 1; /* the loop is gone: nothing can still be pending */
        pthread_mutex_unlock(&p->lock);
    }
    if (pc_in_callback())
        return PULSARC_OK; /* only marks; the loop finishes */
    pthread_mutex_lock(&p->lock);
    while (!p->closed)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return PULSARC_OK;
}

static void handle_close(pc_handle_t *h) { pulsarc_producer_close((pulsarc_producer_t *)h); }
static void handle_destroy(pc_handle_t *h) { pulsarc_producer_destroy((pulsarc_producer_t *)h); }

void pulsarc_producer_destroy(pulsarc_producer_t *p) {
    if (!p)
        return;
    pulsarc_producer_close(p);
    pc_client_unregister(p->client, &p->handle);
    p_unref(p);
}

/* ---------- creation ---------- */

static pulsarc_producer_t *p_alloc(pulsarc_client_t *c, const pulsarc_conf_t *conf) {
    pulsarc_producer_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->client = c;
    atomic_init(&p->refs, 1);
    p->handle.close = handle_close;
    p->handle.destroy = handle_destroy;
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &a);
    pthread_condattr_destroy(&a);
    p->last_seq_acked = -1;
    snprintf(p->name, sizeof p->name, "%s", pc_conf_str(conf, PC_PROP_PRODUCER_NAME));
    p->user_named = p->name[0] != '\0';
    p->send_timeout_ms = (int)pc_conf_int(conf, PC_PROP_SEND_TIMEOUT_MS);
    p->max_pending = (int)pc_conf_int(conf, PC_PROP_MAX_PENDING_MESSAGES);
    p->block_if_full = (int)pc_conf_int(conf, PC_PROP_BLOCK_IF_QUEUE_FULL);
    pc_timer_init(&p->send_timer, on_send_timer, p);
    return p;
}

pulsarc_err_t pulsarc_producer_new(pulsarc_client_t *c, const char *topic,
                                   const pulsarc_conf_t *conf, pulsarc_producer_t **pp,
                                   char *errstr, size_t errlen) {
    if (!c || !topic || !pp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client, topic and producerp are required");
    *pp = NULL;
    pulsarc_producer_t *p = p_alloc(c, conf);
    if (!p)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_client_parse_topic(c, topic, &p->topic, errstr, errlen);
    if (err) {
        p_unref(p);
        return err;
    }
    pc_handler_init(&p->h, &producer_ops, c, p->topic.full);
    pc_waiter_t w;
    pc_waiter_init(&w);
    p->create_waiter = &w;
    p_ref(p);
    err = pc_client_register(c, &p->handle);
    if (!err && (err = pc_client_post(c, do_start, p)) != PULSARC_OK)
        pc_client_unregister(c, &p->handle);
    if (err) {
        pc_waiter_destroy(&w);
        p_unref(p);
        p_unref(p);
        return pc_seterr(errstr, errlen, err, "client is closed");
    }
    err = pc_waiter_wait(&w, errstr, errlen);
    pc_waiter_destroy(&w);
    if (err) {
        pthread_mutex_lock(&p->lock);
        p->closed = p->closing = 1; /* the loop already set P_CLOSED */
        pthread_mutex_unlock(&p->lock);
        pc_client_unregister(c, &p->handle);
        p_unref(p); /* the reference do_start held for the creation */
        p_unref(p);
        return err;
    }
    p_unref(p);
    *pp = p;
    return PULSARC_OK;
}

/* ---------- sending ---------- */

/* Reserves a pending slot (application thread). */
static pulsarc_err_t acquire_slot(pulsarc_producer_t *p) {
    struct timespec dl;
    int bounded = p->send_timeout_ms > 0;
    if (bounded)
        pc_deadline(&dl, p->send_timeout_ms);
    pthread_mutex_lock(&p->lock);
    pulsarc_err_t err = PULSARC_OK;
    while (!p->closing && p->inflight >= p->max_pending) {
        if (!p->block_if_full) {
            err = PULSARC_ERR_QUEUE_FULL;
            break;
        }
        if (bounded ? pthread_cond_timedwait(&p->cond, &p->lock, &dl) != 0
                    : pthread_cond_wait(&p->cond, &p->lock) != 0) {
            err = PULSARC_ERR_TIMEOUT;
            break;
        }
    }
    if (!err && p->closing)
        err = PULSARC_ERR_CLOSED;
    if (!err) {
        p->inflight++;
        p->enqueued++;
    }
    pthread_mutex_unlock(&p->lock);
    return err;
}

static pulsarc_err_t submit(pulsarc_producer_t *p, send_op_t *op) {
    pulsarc_err_t err = acquire_slot(p);
    if (err)
        return err;
    op->next = (send_op_t *)p; /* carries the producer to do_enqueue */
    p_ref(p);
    err = pc_client_post(p->client, do_enqueue, op);
    if (err) {
        p_unref(p);
        release_slot(p, err, -1);
    }
    return err;
}

pulsarc_err_t pulsarc_producer_send(pulsarc_producer_t *p, const pulsarc_msg_t *msg,
                                    pulsarc_msgid_t *id) {
    if (!p || !msg)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_msg_t copy = *msg; /* the loop writes the assigned sequence id here */
    pc_waiter_t w;
    pc_waiter_init(&w);
    send_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return PULSARC_ERR_NOMEM;
    op->msg = &copy;
    op->waiter = &w;
    op->id_out = id;
    pulsarc_err_t err = submit(p, op);
    if (err)
        free(op);
    else
        err = pc_waiter_wait(&w, NULL, 0);
    pc_waiter_destroy(&w);
    return err;
}

pulsarc_err_t pulsarc_producer_send_async(pulsarc_producer_t *p, pulsarc_msg_t *msg,
                                          pulsarc_send_cb cb, void *opaque) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    send_op_t *op = p ? calloc(1, sizeof *op) : NULL;
    pulsarc_err_t err = !p ? PULSARC_ERR_INVALID_ARG : !op ? PULSARC_ERR_NOMEM : PULSARC_OK;
    if (!err) {
        op->msg = msg;
        op->owns_msg = 1;
        op->cb = cb;
        op->opaque = opaque;
        err = submit(p, op);
    }
    if (err) { /* the callback still runs exactly once, here */
        free(op);
        if (cb)
            cb(p, err, NULL, msg, opaque);
        pulsarc_msg_destroy(msg);
    }
    return err;
}

pulsarc_err_t pulsarc_producer_flush(pulsarc_producer_t *p, int timeout_ms) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    struct timespec dl;
    if (timeout_ms >= 0)
        pc_deadline(&dl, timeout_ms);
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&p->lock);
    uint64_t target = p->enqueued;
    while (p->completed < target && !err) {
        if (timeout_ms < 0)
            pthread_cond_wait(&p->cond, &p->lock);
        else if (pthread_cond_timedwait(&p->cond, &p->lock, &dl))
            err = PULSARC_ERR_TIMEOUT;
    }
    pthread_mutex_unlock(&p->lock);
    return err;
}
