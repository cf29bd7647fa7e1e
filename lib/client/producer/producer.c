/*
 * Design notes: the producer of one topic or one partition (the kind
 * behind pc_producer_ops_t that talks to a broker). It is a state machine
 * on the io thread (CONNECTING -> READY -> CLOSING -> CLOSED, back to
 * CONNECTING when its connection drops or the broker closes it), open
 * batches (batch.c), and a FIFO of pending ops. Each op is framed once
 * (entry.c) and kept byte for byte until its receipt, so a reconnect
 * resends exactly the same frames in the same order (same name, same
 * sequence ids, so broker deduplication drops what already landed).
 *
 * Threads: application threads only reserve a pending slot (under `lock`)
 * and memory (client memlimit), then append the item to the hand-off queue
 * (also under `lock`; all three in one lock round when nothing has to wait)
 * that the io thread drains; the io thread owns everything else. Outcomes
 * go to a blocked sender's waiter or to the client's callback queue, never
 * run on the io thread. The object is reference counted because io
 * callbacks and queued user callbacks may outlive
 * pulsarc_producer_destroy(). As a partition of a partitioned topic
 * (partitioned.c) it keeps a reference on that handle, its owner, which is
 * what callbacks receive.
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

/*
 * Items handed from application threads to the io thread, in submission
 * order, under the producer's lock (a send then takes its slot and joins
 * the queue in one lock round). Only the push that finds the queue empty
 * posts a drain to the loop; items pushed while one is pending ride along
 * with it.
 */
typedef struct pc_handoff {
    send_item_t *head, *tail;
    int64_t count, bytes;       /* what head..tail holds */
    int lazy;                   /* the pending drain was posted to wait for the batch timer */
} pc_handoff_t;

typedef struct pc_topic_producer {
    pulsarc_producer_t base;
    pulsarc_producer_t *owner;  /* the partitioned handle shown to callbacks, or NULL */
    pc_producer_settings_t cfg;
    uint64_t id;
    /* io thread */
    pc_handler_t h;
    pc_conn_t *attached;        /* connection our frames are routed from, or NULL */
    pc_schema_t schema;         /* declared at creation (immutable) */
    uint8_t schema_version[64]; /* the broker's version of it, from PRODUCER_SUCCESS */
    size_t schema_version_len;
    pc_timer_t send_timer;
    pc_timer_t batch_timer;
    /* Room left in the open batches while their timer runs (0: no timer);
     * written by the io thread, read by senders choosing how to post. */
    _Atomic int64_t batch_room_msgs, batch_room_bytes;
    send_op_t *head, *tail;
    pc_batcher_t batcher;
    int64_t next_seq;
    int seeded;                 /* next_seq came from the user or the first creation */
    uint64_t topic_epoch;
    int has_topic_epoch;
    pc_op_t create_w;
    int creating;               /* create_w not yet completed */
    pc_created_fn created_fn;   /* callback form of the first creation, or NULL */
    void *created_arg;
    uint64_t readies;           /* successful creations on the broker so far */
    pc_handoff_t handoff;       /* application threads -> io thread */
    /* shared with application threads, under lock */
    pthread_mutex_t lock;
    int inflight;
    uint64_t enqueued, completed;
    int closing;
    int closed;
    int close_posted;
    pc_op_queue_t slot_line;   /* senders blocked on a full queue, oldest first */
    pc_op_queue_t flush_line;  /* flushes (flush_node_t) by target, lowest first */
    pc_op_queue_t drain_line;  /* closers waiting for the last send callback */
    pc_op_t close_op;          /* completed once the io thread reached CLOSED */
    atomic_int mem_stopped;    /* closing, as the memory budget's line reads it */
    atomic_int callbacks_queued; /* send callbacks on the callback queue, not yet run;
                                    changed without the lock, waited for under it */
    struct pc_encryptor *encryptor; /* end-to-end encryption (lib/crypto), or NULL; io thread */
    int64_t last_seq_acked;
    pc_producer_stats_acc_t stats;
    pc_send_op_pool_t op_pool;  /* io thread */
} pc_topic_producer_t;

/* Every pulsarc_producer_t this file receives is the base of one of its own. */
#define TP(bp) ((pc_topic_producer_t *)(bp))
#define P_OF(hp) ((pc_topic_producer_t *)((char *)(hp) - offsetof(pc_topic_producer_t, h)))

/*
 * A flush in line: due once `completed` reaches target (everything enqueued
 * before the flush has its outcome). The sync flush keeps one on its stack
 * and waits on op; flush_async allocates one whose completion reports one
 * part of parent (the caller's op) and frees it.
 */
typedef struct flush_node {
    pc_op_t op;           /* first: the line holds &op */
    uint64_t target;
    pc_op_t *parent;      /* async form, or NULL */
} flush_node_t;

#define FLUSH_OF(o) ((flush_node_t *)((char *)(o) - offsetof(flush_node_t, op)))

static void p_fail_all(pc_topic_producer_t *p, pulsarc_err_t err, const char *msg);
static void complete_flushes(pc_op_t *op);

/* ---------- lifetime ---------- */

static void tp_ref(pc_topic_producer_t *p) { pc_producer_ref(&p->base); }
static void tp_unref(pc_topic_producer_t *p) { pc_producer_unref(&p->base); }

/* The last reference is gone. */
static void tp_free(pulsarc_producer_t *bp) {
    pc_topic_producer_t *p = TP(bp);
    pulsarc_producer_t *owner = p->owner;
    pthread_mutex_destroy(&p->lock);
    pc_op_destroy(&p->create_w);
    pc_op_destroy(&p->close_op);
    complete_flushes(p->flush_line.head); /* none expected: every enqueued item completes */
    pc_schema_clear(&p->schema);
    pc_encryptor_free(p->encryptor);
    pc_send_op_pool_clear(&p->op_pool);
    pc_producer_base_clear(&p->base);
    free(p);
    if (owner)
        pc_producer_unref(owner);
}

static int64_t tp_last_sequence_id(pulsarc_producer_t *bp) {
    pc_topic_producer_t *p = TP(bp);
    pthread_mutex_lock(&p->lock);
    int64_t v = p->last_seq_acked;
    pthread_mutex_unlock(&p->lock);
    return v;
}

