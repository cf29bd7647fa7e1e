/* The queue of callbacks the application's side runs (never the loop). */
#ifndef PC_CBQ_H
#define PC_CBQ_H
#include <pthread.h>

typedef struct pc_cb_item {
    struct pc_cb_item *next;
    void (*run)(struct pc_cb_item *it); /* runs the callback and frees it */
} pc_cb_item_t;

typedef struct pc_cbq {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pc_cb_item_t *head, *tail;
    int own_thread;  /* "thread" mode: a callback thread drains it */
    int stopping;    /* pc_cbq_shutdown began: the drain runs what is queued */
    int refusing;    /* the drain found it empty: pushes are refused */
    pthread_t thread;
    int running;     /* callbacks being run right now */
    int inited;      /* lock and cond exist: pc_cbq_init ran, pc_cbq_free not yet */
    /* threadingMode=loop: called (no lock held) when a push finds the queue
     * empty, so the client's fd turns readable; NULL otherwise */
    void (*wake)(void *arg);
    void *wake_arg;
} pc_cbq_t;

int pc_cbq_init(pc_cbq_t *q, int own_thread);
/* Any thread. 0 when queued (it will run); -1 when refused because
 * pc_cbq_shutdown's drain is over (nothing would run it): the item stays
 * the caller's. */
int pc_cbq_push(pc_cbq_t *q, pc_cb_item_t *it);
/* Any thread: appends first..last (already linked by next) with one
 * wake-up; 0, or -1 as pc_cbq_push. */
int pc_cbq_push_chain(pc_cbq_t *q, pc_cb_item_t *first, pc_cb_item_t *last);
/* Runs queued items on the caller's thread, waiting up to timeout_ms for one. */
int pc_cbq_poll(pc_cbq_t *q, int timeout_ms);
/* 1 if callbacks are queued. Any thread. */
int pc_cbq_pending(pc_cbq_t *q);
/* Refuses pushes from now on, runs what was queued, stops the thread. Not
 * from a callback. The queue stays usable (pending, poll: nothing to run)
 * until pc_cbq_free. */
void pc_cbq_shutdown(pc_cbq_t *q);
/* Frees the lock and condition; a queue never initialised (zeroed) is fine. */
void pc_cbq_free(pc_cbq_t *q);
/* Called by an item's run that ran n callbacks beyond its own one, so
 * that pc_cbq_poll reports callbacks run, not queue items. */
void pc_cbq_count_runs(int n);
/* 1 while the calling thread is inside a callback run by any queue. */
int pc_in_callback(void);
/* Absolute deadline on CLOCK_MONOTONIC in ms from now (<0: forever), for timed waits. */
struct timespec;
void pc_deadline(struct timespec *ts, int timeout_ms);
#endif
