/* A one-shot completion an application thread blocks on. */
#ifndef PC_WAITER_H
#define PC_WAITER_H
#include <pthread.h>
#include "pulsarc.h"

typedef struct pc_waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pulsarc_err_t err;
    char errmsg[512];
} pc_waiter_t;

void pc_waiter_init(pc_waiter_t *w);
void pc_waiter_destroy(pc_waiter_t *w);
/* Completes the waiter (first call wins); msg may be NULL. Any thread. */
void pc_waiter_done(pc_waiter_t *w, pulsarc_err_t err, const char *msg);
/* Blocks until done; returns its error and copies its message to errstr. */
pulsarc_err_t pc_waiter_wait(pc_waiter_t *w, char *errstr, size_t errlen);
/* Absolute deadline on CLOCK_MONOTONIC in ms from now (<0: forever). */
void pc_deadline(struct timespec *ts, int timeout_ms);
#endif