/* What entry.c and chunker.c need to frame the next entry (io thread). */
static void entry_conf(pc_topic_producer_t *p, pc_entry_conf_t *f) {
    size_t max = p->h.conn ? pc_conn_max_message_size(p->h.conn) : PC_DEFAULT_MAX_MESSAGE_SIZE;
    f->producer_id = p->id;
    f->producer_name = p->base.name;
    f->schema_version = p->schema_version;
    f->schema_version_len = p->schema_version_len;
    f->codec = p->cfg.codec;
    f->chunking = p->cfg.chunking;
    f->max_size = max;
    f->chunk_limit = p->cfg.chunk_max > 0 && (size_t)p->cfg.chunk_max < max ? (size_t)p->cfg.chunk_max : max;
    f->encryptor = p->encryptor;
    f->op_pool = &p->op_pool;
}

/* ---------- completing items ---------- */

/*
 * Enqueue and completion times feed only the latency statistics, so the
 * coarse clock (a memory read, no counter) is enough; it may lag a tick.
 */
static int64_t coarse_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Callback thread: runs the callbacks of a group of items (linked by next,
 * in send order; one entry's worth), then gives the items back to their
 * pool in one go. The group is one callback-queue item and holds one
 * reference on p, so a receipt costs one hand-off, not one per message.
 */
static void run_send_results(pc_cb_item_t *ci) {
    send_item_t *first = (send_item_t *)((char *)ci - offsetof(send_item_t, cb_item));
    pc_topic_producer_t *p = first->reporter;
    pulsarc_producer_t *shown = p->owner ? p->owner : &p->base;
    int n = 0;
    for (send_item_t *it = first; it; it = it->next, n++) {
        it->cb(shown, it->err, it->err ? NULL : &it->id, it->msg, it->opaque);
        pulsarc_msg_destroy(it->msg);
        it->msg = NULL;
    }
    pc_item_put_chain(first);
    pc_cbq_count_runs(n - 1); /* this queue item ran n callbacks */
    if (atomic_fetch_sub(&p->callbacks_queued, n) == n) {
        pthread_mutex_lock(&p->lock); /* a close may wait for its last callback */
        pc_op_queue_complete_all(&p->drain_line, PULSARC_OK, NULL);
        pthread_mutex_unlock(&p->lock);
    }
    tp_unref(p);
}

/* now: the coarse clock (0 on failure); hist_now: the clock the send
 * durations are measured on, read once per completed chain. */
static void account(pc_topic_producer_t *p, const send_item_t *it, pulsarc_err_t err, int64_t now,
                    int64_t hist_now) {
    pc_producer_stats_acc_t *s = &p->stats;
    pc_send_hists_record(&(p->owner ? p->owner : &p->base)->send_hists, err != PULSARC_OK,
                         (uint64_t)(hist_now - it->queued_ms));
    if (err) {
        s->send_errors++;
        return;
    }
    uint64_t lat = now > it->queued_ms ? (uint64_t)(now - it->queued_ms) : 0;
    s->msgs_sent++;
    s->bytes_sent += it->msg->len;
    s->latency_sum_ms += lat;
    s->latency_max_ms = lat > s->latency_max_ms ? lat : s->latency_max_ms;
    if (it->seq > p->last_seq_acked)
        p->last_seq_acked = it->seq;
}

/* Slots go to blocked senders once pending drops to this mark, i.e. once
 * per quarter of the queue freed, not once per receipt: a lone sender then
 * wakes with one slot and finds the rest of the quarter free. */
static int slot_wake_mark(const pc_topic_producer_t *p) {
    int quarter = p->cfg.max_pending / 4;
    return p->cfg.max_pending - (quarter > 0 ? quarter : 1);
}

/*
 * Under lock: hands free slots to the senders in line, oldest first, one
 * slot each, counting them in flight for them; their ops go to given, to be
 * completed after the lock. `force` skips the wake mark (a slot given back).
 */
static void hand_slots(pc_topic_producer_t *p, int force, pc_op_queue_t *given) {
    if (!p->slot_line.head || (!force && p->inflight > slot_wake_mark(p)))
        return;
    while (p->slot_line.head && p->inflight < p->cfg.max_pending) {
        pc_op_t *op = pc_op_queue_pop(&p->slot_line);
        p->inflight++;
        p->enqueued++;
        pc_op_queue_push(given, op);
    }
}

/* Under lock: pops the flushes that `completed` has caught up with. */
static pc_op_t *due_flushes(pc_topic_producer_t *p) {
    pc_op_t *ready = NULL, **tail = &ready;
    while (p->flush_line.head && FLUSH_OF(p->flush_line.head)->target <= p->completed) {
        pc_op_t *op = pc_op_queue_pop(&p->flush_line);
        *tail = op;
        tail = &op->qnext;
    }
    return ready;
}

/* Completes due flushes: a stack node wakes its waiter, an async one
 * reports its part to the caller's op and goes. */
static void complete_flushes(pc_op_t *op) {
    while (op) {
        pc_op_t *next = op->qnext;
        flush_node_t *f = FLUSH_OF(op);
        op->qnext = NULL;
        if (f->parent) {
            pc_op_done(f->parent, PULSARC_OK, NULL);
            pc_op_destroy(&f->op);
            free(f);
        } else {
            pc_op_done(&f->op, PULSARC_OK, NULL);
        }
        op = next;
    }
}

/* Frees the slots and budget of a chain of items under one lock, and counts
 * the callbacks about to be queued for them (before they can run). Slots go
 * straight to senders in line; the flushes now due are returned, to be
 * completed after the items' own outcomes are out. */
static pc_op_t *release_slots(pc_topic_producer_t *p, const send_item_t *items, pulsarc_err_t err) {
    int64_t mem = 0, now = err ? 0 : coarse_now_ms(), hist_now = pc_now_ms();
    int n = 0, callbacks = 0;
    pthread_mutex_lock(&p->lock);
    for (const send_item_t *it = items; it; it = it->next) {
        mem += it->mem;
        n++;
        callbacks += !it->waiter && it->cb;
        account(p, it, err, now, hist_now);
    }
    p->inflight -= n;
    p->completed += (uint64_t)n;
    atomic_fetch_add(&p->callbacks_queued, callbacks);
    pc_op_queue_t slots = {NULL, NULL};
    hand_slots(p, 0, &slots);
    pc_op_t *flushes = due_flushes(p);
    pthread_mutex_unlock(&p->lock);
    pc_memlimit_release(&p->base.client->memlimit, mem);
    pc_op_queue_complete_all(&slots, PULSARC_OK, NULL);
    return flushes;
}

/* Callbacks gathered while completing a chain: one group of items (linked
 * by next), pushed as one callback-queue item. */
typedef struct cb_chain {
    send_item_t *head, *tail;
} cb_chain_t;

static void push_chain(pc_topic_producer_t *p, cb_chain_t *ch) {
    if (!ch->head)
        return;
    ch->head->cb_item.run = run_send_results;
    ch->head->cb_item.next = NULL;
    tp_ref(p); /* the group's, dropped by run_send_results */
    pc_cbq_push(&p->base.client->cbq, &ch->head->cb_item);
    ch->head = ch->tail = NULL;
}

/* Hands an item to its callback; the callback thread frees it. */
static void queue_callback(pc_topic_producer_t *p, send_item_t *it, pulsarc_err_t err,
                           const pulsarc_msgid_t *id, cb_chain_t *ch) {
    it->err = err;
    if (id)
        it->id = *id;
    it->reporter = p;
    it->next = NULL;
    struct pulsarc_txn_s *txn = it->txn;
    if (txn) /* a group of its own: its callback must be out before a commit waiting on it proceeds */
        push_chain(p, ch);
    if (ch->tail)
        ch->tail->next = it;
    else
        ch->head = it;
    ch->tail = it;
    if (txn) {
        push_chain(p, ch);
        pc_txn_op_end(txn, err);
    }
}

/* Reports one item whose slot is already released. */
static void report_item(pc_topic_producer_t *p, send_item_t *it, pulsarc_err_t err,
                        const char *errmsg, const pulsarc_msgid_t *id, cb_chain_t *ch) {
    if (it->msg && id)
        it->msg->id = *id;
    if (it->waiter) {
        if (!err && it->id_out)
            *it->id_out = *id;
        pc_op_done(it->waiter, err, errmsg);
    } else if (it->cb) {
        queue_callback(p, it, err, id, ch);
        return;
    } else if (it->owns_msg) {
        pulsarc_msg_destroy(it->msg);
    }
    if (it->txn) /* after the outcome is out: a commit waiting on it may now proceed */
        pc_txn_op_end(it->txn, err);
    pc_item_put(it);
}

/*
 * Completes a chain of items (linked by next) with one outcome: one lock for
 * their slots, one push for their callbacks. With entry_id, op is the entry
 * that carried them and gives each its batch index.
 */
static void complete_items(pc_topic_producer_t *p, send_item_t *items, pulsarc_err_t err,
                           const char *errmsg, const send_op_t *op,
                           const pulsarc_msgid_t *entry_id) {
    pc_op_t *flushes = release_slots(p, items, err);
    cb_chain_t ch = {NULL, NULL};
    int i = 0;
    for (send_item_t *it = items, *next; it; it = next, i++) {
        next = it->next;
        pulsarc_msgid_t id;
        if (entry_id) {
            id = *entry_id;
            id.batch_index = op->batched ? i : -1;
            id.batch_size = op->batched ? op->nitems : 0;
        }
        report_item(p, it, err, errmsg, entry_id ? &id : NULL, &ch);
    }
    push_chain(p, &ch);
    complete_flushes(flushes); /* queued behind the callbacks they wait for */
}

/* One item that never became part of an entry (refused, closed, no memory). */
static void complete_item(pc_topic_producer_t *p, send_item_t *it, pulsarc_err_t err,
                          const char *errmsg) {
    it->next = NULL;
    complete_items(p, it, err, errmsg, NULL, NULL);
}

/*
 * The op's frame and its messages may still be lent to a connection that
 * has not written them this turn (a send timeout, a close): copied first.
 * Not for a receipt: the broker answered what it read, so every byte of
 * this op was written, and copying would take this turn's other loans out
 * of the gathered write for nothing.
 */
static void complete_op(pc_topic_producer_t *p, send_op_t *op, pulsarc_err_t err,
                        const char *errmsg, const pulsarc_msgid_t *entry_id) {
    if (!entry_id)
        pc_conn_copy_borrowed();
    send_item_t *items = op->items;
    op->items = NULL;
    if (items)
        complete_items(p, items, err, errmsg, op, entry_id);
    pc_send_op_free(op);
}

static send_op_t *pop_head(pc_topic_producer_t *p) {
    send_op_t *op = p->head;
    if (op) {
        p->head = op->next;
        if (!p->head)
            p->tail = NULL;
    }
    return op;
}

static void fail_items(pc_topic_producer_t *p, send_item_t *it, pulsarc_err_t err, const char *msg) {
    if (it)
        complete_items(p, it, err, msg, NULL, NULL);
}

/* Fails the open batches and the whole FIFO (close, final broker errors). */
/* Io thread: the room senders see in the open batches (none unless open). */
static void publish_room(pc_topic_producer_t *p, int open) {
    const pc_batcher_t *b = &p->batcher;
    int64_t msgs = open ? (int64_t)b->max_msgs - (int64_t)b->n : 0;
    int64_t bytes = open ? (int64_t)b->max_bytes - (int64_t)b->bytes : 0;
    atomic_store_explicit(&p->batch_room_msgs, msgs, memory_order_relaxed);
    atomic_store_explicit(&p->batch_room_bytes, bytes, memory_order_relaxed);
}

static void p_fail_all(pc_topic_producer_t *p, pulsarc_err_t err, const char *msg) {
    send_op_t *op;
    pc_timer_stop(p->base.client->loop, &p->send_timer);
    pc_timer_stop(p->base.client->loop, &p->batch_timer);
    publish_room(p, 0);
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

static void arm_send_timer(pc_topic_producer_t *p) {
    if (p->cfg.send_timeout_ms <= 0 || !p->head || pc_timer_active(&p->send_timer))
        return;
    pc_timer_start(p->base.client->loop, &p->send_timer, p->head->deadline_ms - pc_now_ms());
}

static void on_send_timer(void *arg) {
    pc_topic_producer_t *p = arg;
    int64_t now = pc_now_ms();
    while (p->head && p->head->deadline_ms <= now) {
        char m[160];
        snprintf(m, sizeof m, "no receipt for sequence id %lld within sendTimeoutMs=%d",
                 (long long)p->head->seq, p->cfg.send_timeout_ms);
        complete_op(p, pop_head(p), PULSARC_ERR_TIMEOUT, m, NULL);
    }
    arm_send_timer(p);
}

/* ---------- queueing ops ---------- */

static void queue_ops(pc_topic_producer_t *p, send_op_t *op) {
    int64_t deadline = pc_now_ms() + p->cfg.send_timeout_ms;
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
            pc_send_op_write(op, p->h.conn);
        op = next;
    }
    arm_send_timer(p);
}

static void send_single(pc_topic_producer_t *p, send_item_t *it) {
    char m[256];
    send_op_t *ops = NULL;
    pc_entry_conf_t f;
    entry_conf(p, &f);
    pulsarc_err_t err = pc_entry_single(&f, it, &ops, m, sizeof m);
    if (err)
        complete_item(p, it, err, m);
    else
        queue_ops(p, ops);
}

static void send_group(pc_topic_producer_t *p, pc_batch_group_t *g) {
    if (g->n == 1) { /* a batch of one goes as a plain message, as Java sends it */
        send_item_t *it = g->first;
        g->first = NULL;
        send_single(p, it);
        return;
    }
    char m[256];
    send_op_t *ops = NULL;
    pc_entry_conf_t f;
    entry_conf(p, &f);
    pulsarc_err_t err = pc_entry_batch(&f, g, &ops, m, sizeof m);
    if (err) {
        fail_items(p, g->first, err, m);
        g->first = NULL;
    } else {
        queue_ops(p, ops);
    }
}

static void flush_batches(pc_topic_producer_t *p) {
    pc_timer_stop(p->base.client->loop, &p->batch_timer);
    publish_room(p, 0);
    pc_batch_group_t *g = pc_batcher_take(&p->batcher);
    while (g) {
        pc_batch_group_t *next = g->next;
        send_group(p, g);
        pc_batch_group_free(g);
        g = next;
    }
}

static void on_batch_timer(void *arg) { flush_batches(arg); }

static void add_to_batch(pc_topic_producer_t *p, send_item_t *it) {
    if (pc_batcher_would_overflow(&p->batcher, it->msg))
        flush_batches(p);
    if (pc_batcher_add(&p->batcher, it) != PULSARC_OK) {
        complete_item(p, it, PULSARC_ERR_NOMEM, "out of memory");
        return;
    }
    /* A synchronous sender waits for this very message: send now, as Java's
     * send() triggers a flush, instead of idling out the batching delay. */
    if (pc_batcher_full(&p->batcher) || it->waiter) {
        flush_batches(p);
        return;
    }
    if (!pc_timer_active(&p->batch_timer))
        pc_timer_start(p->base.client->loop, &p->batch_timer, (p->cfg.batch_delay_us + 999) / 1000);
    publish_room(p, 1);
}

static void assign_seq(pc_topic_producer_t *p, send_item_t *it) {
    it->seq = it->msg->has_seq ? it->msg->seq : p->next_seq;
    if (it->seq >= p->next_seq)
        p->next_seq = it->seq + 1;
    it->msg->seq = it->seq;
}

/* Io thread: assigns the sequence id, then batches or frames the message. */
static void enqueue_item(pc_topic_producer_t *p, send_item_t *it) {
    if (p->h.state >= PC_H_CLOSING) {
        complete_item(p, it, PULSARC_ERR_CLOSED, "producer is closed");
        return;
    }
    assign_seq(p, it);
    /* A batch is one entry, so all of it would share one transaction:
     * transactional messages go alone instead. */
    if (p->cfg.batching && !it->txn && pc_batcher_accepts(&p->batcher, it->msg)) {
        add_to_batch(p, it);
    } else {
        flush_batches(p); /* keeps sequence ids in order on the wire */
        send_single(p, it);
    }
}

/* Io thread: takes everything handed off so far, in order. */
static void drain_handoff(void *arg) {
    pc_topic_producer_t *p = arg;
    pthread_mutex_lock(&p->lock);
    send_item_t *it = p->handoff.head;
    p->handoff.head = p->handoff.tail = NULL;
    p->handoff.count = p->handoff.bytes = 0;
    pthread_mutex_unlock(&p->lock);
    while (it) {
        send_item_t *next = it->next;
        it->next = NULL;
        enqueue_item(p, it);
        it = next;
    }
    tp_unref(p); /* the drain's reference */
}

/*
 * Under lock: how long the drain that carries it may wait for the io
 * thread to wake on its own, in microseconds; -1: wake it now. An item that
 * only joins a batch whose timer is already running, and does not fill it
 * together with what is queued before it, waits for that timer anyway, so
 * the loop need not wake once per message (at tens of thousands a second
 * those wake-ups cost the sending thread more than the send itself). One
 * that fills the batch wakes the loop: a full batch goes at once, as it
 * would have without the hand-off. A stale room (the batch just went) costs
 * at most one batching delay: the loop wakes for a post within it unless a
 * timer wakes it sooner.
 */
static int64_t handoff_within_us(pc_topic_producer_t *p, const send_item_t *it) {
    if (!p->cfg.batching || it->waiter || it->txn || it->msg->deliver_at)
        return -1;
    int64_t room_msgs = atomic_load_explicit(&p->batch_room_msgs, memory_order_relaxed);
    int64_t room_bytes = atomic_load_explicit(&p->batch_room_bytes, memory_order_relaxed);
    if (p->handoff.count + 1 >= room_msgs || p->handoff.bytes + (int64_t)it->msg->len >= room_bytes)
        return -1;
    return p->cfg.batch_delay_us;
}

/* Under lock: posts a drain (holding a reference on p). */
static pulsarc_err_t post_drain(pc_topic_producer_t *p, int64_t within_us) {
    tp_ref(p);
    pulsarc_err_t err = within_us < 0 ? pc_client_post(p->base.client, drain_handoff, p)
                                      : pc_client_post_within(p->base.client, drain_handoff, p, within_us);
    if (err)
        tp_unref(p); /* never the last: the caller holds one */
    else
        p->handoff.lazy = within_us >= 0;
    return err;
}

/*
 * Under lock (application thread): appends it to the hand-off queue; the
 * first item of an empty queue posts the drain. An item that cannot wait
 * behind a drain posted lazily posts one more that wakes the loop (a drain
 * finding the queue empty only drops its reference). The post is made
 * under the lock so no item joins a drain that failed to post.
 */
static pulsarc_err_t handoff_push(pc_topic_producer_t *p, send_item_t *it) {
    pulsarc_err_t err = PULSARC_OK;
    int64_t within_us = handoff_within_us(p, it);
    it->next = NULL;
    if (p->handoff.tail) {
        if (p->handoff.lazy && within_us < 0)
            err = post_drain(p, -1);
        if (err)
            return err;
        p->handoff.tail->next = it;
        p->handoff.tail = it;
    } else if (!(err = post_drain(p, within_us))) {
        p->handoff.head = p->handoff.tail = it;
    }
    if (!err) {
        p->handoff.count++;
        p->handoff.bytes += (int64_t)it->msg->len;
    }
    return err;
}

static pulsarc_err_t hand_off(pc_topic_producer_t *p, send_item_t *it) {
    pthread_mutex_lock(&p->lock);
    pulsarc_err_t err = handoff_push(p, it);
    pthread_mutex_unlock(&p->lock);
    return err;
}

/* ---------- receipts and broker events ---------- */

static void handle_receipt(pc_topic_producer_t *p, pc_conn_t *conn,
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
    pulsarc_msgid_t id = {-1, -1, p->base.topic.partition, -1, 0};
    if (r->message_id) {
        id.ledger_id = (int64_t)r->message_id->ledgerid;
        id.entry_id = (int64_t)r->message_id->entryid;
    }
    pop_head(p);
    complete_op(p, op, PULSARC_OK, NULL, &id);
    /* An armed timer stays: deadlines grow along the FIFO, so firing for an
     * op already answered only re-arms it for the new head. */
    arm_send_timer(p);
}

static void detach(pc_topic_producer_t *p) {
    if (p->attached)
        pc_conn_detach_producer(p->attached, p->id);
    p->attached = NULL;
}

static void lose_connection(pc_topic_producer_t *p) {
    detach(p);
    pc_handler_lost(&p->h);
}

/* Fills cmd with a CLOSE_PRODUCER for p under a fresh request id (in cp, which cmd points to). */
static void close_producer_cmd(pc_topic_producer_t *p, Pulsar__Proto__CommandCloseProducer *cp,
                               pc_cmd_t *cmd) {
    pulsar__proto__command_close_producer__init(cp);
    cp->producer_id = p->id;
    cp->request_id = p->base.client->next_id++;
    pulsar__proto__base_command__init(cmd);
    cmd->type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd->close_producer = cp;
}

static void send_close_producer(pc_handler_t *h, pc_conn_t *conn) {
    Pulsar__Proto__CommandCloseProducer cp;
    pc_cmd_t cmd;
    close_producer_cmd(P_OF(h), &cp, &cmd);
    pc_conn_send(conn, &cmd);
}

static void handle_send_error(pc_topic_producer_t *p, pc_conn_t *conn,
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
    pc_topic_producer_t *p = obj;
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
    pc_topic_producer_t *p = obj;
    (void)conn;
    (void)why;
    p->attached = NULL; /* the connection already forgot us */
    pc_handler_lost(&p->h);
}

static const pc_conn_handler_t producer_handler = {on_frame, on_conn_closed, NULL};

/* ---------- (re)creating on the broker ---------- */

static void finish_create(pc_topic_producer_t *p, pulsarc_err_t err, const char *msg) {
    if (p->creating) {
        p->creating = 0;
        pc_op_done(&p->create_w, err, msg);
    }
}

static int is_final_for_producer(pulsarc_err_t err) {
    return err == PULSARC_ERR_BROKER_TOPIC_TERMINATED || err == PULSARC_ERR_BROKER_PRODUCER_FENCED;
}

static void h_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pc_topic_producer_t *p = P_OF(h);
    detach(p);
    if (p->creating)
        finish_create(p, err, msg);
    else
        p_fail_all(p, err, msg);
}

