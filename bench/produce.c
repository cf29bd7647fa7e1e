/*
 * produce — publish N messages as fast as the producer accepts them, through
 * the public API only, and report what they cost.
 *
 * Design notes
 *  - Saturation with a bounded queue: pulsarc_producer_send_async with
 *    blockIfQueueFull and maxPendingMessages = --pending, so the sending
 *    thread runs ahead until the queue is full and then moves at the pace
 *    of the receipts, which is how an application at full speed behaves.
 *    Batched (--batch 1): batchingMaxPublishDelayMicros 1000, 1,000
 *    messages, 128 KiB; unbatched (--batch 0): batching off.
 *  - The payload is one static buffer lent to every message
 *    (PULSARC_MSG_F_BORROW), as the Java client wraps the byte[] it is
 *    given; --copy makes each message copy it instead.
 *  - The window opens once the producer exists and closes when the last
 *    receipt has been counted, so it holds every receipt. Within it: wall
 *    time, getrusage(RUSAGE_SELF) user/sys CPU of all threads, context
 *    switches, allocations and frees per message (bench/alloc_count.c,
 *    every thread: the message itself, the client's items and frames, the
 *    callback's share); after it, the peak RSS (VmHWM).
 *  - --loop: a threadingMode=loop client, no library thread. The sending
 *    thread is the application's loop: a send that finds the queue full
 *    turns the client's loop itself while it waits, and every 128 sends
 *    (and after the last) pulsarc_client_step runs the send callbacks.
 *  - --senders N: N application threads share the sends (N > 1: several
 *    senders block on the full queue at once; not with --loop).
 *  - A send that fails is counted, never retried: status=errors says so.
 *  - Output: a human summary, then one `produce: key=value ...` line that
 *    bench/produce_compare.sh parses. Figures only.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "alloc_count.h"
#include "bench_util.h"
#include "pulsarc.h"

typedef struct opts {
    const char *url, *topic, *label;
    uint64_t n;
    int size, batch, pending, copy, loop, senders;
    const char *extra[BENCH_MAX_EXTRA]; /* --conf key=value */
    int nextra;
} opts_t;

typedef struct snap {
    double t;
    struct rusage ru;
    bc_alloc_stats_t a;
} snap_t;

static atomic_uint_fast64_t done_ok, done_err;
/* The main thread sleeps here until every queued send has its outcome; a
 * callback takes the lock only once the count reaches what it waits for,
 * so the program's own share of each receipt is two atomic additions. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static atomic_uint_fast64_t done_want = UINT64_MAX;

static void take(snap_t *s) {
    s->t = now_s();
    getrusage(RUSAGE_SELF, &s->ru);
    s->a = bc_alloc_snapshot();
}

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg, (void)opaque;
    atomic_fetch_add(err ? &done_err : &done_ok, 1);
    /* The waiter stores done_want before it reads the counts: either it
     * sees this outcome, or this sees its want and signals under the lock. */
    if (atomic_load(&done_ok) + atomic_load(&done_err) < atomic_load(&done_want))
        return;
    pthread_mutex_lock(&done_lock);
    pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&done_lock);
}

/* Waits (bounded) until every send has called back: flush may return first. */
static void wait_outcomes(uint64_t want) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 120;
    pthread_mutex_lock(&done_lock);
    atomic_store(&done_want, want);
    while (atomic_load(&done_ok) + atomic_load(&done_err) < want)
        if (pthread_cond_timedwait(&done_cond, &done_lock, &dl))
            break;
    pthread_mutex_unlock(&done_lock);
}

static int usage(const char *prog) {
    fprintf(stderr,
            "usage: %s --url URL --topic TOPIC [--messages N] [--size BYTES] [--batch 0|1]\n"
            "          [--pending N] [--senders N] [--copy] [--loop] [--label NAME]\n"
            "          [--conf key=value]...\n",
            prog);
    return 2;
}

