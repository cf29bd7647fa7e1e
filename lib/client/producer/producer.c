/*
 * Design notes: a producer is a state machine on the io thread
 * (CONNECTING -> READY -> CLOSING -> CLOSED, back to CONNECTING when its
 * connection drops or the broker closes it), open batches (batch.c), and a
 * FIFO of pending ops. Each op is framed once (entry.c) and kept byte for
 * byte until its receipt, so a reconnect resends exactly the same frames in
 * the same order (same name, same sequence ids, so broker deduplication
 * drops what already landed).
 *
 * Threads: application threads only reserve a pending slot (under `lock`)
 * and memory (client memlimit), then post the item to the io thread, which
 * owns everything else. Outcomes go to a blocked sender's waiter or to the
 * client's callback queue, never run on the io thread. The struct is
 * reference counted because io callbacks and queued user callbacks may
 * outlive pulsarc_producer_destroy(). A partitioned topic's handle holds
 * one such producer per partition (partitioned.c); each of those
 * keeps a reference on the handle, which is what callbacks receive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/producer/producer_int.h"
#include "client/txn/txn.h"
#include "core/err.h"
#include "crypto/crypto.h"
#include "net/conn.h"

#define P_OF(hp) ((pulsarc_producer_t *)((char *)(hp) - offsetof(pulsarc_producer_t, h)))

static void p_fail_all(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg);

/* ---------- lifetime ---------- */

void pc_producer_ref(pulsarc_producer_t *p) { atomic_fetch_add(&p->refs, 1); }

void pc_producer_unref(pulsarc_producer_t *p) {
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    pulsarc_producer_t *parent = p->parent;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    pc_waiter_destroy(&p->create_w);
    pc_schema_clear(&p->schema);
    pc_encryptor_free(p->encryptor);
    free(p->parts);
    free(p);
    if (parent)
        pc_producer_unref(parent);
}

const char *pulsarc_producer_name(const pulsarc_producer_t *p) { return p ? p->name : NULL; }
const char *pulsarc_producer_topic(const pulsarc_producer_t *p) { return p ? p->topic.full : NULL; }
int pulsarc_producer_partitions(const pulsarc_producer_t *p) { return p ? p->nparts : 0; }

static int64_t last_seq_of(pulsarc_producer_t *p) {
    pthread_mutex_lock(&p->lock);
    int64_t v = p->last_seq_acked;
    pthread_mutex_unlock(&p->lock);
    return v;
}

int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *cp) {
    pulsarc_producer_t *p = (pulsarc_producer_t *)cp;
    if (!p)
        return -1;
    int64_t v = p->nparts ? -1 : last_seq_of(p);
    for (int i = 0; i < p->nparts; i++) { /* the Java client reports the highest */
        int64_t s = last_seq_of(p->parts[i]);
        v = s > v ? s : v;
    }
    return v;
}

size_t pc_producer_max_message_size(const pulsarc_producer_t *p) {
    return p->h.conn ? pc_conn_max_message_size(p->h.conn) : PC_DEFAULT_MAX_MESSAGE_SIZE;
}

/* ---------- completing items ---------- */

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
    pulsarc_producer_t *shown = r->p->parent ? r->p->parent : r->p;
    r->cb(shown, r->err, r->err ? NULL : &r->id, r->msg, r->opaque);
    pulsarc_msg_destroy(r->msg);
    pc_producer_unref(r->p);
    free(r);
}

static void account(pulsarc_producer_t *p, const send_item_t *it, pulsarc_err_t err) {
    pc_producer_stats_acc_t *s = &p->stats;
    if (err) {
        s->send_errors++;
        return;
    }
    uint64_t lat = (uint64_t)(pc_now_ms() - it->queued_ms);
    s->msgs_sent++;
    s->bytes_sent += it->msg->len;
    s->latency_sum_ms += lat;
    s->latency_max_ms = lat > s->latency_max_ms ? lat : s->latency_max_ms;
    if (it->seq > p->last_seq_acked)
        p->last_seq_acked = it->seq;
}