static void adopt_success(pc_topic_producer_t *p, const Pulsar__Proto__CommandProducerSuccess *s) {
    if (!p->base.user_named && s->producer_name)
        snprintf(p->base.name, sizeof p->base.name, "%s", s->producer_name);
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
    pc_topic_producer_t *p = P_OF(h);
    adopt_success(p, reply->cmd->producer_success);
    if (p->readies++) {
        pthread_mutex_lock(&p->lock);
        p->stats.reconnects++;
        pthread_mutex_unlock(&p->lock);
    }
    for (send_op_t *op = p->head; op; op = op->next)
        pc_send_op_write(op, conn);
    finish_create(p, PULSARC_OK, NULL);
}

/* WaitForExclusive: the broker queued us; a second PRODUCER_SUCCESS follows. */
static int h_is_partial(const pc_frame_t *reply) {
    const Pulsar__Proto__CommandProducerSuccess *s = reply->cmd->producer_success;
    return s && s->has_producer_ready && !s->producer_ready;
}

static void h_send_create(pc_handler_t *h, pc_conn_t *conn) {
    pc_topic_producer_t *p = P_OF(h);
    Pulsar__Proto__CommandProducer cp = PULSAR__PROTO__COMMAND_PRODUCER__INIT;
    cp.topic = p->base.topic.full;
    cp.producer_id = p->id;
    cp.request_id = p->base.client->next_id++;
    cp.producer_name = p->base.name[0] ? p->base.name : NULL;
    cp.has_epoch = 1;
    cp.epoch = h->epoch - 1;
    cp.has_user_provided_producer_name = 1;
    cp.user_provided_producer_name = p->base.user_named;
    cp.has_producer_access_mode = p->cfg.access_mode != 0;
    cp.producer_access_mode = (Pulsar__Proto__ProducerAccessMode)p->cfg.access_mode;
    cp.has_topic_epoch = p->has_topic_epoch;
    cp.topic_epoch = p->topic_epoch;
    cp.has_txn_enabled = cp.txn_enabled = pc_conf_int(p->base.client->conf, PC_PROP_ENABLE_TRANSACTION) != 0;
    Pulsar__Proto__Schema schema = PULSAR__PROTO__SCHEMA__INIT;
    cp.schema = pc_schema_wire(&p->schema, &schema);
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &cp;
    /* WaitForExclusive may wait indefinitely for its turn (docs/PROTOCOL.md §4.2). */
    int timeout = p->cfg.access_mode == 2 ? 0 : p->base.client->op_timeout_ms;
    /* Attach first, so a CLOSE_PRODUCER sent before the reply reaches us. */
    detach(p);
    pc_conn_attach_producer(conn, p->id, &producer_handler, p);
    p->attached = conn;
    pc_handler_request_create(h, conn, &cmd, cp.request_id, timeout);
}

