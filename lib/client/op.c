/*
 * Design notes: the one completion type of the client (see op.h for how
 * each kind of result maps onto it). Whichever thread finishes the work
 * completes the op under its lock; in the waiting form that wakes the
 * waiters, in the callback form it queues the callback on the client's
 * callback queue after letting go of the lock, so application code never
 * runs inside the library's locks or on the loop thread. A waiter on a
 * blocked caller's stack is safe: the caller returns only after it has
 * seen `done` under the lock, which the completer holds until its last
 * touch of the op.
 *
 * The line of waiting ops (pc_op_queue_t) is a plain list under its
 * owner's lock: giving something out is pop + complete, one waiter at a
 * time, so freeing one slot never wakes every blocked sender. A waiter
 * that times out takes itself off the line under the same lock; if a
 * giver got there first the handover stands and the wait continues.
 */
#include "client/op.h"
#include "net/loop.h"

#include <stddef.h>
#include <stdio.h>
#include <time.h>

void pc_op_init(pc_op_t *op) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_mutex_init(&op->lock, NULL);
    pthread_cond_init(&op->cond, &a);
    pthread_condattr_destroy(&a);
    op->parts = 1;
    op->done = 0;
    op->err = PULSARC_OK;
    op->errmsg[0] = '\0';
    op->cbq = NULL;
    op->fn = NULL;
    op->fn_arg = NULL;
    op->qnext = NULL;
}

void pc_op_destroy(pc_op_t *op) {
    pthread_mutex_destroy(&op->lock);
    pthread_cond_destroy(&op->cond);
}

static void run_callback(pc_cb_item_t *it) {
    pc_op_t *op = (pc_op_t *)((char *)it - offsetof(pc_op_t, item));
    op->fn(op, op->fn_arg); /* may free op */
}

void pc_op_call_back(pc_op_t *op, pc_cbq_t *q, pc_op_fn fn, void *arg) {
    op->cbq = q;
    op->fn = fn;
    op->fn_arg = arg;
    op->item.run = run_callback;
}

void pc_op_add(pc_op_t *op, int n) {
    pthread_mutex_lock(&op->lock);
    if (op->done) {
        op->done = 0;
        op->parts = 0;
    }
    op->parts += n;
    pthread_mutex_unlock(&op->lock);
}

int pc_op_done(pc_op_t *op, pulsarc_err_t err, const char *msg) {
    pthread_mutex_lock(&op->lock);
    if (op->done) {
        pthread_mutex_unlock(&op->lock);
        return 0;
    }
    if (err && !op->err) {
        op->err = err;
        snprintf(op->errmsg, sizeof op->errmsg, "%s", msg ? msg : "");
    }
    int complete = --op->parts <= 0;
    if (complete)
        op->done = 1;
    pc_cbq_t *q = complete ? op->cbq : NULL;
    if (complete && !q)
        pthread_cond_broadcast(&op->cond);
    pthread_mutex_unlock(&op->lock);
    /* The last touch when queued: the callback may free op. Refused, the
     * callback never runs and op stays with whoever completed it. */
    return q && pc_cbq_push(q, &op->item) != 0;
}

int pc_op_wait_until(pc_op_t *op, const struct timespec *dl) {
    pthread_mutex_lock(&op->lock);
    int timed_out = 0;
    while (!op->done && !timed_out) {
        if (!dl)
            pc_loop_cond_wait(&op->cond, &op->lock);
        else
            timed_out = pc_loop_cond_timedwait(&op->cond, &op->lock, dl) != 0;
    }
    int done = op->done;
    pthread_mutex_unlock(&op->lock);
    return done;
}

int pc_op_wait_for(pc_op_t *op, int timeout_ms) {
    struct timespec dl;
    if (timeout_ms >= 0)
        pc_deadline(&dl, timeout_ms);
    return pc_op_wait_until(op, timeout_ms >= 0 ? &dl : NULL);
}

pulsarc_err_t pc_op_result(pc_op_t *op, char *errstr, size_t errlen) {
    pthread_mutex_lock(&op->lock);
    pulsarc_err_t err = op->err;
    if (errstr && errlen)
        snprintf(errstr, errlen, "%s", op->errmsg[0] ? op->errmsg : pulsarc_strerror(err));
    pthread_mutex_unlock(&op->lock);
    return err;
}

pulsarc_err_t pc_op_wait(pc_op_t *op, char *errstr, size_t errlen) {
    pc_op_wait_for(op, -1);
    return pc_op_result(op, errstr, errlen);
}

/* ---------- a line of waiting ops ---------- */

void pc_op_queue_push(pc_op_queue_t *q, pc_op_t *op) {
    op->qnext = NULL;
    if (q->tail)
        q->tail->qnext = op;
    else
        q->head = op;
    q->tail = op;
}

pc_op_t *pc_op_queue_pop(pc_op_queue_t *q) {
    pc_op_t *op = q->head;
    if (!op)
        return NULL;
    q->head = op->qnext;
    if (!q->head)
        q->tail = NULL;
    op->qnext = NULL;
    return op;
}

int pc_op_queue_remove(pc_op_queue_t *q, pc_op_t *op) {
    pc_op_t *prev = NULL;
    for (pc_op_t *o = q->head; o; prev = o, o = o->qnext) {
        if (o != op)
            continue;
        if (prev)
            prev->qnext = o->qnext;
        else
            q->head = o->qnext;
        if (q->tail == o)
            q->tail = prev;
        o->qnext = NULL;
        return 1;
    }
    return 0;
}

void pc_op_queue_complete_all(pc_op_queue_t *q, pulsarc_err_t err, const char *msg) {
    pc_op_t *op;
    while ((op = pc_op_queue_pop(q)) != NULL)
        pc_op_done(op, err, msg);
}

int pc_op_queue_wait(pc_op_queue_t *q, pc_op_t *op, pthread_mutex_t *lock,
                     const struct timespec *dl) {
    pc_op_queue_push(q, op);
    pthread_mutex_unlock(lock);
    int done = pc_op_wait_until(op, dl);
    pthread_mutex_lock(lock);
    if (done || pc_op_queue_remove(q, op))
        return done;
    /* Popped by a giver just as the time ran out: its completion is on the way. */
    pthread_mutex_unlock(lock);
    pc_op_wait_until(op, NULL);
    pthread_mutex_lock(lock);
    return 1;
}
