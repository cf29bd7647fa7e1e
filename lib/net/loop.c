/*
 * Design notes: the loop owns one thread that runs everything stateful in a
 * client: sockets (epoll), timers (a binary min-heap of timers embedded in
 * their owners) and closures posted from application threads (a mutex-held
 * list, woken through an eventfd that is written only when a post finds
 * the loop asleep; an awake loop checks the list before it sleeps again).
 * Application threads only ever touch the
 * post queue; a post's node is malloc'd (pc_loop_post) or lives in the
 * poster's struct (pc_loop_post_node: a FLOW per half queue of messages
 * must not cost an allocation). Stopping drains the queue first so that every posted closure
 * runs exactly once or is refused at post time — never lost. Objects
 * whose pc_io_t may sit in the current epoll batch are freed through
 * pc_loop_defer, after the batch: a post or an I/O callback that closes a
 * connection must not leave a later event pointing at freed memory.
 *
 * One turn of the loop is pc_loop_iterate(): the loop thread runs it
 * over and over; a threadless loop (threadingMode=loop) has no thread and
 * its turns run inside pulsarc_client_step() on the application's thread,
 * or inside a synchronous call that is waiting while nobody steps (the
 * pc_loop_cond_* waits below). The step lock makes those turns one at a
 * time; the thread-local current_loop says which loop the calling thread
 * is turning, so pc_loop_in_thread() holds in both modes.
 */
#include "net/loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct pc_loop {
    atomic_int refs;
    int epfd;
    int evfd;
    pthread_t thread;
    int started;
    pthread_mutex_t lock; /* guards the post queue and stopping */
    pc_post_node_t *head, *tail; /* pc_loop_post's nodes (heap) and posters' own */
    int stopping;
    int holds; /* promised post_held() calls still to come */
    int sleeping; /* the thread is in (or entering) epoll_wait with an empty queue */
    int wake_sent;     /* the eventfd was written since the loop last went to sleep */
    int64_t wakes_at_us; /* when a sleeping loop wakes on its own (INT64_MAX: never) */
    pc_timer_t **heap;
    size_t nheap, capheap;
    pc_defer_t *deferred; /* loop thread only: runs after the current batch */
    /* threadless mode: turns run on whichever thread holds step_lock */
    int threadless;
    pthread_mutex_t step_lock;  /* held for the length of each turn */
    pthread_mutex_t own_lock;   /* guards the three fields below */
    pthread_cond_t step_left;   /* signalled when an application step leaves */
    int app_stepping;           /* a pulsarc_client_step is running */
    pthread_t app_stepper;      /* its thread */
    int in_callbacks;           /* that step is running callbacks, not a turn */
    atomic_int stopped;         /* threadless: pc_loop_stop has finished */
    struct pc_loop *next_threadless; /* the process's list of threadless loops */
};

static __thread const pc_loop_t *current_loop;
/* The threadless loop whose step is running callbacks on this thread. */
static __thread pc_loop_t *callbacks_of;

int64_t pc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- timers: min-heap by due time ---- */

static void heap_set(pc_loop_t *l, size_t i, pc_timer_t *t) {
    l->heap[i] = t;
    t->heap_idx = i;
}