static void release_slot(pulsarc_producer_t *p, const send_item_t *it, pulsarc_err_t err) {
    pc_memlimit_release(&p->client->memlimit, it->mem);
    pthread_mutex_lock(&p->lock);
    p->inflight--;
    p->completed++;
    account(p, it, err);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void deliver_async(pulsarc_producer_t *p, send_item_t *it, pulsarc_err_t err,
                          const pulsarc_msgid_t *id) {
    send_result_t *r = calloc(1, sizeof *r);
    if (!r) { /* cannot report; the message is still freed */
        if (it->owns_msg)
            pulsarc_msg_destroy(it->msg);
        return;
    }
    r->item.run = run_send_result;
    r->p = p;
    r->cb = it->cb;
    r->opaque = it->opaque;
    r->err = err;
    if (id)
        r->id = *id;
    r->msg = it->msg;
    pc_producer_ref(p);
    pc_cbq_push(&p->client->cbq, &r->item);
}

void pc_producer_complete_item(pulsarc_producer_t *p, send_item_t *it, pulsarc_err_t err,
                               const char *errmsg, const pulsarc_msgid_t *id) {
    if (it->msg && id)
        it->msg->id = *id;
    release_slot(p, it, err);
    if (it->waiter) {
        if (!err && it->id_out)
            *it->id_out = *id;
        pc_waiter_done(it->waiter, err, errmsg);
    } else if (it->cb) {
        deliver_async(p, it, err, id);
    } else if (it->owns_msg) {
        pulsarc_msg_destroy(it->msg);
    }
    if (it->txn) /* after the outcome is out: a commit waiting on it may now proceed */
        pc_txn_op_end(it->txn, err);
    free(it);
}

static void complete_op(pulsarc_producer_t *p, send_op_t *op, pulsarc_err_t err,
                        const char *errmsg, const pulsarc_msgid_t *entry_id) {
    int i = 0;
    send_item_t *it = op->items;
    op->items = NULL;
    while (it) {
        send_item_t *next = it->next;
        pulsarc_msgid_t id;
        if (entry_id) {
            id = *entry_id;
            id.batch_index = op->batched ? i : -1;
            id.batch_size = op->batched ? op->nitems : 0;
        }
        pc_producer_complete_item(p, it, err, errmsg, entry_id ? &id : NULL);
        it = next;
        i++;
    }
    pc_send_op_free(op);
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

static void fail_items(pulsarc_producer_t *p, send_item_t *it, pulsarc_err_t err, const char *msg) {
    while (it) {
        send_item_t *next = it->next;
        pc_producer_complete_item(p, it, err, msg, NULL);
        it = next;
    }
}

/* Fails the open batches and the whole FIFO (close, final broker errors). */
static void p_fail_all(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg) {
    send_op_t *op;
    pc_timer_stop(p->client->loop, &p->send_timer);
    pc_timer_stop(p->client->loop, &p->batch_timer);
    pc_batch_group_t *g = pc_batcher_take(&p->batcher);
    while (g) {
        pc_batch_group_t *next = g->next;
        fail_items(p, g->first, err, msg);
        g->first = NULL;
        pc_batch_group_free(g);
        g = next;
    }
    while ((op = pop_head(p)))
        complete_op(p, op, err, msg, NULL);
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
        complete_op(p, pop_head(p), PULSARC_ERR_TIMEOUT, m, NULL);
    }
    arm_send_timer(p);
}

/* ---------- queueing ops ---------- */

void pc_producer_queue_ops(pulsarc_producer_t *p, send_op_t *op) {
    int64_t deadline = pc_now_ms() + p->send_timeout_ms;
    while (op) {
        send_op_t *next = op->next;
        op->next = NULL;
        op->deadline_ms = deadline;
        if (p->tail)
            p->tail->next = op;
        else
            p->head = op;
        p->tail = op;
        if (p->h.state == PC_H_READY)
            pc_conn_send_raw(p->h.conn, op->frame.data, op->frame.len);
        op = next;
    }
    arm_send_timer(p);
}

static void send_single(pulsarc_producer_t *p, send_item_t *it) {
    char m[256];
    send_op_t *ops = NULL;
    pulsarc_err_t err = pc_entry_single(p, it, &ops, m, sizeof m);
    if (err)
        pc_producer_complete_item(p, it, err, m, NULL);
    else
        pc_producer_queue_ops(p, ops);
}

static void send_group(pulsarc_producer_t *p, pc_batch_group_t *g) {
    if (g->n == 1) { /* a batch of one goes as a plain message, as Java sends it */
        send_item_t *it = g->first;
        g->first = NULL;
        send_single(p, it);
        return;
    }
    char m[256];
    send_op_t *ops = NULL;
    pulsarc_err_t err = pc_entry_batch(p, g, &ops, m, sizeof m);
    if (err) {
        fail_items(p, g->first, err, m);
        g->first = NULL;
    } else {
        pc_producer_queue_ops(p, ops);
    }
}

void pc_producer_flush_batches(pulsarc_producer_t *p) {
    pc_timer_stop(p->client->loop, &p->batch_timer);
    pc_batch_group_t *g = pc_batcher_take(&p->batcher);
    while (g) {
        pc_batch_group_t *next = g->next;
        send_group(p, g);
        pc_batch_group_free(g);
        g = next;
    }
}

static void on_batch_timer(void *arg) { pc_producer_flush_batches(arg); }

static void add_to_batch(pulsarc_producer_t *p, send_item_t *it) {
    if (pc_batcher_would_overflow(&p->batcher, it->msg))
        pc_producer_flush_batches(p);
    if (pc_batcher_add(&p->batcher, it) != PULSARC_OK) {
        pc_producer_complete_item(p, it, PULSARC_ERR_NOMEM, "out of memory", NULL);
        return;
    }
    /* A synchronous sender waits for this very message: send now, as Java's
     * send() triggers a flush, instead of idling out the batching delay. */
    if (pc_batcher_full(&p->batcher) || it->waiter)
        pc_producer_flush_batches(p);
    else if (!pc_timer_active(&p->batch_timer))
        pc_timer_start(p->client->loop, &p->batch_timer, (p->batch_delay_us + 999) / 1000);
}

static void assign_seq(pulsarc_producer_t *p, send_item_t *it) {
    it->seq = it->msg->has_seq ? it->msg->seq : p->next_seq;
    if (it->seq >= p->next_seq)
        p->next_seq = it->seq + 1;
    it->msg->seq = it->seq;
}

/* Io thread: assigns the sequence id, then batches or frames the message. */
static void do_enqueue(void *arg) {
    send_item_t *it = arg;
    pulsarc_producer_t *p = (pulsarc_producer_t *)it->next;
    it->next = NULL;
    if (p->h.state >= PC_H_CLOSING) {
        pc_producer_complete_item(p, it, PULSARC_ERR_CLOSED, "producer is closed", NULL);
    } else {
        assign_seq(p, it);
        /* A batch is one entry, so all of it would share one transaction:
         * transactional messages go alone instead. */
        if (p->batching && !it->txn && pc_batcher_accepts(&p->batcher, it->msg)) {
            add_to_batch(p, it);
        } else {
            pc_producer_flush_batches(p); /* keeps sequence ids in order on the wire */
            send_single(p, it);
        }
    }
    pc_producer_unref(p);
}

/* ---------- receipts and broker events ---------- */

static void handle_receipt(pulsarc_producer_t *p, pc_conn_t *conn,
                           const Pulsar__Proto__CommandSendReceipt *r) {
    send_op_t *op = p->head;
    int64_t seq = (int64_t)r->sequence_id;
    if (!op || seq < op->seq)
        return; /* receipt for an op that already timed out */
    if (seq > op->highest_seq) {
        pc_conn_close(conn, PULSARC_ERR_PROTOCOL, "receipt out of order; resending");
        return;
    }
    pc_handler_proved(&p->h);
    /* (-1, -1) means the broker dropped it as a duplicate: still a success. */
    pulsarc_msgid_t id = {-1, -1, p->topic.partition, -1, 0};
    if (r->message_id) {
        id.ledger_id = (int64_t)r->message_id->ledgerid;
        id.entry_id = (int64_t)r->message_id->entryid;
    }
    pop_head(p);
    complete_op(p, op, PULSARC_OK, NULL, &id);
    pc_timer_stop(p->client->loop, &p->send_timer);
    arm_send_timer(p);
}

static void detach(pulsarc_producer_t *p) {
    if (p->attached)
        pc_conn_detach_producer(p->attached, p->id);
    p->attached = NULL;
}

static void lose_connection(pulsarc_producer_t *p) {
    detach(p);
    pc_handler_lost(&p->h);
}

static void send_close_producer(pc_handler_t *h, pc_conn_t *conn) {
    pulsarc_producer_t *p = P_OF(h);
    Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    cp.producer_id = p->id;
    cp.request_id = p->client->next_id++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &cp;
    pc_conn_send(conn, &cmd);
}

static void handle_send_error(pulsarc_producer_t *p, pc_conn_t *conn,
                              const Pulsar__Proto__CommandSendError *e) {
    pulsarc_err_t err = pc_err_from_server(e->error);
    const char *msg = e->message ? e->message : pulsarc_strerror(err);
    if (err == PULSARC_ERR_BROKER_TOPIC_TERMINATED) {
        p_fail_all(p, err, msg); /* nothing sent to this topic can ever land */
    } else if (err == PULSARC_ERR_BROKER_NOT_ALLOWED && p->head &&
               (int64_t)e->sequence_id >= p->head->seq &&
               (int64_t)e->sequence_id <= p->head->highest_seq) {
        complete_op(p, pop_head(p), err, msg, NULL); /* only that entry is refused */
    } else {
        /* Re-create this producer; pending frames are resent in order. */
        send_close_producer(&p->h, conn);
        lose_connection(p);
    }
}

static void on_frame(void *obj, pc_conn_t *conn, const pc_frame_t *f) {
    pulsarc_producer_t *p = obj;
    switch (f->cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT:
        handle_receipt(p, conn, f->cmd->send_receipt);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR:
        handle_send_error(p, conn, f->cmd->send_error);
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
    p->attached = NULL; /* the connection already forgot us */
    pc_handler_lost(&p->h);
}

static const pc_conn_handler_t producer_handler = {on_frame, on_conn_closed, NULL};

/* ---------- (re)creating on the broker ---------- */

static void finish_create(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg) {
    if (p->creating) {
        p->creating = 0;
        pc_waiter_done(&p->create_w, err, msg);
    }
}

static int is_final_for_producer(pulsarc_err_t err) {
    return err == PULSARC_ERR_BROKER_TOPIC_TERMINATED || err == PULSARC_ERR_BROKER_PRODUCER_FENCED;
}

static void h_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pulsarc_producer_t *p = P_OF(h);
    detach(p);
    if (p->creating)
        finish_create(p, err, msg);
    else
        p_fail_all(p, err, msg);
}

static void adopt_success(pulsarc_producer_t *p, const Pulsar__Proto__CommandProducerSuccess *s) {
    if (!p->user_named && s->producer_name)
        snprintf(p->name, sizeof p->name, "%s", s->producer_name);
    if (s->has_topic_epoch) {
        p->topic_epoch = s->topic_epoch;
        p->has_topic_epoch = 1;
    }
    /* Brokers send an empty version to producers that declared no schema. */
    if (s->has_schema_version && s->schema_version.len > 0 &&
        s->schema_version.len <= sizeof p->schema_version) {
        memcpy(p->schema_version, s->schema_version.data, s->schema_version.len);
        p->schema_version_len = s->schema_version.len;
    }
    if (!p->seeded) { /* first creation only, and only without initialSequenceId */
        int64_t last = s->has_last_sequence_id ? s->last_sequence_id : -1;
        if (last >= p->next_seq)
            p->next_seq = last + 1;
        p->seeded = 1;
        pthread_mutex_lock(&p->lock);
        p->last_seq_acked = last;
        pthread_mutex_unlock(&p->lock);
    }
}

static void h_ready(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply) {
    pulsarc_producer_t *p = P_OF(h);
    adopt_success(p, reply->cmd->producer_success);
    for (send_op_t *op = p->head; op; op = op->next)
        pc_conn_send_raw(conn, op->frame.data, op->frame.len);
    finish_create(p, PULSARC_OK, NULL);
}

/* WaitForExclusive: the broker queued us; a second PRODUCER_SUCCESS follows. */
static int h_is_partial(const pc_frame_t *reply) {
    const Pulsar__Proto__CommandProducerSuccess *s = reply->cmd->producer_success;
    return s && s->has_producer_ready && !s->producer_ready;
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
    cp.has_producer_access_mode = p->access_mode != 0;
    cp.producer_access_mode = (Pulsar__Proto__ProducerAccessMode)p->access_mode;
    cp.has_topic_epoch = p->has_topic_epoch;
    cp.topic_epoch = p->topic_epoch;
    cp.has_txn_enabled = cp.txn_enabled = pc_conf_int(p->client->conf, PC_PROP_ENABLE_TRANSACTION) != 0;
    Pulsar__Proto__Schema schema = PULSAR__PROTO__SCHEMA__INIT;
    cp.schema = pc_schema_wire(&p->schema, &schema);
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &cp;
    /* WaitForExclusive may wait indefinitely for its turn (protocol.md §4.2). */
    int timeout = p->access_mode == 2 ? 0 : p->client->op_timeout_ms;
    /* Attach first, so a CLOSE_PRODUCER sent before the reply reaches us. */
    detach(p);
    pc_conn_attach_producer(conn, p->id, &producer_handler, p);
    p->attached = conn;
    pc_handler_request_create(h, conn, &cmd, cp.request_id, timeout);
}

static void h_ref(pc_handler_t *h) { pc_producer_ref(P_OF(h)); }
static void h_unref(pc_handler_t *h) { pc_producer_unref(P_OF(h)); }

static const pc_handler_ops_t producer_ops = {
    .send_create = h_send_create,
    .send_close = send_close_producer,
    .on_ready = h_ready,
    .on_failed = h_failed,
    .is_final = is_final_for_producer,
    .ref = h_ref,
    .unref = h_unref,
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

typedef struct close_req {
    pulsarc_producer_t *p;
    pc_conn_t *conn;
} close_req_t;

static void on_close_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    close_req_t *r = arg;
    pulsarc_producer_t *p = r->p;
    (void)err, (void)f, (void)msg; /* gone either way */
    detach(p);
    pc_conn_unref(r->conn);
    free(r);
    p_fail_all(p, PULSARC_ERR_CLOSED, "producer closed");
    mark_closed(p);
    pc_producer_unref(p);
}

/*
 * Open batches are sent first and the producer stays attached until the
 * broker answers the close: the broker answers only after the entries sent
 * before the close are persisted, so their receipts still arrive and those
 * sends succeed; only what is left then fails with CLOSED.
 */
static void do_close(void *arg) {
    pulsarc_producer_t *p = arg;
    finish_create(p, PULSARC_ERR_CLOSED, "producer closed while connecting");
    if (p->h.state == PC_H_READY)
        pc_producer_flush_batches(p);
    pc_conn_t *conn = pc_handler_stop(&p->h);
    close_req_t *r = conn ? calloc(1, sizeof *r) : NULL;
    if (r) {
        r->p = p;
        r->conn = conn;
        pc_conn_ref(conn);
        Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
        cp.producer_id = p->id;
        cp.request_id = p->client->next_id++;
        pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
        cmd.close_producer = &cp;
        pc_conn_request(conn, &cmd, cp.request_id, p->client->op_timeout_ms, on_close_reply, r);
        return; /* on_close_reply keeps the reference */
    }
    detach(p); /* also from a connection still creating us */
    p_fail_all(p, PULSARC_ERR_CLOSED, "producer closed");
    mark_closed(p);
    pc_producer_unref(p);
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
    pc_producer_ref(p);
    if (pc_client_post(p->client, do_close, p) == PULSARC_OK)
        return 1;
    pc_producer_unref(p);
    return 0;
}

void pc_producer_close_one(pulsarc_producer_t *p) {
    if (!post_close(p)) {
        pthread_mutex_lock(&p->lock);
        p->closed = 1; /* the loop is gone: nothing can still be pending */
        pthread_mutex_unlock(&p->lock);
    }
    if (pc_in_callback())
        return; /* only marks; the loop finishes */
    pthread_mutex_lock(&p->lock);
    while (!p->closed)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

pulsarc_err_t pulsarc_producer_close(pulsarc_producer_t *p) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    if (p->nparts)
        pc_partitioned_close(p);
    else
        pc_producer_close_one(p);
    return PULSARC_OK;
}

static void handle_close(pc_handle_t *h) { pulsarc_producer_close((pulsarc_producer_t *)h); }
static void handle_destroy(pc_handle_t *h) { pulsarc_producer_destroy((pulsarc_producer_t *)h); }

void pulsarc_producer_destroy(pulsarc_producer_t *p) {
    if (!p)
        return;
    pulsarc_producer_close(p);
    pc_client_unregister(p->client, &p->handle);
    for (int i = 0; i < p->nparts; i++)
        pc_producer_unref(p->parts[i]);
    pc_producer_unref(p);
}

/* ---------- creation ---------- */

static void read_conf(pulsarc_producer_t *p, const pulsarc_conf_t *conf) {
    snprintf(p->name, sizeof p->name, "%s", pc_conf_str(conf, PC_PROP_PRODUCER_NAME));
    p->user_named = p->name[0] != '\0';
    p->send_timeout_ms = (int)pc_conf_int(conf, PC_PROP_SEND_TIMEOUT_MS);
    p->max_pending = (int)pc_conf_int(conf, PC_PROP_MAX_PENDING_MESSAGES);
    p->block_if_full = (int)pc_conf_int(conf, PC_PROP_BLOCK_IF_QUEUE_FULL);
    p->batching = (int)pc_conf_int(conf, PC_PROP_BATCHING_ENABLED);
    p->batch_delay_us = pc_conf_int(conf, PC_PROP_BATCHING_MAX_DELAY_US);
    p->codec = (pc_codec_t)pc_conf_int(conf, PC_PROP_COMPRESSION_TYPE);
    p->chunking = (int)pc_conf_int(conf, PC_PROP_CHUNKING_ENABLED);
    p->chunk_max = pc_conf_int(conf, PC_PROP_CHUNK_MAX_MESSAGE_SIZE);
    p->access_mode = (int)pc_conf_int(conf, PC_PROP_ACCESS_MODE);
    int64_t initial = pc_conf_int(conf, PC_PROP_INITIAL_SEQUENCE_ID);
    if (initial >= 0) {
        p->next_seq = initial + 1;
        p->last_seq_acked = initial;
        p->seeded = 1;
    }
    pc_batcher_init(&p->batcher, pc_conf_int(conf, PC_PROP_BATCHER_BUILDER) == 1,
                    (int)pc_conf_int(conf, PC_PROP_BATCHING_MAX_MESSAGES),
                    (size_t)pc_conf_int(conf, PC_PROP_BATCHING_MAX_BYTES));
}

static pulsarc_err_t check_conf(const pulsarc_producer_t *p, char *errstr, size_t errlen) {
    if (!pc_codec_available(p->codec))
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                         "compressionType %s is not built into this library", pc_codec_name(p->codec));
    if (p->chunking && p->batching) /* the Java client refuses the pair too */
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "chunkingEnabled needs batchingEnabled=false");
    if (p->chunking && !p->topic.persistent)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "chunking works on persistent topics only, not %s", p->topic.full);
    return PULSARC_OK;
}

