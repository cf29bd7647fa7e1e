/*
 * Design notes: see memlimit.h. The budget counts payload bytes only (not
 * framing), as the Java client's MemoryLimitController does; it is a plain
 * counter under a mutex because reservations are per message, not per byte
 * stream, and contention is one lock round-trip per send. A waiting
 * reservation lives on its sender's stack: the op plus what it asks for.
 */
#include "client/memlimit.h"

#include <stddef.h>
#include <time.h>

#include "net/loop.h"

typedef struct mem_waiter {
    pc_op_t op;          /* first: the line holds &op */
    int64_t n;
    const void *owner;
} mem_waiter_t;

#define WAITER_OF(o) ((mem_waiter_t *)((char *)(o) - offsetof(mem_waiter_t, op)))

void pc_memlimit_init(pc_memlimit_t *m, int64_t limit) {
    pthread_mutex_init(&m->lock, NULL);
    m->limit = limit;
    m->used = 0;
    m->line.head = m->line.tail = NULL;
}

void pc_memlimit_destroy(pc_memlimit_t *m) { pthread_mutex_destroy(&m->lock); }

/* Fits, or is oversized and the budget is empty (so it cannot starve). */
static int fits(const pc_memlimit_t *m, int64_t n) {
    return m->used + n <= m->limit || m->used == 0;
}

/*
 * Under lock: pops the head waiters whose bytes now fit into given,
 * reserving for each, to be completed after the lock is let go. Stops at
 * the first that does not fit (strict FIFO).
 */
static void hand_over(pc_memlimit_t *m, pc_op_queue_t *given) {
    while (m->line.head && fits(m, WAITER_OF(m->line.head)->n)) {
        pc_op_t *op = pc_op_queue_pop(&m->line);
        m->used += WAITER_OF(op)->n;
        pc_op_queue_push(given, op);
    }
}

/* Under lock: waits in line; the bytes are reserved by whoever completes it. */
static pulsarc_err_t wait_in_line(pc_memlimit_t *m, const void *owner, int64_t n, int timeout_ms) {
    struct timespec dl;
    if (timeout_ms > 0)
        pc_deadline(&dl, timeout_ms);
    mem_waiter_t w;
    pc_op_init(&w.op);
    w.n = n;
    w.owner = owner;
    pulsarc_err_t err = PULSARC_ERR_TIMEOUT;
    if (pc_op_queue_wait(&m->line, &w.op, &m->lock, timeout_ms > 0 ? &dl : NULL))
        err = pc_op_result(&w.op, NULL, 0);
    pc_op_destroy(&w.op);
    return err;
}

pulsarc_err_t pc_memlimit_acquire(pc_memlimit_t *m, const void *owner, const atomic_int *stopped,
                                  int64_t n, int block, int timeout_ms) {
    if (m->limit <= 0 || n <= 0)
        return PULSARC_OK;
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&m->lock);
    if (!m->line.head && fits(m, n))
        m->used += n;
    else if (!block)
        err = PULSARC_ERR_QUEUE_FULL;
    else if (stopped && atomic_load(stopped))
        err = PULSARC_ERR_CLOSED;
    else
        err = wait_in_line(m, owner, n, timeout_ms);
    /* A waiter that timed out at the head may have held back those behind it. */
    pc_op_queue_t ready = {NULL, NULL};
    if (err)
        hand_over(m, &ready);
    pthread_mutex_unlock(&m->lock);
    pc_op_queue_complete_all(&ready, PULSARC_OK, NULL);
    return err;
}

void pc_memlimit_release(pc_memlimit_t *m, int64_t n) {
    if (m->limit <= 0 || n <= 0)
        return;
    pthread_mutex_lock(&m->lock);
    m->used -= n;
    pc_op_queue_t ready = {NULL, NULL};
    hand_over(m, &ready);
    pthread_mutex_unlock(&m->lock);
    pc_op_queue_complete_all(&ready, PULSARC_OK, NULL);
}

void pc_memlimit_cancel(pc_memlimit_t *m, const void *owner, pulsarc_err_t err, const char *msg) {
    pc_op_queue_t gone = {NULL, NULL}, ready = {NULL, NULL};
    pthread_mutex_lock(&m->lock);
    for (pc_op_t *op = m->line.head, *next; op; op = next) {
        next = op->qnext;
        if (WAITER_OF(op)->owner != owner)
            continue;
        pc_op_queue_remove(&m->line, op);
        pc_op_queue_push(&gone, op);
    }
    hand_over(m, &ready); /* a cancelled head may have held others back */
    pthread_mutex_unlock(&m->lock);
    pc_op_queue_complete_all(&gone, err, msg);
    pc_op_queue_complete_all(&ready, PULSARC_OK, NULL);
}

int64_t pc_memlimit_used(pc_memlimit_t *m) {
    pthread_mutex_lock(&m->lock);
    int64_t v = m->used;
    pthread_mutex_unlock(&m->lock);
    return v;
}

int pc_memlimit_waiting(pc_memlimit_t *m) {
    pthread_mutex_lock(&m->lock);
    int k = 0;
    for (pc_op_t *op = m->line.head; op; op = op->qnext)
        k++;
    pthread_mutex_unlock(&m->lock);
    return k;
}
