/*
 * Design notes: the bridge from the loop thread back to an application
 * thread blocked in a synchronous call. The loop completes it exactly once;
 * the waiter lives on the blocked caller's stack, which is safe because
 * the caller cannot return before done is set under the lock.
 */
#include "client/waiter.h"

#include <stdio.h>
#include <time.h>

void pc_waiter_init(pc_waiter_t *w) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, &a);
    pthread_condattr_destroy(&a);
    w->done = 0;
    w->err = PULSARC_OK;
    w->errmsg[0] = '\0';
}

void pc_waiter_destroy(pc_waiter_t *w) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
}

void pc_waiter_done(pc_waiter_t *w, pulsarc_err_t err, const char *msg) {
    pthread_mutex_lock(&w->lock);
    if (!w->done) {
        w->done = 1;
        w->err = err;
        snprintf(w->errmsg, sizeof w->errmsg, "%s", msg ? msg : "");
        pthread_cond_broadcast(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
}

pulsarc_err_t pc_waiter_wait(pc_waiter_t *w, char *errstr, size_t errlen) {
    pthread_mutex_lock(&w->lock);
    while (!w->done)
        pthread_cond_wait(&w->cond, &w->lock);
    pulsarc_err_t err = w->err;
    if (errstr && errlen)
        snprintf(errstr, errlen, "%s", w->errmsg[0] ? w->errmsg : pulsarc_strerror(err));
    pthread_mutex_unlock(&w->lock);
    return err;
}

void pc_deadline(struct timespec *ts, int timeout_ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += timeout_ms / 1000;
    ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}