pulsarc_err_t pc_producer_alloc(pulsarc_client_t *c, const char *name, const pulsarc_conf_t *conf,
                                pulsarc_producer_t **pp, char *errstr, size_t errlen) {
    pulsarc_producer_t *p = calloc(1, sizeof *p);
    if (!p)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
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
    pc_waiter_init(&p->create_w);
    p->last_seq_acked = -1;
    read_conf(p, conf);
    pc_timer_init(&p->send_timer, on_send_timer, p);
    pc_timer_init(&p->batch_timer, on_batch_timer, p);
    pulsarc_err_t err = pc_client_parse_topic(c, name, &p->topic, errstr, errlen);
    if (!err)
        err = check_conf(p, errstr, errlen);
    if (!err)
        err = pc_schema_from_conf(&p->schema, conf, errstr, errlen);
    pc_any_fn reader; /* pulsarc_conf_set_crypto_key_reader */
    void *reader_opaque;
    pc_conf_get_cb(conf, PC_CB_CRYPTO_KEY_READER, &reader, &reader_opaque);
    if (!err)
        err = pc_encryptor_from_conf(pc_conf_str(conf, PC_PROP_ENCRYPTION_KEYS),
                                     pc_conf_str(conf, PC_PROP_CRYPTO_PUBLIC_KEY_PATH),
                                     (pulsarc_crypto_key_reader_cb)reader, reader_opaque,
                                     &p->encryptor, errstr, errlen);
    if (err) {
        pc_producer_unref(p);
        return err;
    }
    pc_handler_init(&p->h, &producer_ops, c, p->topic.full);
    if (p->access_mode == 2) { /* WaitForExclusive: its own kind of connection */
        p->h.is_partial = h_is_partial;
        p->h.conn_flags = PC_CONN_F_PARTIAL_PRODUCER;
    }
    *pp = p;
    return PULSARC_OK;
}

