/*
 * Design notes: results for the application (send outcomes, later message
 * listeners) are queued here by the loop thread and run either by the
 * client's callback thread or by pulsarc_client_poll() on the
 * application's own thread, or, with threadingMode=loop, by
 * pulsarc_client_step() (a push into the empty queue then makes the
 * client's fd readable through the wake hook). Items run without any library lock held, so a
 * callback may call any pulsarc function; close/destroy notice
 * pc_in_callback() and only mark, never wait on themselves.
 *
 * Shutdown (client close) stops the queue. Once its drain finds it empty
 * the queue refuses every push, deciding under its lock: an item accepted
 * is one that will run. A caller racing the close learns of it from the
 * push itself (an op's completion reports it, op.h), not from a flag read
 * earlier under another lock, which let an item in after the callback
 * thread had gone (its callback lost, its close waiting for it forever).
 *
 * The queue's lock lives on until pc_cbq_free (client destroy), because
 * the application may still ask pulsarc_client_next_timeout_ms, step or
 * poll between the two: its own loop learns of the close only from the
 * next step's CLOSED.
 */
#include "client/cbq.h"

#include <time.h>

static __thread int in_callback;
/* Callbacks run beyond one per queue item, by items that carry several
 * (counted by pc_cbq_poll, which reports callbacks, not queue items). */
static __thread int extra_runs;
static __thread int counting; /* inside pc_cbq_poll: only there is it read */

int pc_in_callback(void) { return in_callback; }

void pc_cbq_count_runs(int n) {
    if (counting) /* the callback thread never reads it: it would only grow */
        extra_runs += n;
}

static void run_items(pc_cb_item_t *it) {
    in_callback++;
    while (it) {
        pc_cb_item_t *next = it->next;
        it->run(it);
        it = next;
    }
    in_callback--;
}

/* Takes the whole list; lock held. */
static pc_cb_item_t *take_all(pc_cbq_t *q) {
    pc_cb_item_t *it = q->head;
    q->head = q->tail = NULL;
    return it;
}

static void *cbq_main(void *arg) {
    pc_cbq_t *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->cond, &q->lock);
        if (!q->head && q->stopping) {
            q->refusing = 1; /* in the same hold as the last look: nothing slips in between */
            break;
        }
        pc_cb_item_t *it = take_all(q);
        q->running++;
        pthread_mutex_unlock(&q->lock);
        run_items(it);
        pthread_mutex_lock(&q->lock);
        q->running--;
        pthread_cond_broadcast(&q->cond);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int pc_cbq_init(pc_cbq_t *q, int own_thread) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, &a);
    pthread_condattr_destroy(&a);
    q->inited = 1;
    q->head = q->tail = NULL;
    q->stopping = 0;
    q->refusing = 0;
    q->running = 0;
    q->own_thread = own_thread;
    q->wake = NULL;
    q->wake_arg = NULL;
    if (own_thread && pthread_create(&q->thread, NULL, cbq_main, q))
        return -1;
    if (own_thread)
        pthread_setname_np(q->thread, "pulsarc-cb");
    return 0;
}

int pc_cbq_push_chain(pc_cbq_t *q, pc_cb_item_t *first, pc_cb_item_t *last) {
    last->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->refusing) { /* nothing would run it: the pusher keeps it */
        pthread_mutex_unlock(&q->lock);
        return -1;
    }
    int was_empty = q->head == NULL;
    if (q->tail)
        q->tail->next = first;
    else
        q->head = first;
    q->tail = last;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    if (was_empty && q->wake)
        q->wake(q->wake_arg);
    return 0;
}

int pc_cbq_pending(pc_cbq_t *q) {
    pthread_mutex_lock(&q->lock);
    int n = q->head != NULL;
    pthread_mutex_unlock(&q->lock);
    return n;
}

int pc_cbq_push(pc_cbq_t *q, pc_cb_item_t *it) { return pc_cbq_push_chain(q, it, it); }

int pc_cbq_poll(pc_cbq_t *q, int timeout_ms) {
    struct timespec dl;
    if (timeout_ms > 0)
        pc_deadline(&dl, timeout_ms);
    pthread_mutex_lock(&q->lock);
    while (!q->head && timeout_ms != 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&q->cond, &q->lock);
        else if (pthread_cond_timedwait(&q->cond, &q->lock, &dl))
            break;
    }
    pc_cb_item_t *it = take_all(q);
    pthread_mutex_unlock(&q->lock);
    int n = 0;
    for (pc_cb_item_t *p = it; p; p = p->next)
        n++;
    int outer = extra_runs; /* a poll from inside a callback counts its own */
    extra_runs = 0;
    counting++;
    run_items(it);
    counting--;
    n += extra_runs;
    extra_runs = outer;
    return n;
}

/* Poll mode's drain: runs what is queued, also what those callbacks push,
 * and starts refusing in the same hold of the lock that found it empty. */
static void drain_here(pc_cbq_t *q) {
    for (;;) {
        pthread_mutex_lock(&q->lock);
        pc_cb_item_t *it = take_all(q);
        if (!it)
            q->refusing = 1;
        pthread_mutex_unlock(&q->lock);
        if (!it)
            return;
        run_items(it);
    }
}

void pc_cbq_shutdown(pc_cbq_t *q) {
    pthread_mutex_lock(&q->lock);
    int first = !q->stopping;
    q->stopping = 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    if (!first)
        return; /* the thread is joined once */
    if (q->own_thread)
        pthread_join(q->thread, NULL);
    else
        drain_here(q); /* poll mode: outcomes still owed run here */
}

void pc_cbq_free(pc_cbq_t *q) {
    if (!q->inited)
        return;
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->cond);
    q->inited = 0;
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