static void heap_up(pc_loop_t *l, size_t i) {
    pc_timer_t *t = l->heap[i];
    while (i > 0 && l->heap[(i - 1) / 2]->due_ms > t->due_ms) {
        heap_set(l, i, l->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(l, i, t);
}

static void heap_down(pc_loop_t *l, size_t i) {
    pc_timer_t *t = l->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->nheap)
            break;
        if (c + 1 < l->nheap && l->heap[c + 1]->due_ms < l->heap[c]->due_ms)
            c++;
        if (l->heap[c]->due_ms >= t->due_ms)
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

void pc_timer_init(pc_timer_t *t, pc_loop_fn fn, void *arg) {
    t->due_ms = 0;
    t->heap_idx = SIZE_MAX;
    t->fn = fn;
    t->arg = arg;
}

int pc_timer_active(const pc_timer_t *t) { return t->heap_idx != SIZE_MAX; }

void pc_timer_stop(pc_loop_t *l, pc_timer_t *t) {
    if (!pc_timer_active(t))
        return;
    size_t i = t->heap_idx;
    t->heap_idx = SIZE_MAX;
    pc_timer_t *last = l->heap[--l->nheap];
    if (i == l->nheap)
        return;
    heap_set(l, i, last);
    heap_up(l, i);
    heap_down(l, last->heap_idx);
}

void pc_timer_start(pc_loop_t *l, pc_timer_t *t, int64_t delay_ms) {
    pc_timer_stop(l, t);
    if (l->nheap == l->capheap) {
        size_t cap = l->capheap ? l->capheap * 2 : 64;
        pc_timer_t **h = realloc(l->heap, cap * sizeof *h);
        if (!h)
            abort(); /* a timer that silently never fires would hang callers */
        l->heap = h;
        l->capheap = cap;
    }
    t->due_ms = pc_now_ms() + (delay_ms > 0 ? delay_ms : 0);
    heap_set(l, l->nheap++, t);
    heap_up(l, t->heap_idx);
}

static int run_due_timers(pc_loop_t *l) {
    int64_t now = pc_now_ms();
    int n = 0;
    while (l->nheap && l->heap[0]->due_ms <= now) {
        pc_timer_t *t = l->heap[0];
        pc_timer_stop(l, t);
        t->fn(t->arg);
        n++;
    }
    return n;
}

static int next_timeout(const pc_loop_t *l) {
    if (!l->nheap)
        return -1;
    int64_t d = l->heap[0]->due_ms - pc_now_ms();
    return d < 0 ? 0 : (d > 60000 ? 60000 : (int)d);
}

/* ---- fds ---- */

pulsarc_err_t pc_io_add(pc_loop_t *l, pc_io_t *io, int fd, uint32_t events, pc_io_fn fn,
                        void *arg) {
    io->fd = fd;
    io->events = events;
    io->fn = fn;
    io->arg = arg;
    struct epoll_event ev = {.events = events, .data.ptr = io};
    return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) ? PULSARC_ERR_IO : PULSARC_OK;
}

pulsarc_err_t pc_io_mod(pc_loop_t *l, pc_io_t *io, uint32_t events) {
    if (io->events == events)
        return PULSARC_OK;
    io->events = events;
    struct epoll_event ev = {.events = events, .data.ptr = io};
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, io->fd, &ev) ? PULSARC_ERR_IO : PULSARC_OK;
}

void pc_io_del(pc_loop_t *l, pc_io_t *io) {
    if (io->fd >= 0)
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, io->fd, NULL);
    io->fd = -1;
}

/* ---- cross-thread posts ---- */

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Under lock: whether a post must write the eventfd. Only a sleeping loop
 * needs it, and only once per sleep. A post that may wait within_us (>= 0)
 * lets the loop sleep on when it wakes by then anyway: at high send rates
 * that saves a thread wake-up per message. A threadless loop is asleep
 * whenever the application is not stepping, and its epoll fd must stay
 * readable while posts wait.
 */
static int needs_wake(pc_loop_t *l, int64_t within_us) {
    if (l->threadless)
        return l->head == NULL;
    if (!l->sleeping || l->wake_sent)
        return 0;
    return within_us < 0 || l->wakes_at_us > now_us() + within_us;
}

/* Queues p, whose fields are set; CLOSED (p not linked) once stopping. */
static pulsarc_err_t enqueue(pc_loop_t *l, pc_post_node_t *p, int held, int64_t within_us) {
    pthread_mutex_lock(&l->lock);
    if (l->stopping && !held) {
        pthread_mutex_unlock(&l->lock);
        return PULSARC_ERR_CLOSED;
    }
    p->next = NULL;
    if (held)
        l->holds--;
    /* An awake loop looks at the queue before it sleeps again. */
    int wake = needs_wake(l, within_us);
    l->wake_sent |= wake;
    if (l->tail)
        l->tail->next = p;
    else
        l->head = p;
    l->tail = p;
    pthread_mutex_unlock(&l->lock);
    if (wake) {
        uint64_t one = 1;
        ssize_t r = write(l->evfd, &one, sizeof one);
        (void)r; /* a full counter still wakes the loop */
    }
    return PULSARC_OK;
}

/* A node of the loop's own for pc_loop_post and post_held; NULL on OOM. */
static pc_post_node_t *heap_node(pc_loop_fn fn, void *arg) {
    pc_post_node_t *p = malloc(sizeof *p);
    if (p) {
        p->fn = fn;
        p->arg = arg;
        p->heap = 1;
    }
    return p;
}