static int parse(int argc, char **argv, opts_t *o) {
    *o = (opts_t){.url = "pulsar://127.0.0.1:6650", .label = "pulsarc", .n = 1000000,
                  .size = 100, .batch = 1, .pending = 1000, .senders = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--loop")) {
            o->loop = 1;
            continue;
        }
        if (!strcmp(a, "--copy")) {
            o->copy = 1;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "--url")) o->url = v;
        else if (!strcmp(a, "--topic")) o->topic = v;
        else if (!strcmp(a, "--label")) o->label = v;
        else if (!strcmp(a, "--messages")) o->n = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--size")) o->size = atoi(v);
        else if (!strcmp(a, "--batch")) o->batch = atoi(v);
        else if (!strcmp(a, "--pending")) o->pending = atoi(v);
        else if (!strcmp(a, "--senders")) o->senders = atoi(v);
        else if (!strcmp(a, "--conf") && o->nextra < BENCH_MAX_EXTRA) o->extra[o->nextra++] = v;
        else return -1;
    }
    return o->topic && o->n > 0 && o->size >= 0 && o->pending > 0 && o->senders > 0 &&
                   (o->senders == 1 || !o->loop) ? 0 : -1;
}

static pulsarc_conf_t *make_conf(const opts_t *o, char *err, size_t el) {
    char pending[32];
    snprintf(pending, sizeof pending, "%d", o->pending);
    const char *const kv[][2] = {
        {"serviceUrl", o->url},
        {"blockIfQueueFull", "true"},
        {"maxPendingMessages", pending},
        {"batchingEnabled", o->batch ? "true" : "false"},
        {"batchingMaxPublishDelayMicros", "1000"},
        {"batchingMaxMessages", "1000"},
        {"batchingMaxBytes", "131072"},
        {"threadingMode", o->loop ? "loop" : "thread"},
    };
    pulsarc_conf_t *c = conf_from_pairs(kv, sizeof kv / sizeof kv[0], err, el);
    if (c && conf_set_extra(c, o->extra, o->nextra, err, el)) {
        pulsarc_conf_destroy(c);
        return NULL;
    }
    return c;
}

/* Sends n messages; returns the number whose send_async was accepted. */
static uint64_t send_n(pulsarc_client_t *c, pulsarc_producer_t *p, const opts_t *o,
                       const char *payload, uint64_t n) {
    int flags = o->copy ? PULSARC_MSG_F_COPY : PULSARC_MSG_F_BORROW;
    uint64_t queued = 0;
    for (uint64_t i = 0; i < n; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        if (!m || pulsarc_msg_set_payload(m, payload, (size_t)o->size, flags)) {
            pulsarc_msg_destroy(m);
            atomic_fetch_add(&done_err, 1);
            continue;
        }
        queued += pulsarc_producer_send_async(p, m, on_sent, NULL) == PULSARC_OK;
        if (o->loop && (i & 127) == 127)
            pulsarc_client_step(c, 0, NULL, 0);
    }
    return queued;
}

typedef struct sender {
    pulsarc_client_t *c;
    pulsarc_producer_t *p;
    const opts_t *o;
    const char *payload;
    uint64_t n;
    pthread_t t;
    int started;
} sender_t;

static void *sender_main(void *arg) {
    sender_t *s = arg;
    send_n(s->c, s->p, s->o, s->payload, s->n);
    return NULL;
}

/* Sends o->n messages from o->senders threads (the caller's alone for one). */
static void send_all(pulsarc_client_t *c, pulsarc_producer_t *p, const opts_t *o,
                     const char *payload) {
    if (o->senders == 1) {
        send_n(c, p, o, payload, o->n);
        return;
    }
    sender_t *s = calloc((size_t)o->senders, sizeof *s);
    for (int k = 0; k < o->senders; k++) {
        s[k] = (sender_t){c, p, o, payload, o->n / (uint64_t)o->senders, 0, 0};
        if (k == 0)
            s[k].n += o->n % (uint64_t)o->senders;
        s[k].started = pthread_create(&s[k].t, NULL, sender_main, &s[k]) == 0;
        if (!s[k].started) /* no thread: this one sends its share */
            send_n(c, p, o, payload, s[k].n);
    }
    for (int k = 0; k < o->senders; k++)
        if (s[k].started)
            pthread_join(s[k].t, NULL);
    free(s);
}

