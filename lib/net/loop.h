/* The client's event loop: one thread, epoll, timers, a cross-thread queue. */
#ifndef PC_LOOP_H
#define PC_LOOP_H
#include <stddef.h>
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
#endif