pulsarc_err_t pc_producer_begin_create(pulsarc_producer_t *p) {
    p->creating = 1;
    pc_producer_ref(p); /* do_start's, dropped when the creation fails */
    pulsarc_err_t err = pc_client_post(p->client, do_start, p);
    if (err) {
        p->creating = 0;
        pc_waiter_done(&p->create_w, err, "client is closed");
        pc_producer_unref(p);
    }
    return err;
}

pulsarc_err_t pc_producer_wait_created(pulsarc_producer_t *p, char *errstr, size_t errlen) {
    pulsarc_err_t err = pc_waiter_wait(&p->create_w, errstr, errlen);
    if (err) {
        pthread_mutex_lock(&p->lock);
        p->closed = p->closing = 1; /* the loop already reached CLOSED */
        pthread_mutex_unlock(&p->lock);
        return err;
    }
    pc_producer_unref(p); /* do_start's reference; the loop keeps none while READY */
    return PULSARC_OK;
}

static pulsarc_err_t create_single(pulsarc_producer_t *p, char *errstr, size_t errlen) {
    pulsarc_err_t err = pc_producer_begin_create(p);
    if (err)
        return pc_seterr(errstr, errlen, err, "client is closed");
    err = pc_producer_wait_created(p, errstr, errlen);
    if (err)
        pc_producer_unref(p); /* do_start's reference, never handed back */
    return err;
}