static void h_ref(pc_handler_t *h) { tp_ref(P_OF(h)); }
static void h_unref(pc_handler_t *h) { tp_unref(P_OF(h)); }

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
    pc_topic_producer_t *p = arg;
    p->id = p->base.client->next_id++;
    pc_handler_start(&p->h);
}

/* ---------- closing ---------- */

/* Nothing of it runs on the loop any more: the close op completes. Any thread. */
static void set_closed(pc_topic_producer_t *p) {
    pthread_mutex_lock(&p->lock);
    p->closed = p->closing = 1;
    pthread_mutex_unlock(&p->lock);
    pc_op_done(&p->close_op, PULSARC_OK, NULL);
}

static void mark_closed(pc_topic_producer_t *p) {
    p->h.state = PC_H_CLOSED;
    set_closed(p);
}

typedef struct close_req {
    pc_topic_producer_t *p;
    pc_conn_t *conn;
} close_req_t;

static void on_close_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    close_req_t *r = arg;
    pc_topic_producer_t *p = r->p;
    (void)err, (void)f, (void)msg; /* gone either way */
    detach(p);
    pc_conn_unref(r->conn);
    free(r);
    p_fail_all(p, PULSARC_ERR_CLOSED, "producer closed");
    mark_closed(p);
    tp_unref(p);
}