static void report(const opts_t *o, const snap_t *a, const snap_t *b) {
    uint64_t ok = atomic_load(&done_ok), bad = atomic_load(&done_err);
    double wall = b->t - a->t;
    double user = tv_s(b->ru.ru_utime) - tv_s(a->ru.ru_utime);
    double sys = tv_s(b->ru.ru_stime) - tv_s(a->ru.ru_stime);
    double cpu = user + sys, per_m = ok ? cpu / ((double)ok / 1e6) : 0;
    long vcsw = b->ru.ru_nvcsw - a->ru.ru_nvcsw, ivcsw = b->ru.ru_nivcsw - a->ru.ru_nivcsw;
    const char *status = bad ? "errors" : ok == o->n ? "ok" : "short";
    double m = ok + bad ? (double)(ok + bad) : 1;
    double allocs = bc_alloc_counting() ? (double)(b->a.allocs - a->a.allocs) / m : -1;
    double frees = bc_alloc_counting() ? (double)(b->a.frees - a->a.frees) / m : -1;
    printf("%s: %" PRIu64 " x %d B %s in %.3f s = %.0f msg/s; CPU %.3f s/M msgs (user %.3f, "
           "sys %.3f s); peak RSS %.1f MB; %ld voluntary / %ld involuntary switches; "
           "%.2f allocations, %.2f frees per message\n",
           o->label, ok, o->size, o->batch ? "batched" : "unbatched", wall, ok / wall, per_m,
           user, sys, proc_status_mb("VmHWM:"), vcsw, ivcsw, allocs, frees);
    printf("produce: label=%s status=%s msgs=%" PRIu64 " errors=%" PRIu64 " size=%d batch=%d "
           "wall_s=%.3f msgs_per_s=%.0f cpu_s=%.3f cpu_s_per_M=%.3f user_s=%.3f sys_s=%.3f "
           "rss_mb=%.1f vcsw=%ld ivcsw=%ld allocs_per_msg=%.2f frees_per_msg=%.2f loop=%d\n",
           o->label, status, ok, bad, o->size, o->batch, wall, ok / wall, cpu, per_m, user, sys,
           proc_status_mb("VmHWM:"), vcsw, ivcsw, allocs, frees, o->loop);
}

int main(int argc, char **argv) {
    opts_t o;
    if (parse(argc, argv, &o))
        return usage(argv[0]);
    char err[512] = "";
    pulsarc_conf_t *conf = make_conf(&o, err, sizeof err);
    pulsarc_client_t *client = NULL;
    pulsarc_producer_t *prod = NULL;
    if (!conf || pulsarc_client_new(conf, &client, err, sizeof err) ||
        pulsarc_producer_new(client, o.topic, conf, &prod, err, sizeof err)) {
        fprintf(stderr, "produce: set-up failed: %s\n", err);
        printf("produce: label=%s status=setup-failed\n", o.label);
        pulsarc_client_destroy(client);
        pulsarc_conf_destroy(conf);
        return 1;
    }
    char *payload = malloc((size_t)o.size + 1);
    memset(payload, 'x', (size_t)o.size + 1);
    snap_t a, b;
    take(&a);
    send_all(client, prod, &o, payload);
    pulsarc_err_t ferr = pulsarc_producer_flush(prod, 120000);
    if (o.loop) /* the callbacks run in steps; bounded like wait_outcomes */
        for (double end = now_s() + 120; done_ok + done_err < o.n && now_s() < end;)
            pulsarc_client_step(client, 100, NULL, 0);
    wait_outcomes(o.n);
    take(&b);
    if (ferr)
        fprintf(stderr, "produce: flush: %s\n", pulsarc_strerror(ferr));
    report(&o, &a, &b);
    pulsarc_producer_destroy(prod);
    pulsarc_client_destroy(client);
    pulsarc_conf_destroy(conf);
    free(payload);
    return atomic_load(&done_err) ? 1 : 0;
}