pulsarc_err_t pulsarc_producer_new(pulsarc_client_t *c, const char *topic,
                                   const pulsarc_conf_t *conf, pulsarc_producer_t **pp,
                                   char *errstr, size_t errlen) {
    if (!c || !topic || !pp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client, topic and producerp are required");
    *pp = NULL;
    pulsarc_producer_t *p;
    pulsarc_err_t err = pc_producer_alloc(c, topic, conf, &p, errstr, errlen);
    if (err)
        return err;
    int nparts = 0;
    if (p->topic.partition < 0)
        err = pulsarc_client_partitions(c, p->topic.full, &nparts, errstr, errlen);
    if (!err && (err = pc_client_register(c, &p->handle)) != PULSARC_OK)
        pc_seterr(errstr, errlen, err, "client is closed");
    else if (!err && nparts > 0)
        err = pc_partitioned_new(c, p, nparts, conf, errstr, errlen);
    else if (!err)
        err = create_single(p, errstr, errlen);
    if (err) {
        pc_client_unregister(c, &p->handle);
        pc_producer_unref(p);
        return err;
    }
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

static void unreserve(pulsarc_producer_t *p, send_item_t *it) {
    pc_memlimit_release(&p->client->memlimit, it->mem);
    it->mem = 0;
    pthread_mutex_lock(&p->lock);
    p->inflight--;
    p->enqueued--;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

pulsarc_err_t pc_producer_submit(pulsarc_producer_t *p, send_item_t *it) {
    /* The coordinator must know the partition before its first message lands. */
    pulsarc_err_t err = it->txn ? pc_txn_add_partition(it->txn, p->topic.full, NULL, 0) : PULSARC_OK;
    if (!err)
        err = acquire_slot(p);
    if (err)
        return err;
    it->mem = (int64_t)it->msg->len;
    err = pc_memlimit_acquire(&p->client->memlimit, it->mem, p->block_if_full, p->send_timeout_ms);
    if (err) {
        it->mem = 0;
        unreserve(p, it);
        return err;
    }
    it->queued_ms = pc_now_ms();
    it->next = (send_item_t *)p; /* carries the producer to do_enqueue */
    pc_producer_ref(p);
    err = pc_client_post(p->client, do_enqueue, it);
    if (err) {
        pc_producer_unref(p);
        unreserve(p, it);
    }
    return err;
}

static pulsarc_err_t submit_any(pulsarc_producer_t *p, send_item_t *it) {
    return p->nparts ? pc_partitioned_submit(p, it) : pc_producer_submit(p, it);
}

/* Queues it, inside txn when set; on failure the item is not consumed. */
static pulsarc_err_t submit_in(pulsarc_producer_t *p, pulsarc_txn_t *txn, send_item_t *it) {
    pulsarc_err_t err = txn ? pc_txn_op_begin(txn) : PULSARC_OK;
    if (err)
        return err;
    it->txn = txn;
    err = submit_any(p, it);
    if (err && txn)
        pc_txn_op_end(txn, err);
    return err;
}

static pulsarc_err_t send_sync(pulsarc_producer_t *p, pulsarc_txn_t *txn, const pulsarc_msg_t *msg,
                               pulsarc_msgid_t *id) {
    if (!p || !msg)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_msg_t copy = *msg; /* the loop writes the assigned sequence id here */
    pc_waiter_t w;
    send_item_t *it = calloc(1, sizeof *it);
    if (!it)
        return PULSARC_ERR_NOMEM;
    pc_waiter_init(&w);
    it->msg = &copy;
    it->waiter = &w;
    it->id_out = id;
    pulsarc_err_t err = submit_in(p, txn, it);
    if (err)
        free(it);
    else
        err = pc_waiter_wait(&w, NULL, 0);
    pc_waiter_destroy(&w);
    return err;
}

pulsarc_err_t pulsarc_producer_send(pulsarc_producer_t *p, const pulsarc_msg_t *msg,
                                    pulsarc_msgid_t *id) {
    return send_sync(p, NULL, msg, id);
}

pulsarc_err_t pulsarc_producer_send_txn(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                        const pulsarc_msg_t *msg, pulsarc_msgid_t *id) {
    return txn ? send_sync(p, txn, msg, id) : PULSARC_ERR_INVALID_ARG;
}

static pulsarc_err_t send_async(pulsarc_producer_t *p, pulsarc_txn_t *txn, pulsarc_msg_t *msg,
                                pulsarc_send_cb cb, void *opaque) {
    if (!msg)
        return PULSARC_ERR_INVALID_ARG;
    send_item_t *it = p ? calloc(1, sizeof *it) : NULL;
    pulsarc_err_t err = !p ? PULSARC_ERR_INVALID_ARG : !it ? PULSARC_ERR_NOMEM : PULSARC_OK;
    if (!err) {
        it->msg = msg;
        it->owns_msg = 1;
        it->cb = cb;
        it->opaque = opaque;
        err = submit_in(p, txn, it);
    }
    if (err) { /* the callback still runs exactly once, here */
        free(it);
        if (cb)
            cb(p, err, NULL, msg, opaque);
        pulsarc_msg_destroy(msg);
    }
    return err;
}

pulsarc_err_t pulsarc_producer_send_async(pulsarc_producer_t *p, pulsarc_msg_t *msg,
                                          pulsarc_send_cb cb, void *opaque) {
    return send_async(p, NULL, msg, cb, opaque);
}

pulsarc_err_t pulsarc_producer_send_async_txn(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                              pulsarc_msg_t *msg, pulsarc_send_cb cb,
                                              void *opaque) {
    if (txn)
        return send_async(p, txn, msg, cb, opaque);
    if (cb && msg) /* the callback still runs exactly once */
        cb(p, PULSARC_ERR_INVALID_ARG, NULL, msg, opaque);
    pulsarc_msg_destroy(msg);
    return PULSARC_ERR_INVALID_ARG;
}

static void do_flush(void *arg) {
    pulsarc_producer_t *p = arg;
    if (p->h.state < PC_H_CLOSING)
        pc_producer_flush_batches(p);
    pc_producer_unref(p);
}

pulsarc_err_t pc_producer_flush_one(pulsarc_producer_t *p, int timeout_ms) {
    struct timespec dl;
    if (timeout_ms >= 0)
        pc_deadline(&dl, timeout_ms);
    pthread_mutex_lock(&p->lock);
    uint64_t target = p->enqueued;
    pthread_mutex_unlock(&p->lock);
    pc_producer_ref(p);
    if (pc_client_post(p->client, do_flush, p) != PULSARC_OK)
        pc_producer_unref(p);
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&p->lock);
    while (p->completed < target && !err) {
        if (timeout_ms < 0)
            pthread_cond_wait(&p->cond, &p->lock);
        else if (pthread_cond_timedwait(&p->cond, &p->lock, &dl))
            err = PULSARC_ERR_TIMEOUT;
    }
    pthread_mutex_unlock(&p->lock);
    return err;
}

pulsarc_err_t pulsarc_producer_flush(pulsarc_producer_t *p, int timeout_ms) {
    if (!p)
        return PULSARC_ERR_INVALID_ARG;
    return p->nparts ? pc_partitioned_flush(p, timeout_ms) : pc_producer_flush_one(p, timeout_ms);
}

/* ---------- stats ---------- */

static void add_stats(pulsarc_producer_t *p, pc_producer_stats_acc_t *sum, uint64_t *pending) {
    pthread_mutex_lock(&p->lock);
    sum->msgs_sent += p->stats.msgs_sent;
    sum->bytes_sent += p->stats.bytes_sent;
    sum->send_errors += p->stats.send_errors;
    sum->latency_sum_ms += p->stats.latency_sum_ms;
    if (p->stats.latency_max_ms > sum->latency_max_ms)
        sum->latency_max_ms = p->stats.latency_max_ms;
    *pending += (uint64_t)p->inflight;
    pthread_mutex_unlock(&p->lock);
}

pulsarc_err_t pulsarc_producer_stats(pulsarc_producer_t *p, pulsarc_producer_stats_t *out) {
    if (!p || !out)
        return PULSARC_ERR_INVALID_ARG;
    pc_producer_stats_acc_t sum = {0};
    uint64_t pending = 0;
    if (!p->nparts)
        add_stats(p, &sum, &pending);
    for (int i = 0; i < p->nparts; i++)
        add_stats(p->parts[i], &sum, &pending);
    memset(out, 0, sizeof *out);
    out->msgs_sent = sum.msgs_sent;
    out->bytes_sent = sum.bytes_sent;
    out->send_errors = sum.send_errors;
    out->pending = pending;
    out->latency_avg_ms = sum.msgs_sent ? (double)sum.latency_sum_ms / (double)sum.msgs_sent : 0;
    out->latency_max_ms = sum.latency_max_ms;
    return PULSARC_OK;
}