pulsarc_err_t pc_loop_post(pc_loop_t *l, pc_loop_fn fn, void *arg) {
    pc_post_node_t *p = heap_node(fn, arg);
    if (!p)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = enqueue(l, p, 0, -1);
    if (err)
        free(p);
    return err;
}

pulsarc_err_t pc_loop_post_within(pc_loop_t *l, pc_loop_fn fn, void *arg, int64_t within_us) {
    pc_post_node_t *p = heap_node(fn, arg);
    if (!p)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = enqueue(l, p, 0, within_us < 0 ? 0 : within_us);
    if (err)
        free(p);
    return err;
}

pulsarc_err_t pc_loop_post_node(pc_loop_t *l, pc_post_node_t *node, pc_loop_fn fn, void *arg) {
    node->fn = fn;
    node->arg = arg;
    node->heap = 0;
    return enqueue(l, node, 0, -1);
}

void pc_loop_hold(pc_loop_t *l) {
    pthread_mutex_lock(&l->lock);
    l->holds++;
    pthread_mutex_unlock(&l->lock);
}

void pc_loop_post_held(pc_loop_t *l, pc_loop_fn fn, void *arg) {
    pc_post_node_t *p;
    while (!(p = heap_node(fn, arg)))
        usleep(1000); /* only on OOM: the promised result must arrive */
    enqueue(l, p, 1, -1); /* a held post is accepted even while stopping */
}

static void drain_eventfd(pc_loop_t *l) {
    uint64_t n;
    ssize_t r = read(l->evfd, &n, sizeof n);
    (void)r;
}

/* Runs everything queued; returns how many. */
static int run_posts(pc_loop_t *l) {
    pthread_mutex_lock(&l->lock);
    pc_post_node_t *p = l->head;
    l->head = l->tail = NULL;
    pthread_mutex_unlock(&l->lock);
    int n = 0;
    while (p) {
        /* Read all of a node before its fn: a poster's node may be posted
         * again or freed by it. */
        pc_post_node_t *next = p->next;
        pc_loop_fn fn = p->fn;
        void *arg = p->arg;
        if (p->heap)
            free(p);
        fn(arg);
        p = next;
        n++;
    }
    return n;
}

void pc_loop_defer(pc_loop_t *l, pc_defer_t *d, pc_loop_fn fn, void *arg) {
    if (!pc_loop_in_thread(l)) { /* no batch of this loop is in flight here */
        fn(arg);
        return;
    }
    d->fn = fn;
    d->arg = arg;
    d->next = l->deferred;
    l->deferred = d;
}

static void run_deferred(pc_loop_t *l) {
    while (l->deferred) { /* a deferred call may defer more; fn may free d */
        pc_defer_t *d = l->deferred;
        l->deferred = d->next;
        d->fn(d->arg);
    }
}

/*
 * Marks the loop asleep unless posts are waiting; returns the epoll timeout:
 * 0 (just poll the sockets) when there is queued work, so posts made while
 * the loop was awake need no eventfd write. Records when the sleep ends on
 * its own (a whole millisecond after now_us at most early, never late by
 * this count), which pc_loop_post_within compares against.
 */
static int prepare_wait(pc_loop_t *l, int max_wait_ms) {
    int wait = next_timeout(l);
    if (max_wait_ms >= 0 && (wait < 0 || wait > max_wait_ms))
        wait = max_wait_ms;
    int64_t wakes_at = wait < 0 ? INT64_MAX : now_us() + (int64_t)wait * 1000;
    pthread_mutex_lock(&l->lock);
    int busy = l->head != NULL;
    l->sleeping = !busy;
    l->wake_sent = 0;
    l->wakes_at_us = wakes_at;
    pthread_mutex_unlock(&l->lock);
    return busy ? 0 : wait;
}

/* After a turn: 1 once stopping and nothing more can arrive. */
static int should_exit(pc_loop_t *l) {
    pthread_mutex_lock(&l->lock);
    int done = l->stopping && l->head == NULL && l->holds == 0;
    pthread_mutex_unlock(&l->lock);
    return done;
}

