/*
 * The client-wide memoryLimitBytes: one byte budget shared by every
 * producer of a client. Application threads reserve a message's payload
 * bytes before handing it to the io thread; whoever completes the message
 * (io thread, or a failing caller) gives them back.
 *
 * A sender that does not fit waits in a line of ops (pc_op_queue_t) under
 * the budget's mutex. Release hands the freed bytes to the waiters at the
 * head of the line, reserving for them before completing their ops, so each
 * waiter is woken once, only when its bytes are its own, and nobody is woken
 * while nobody waits. The line is strict FIFO: a sender that would fit does
 * not pass one already waiting, so a large message is never starved by a
 * stream of small ones (at the cost of small ones idling behind it until
 * enough is free). Threads: any.
 *
 * The counter itself is atomic: while nobody is in line a reservation and
 * a release are one atomic operation each, without the mutex (a send
 * pays no lock here). A sender that goes for the line first counts itself
 * in `entering`, then tries once more; a release lowers `used` first, then
 * looks at `entering`; so either the sender sees the freed bytes or the
 * release sees the sender and takes the mutex to hand them over.
 */
#ifndef PC_MEMLIMIT_H
#define PC_MEMLIMIT_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "client/op.h"
#include "pulsarc.h"

typedef struct pc_memlimit {
    pthread_mutex_t lock;
    int64_t limit;         /* 0: unlimited */
    pc_op_queue_t line;    /* blocked reservations, oldest first (under lock) */
    /* Every send adds to used: the padding keeps it on a cache line of its
     * own, not one that fields beside the budget (the client's callback
     * queue) are written on by other threads. */
    char pad_before[64];
    _Atomic int64_t used;
    atomic_int entering;   /* senders past the fast path: in line or about to be */
    char pad_after[64];
} pc_memlimit_t;

void pc_memlimit_init(pc_memlimit_t *m, int64_t limit);
void pc_memlimit_destroy(pc_memlimit_t *m);
/*
 * Reserves n bytes for owner (an opaque tag, e.g. the producer). When they
 * do not fit, or others already wait: QUEUE_FULL at once if !block, else
 * waits in line up to timeout_ms (<=0: forever) and returns TIMEOUT, or the
 * error pc_memlimit_cancel gave. A single reservation bigger than the whole
 * limit waits only for an empty budget, so one large message never
 * deadlocks (it may overshoot, as Java's does). stopped (may be NULL) is
 * the owner's closing flag, set before it calls pc_memlimit_cancel: read
 * under the budget's lock, so a sender that gets in line just after the
 * cancel still sees it and returns CLOSED instead of waiting.
 */
pulsarc_err_t pc_memlimit_acquire(pc_memlimit_t *m, const void *owner, const atomic_int *stopped,
                                  int64_t n, int block, int timeout_ms);
/* Reserves n bytes only if that needs no wait (nobody in line, they fit);
 * 1 when reserved. Takes no lock, so it may be called under a caller's. */
int pc_memlimit_try(pc_memlimit_t *m, int64_t n);
void pc_memlimit_release(pc_memlimit_t *m, int64_t n);
/* Fails every reservation of owner still waiting with err (its close). */
void pc_memlimit_cancel(pc_memlimit_t *m, const void *owner, pulsarc_err_t err, const char *msg);
int64_t pc_memlimit_used(pc_memlimit_t *m);
/* Reservations waiting in line now (for tests). */
int pc_memlimit_waiting(pc_memlimit_t *m);
#endif
