/*
 * The client-wide memoryLimitBytes: one byte budget shared by every
 * producer of a client. Application threads reserve a message's payload
 * bytes before handing it to the io thread; whoever completes the message
 * (io thread, or a failing caller) gives them back. Mutex + condition
 * variable, so a blocked sender wakes as soon as any producer frees room.
 */
#ifndef PC_MEMLIMIT_H
#define PC_MEMLIMIT_H
#include <pthread.h>
#include <stdint.h>

#include "pulsarc.h"

typedef struct pc_memlimit {
    pthread_mutex_t lock;
    pthread_cond_t cond;   /* CLOCK_MONOTONIC, for bounded waits */
    int64_t limit;         /* 0: unlimited */
    int64_t used;
} pc_memlimit_t;

void pc_memlimit_init(pc_memlimit_t *m, int64_t limit);
void pc_memlimit_destroy(pc_memlimit_t *m);
/*
 * Reserves n bytes. When they do not fit: QUEUE_FULL at once if !block,
 * else waits up to timeout_ms (<=0: forever) and returns TIMEOUT. A single
 * reservation bigger than the whole limit waits only for an empty budget,
 * so one large message never deadlocks (it may overshoot, as Java's does).
 */
pulsarc_err_t pc_memlimit_acquire(pc_memlimit_t *m, int64_t n, int block, int timeout_ms);
void pc_memlimit_release(pc_memlimit_t *m, int64_t n);
int64_t pc_memlimit_used(pc_memlimit_t *m);
#endif