int pc_loop_iterate(pc_loop_t *l, int max_wait_ms) {
    struct epoll_event evs[64];
    int wait = prepare_wait(l, max_wait_ms);
    int n = epoll_wait(l->epfd, evs, 64, wait);
    pthread_mutex_lock(&l->lock);
    l->sleeping = 0;
    pthread_mutex_unlock(&l->lock);
    int work = 0;
    for (int i = 0; i < n; i++) {
        if (evs[i].data.ptr == NULL) {
            drain_eventfd(l);
            work += run_posts(l);
            continue;
        }
        pc_io_t *io = evs[i].data.ptr;
        if (io->fd >= 0) {
            io->fn(io->arg, evs[i].events);
            work++;
        }
    }
    work += run_posts(l); /* what was posted while awake, without an eventfd */
    work += run_due_timers(l);
    run_deferred(l);
    return work;
}

static void *loop_main(void *arg) {
    pc_loop_t *l = arg;
    current_loop = l;
    do
        pc_loop_iterate(l, -1);
    while (!should_exit(l));
    return NULL;
}

int pc_loop_in_thread(const pc_loop_t *l) { return current_loop == l; }

pc_loop_t *pc_loop_new(void) {
    pc_loop_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    atomic_init(&l->refs, 1);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_mutex_init(&l->lock, NULL);
    pthread_mutex_init(&l->step_lock, NULL);
    pthread_mutex_init(&l->own_lock, NULL);
    pthread_cond_init(&l->step_left, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (l->epfd < 0 || l->evfd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &ev)) {
        pc_loop_unref(l);
        return NULL;
    }
    return l;
}

pulsarc_err_t pc_loop_start(pc_loop_t *l, const char *thread_name) {
    if (l->threadless) { /* the application's steps are its thread */
        l->started = 1;
        return PULSARC_OK;
    }
    if (pthread_create(&l->thread, NULL, loop_main, l))
        return PULSARC_ERR_NOMEM;
    l->started = 1;
    if (thread_name)
        pthread_setname_np(l->thread, thread_name);
    return PULSARC_OK;
}

/* ---- threadless mode: turns on the application's thread ---- */

static pthread_mutex_t threadless_lock = PTHREAD_MUTEX_INITIALIZER;
static pc_loop_t *threadless_loops;     /* guarded by threadless_lock */
static atomic_int threadless_count;     /* lets threaded-only processes skip the list */

void pc_loop_set_threadless(pc_loop_t *l) {
    l->threadless = 1;
    pthread_mutex_lock(&threadless_lock);
    l->next_threadless = threadless_loops;
    threadless_loops = l;
    atomic_fetch_add(&threadless_count, 1);
    pthread_mutex_unlock(&threadless_lock);
}

static void unlist_threadless(pc_loop_t *l) {
    pthread_mutex_lock(&threadless_lock);
    for (pc_loop_t **pp = &threadless_loops; *pp; pp = &(*pp)->next_threadless) {
        if (*pp == l) {
            *pp = l->next_threadless;
            atomic_fetch_sub(&threadless_count, 1);
            break;
        }
    }
    pthread_mutex_unlock(&threadless_lock);
}

int pc_loop_threadless(const pc_loop_t *l) { return l->threadless; }

int pc_loop_fd(const pc_loop_t *l) { return l->epfd; }

void pc_loop_wake(pc_loop_t *l) {
    uint64_t one = 1;
    ssize_t r = write(l->evfd, &one, sizeof one);
    (void)r; /* a full counter is still readable */
}

/* One turn with step_lock held by the caller; current_loop set around it. */
static int turn_locked(pc_loop_t *l, int max_wait_ms) {
    const pc_loop_t *prev = current_loop;
    current_loop = l;
    int n = pc_loop_iterate(l, max_wait_ms);
    current_loop = prev;
    return n;
}

pulsarc_err_t pc_loop_step_enter(pc_loop_t *l, const char **why) {
    pthread_mutex_lock(&l->own_lock);
    pulsarc_err_t err = PULSARC_OK;
    if (l->app_stepping && pthread_equal(l->app_stepper, pthread_self())) {
        err = PULSARC_ERR_STATE;
        *why = "pulsarc_client_step called from inside a callback of the same client's step; "
               "return from the callback and let the running step go on";
    } else if (l->app_stepping) {
        err = PULSARC_ERR_STATE;
        *why = "pulsarc_client_step called from two threads at once; one thread steps a client";
    } else if (atomic_load(&l->stopped)) {
        err = PULSARC_ERR_CLOSED;
        *why = "client is closed";
    } else {
        l->app_stepping = 1;
        l->app_stepper = pthread_self();
        l->in_callbacks = 0;
    }
    pthread_mutex_unlock(&l->own_lock);
    return err;
}

