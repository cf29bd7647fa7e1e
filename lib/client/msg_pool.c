/*
 * Design notes
 *  - A producer's messages are built on the application's thread and
 *    destroyed on the callback thread, so with plain malloc every message
 *    crosses threads: the destroying thread's allocator cache is full at
 *    once, and each free then takes the arena lock that the sending
 *    thread's next malloc takes too, on another core. Here each thread
 *    keeps up to CACHE spare structs of its own and moves MOVE of them at a
 *    time to or from one shared stack under one mutex: a receipt of 1,000
 *    messages costs about 1000 / MOVE lock rounds, on either side.
 *  - The shared stack holds at most SHARED spares (about 2 MB); what does
 *    not fit is freed. A thread's own spares go to the shared stack when
 *    it exits (a key destructor); the shared stack lives as long as the
 *    process, in reach of its global head.
 *  - Spares are linked through `next` (the receive queue's link, unused
 *    while spare) and zeroed when handed out, as calloc did.
 *  - Under AddressSanitizer, and under valgrind (asked at run time when its
 *    header was there at build time), the pool is bypassed, so a use of a
 *    destroyed message is still reported.
 *  - fork: the shared stack's lock is held across it, so a child never
 *    starts with it taken by a thread that does not exist there.
 */
#include "client/msg_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "client/message.h"

#if defined(__SANITIZE_ADDRESS__)
#define PC_MSG_POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PC_MSG_POOL_OFF 1
#endif
#endif

#ifdef PC_MSG_POOL_OFF
pulsarc_msg_t *pc_msg_pool_get(void) { return calloc(1, sizeof(pulsarc_msg_t)); }
void pc_msg_pool_put(pulsarc_msg_t *m) { free(m); }
int pc_msg_pool_on(void) { return 0; }
#else

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

enum { CACHE = 64, MOVE = 32, SHARED = 8192 };

typedef struct spares {
    pulsarc_msg_t *head;
    int n;
} spares_t;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static spares_t shared;
static atomic_int shared_n; /* shared.n, read without the lock to skip an empty stack */

static _Thread_local spares_t mine;
static _Thread_local int mine_keyed; /* 1: exit key set; -1: exiting, no pooling */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int bypass; /* set once (exit_once): plain calloc and free */

/* Takes up to n spares off the top of s, as a chain. */
static pulsarc_msg_t *take(spares_t *s, int n, int *got) {
    pulsarc_msg_t *first = s->head, *last = NULL;
    int k = 0;
    for (pulsarc_msg_t *m = first; m && k < n; m = m->next, k++)
        last = m;
    if (last) {
        s->head = last->next;
        last->next = NULL;
    }
    s->n -= k;
    *got = k;
    return k ? first : NULL;
}

/* Takes the n oldest spares off the bottom of s (n < s->n): the newest, still in cache, stay. */
static pulsarc_msg_t *take_oldest(spares_t *s, int n) {
    pulsarc_msg_t *last_kept = s->head;
    for (int k = 1; k < s->n - n; k++)
        last_kept = last_kept->next;
    pulsarc_msg_t *rest = last_kept->next;
    last_kept->next = NULL;
    s->n -= n;
    return rest;
}

/* Puts a chain of n spares on s (last is the chain's end). */
static void give(spares_t *s, pulsarc_msg_t *first, pulsarc_msg_t *last, int n) {
    last->next = s->head;
    s->head = first;
    s->n += n;
}

static void free_chain(pulsarc_msg_t *m) {
    while (m) {
        pulsarc_msg_t *next = m->next;
        free(m);
        m = next;
    }
}

/* Moves a chain of spares to the shared stack; frees what does not fit. */
static void spill_chain(pulsarc_msg_t *first) {
    if (!first)
        return;
    pthread_mutex_lock(&shared_lock);
    int room = SHARED - shared.n, k = 0;
    pulsarc_msg_t *last = NULL, *rest = first;
    while (rest && k < room) {
        last = rest;
        rest = rest->next;
        k++;
    }
    if (last) {
        last->next = NULL;
        give(&shared, first, last, k);
        atomic_store_explicit(&shared_n, shared.n, memory_order_relaxed);
    }
    pthread_mutex_unlock(&shared_lock);
    free_chain(rest);
}

/* Key destructor: an exiting thread's spares go to the shared stack, and
 * what it frees after this (other destructors) is freed at once. */
static void on_thread_exit(void *arg) {
    spares_t *s = arg;
    int got;
    mine_keyed = -1;
    spill_chain(take(s, s->n, &got));
}

static void before_fork(void) { pthread_mutex_lock(&shared_lock); }
static void after_fork(void) { pthread_mutex_unlock(&shared_lock); }

static void make_key(void) {
    bypass = RUNNING_ON_VALGRIND != 0;
    if (bypass || pthread_atfork(before_fork, after_fork, after_fork) ||
        pthread_key_create(&exit_key, on_thread_exit))
        exit_key = (pthread_key_t)-1;
}

/* Once per thread: its spares must not be lost when it exits. */
static int keyed(void) {
    if (mine_keyed < 0)
        return 0;
    if (!mine_keyed) {
        pthread_once(&exit_once, make_key);
        if (exit_key == (pthread_key_t)-1 || pthread_setspecific(exit_key, &mine))
            return 0;
        mine_keyed = 1;
    }
    return 1;
}

static void refill(void) {
    if (atomic_load_explicit(&shared_n, memory_order_relaxed) == 0 || !keyed())
        return;
    pthread_mutex_lock(&shared_lock);
    int got;
    pulsarc_msg_t *chain = take(&shared, MOVE, &got);
    atomic_store_explicit(&shared_n, shared.n, memory_order_relaxed);
    pthread_mutex_unlock(&shared_lock);
    if (chain) {
        pulsarc_msg_t *last = chain;
        while (last->next)
            last = last->next;
        give(&mine, chain, last, got);
    }
}

int pc_msg_pool_on(void) {
    pthread_once(&exit_once, make_key);
    return exit_key != (pthread_key_t)-1;
}

pulsarc_msg_t *pc_msg_pool_get(void) {
    if (!mine.head)
        refill(); /* finds nothing when bypassed: no spare ever enters */
    pulsarc_msg_t *m = mine.head;
    if (!m)
        return calloc(1, sizeof *m);
    mine.head = m->next;
    mine.n--;
    memset(m, 0, sizeof *m);
    return m;
}

void pc_msg_pool_put(pulsarc_msg_t *m) {
    if (!keyed()) {
        free(m);
        return;
    }
    m->next = mine.head;
    mine.head = m;
    if (++mine.n >= CACHE)
        spill_chain(take_oldest(&mine, MOVE));
}
#endif
