/* The client's event loop: one thread (or the application's steps), epoll, timers, a cross-thread queue. */
#ifndef PC_LOOP_H
#define PC_LOOP_H
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include "pulsarc.h"

typedef struct pc_loop pc_loop_t;
typedef void (*pc_loop_fn)(void *arg);
typedef void (*pc_io_fn)(void *arg, uint32_t events);

/* A timer lives inside its owner's struct; starting it never allocates. */
typedef struct pc_timer {
    int64_t due_ms;
    size_t heap_idx; /* position in the loop's heap; SIZE_MAX when idle */
    pc_loop_fn fn;
    void *arg;
} pc_timer_t;

typedef struct pc_io {
    int fd;
    uint32_t events;
    pc_io_fn fn;
    void *arg;
} pc_io_t;

int64_t pc_now_ms(void); /* monotonic milliseconds */

/* Any thread. The loop is reference counted: new gives one reference. */
pc_loop_t *pc_loop_new(void);
void pc_loop_ref(pc_loop_t *l);
void pc_loop_unref(pc_loop_t *l);
pulsarc_err_t pc_loop_start(pc_loop_t *l, const char *thread_name);
/*
 * Queues fn(arg) to run on the loop thread. Returns PULSARC_ERR_CLOSED (and
 * does not call fn) once the loop is stopping; the caller then cleans up.
 */
pulsarc_err_t pc_loop_post(pc_loop_t *l, pc_loop_fn fn, void *arg);
/*
 * A post whose node lives in its poster's struct, so posting never
 * allocates. The loop reads the node before it calls fn and never after,
 * so fn may post the same node again or free it. The poster must not post
 * a node that is still queued (its fn has not started): the poster's own
 * state says so, e.g. a flag set before posting that fn clears.
 */
typedef struct pc_post_node {
    struct pc_post_node *next;
    pc_loop_fn fn;
    void *arg;
    int heap; /* the loop's own, freed once run (pc_loop_post) */
} pc_post_node_t;
/* As pc_loop_post, without allocating; CLOSED once the loop is stopping. */
pulsarc_err_t pc_loop_post_node(pc_loop_t *l, pc_post_node_t *node, pc_loop_fn fn, void *arg);
/*
 * As pc_loop_post, for work that may wait up to within_us: a loop asleep
 * until a timer due by then is not woken early for it (the post runs when
 * the loop wakes, before that turn's timers).
 */
pulsarc_err_t pc_loop_post_within(pc_loop_t *l, pc_loop_fn fn, void *arg, int64_t within_us);
/*
 * For work done on another thread (name resolution): hold() promises one
 * post_held() later; the loop will not exit before it arrives, and
 * post_held() is accepted even while stopping, so the result is never lost.
 */
void pc_loop_hold(pc_loop_t *l);
void pc_loop_post_held(pc_loop_t *l, pc_loop_fn fn, void *arg);
/* Runs what is queued, stops the thread and joins it. Not from the loop. */
void pc_loop_stop(pc_loop_t *l);
int pc_loop_in_thread(const pc_loop_t *l);

/* Loop thread only. */
void pc_timer_init(pc_timer_t *t, pc_loop_fn fn, void *arg);
void pc_timer_start(pc_loop_t *l, pc_timer_t *t, int64_t delay_ms);
void pc_timer_stop(pc_loop_t *l, pc_timer_t *t);
int pc_timer_active(const pc_timer_t *t);
pulsarc_err_t pc_io_add(pc_loop_t *l, pc_io_t *io, int fd, uint32_t events, pc_io_fn fn,
                        void *arg);
pulsarc_err_t pc_io_mod(pc_loop_t *l, pc_io_t *io, uint32_t events);
void pc_io_del(pc_loop_t *l, pc_io_t *io);
/*
 * Calls fn(arg) once the loop has finished the current batch of events
 * (at once when called off the loop thread): for freeing objects whose
 * pc_io_t a later event of the same batch may still point to. d lives in
 * the object, so deferring never allocates and cannot fail.
 */
typedef struct pc_defer {
    struct pc_defer *next;
    pc_loop_fn fn;
    void *arg;
} pc_defer_t;
void pc_loop_defer(pc_loop_t *l, pc_defer_t *d, pc_loop_fn fn, void *arg);

/*
 * One turn: waits for events up to max_wait_ms (<0: until the next timer
 * or a post), then runs ready I/O, posts, due timers and deferred calls.
 * Returns how many things it ran. The loop thread's body; threadless
 * loops run it through the step calls below.
 */
int pc_loop_iterate(pc_loop_t *l, int max_wait_ms);

/*
 * Threadless mode (threadingMode=loop): before pc_loop_start, the loop is
 * marked to run without a thread of its own; pc_loop_start then starts
 * nothing, and turns run on the application's thread.
 */
void pc_loop_set_threadless(pc_loop_t *l);
int pc_loop_threadless(const pc_loop_t *l);
/* The epoll fd: readable when a turn has I/O or posts to run. */
int pc_loop_fd(const pc_loop_t *l);
/* Makes the fd readable (work queued outside the loop, the callback queue). */
void pc_loop_wake(pc_loop_t *l);
/*
 * An application step: enter claims the loop for the calling thread
 * (PULSARC_ERR_STATE with *why naming the misuse when it is stepped
 * already, on this thread or another; CLOSED once stopped); then turns,
 * and callbacks run between turn and leave with step_callbacks on.
 */
pulsarc_err_t pc_loop_step_enter(pc_loop_t *l, const char **why);
int pc_loop_step_turn(pc_loop_t *l, int max_wait_ms);
void pc_loop_step_callbacks(pc_loop_t *l, int on);
void pc_loop_step_leave(pc_loop_t *l);
/* -1: no timer; 0: posts wait; else ms until the next timer is due. */
int pc_loop_next_timeout_ms(pc_loop_t *l);
/*
 * pthread_cond_wait / pthread_cond_timedwait (abs on CLOCK_MONOTONIC) for
 * every wait of a synchronous call: with no threadless loop in the
 * process they are exactly those; otherwise, when a threadless loop is not
 * being stepped (or the caller is inside a callback of its own step), the
 * waiting thread runs one turn of it instead of sleeping and returns 0 as a
 * wake-up, so a synchronous call never waits for a loop nobody turns.
 */
int pc_loop_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m);
int pc_loop_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *abs);
#endif