void pc_loop_step_leave(pc_loop_t *l) {
    pthread_mutex_lock(&l->own_lock);
    l->app_stepping = 0;
    l->in_callbacks = 0;
    pthread_cond_broadcast(&l->step_left);
    pthread_mutex_unlock(&l->own_lock);
}

static void set_in_callbacks(pc_loop_t *l, int on) {
    pthread_mutex_lock(&l->own_lock);
    l->in_callbacks = on;
    pthread_mutex_unlock(&l->own_lock);
}

int pc_loop_step_turn(pc_loop_t *l, int max_wait_ms) {
    pthread_mutex_lock(&l->step_lock); /* a sync call's turn ends within its slice */
    int n = atomic_load(&l->stopped) ? 0 : turn_locked(l, max_wait_ms);
    pthread_mutex_unlock(&l->step_lock);
    return n;
}

void pc_loop_step_callbacks(pc_loop_t *l, int on) {
    set_in_callbacks(l, on);
    callbacks_of = on ? l : NULL;
}

int pc_loop_next_timeout_ms(pc_loop_t *l) {
    int mine = pc_loop_in_thread(l); /* inside a turn: the caller holds it */
    if (!mine && pthread_mutex_trylock(&l->step_lock) != 0)
        return 0; /* a turn is running on another thread: never block here */
    pthread_mutex_lock(&l->lock);
    int busy = l->head != NULL;
    pthread_mutex_unlock(&l->lock);
    int64_t d = -1;
    if (busy)
        d = 0;
    else if (l->nheap) {
        d = l->heap[0]->due_ms - pc_now_ms();
        d = d < 0 ? 0 : d;
    }
    if (!mine)
        pthread_mutex_unlock(&l->step_lock);
    return d > INT32_MAX ? INT32_MAX : (int)d;
}

static void stop_threadless(pc_loop_t *l) {
    pthread_mutex_lock(&l->lock);
    l->stopping = 1;
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_lock(&l->step_lock);
    int done = 0;
    while (!done) { /* resolutions ran inline: holds are never left open */
        turn_locked(l, 0);
        done = should_exit(l);
    }
    atomic_store(&l->stopped, 1);
    pthread_mutex_unlock(&l->step_lock);
    /* A step running on another thread (its callbacks) still uses what the
     * client frees after this: wait for it to leave; later steps are
     * refused (stopped). Not called from inside a step's callback. */
    pthread_mutex_lock(&l->own_lock);
    while (l->app_stepping)
        pthread_cond_wait(&l->step_left, &l->own_lock);
    pthread_mutex_unlock(&l->own_lock);
    l->started = 0;
}

/*
 * A threadless loop a waiting thread may turn, with step_lock taken, or
 * NULL (then it waits on its condition variable as in threaded mode:
 * another thread is inside a turn and will complete the work). A loop
 * nobody steps, or whose step is running callbacks, is free to turn.
 */
static pc_loop_t *loop_to_turn(void) {
    if (current_loop)
        return NULL; /* inside a turn (the crypto key reader): never turn again there */
    pthread_mutex_lock(&threadless_lock);
    pc_loop_t *found = NULL;
    for (pc_loop_t *l = threadless_loops; l && !found; l = l->next_threadless) {
        if (pthread_mutex_trylock(&l->step_lock) != 0)
            continue;
        /* A step busy in a long callback is not turning the loop: a
         * waiting call may, between its turns. */
        pthread_mutex_lock(&l->own_lock);
        int turning = l->app_stepping && !l->in_callbacks;
        pthread_mutex_unlock(&l->own_lock);
        if (!atomic_load(&l->stopped) && !turning)
            found = l;
        else
            pthread_mutex_unlock(&l->step_lock);
    }
    if (found && found->next_threadless) { /* rotate: several clients all get turns */
        for (pc_loop_t **pp = &threadless_loops; *pp; pp = &(*pp)->next_threadless) {
            if (*pp == found) {
                *pp = found->next_threadless;
                break;
            }
        }
        pc_loop_t **tail = &threadless_loops;
        while (*tail)
            tail = &(*tail)->next_threadless;
        *tail = found;
        found->next_threadless = NULL;
    }
    pthread_mutex_unlock(&threadless_lock);
    return found;
}

static int64_t ms_until(const struct timespec *abs) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(abs->tv_sec - now.tv_sec) * 1000 + (abs->tv_nsec - now.tv_nsec) / 1000000;
}

