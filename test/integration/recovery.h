/*
 * Recovery figures for the restart, cut and unload scenarios: for one
 * producer or consumer, the time from the moment the broker is reachable
 * again (the harness knows it: start.sh returned, the proxy cut or resumed,
 * the unload call returned) to that handle's first success after it.
 *
 *  - A producer's success is a send receipt: any send acknowledged after
 *    that moment, including one queued before the outage.
 *  - A consumer's success is receiving a message produced after that
 *    moment (the caller passes the production count at the mark): a message
 *    prefetched before the outage proves nothing about the new connection.
 *
 * The figures are printed (median and max per scenario), never asserted as
 * timings; a handle that has not recovered PCT_RECOVERY_HANG_MS after the
 * broker came back is a hang, and the caller fails the test on it.
 *
 * A mark may be set again before the handle recovered from the previous
 * one (cuts in quick succession): the earlier one then yields no figure
 * and is counted as superseded. pct_recovery_wait blocks until the figure
 * of the current mark is in (the restart scenarios wait after each one;
 * the cut scenarios only after the last).
 *
 * Threads: pct_recovery_ok / pct_recovery_recv run on the client's callback
 * or the consumer thread and record the figure; marking and waiting run on
 * the test's main thread; the shared fields are atomics, and the figures
 * are printed after those threads have been joined.
 */
#ifndef PCT_RECOVERY_H
#define PCT_RECOVERY_H
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PCT_RECOVERY_MAX 256
#define PCT_RECOVERY_HANG_MS 60000

typedef struct pct_recovery {
    const char *what;          /* "producer" or "consumer" */
    _Atomic int64_t back_at;   /* monotonic ms of the mark; 0 while not armed */
    _Atomic int64_t first_ok;  /* monotonic ms of the first success after it; 0: none yet */
    _Atomic long from_index;   /* consumer: the first message index produced after the mark */
    int64_t samples[PCT_RECOVERY_MAX];
    _Atomic int n;             /* figures recorded */
    int marks;                 /* main thread */
} pct_recovery_t;

static inline int64_t pct_recovery_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void pct_recovery_init(pct_recovery_t *r, const char *what) {
    r->what = what;
    atomic_store(&r->back_at, 0);
    atomic_store(&r->first_ok, 0);
    atomic_store(&r->from_index, 0);
    atomic_store(&r->n, 0);
    r->marks = 0;
}

/* The broker is reachable again now; for a consumer, messages from `from_index` on count. */
static inline void pct_recovery_mark(pct_recovery_t *r, long from_index) {
    r->marks++;
    atomic_store(&r->back_at, 0); /* a success racing with the mark records nothing */
    atomic_store(&r->first_ok, 0);
    atomic_store(&r->from_index, from_index);
    atomic_store(&r->back_at, pct_recovery_now());
}

/* A success (a send receipt): the first after the mark records the figure. */
static inline void pct_recovery_ok(pct_recovery_t *r) {
    int64_t back = atomic_load(&r->back_at);
    if (!back || atomic_load(&r->first_ok))
        return;
    int64_t none = 0, now = pct_recovery_now();
    if (!atomic_compare_exchange_strong(&r->first_ok, &none, now))
        return;
    if (atomic_load(&r->back_at) != back) /* marked again meanwhile */
        return;
    int i = atomic_fetch_add(&r->n, 1);
    if (i < PCT_RECOVERY_MAX)
        r->samples[i] = now - back;
}

/* A received message with its production index. */
static inline void pct_recovery_recv(pct_recovery_t *r, long index) {
    if (atomic_load(&r->back_at) && index >= atomic_load(&r->from_index))
        pct_recovery_ok(r);
}

/*
 * Waits up to PCT_RECOVERY_HANG_MS for the first success after the mark
 * and disarms. Returns the figure, or -1 for a hang.
 * `more` (may be NULL) says whether a success can still come (e.g. the
 * producer has not finished); when it says no, the wait ends with -2
 * (nothing left to prove, not a hang).
 */
static inline int64_t pct_recovery_wait(pct_recovery_t *r, int (*more)(void *), void *arg) {
    int64_t back = atomic_load(&r->back_at);
    while (!atomic_load(&r->first_ok) && pct_recovery_now() - back < PCT_RECOVERY_HANG_MS) {
        if (more && !more(arg) && !atomic_load(&r->first_ok)) {
            atomic_store(&r->back_at, 0);
            return -2;
        }
        usleep(5000);
    }
    int64_t ok = atomic_load(&r->first_ok);
    atomic_store(&r->back_at, 0);
    return ok ? ok - back : -1;
}

static inline int pct_recovery_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* "recovery: <scenario> <what> n=... median_ms=... max_ms=... marks=... all_ms=[...]" */
static inline void pct_recovery_print(const char *scenario, pct_recovery_t *r) {
    int n = atomic_load(&r->n);
    n = n < PCT_RECOVERY_MAX ? n : PCT_RECOVERY_MAX;
    int64_t sorted[PCT_RECOVERY_MAX];
    for (int i = 0; i < n; i++)
        sorted[i] = r->samples[i];
    qsort(sorted, (size_t)n, sizeof sorted[0], pct_recovery_cmp);
    printf("recovery: %-18s %s n=%d median_ms=%lld max_ms=%lld marks=%d all_ms=[", scenario, r->what,
           n, n ? (long long)sorted[n / 2] : -1LL, n ? (long long)sorted[n - 1] : -1LL, r->marks);
    for (int i = 0; i < n; i++)
        printf("%s%lld", i ? " " : "", (long long)r->samples[i]);
    printf("]\n");
    fflush(stdout);
}
#endif