/*
 * Open batches are sent first and the producer stays attached until the
 * broker answers the close: the broker answers only after the entries sent
 * before the close are persisted, so their receipts still arrive and those
 * sends succeed; only what is left then fails with CLOSED.
 */
static void do_close(void *arg) {
    pc_topic_producer_t *p = arg;
    finish_create(p, PULSARC_ERR_CLOSED, "producer closed while connecting");
    if (p->h.state == PC_H_READY)
        flush_batches(p);
    pc_conn_t *conn = pc_handler_stop(&p->h);
    close_req_t *r = conn ? calloc(1, sizeof *r) : NULL;
    if (r) {
        r->p = p;
        r->conn = conn;
        pc_conn_ref(conn);
        Pulsar__Proto__CommandCloseProducer cp;
        pc_cmd_t cmd;
        close_producer_cmd(p, &cp, &cmd);
        pc_conn_request(conn, &cmd, cp.request_id, p->base.client->op_timeout_ms, on_close_reply, r);
        return; /* on_close_reply keeps the reference */
    }
    detach(p); /* also from a connection still creating us */
    p_fail_all(p, PULSARC_ERR_CLOSED, "producer closed");
    mark_closed(p);
    tp_unref(p);
}

/*
 * Starts closing once; returns 0 if the loop refused (already stopped).
 * Senders blocked for a slot or for memory budget get CLOSED now.
 */
