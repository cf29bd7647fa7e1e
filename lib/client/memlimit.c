/*
 * Design notes: see memlimit.h. The budget counts payload bytes only (not
 * framing), as the Java client's MemoryLimitController does; it is a plain
 * counter under a mutex because reservations are per message, not per byte
 * stream, and contention is one lock round-trip per send.
 */
#include "client/memlimit.h"

#include <time.h>

#include "client/op.h"
#include "net/loop.h"

void pc_memlimit_init(pc_memlimit_t *m, int64_t limit) {
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cond, &a);
    pthread_condattr_destroy(&a);
    m->limit = limit;
    m->used = 0;
}

void pc_memlimit_destroy(pc_memlimit_t *m) {
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->cond);
}

/* Fits, or is oversized and the budget is empty (so it cannot starve). */
static int fits(const pc_memlimit_t *m, int64_t n) {
    return m->used + n <= m->limit || m->used == 0;
}

pulsarc_err_t pc_memlimit_acquire(pc_memlimit_t *m, int64_t n, int block, int timeout_ms) {
    if (m->limit <= 0 || n <= 0)
        return PULSARC_OK;
    struct timespec dl;
    if (timeout_ms > 0)
        pc_deadline(&dl, timeout_ms);
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&m->lock);
    while (!fits(m, n) && !err) {
        if (!block)
            err = PULSARC_ERR_QUEUE_FULL;
        else if (timeout_ms > 0 ? pc_loop_cond_timedwait(&m->cond, &m->lock, &dl) != 0
                                : pc_loop_cond_wait(&m->cond, &m->lock) != 0)
            err = PULSARC_ERR_TIMEOUT;
    }
    if (!err)
        m->used += n;
    pthread_mutex_unlock(&m->lock);
    return err;
}

void pc_memlimit_release(pc_memlimit_t *m, int64_t n) {
    if (m->limit <= 0 || n <= 0)
        return;
    pthread_mutex_lock(&m->lock);
    m->used -= n;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

int64_t pc_memlimit_used(pc_memlimit_t *m) {
    pthread_mutex_lock(&m->lock);
    int64_t v = m->used;
    pthread_mutex_unlock(&m->lock);
    return v;
}
