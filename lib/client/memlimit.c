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
    atomic_init(&m->used, 0);
    atomic_init(&m->entering, 0);
    m->line.head = m->line.tail = NULL;
}

void pc_memlimit_destroy(pc_memlimit_t *m) { pthread_mutex_destroy(&m->lock); }

/* Reserves n if they fit, or if they are oversized and the budget is
 * empty (so they cannot starve); 1 when reserved. Any thread, no lock. */
static int try_reserve(pc_memlimit_t *m, int64_t n) {
    int64_t u = atomic_load(&m->used);
    while (u + n <= m->limit || u == 0) {
        if (atomic_compare_exchange_weak(&m->used, &u, u + n))
            return 1;
    }
    return 0;
}

/*
 * Under lock: pops the head waiters whose bytes now fit into given,
 * reserving for each, to be completed after the lock is let go. Stops at
 * the first that does not fit (strict FIFO).
 */
static void hand_over(pc_memlimit_t *m, pc_op_queue_t *given) {
    while (m->line.head && try_reserve(m, WAITER_OF(m->line.head)->n))
        pc_op_queue_push(given, pc_op_queue_pop(&m->line));
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

int pc_memlimit_try(pc_memlimit_t *m, int64_t n) {
    if (m->limit <= 0 || n <= 0)
        return 1;
    return atomic_load(&m->entering) == 0 && try_reserve(m, n);
}

pulsarc_err_t pc_memlimit_acquire(pc_memlimit_t *m, const void *owner, const atomic_int *stopped,
                                  int64_t n, int block, int timeout_ms) {
    if (pc_memlimit_try(m, n))
        return PULSARC_OK; /* nobody in line: no lock */
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&m->lock);
    atomic_fetch_add(&m->entering, 1); /* before the retry: see memlimit.h */
    if (!m->line.head && try_reserve(m, n))
        err = PULSARC_OK;
    else if (!block)
        err = PULSARC_ERR_QUEUE_FULL;
    else if (stopped && atomic_load(stopped))
        err = PULSARC_ERR_CLOSED;
    else
        err = wait_in_line(m, owner, n, timeout_ms);
    atomic_fetch_sub(&m->entering, 1);
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
    atomic_fetch_sub(&m->used, n);
    if (atomic_load(&m->entering) == 0)
        return; /* nobody in line or on the way there: nobody to hand them to */
    pc_op_queue_t ready = {NULL, NULL};
    pthread_mutex_lock(&m->lock);
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

int64_t pc_memlimit_used(pc_memlimit_t *m) { return atomic_load(&m->used); }

int pc_memlimit_waiting(pc_memlimit_t *m) {
    pthread_mutex_lock(&m->lock);
    int k = 0;
    for (pc_op_t *op = m->line.head; op; op = op->qnext)
        k++;
    pthread_mutex_unlock(&m->lock);
    return k;
}