/* The longest a waiting call turns a loop at a time, so that a thread that
 * starts stepping meanwhile waits at most this long for the step lock. */
#define WAIT_TURN_MS 50

/*
 * Another thread is turning the loop: sleep on cv, but look again after
 * WAIT_TURN_MS, since that thread may go on to a long callback and leave
 * the loop for us to turn. Returns ETIMEDOUT only at the caller's abs.
 */
static int wait_a_while(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *abs) {
    struct timespec soon;
    clock_gettime(CLOCK_MONOTONIC, &soon);
    soon.tv_nsec += WAIT_TURN_MS * 1000000L;
    if (soon.tv_nsec >= 1000000000L) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000L;
    }
    int caller_first = abs && (abs->tv_sec < soon.tv_sec ||
                               (abs->tv_sec == soon.tv_sec && abs->tv_nsec < soon.tv_nsec));
    int rc = pthread_cond_timedwait(cv, m, caller_first ? abs : &soon);
    return rc == ETIMEDOUT && !caller_first ? 0 : rc;
}

/*
 * Inside a callback of our own step: one more turn between the step's
 * turns. m is let go before step_lock is taken (a turn takes the locks
 * that waits like this one hold: an op's, a queue's).
 */
static int turn_nested(pc_loop_t *l, pthread_cond_t *cv, pthread_mutex_t *m,
                       const struct timespec *abs) {
    int64_t left = abs ? ms_until(abs) : WAIT_TURN_MS;
    if (left <= 0)
        return ETIMEDOUT;
    if (atomic_load(&l->stopped))
        return wait_a_while(cv, m, abs); /* close completes what is waited for */
    pthread_mutex_unlock(m);
    pthread_mutex_lock(&l->step_lock);
    if (!atomic_load(&l->stopped))
        turn_locked(l, left < WAIT_TURN_MS ? (int)left : WAIT_TURN_MS);
    pthread_mutex_unlock(&l->step_lock);
    pthread_mutex_lock(m);
    return 0;
}

int pc_loop_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *abs) {
    if (atomic_load(&threadless_count) == 0)
        return abs ? pthread_cond_timedwait(cv, m, abs) : pthread_cond_wait(cv, m);
    if (callbacks_of)
        return turn_nested(callbacks_of, cv, m, abs);
    pc_loop_t *l = loop_to_turn(); /* only try-locks: m may stay held */
    if (!l)
        return wait_a_while(cv, m, abs);
    int64_t left = abs ? ms_until(abs) : WAIT_TURN_MS;
    if (left <= 0) {
        pthread_mutex_unlock(&l->step_lock);
        return ETIMEDOUT;
    }
    pthread_mutex_unlock(m); /* the turn may complete what m guards */
    turn_locked(l, left < WAIT_TURN_MS ? (int)left : WAIT_TURN_MS);
    pthread_mutex_unlock(&l->step_lock);
    pthread_mutex_lock(m);
    return 0; /* a wake-up: callers check their condition again */
}

int pc_loop_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m) {
    return pc_loop_cond_timedwait(cv, m, NULL);
}

static void noop(void *arg) { (void)arg; }

void pc_loop_stop(pc_loop_t *l) {
    if (!l->started)
        return;
    if (l->threadless) {
        stop_threadless(l);
        return;
    }
    /* The no-op post guarantees a wake-up even if the queue was empty. */
    pc_loop_post(l, noop, NULL);
    pthread_mutex_lock(&l->lock);
    l->stopping = 1;
    pthread_mutex_unlock(&l->lock);
    uint64_t one = 1;
    ssize_t r = write(l->evfd, &one, sizeof one);
    (void)r;
    pthread_join(l->thread, NULL);
    l->started = 0;
}

void pc_loop_ref(pc_loop_t *l) { atomic_fetch_add(&l->refs, 1); }

void pc_loop_unref(pc_loop_t *l) {
    if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    pc_loop_stop(l);
    if (l->threadless)
        unlist_threadless(l);
    for (pc_post_node_t *p = l->head; p;) { /* only when never started */
        pc_post_node_t *next = p->next;
        if (p->heap)
            free(p);
        p = next;
    }
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->evfd >= 0)
        close(l->evfd);
    pthread_mutex_destroy(&l->lock);
    pthread_mutex_destroy(&l->step_lock);
    pthread_mutex_destroy(&l->own_lock);
    pthread_cond_destroy(&l->step_left);
    free(l->heap);
    free(l);
}