static int post_close(pc_topic_producer_t *p) {
    pthread_mutex_lock(&p->lock);
    int first = !p->close_posted;
    p->close_posted = 1;
    p->closing = 1;
    pc_op_queue_complete_all(&p->slot_line, PULSARC_ERR_CLOSED, "producer closed");
    pthread_mutex_unlock(&p->lock);
    if (!first)
        return 1;
    atomic_store(&p->mem_stopped, 1); /* before the cancel: see pc_memlimit_acquire */
    pc_memlimit_cancel(&p->base.client->memlimit, p, PULSARC_ERR_CLOSED, "producer closed");
    tp_ref(p);
    if (pc_client_post(p->base.client, do_close, p) == PULSARC_OK)
        return 1;
    tp_unref(p);
    return 0;
}

/*
 * With a callback thread, close returns only after every send callback it
 * caused has run, so none runs after close (or destroy) returned. In poll
 * mode callbacks run only inside pulsarc_client_poll, on the application's
 * own thread, so what close queued runs at its next poll (or when the
 * client closes); waiting here could only deadlock a single-threaded
 * application.
 */
static void wait_callbacks(pc_topic_producer_t *p) {
    if (!p->base.client->cbq.own_thread)
        return;
    pthread_mutex_lock(&p->lock);
    if (atomic_load(&p->callbacks_queued) > 0) { /* the last one run completes the line */
        pc_op_t drained;
        pc_op_init(&drained);
        pc_op_queue_wait(&p->drain_line, &drained, &p->lock, NULL);
        pc_op_destroy(&drained);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Close = post the close, then wait for its op (unless inside a callback). */
static void tp_close(pulsarc_producer_t *bp) {
    pc_topic_producer_t *p = TP(bp);
    if (!post_close(p))
        set_closed(p); /* the loop is gone: nothing can still be pending */
    if (pc_in_callback())
        return; /* only starts it; the loop finishes */
    pc_op_wait(&p->close_op, NULL, 0);
    wait_callbacks(p);
}

/* ---------- creation ---------- */

static void apply_settings(pc_topic_producer_t *p, const pc_producer_settings_t *s) {
    p->cfg = *s;
    if (s->initial_seq >= 0) {
        p->next_seq = s->initial_seq + 1;
        p->last_seq_acked = s->initial_seq;
        p->seeded = 1;
    }
    pc_batcher_init(&p->batcher, s->key_based_batches, s->batch_max_msgs, s->batch_max_bytes);
    pc_send_op_pool_init(&p->op_pool, s->max_pending);
}

static const pc_producer_ops_t topic_producer_ops;

pulsarc_err_t pc_topic_producer_alloc(pulsarc_client_t *c, const char *topic,
                                      const pulsarc_conf_t *conf,
                                      const pc_producer_settings_t *s, pulsarc_producer_t *owner,
                                      pulsarc_producer_t **pp, char *errstr, size_t errlen) {
    pc_topic_t t;
    pulsarc_err_t err = pc_client_parse_topic(c, topic, &t, errstr, errlen);
    if (err)
        return err;
    pc_topic_producer_t *p = calloc(1, sizeof *p);
    if (!p)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pc_producer_base_init(&p->base, &topic_producer_ops, c, &t, conf);
    pthread_mutex_init(&p->lock, NULL);
    pc_op_init(&p->create_w);
    pc_op_init(&p->close_op);
    p->last_seq_acked = -1;
    apply_settings(p, s);
    pc_timer_init(&p->send_timer, on_send_timer, p);
    pc_timer_init(&p->batch_timer, on_batch_timer, p);
    pc_any_fn reader; /* pulsarc_conf_set_crypto_key_reader */
    void *reader_opaque;
    pc_conf_get_cb(conf, PC_CB_CRYPTO_KEY_READER, &reader, &reader_opaque);
    err = pc_schema_from_conf(&p->schema, conf, errstr, errlen);
    if (!err)
        err = pc_encryptor_from_conf(pc_conf_str(conf, PC_PROP_ENCRYPTION_KEYS),
                                     pc_conf_str(conf, PC_PROP_CRYPTO_PUBLIC_KEY_PATH),
                                     (pulsarc_crypto_key_reader_cb)reader, reader_opaque,
                                     &p->encryptor, errstr, errlen);
    if (err) {
        tp_unref(p);
        return err;
    }
    pc_handler_init(&p->h, &producer_ops, c, p->base.topic.full);
    if (p->cfg.access_mode == 2) { /* WaitForExclusive: its own kind of connection */
        p->h.is_partial = h_is_partial;
        p->h.conn_flags = PC_CONN_F_PARTIAL_PRODUCER;
    }
    if (owner) {
        p->owner = owner;
        pc_producer_ref(owner);
    }
    *pp = &p->base;
    return PULSARC_OK;
}

pulsarc_err_t pc_topic_producer_begin_create(pulsarc_producer_t *bp) {
    pc_topic_producer_t *p = TP(bp);
    p->creating = 1;
    tp_ref(p); /* do_start's, dropped when the creation fails */
    pulsarc_err_t err = pc_client_post(p->base.client, do_start, p);
    if (err) {
        p->creating = 0;
        pc_op_done(&p->create_w, err, "client is closed");
        tp_unref(p);
    }
    return err;
}

pulsarc_err_t pc_topic_producer_wait_created(pulsarc_producer_t *bp, char *errstr, size_t errlen) {
    pc_topic_producer_t *p = TP(bp);
    pulsarc_err_t err = pc_op_wait(&p->create_w, errstr, errlen);
    if (err) {
        set_closed(p); /* the loop already reached CLOSED */
        return err;
    }
    tp_unref(p); /* do_start's reference; the loop keeps none while READY */
    return PULSARC_OK;
}

/* The callback form's wait_created, run on the callback queue. */
static void on_created(pc_op_t *op, void *arg) {
    pc_topic_producer_t *p = arg;
    char m[512];
    pulsarc_err_t err = pc_op_result(op, m, sizeof m);
    if (err)
        set_closed(p); /* the loop already reached CLOSED */
    p->created_fn(&p->base, err, err ? m : NULL, p->created_arg);
    tp_unref(p); /* do_start's reference */
}

pulsarc_err_t pc_topic_producer_create_async(pulsarc_producer_t *bp, pc_created_fn fn, void *arg) {
    pc_topic_producer_t *p = TP(bp);
    p->created_fn = fn;
    p->created_arg = arg;
    pc_op_call_back(&p->create_w, &p->base.client->cbq, on_created, p);
    p->creating = 1;
    tp_ref(p); /* do_start's, dropped by on_created */
    pulsarc_err_t err = pc_client_post(p->base.client, do_start, p);
    if (err) { /* nothing started: fn is not called, the op stays pending */
        p->creating = 0;
        set_closed(p);
        tp_unref(p);
    }
    return err;
}

static pulsarc_err_t tp_create(pulsarc_producer_t *bp, const pulsarc_conf_t *conf, char *errstr,
                               size_t errlen) {
    (void)conf; /* read at allocation */
    pulsarc_err_t err = pc_topic_producer_begin_create(bp);
    if (err)
        return pc_seterr(errstr, errlen, err, "client is closed");
    err = pc_topic_producer_wait_created(bp, errstr, errlen);
    if (err)
        pc_producer_unref(bp); /* do_start's reference, never handed back */
    return err;
}

/* ---------- sending ---------- */

/*
 * Under lock: waits in the slot line until a slot is handed over (already
 * counted in flight for us), the send timeout passes or close fails the
 * line. The deadline is read only when a sender has to wait.
 */
static pulsarc_err_t wait_for_slot(pc_topic_producer_t *p) {
    struct timespec dl;
    int bounded = p->cfg.send_timeout_ms > 0;
    if (bounded)
        pc_deadline(&dl, p->cfg.send_timeout_ms);
    pc_op_t w;
    pc_op_init(&w);
    pulsarc_err_t err = PULSARC_ERR_TIMEOUT;
    if (pc_op_queue_wait(&p->slot_line, &w, &p->lock, bounded ? &dl : NULL))
        err = pc_op_result(&w, NULL, 0);
    pc_op_destroy(&w);
    return err;
}

/* Under lock: a slot taken but not used goes back; it counts as completed,
 * since a flush may already wait for it. Senders to wake go to wake. */
static void give_back_slot(pc_topic_producer_t *p, pc_op_queue_t *wake) {
    p->inflight--;
    p->completed++;
    hand_slots(p, 1, wake);
}

/*
 * Reserves a pending slot (application thread). First come, first served:
 * a sender that finds others in line queues behind them even if a slot is
 * free (it is theirs, on its way).
 */
static pulsarc_err_t acquire_slot(pc_topic_producer_t *p) {
    pc_op_queue_t wake = {NULL, NULL};
    pc_op_t *flushes = NULL;
    pthread_mutex_lock(&p->lock);
    pulsarc_err_t err = PULSARC_OK;
    if (p->closing) {
        err = PULSARC_ERR_CLOSED;
    } else if (!p->slot_line.head && p->inflight < p->cfg.max_pending) {
        p->inflight++;
        p->enqueued++;
    } else if (!p->cfg.block_if_full) {
        err = PULSARC_ERR_QUEUE_FULL;
    } else if (!(err = wait_for_slot(p)) && p->closing) {
        give_back_slot(p, &wake); /* handed over just as close began */
        flushes = due_flushes(p);
        err = PULSARC_ERR_CLOSED;
    }
    pthread_mutex_unlock(&p->lock);
    pc_op_queue_complete_all(&wake, PULSARC_OK, NULL);
    complete_flushes(flushes);
    return err;
}

static void unreserve(pc_topic_producer_t *p, send_item_t *it) {
    pc_memlimit_release(&p->base.client->memlimit, it->mem);
    it->mem = 0;
    pthread_mutex_lock(&p->lock);
    pc_op_queue_t wake = {NULL, NULL};
    give_back_slot(p, &wake);
    pc_op_t *flushes = due_flushes(p);
    pthread_mutex_unlock(&p->lock);
    pc_op_queue_complete_all(&wake, PULSARC_OK, NULL);
    complete_flushes(flushes);
}

/*
 * The common case in one lock round: a slot free with nobody in line for
 * one, the bytes fitting the budget without a wait, and the item joining
 * the hand-off queue under the same lock. 1 when it went; 0 leaves nothing
 * taken, for the slow path (which also reports why it cannot go).
 */
static int submit_fast(pc_topic_producer_t *p, send_item_t *it) {
    pc_memlimit_t *budget = &p->base.client->memlimit;
    int64_t mem = (int64_t)it->msg->len;
    int reserved = 0, queued = 0;
    it->queued_ms = coarse_now_ms();
    pthread_mutex_lock(&p->lock);
    if (!p->closing && !p->slot_line.head && p->inflight < p->cfg.max_pending &&
        (reserved = pc_memlimit_try(budget, mem)) != 0) {
        it->mem = mem;
        queued = handoff_push(p, it) == PULSARC_OK;
        if (queued) {
            p->inflight++;
            p->enqueued++;
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (reserved && !queued) { /* the loop is gone: the slow path says so */
        pc_memlimit_release(budget, mem);
        it->mem = 0;
    }
    return queued;
}

static pulsarc_err_t tp_submit(pulsarc_producer_t *bp, send_item_t *it) {
    pc_topic_producer_t *p = TP(bp);
    /* The coordinator must know the partition before its first message lands. */
    pulsarc_err_t err = it->txn ? pc_txn_add_partition(it->txn, p->base.topic.full, NULL, 0) : PULSARC_OK;
    if (err || submit_fast(p, it))
        return err;
    err = acquire_slot(p);
    if (err)
        return err;
    it->mem = (int64_t)it->msg->len;
    err = pc_memlimit_acquire(&p->base.client->memlimit, p, &p->mem_stopped, it->mem,
                              p->cfg.block_if_full, p->cfg.send_timeout_ms);
    if (err) {
        it->mem = 0;
        unreserve(p, it);
        return err;
    }
    it->queued_ms = coarse_now_ms();
    err = hand_off(p, it);
    if (err)
        unreserve(p, it);
    return err;
}

/* ---------- flushing ---------- */

static void do_flush(void *arg) {
    pc_topic_producer_t *p = arg;
    if (p->h.state < PC_H_CLOSING)
        flush_batches(p);
    tp_unref(p);
}

/* Sends the open batches now instead of at their delay. */
static void post_flush(pc_topic_producer_t *p) {
    tp_ref(p);
    if (pc_client_post(p->base.client, do_flush, p) != PULSARC_OK)
        tp_unref(p); /* loop gone: nothing is left open */
}

/* Anything enqueued and not yet complete? (Read first, so that a flush of
 * an idle producer neither posts to the loop nor waits.) */
static int has_pending(pc_topic_producer_t *p) {
    pthread_mutex_lock(&p->lock);
    int pending = p->completed < p->enqueued;
    pthread_mutex_unlock(&p->lock);
    return pending;
}

/* The sync flush: the async flush's node on the stack, and one wait. */
static pulsarc_err_t tp_flush(pulsarc_producer_t *bp, int timeout_ms) {
    pc_topic_producer_t *p = TP(bp);
    struct timespec dl;
    if (timeout_ms >= 0)
        pc_deadline(&dl, timeout_ms);
    if (!has_pending(p))
        return PULSARC_OK;
    post_flush(p);
    flush_node_t f;
    pc_op_init(&f.op);
    f.parent = NULL;
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&p->lock);
    f.target = p->enqueued; /* taken with the push, so the line stays in target order */
    if (p->completed < f.target &&
        !pc_op_queue_wait(&p->flush_line, &f.op, &p->lock, timeout_ms >= 0 ? &dl : NULL))
        err = PULSARC_ERR_TIMEOUT;
    pthread_mutex_unlock(&p->lock);
    pc_op_destroy(&f.op);
    return err;
}

/* One part of op is reported once everything enqueued so far has its outcome. */
static pulsarc_err_t tp_flush_async(pulsarc_producer_t *bp, pc_op_t *op) {
    pc_topic_producer_t *p = TP(bp);
    if (!has_pending(p))
        return PULSARC_OK;
    flush_node_t *f = malloc(sizeof *f);
    if (!f)
        return PULSARC_ERR_NOMEM;
    pc_op_init(&f->op);
    f->parent = op;
    pc_op_add(op, 1);
    post_flush(p);
    pthread_mutex_lock(&p->lock);
    f->target = p->enqueued;
    int queued = p->completed < f->target;
    if (queued)
        pc_op_queue_push(&p->flush_line, &f->op);
    pthread_mutex_unlock(&p->lock);
    if (!queued) {
        pc_op_destroy(&f->op);
        free(f);
        pc_op_done(op, PULSARC_OK, NULL);
    }
    return PULSARC_OK;
}

/* ---------- the rest of the ops ---------- */

int pc_topic_producer_slot_waiters(pulsarc_producer_t *bp) {
    pc_topic_producer_t *p = TP(bp);
    int n = 0;
    pthread_mutex_lock(&p->lock);
    for (pc_op_t *op = p->slot_line.head; op; op = op->qnext)
        n++;
    pthread_mutex_unlock(&p->lock);
    return n;
}

static void tp_add_stats(pulsarc_producer_t *bp, pc_producer_stats_acc_t *sum, uint64_t *pending) {
    pc_topic_producer_t *p = TP(bp);
    pthread_mutex_lock(&p->lock);
    sum->msgs_sent += p->stats.msgs_sent;
    sum->bytes_sent += p->stats.bytes_sent;
    sum->send_errors += p->stats.send_errors;
    sum->latency_sum_ms += p->stats.latency_sum_ms;
    sum->reconnects += p->stats.reconnects;
    if (p->stats.latency_max_ms > sum->latency_max_ms)
        sum->latency_max_ms = p->stats.latency_max_ms;
    *pending += (uint64_t)p->inflight;
    pthread_mutex_unlock(&p->lock);
}

static int tp_partitions(const pulsarc_producer_t *bp) {
    (void)bp;
    return 0; /* not a partitioned topic's handle */
}

static pulsarc_err_t tp_set_router(pulsarc_producer_t *bp, pulsarc_router_cb cb, void *opaque) {
    (void)bp, (void)cb, (void)opaque;
    return PULSARC_ERR_STATE; /* only a partitioned topic routes */
}

static void tp_release(pulsarc_producer_t *bp) { (void)bp; /* holds no other producer */ }

static const pc_producer_ops_t topic_producer_ops = {
    .create = tp_create,
    .submit = tp_submit,
    .flush = tp_flush,
    .flush_async = tp_flush_async,
    .close = tp_close,
    .last_sequence_id = tp_last_sequence_id,
    .partitions = tp_partitions,
    .set_router = tp_set_router,
    .add_stats = tp_add_stats,
    .release = tp_release,
    .free = tp_free,
};
