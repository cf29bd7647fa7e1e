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

void pc_op_done(pc_op_t *op, pulsarc_err_t err, const char *msg) {
    pthread_mutex_lock(&op->lock);
    if (op->done) {
        pthread_mutex_unlock(&op->lock);
        return;
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
    if (q) /* the last touch: the callback may free op */
        pc_cbq_push(q, &op->item);
}

int pc_op_wait_for(pc_op_t *op, int timeout_ms) {
    struct timespec dl;
    if (timeout_ms >= 0)
        pc_deadline(&dl, timeout_ms);
    pthread_mutex_lock(&op->lock);
    int timed_out = 0;
    while (!op->done && !timed_out) {
        if (timeout_ms < 0)
            pc_loop_cond_wait(&op->cond, &op->lock);
        else
            timed_out = pc_loop_cond_timedwait(&op->cond, &op->lock, &dl) != 0;
    }
    int done = op->done;
    pthread_mutex_unlock(&op->lock);
    return done;
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
