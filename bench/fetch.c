/*
 * fetch — consume N messages through the public API only and report what
 * they cost.
 *
 * Design notes
 *  - Only <pulsarc.h>: pulsarc_client_new, pulsarc_consumer_new,
 *    pulsarc_consumer_receive (or, with --batch N, the fastest path:
 *    pulsarc_consumer_batch_receive taking up to N at once under one lock),
 *    pulsarc_msg_destroy (and pulsarc_consumer_ack with --ack). Works against the replay server or
 *    a live broker (--url, --topic).
 *  - The measured window opens when pulsarc_consumer_new has returned
 *    (subscribed, first FLOW on its way) and closes after the N-th message
 *    was destroyed; connection set-up is outside it. Within it: wall time
 *    (CLOCK_MONOTONIC), getrusage(RUSAGE_SELF) user/sys CPU, voluntary and
 *    involuntary context switches and minor faults, all threads of the
 *    process (io thread + this one).
 *  - Allocations: bench/alloc_count.c interposes malloc & co. in the
 *    executable itself (no LD_PRELOAD); it sees libc's and protobuf-c's
 *    allocations too, which -Wl,--wrap would miss. Counters are per thread,
 *    so counting adds no cross-core traffic.
 *  - Sanity: message ids must advance (a regression is counted, not
 *    fatal). If nothing arrives for --idle-ms the run ends with
 *    status=stalled (e.g. the consumer dropped entries it cannot decode).
 *  - --warm: the window opens only once the receive queue holds
 *    min(queue size, N) messages (or after 2 s), so the receive pool's
 *    entries, allocated as the queue first fills, are outside it:
 *    allocs_per_msg is then the steady state's. Without it a short run
 *    also pays that one-time warm-up (a few allocations per entry, up to
 *    the queue's depth of entries). Not with --loop (nobody would turn the
 *    loop while waiting). allocs/frees give the window's absolute counts.
 *  - --loop: a threadingMode=loop client; no library thread at all. The
 *    receive calls, made while nobody steps, turn the client's loop
 *    themselves, so this one thread does the io and the consuming.
 *  - Output: a human summary, then one `fetch: key=value ...` line that
 *    bench/run.sh parses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "alloc_count.h"
#include "bench_util.h"
#include "pulsarc.h"

typedef struct opts {
    const char *url, *topic, *sub, *label;
    uint64_t n;
    int queue, ack, idle_ms, batch;
    const char *extra[BENCH_MAX_EXTRA]; /* --conf key=value */
    int nextra;
    int loop; /* --loop: threadingMode=loop */
    int warm; /* --warm: open the window once the receive queue is full */
} opts_t;

typedef struct snap {
    double t;
    struct rusage ru;
    bc_alloc_stats_t a;
} snap_t;

typedef struct result {
    uint64_t msgs, bytes, regressions;
    pulsarc_msgid_t first, last;
    const char *status;
} result_t;

static void take(snap_t *s) {
    s->t = now_s();
    getrusage(RUSAGE_SELF, &s->ru);
    s->a = bc_alloc_snapshot();
}

static void usage(void) {
    fprintf(stderr,
            "usage: fetch [--url pulsar://127.0.0.1:6655] [--topic T] [--sub S] [--messages N]\n"
            "             [--queue receiverQueueSize (10000)] [--ack] [--idle-ms MS (5000)]\n"
            "             [--batch N (0: one receive per message)] [--label TEXT]\n"
            "             [--loop | --warm] [--conf key=value]...\n");
}

static int parse_args(int argc, char **argv, opts_t *o) {
    *o = (opts_t){.url = "pulsar://127.0.0.1:6655",
                  .topic = "persistent://public/default/replay-bench",
                  .sub = "bench",
                  .label = "-",
                  .n = 1000000,
                  .queue = 10000,
                  .idle_ms = 5000};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ack") || !strcmp(a, "--loop") || !strcmp(a, "--warm")) {
            *(a[2] == 'a' ? &o->ack : a[2] == 'l' ? &o->loop : &o->warm) = 1;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--url")) o->url = v;
        else if (!strcmp(a, "--topic")) o->topic = v;
        else if (!strcmp(a, "--sub")) o->sub = v;
        else if (!strcmp(a, "--label")) o->label = v;
        else if (!strcmp(a, "--messages")) o->n = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--queue")) o->queue = atoi(v);
        else if (!strcmp(a, "--idle-ms")) o->idle_ms = atoi(v);
        else if (!strcmp(a, "--batch")) o->batch = atoi(v);
        else if (!strcmp(a, "--conf") && o->nextra < BENCH_MAX_EXTRA) o->extra[o->nextra++] = v;
        else return -1;
        i++;
    }
    return o->n > 0 && o->queue > 0 && o->batch >= 0 && o->batch <= 100000 && !(o->warm && o->loop) ? 0
                                                                                                   : -1;
}

static pulsarc_conf_t *make_conf(const opts_t *o, char *err, size_t errlen) {
    char q[32];
    snprintf(q, sizeof q, "%d", o->queue);
    char b[32];
    snprintf(b, sizeof b, "%d", o->batch > 0 ? o->batch : 100);
    const char *const kv[][2] = {{"serviceUrl", o->url},
                           {"receiverQueueSize", q},
                           {"subscriptionInitialPosition", "Earliest"},
                           {"batchReceiveMaxNumMessages", b},
                           {"batchReceiveTimeoutMs", "10"}};
    pulsarc_conf_t *conf = conf_from_pairs(kv, sizeof kv / sizeof kv[0], err, errlen);
    if (conf && o->loop && pulsarc_conf_set(conf, "threadingMode", "loop", err, errlen)) {
        pulsarc_conf_destroy(conf);
        return NULL;
    }
    if (conf && conf_set_extra(conf, o->extra, o->nextra, err, errlen)) {
        pulsarc_conf_destroy(conf);
        return NULL;
    }
    return conf;
}

/* What the application does with each message. */
static void handle(pulsarc_consumer_t *c, const opts_t *o, result_t *r, pulsarc_msg_t *m) {
    pulsarc_msgid_t id = pulsarc_msg_id(m);
    if (r->msgs == 0)
        r->first = id;
    else if (pulsarc_msgid_compare(&r->last, &id) >= 0)
        r->regressions++;
    r->last = id;
    r->bytes += pulsarc_msg_len(m);
    if (o->ack)
        pulsarc_consumer_ack(c, m);
    pulsarc_msg_destroy(m);
    r->msgs++;
}

/* Up to want messages into v; returns how many, or -1 (r->status set). */
static long take_some(pulsarc_consumer_t *c, const opts_t *o, pulsarc_msg_t **v, size_t want,
                      result_t *r) {
    size_t n = 0;
    pulsarc_err_t err;
    if (o->batch > 0)
        err = pulsarc_consumer_batch_receive(c, v, want, &n);
    else
        err = pulsarc_consumer_receive(c, v, 200), n = err ? 0 : 1;
    if (err == PULSARC_ERR_NO_MESSAGE)
        return 0;
    if (err) {
        fprintf(stderr, "fetch: receive: %s\n", pulsarc_strerror(err));
        r->status = "error";
        return -1;
    }
    return (long)n;
}

/* The receive loop: the measured part. */
static void consume(pulsarc_consumer_t *c, const opts_t *o, result_t *r) {
    double idle_since = now_s();
    size_t cap = o->batch > 0 ? (size_t)o->batch : 1;
    pulsarc_msg_t **v = malloc(cap * sizeof *v);
    r->status = v ? "ok" : "error";
    while (v && r->msgs < o->n) {
        uint64_t left = o->n - r->msgs;
        long n = take_some(c, o, v, left < cap ? (size_t)left : cap, r);
        if (n < 0)
            break;
        if (n == 0 && (now_s() - idle_since) * 1000 >= o->idle_ms) {
            r->status = "stalled";
            break;
        }
        uint64_t before = r->msgs;
        for (long i = 0; i < n; i++)
            handle(c, o, r, v[i]);
        if ((before >> 10) != (r->msgs >> 10))
            idle_since = now_s();
    }
    free(v);
}

static void report(const opts_t *o, const result_t *r, const snap_t *a, const snap_t *b) {
    double wall = b->t - a->t, m = r->msgs ? (double)r->msgs : 1, mm = m / 1e6;
    /* -1: counting compiled out (sanitizer build) */
    double al = bc_alloc_counting() ? (double)(b->a.allocs - a->a.allocs) / m : -1;
    double fr = bc_alloc_counting() ? (double)(b->a.frees - a->a.frees) / m : -1;
    double re = bc_alloc_counting() ? (double)(b->a.reallocs - a->a.reallocs) / m : -1;
    double user = tv_s(b->ru.ru_utime) - tv_s(a->ru.ru_utime);
    double sys = tv_s(b->ru.ru_stime) - tv_s(a->ru.ru_stime);
    long nv = b->ru.ru_nvcsw - a->ru.ru_nvcsw, niv = b->ru.ru_nivcsw - a->ru.ru_nivcsw;
    long minflt = b->ru.ru_minflt - a->ru.ru_minflt;
    char f[64] = "-", l[64] = "-";
    if (r->msgs) {
        pulsarc_msgid_format(&r->first, f, sizeof f);
        pulsarc_msgid_format(&r->last, l, sizeof l);
    }
    printf("%s: %" PRIu64 " msgs in %.3f s = %.0f msg/s, %.1f MB/s; CPU %.3f s/M msgs "
           "(user %.3f, sys %.3f); csw %.0f/M (vol %.0f, invol %.0f); %.2f allocs/msg; ids %s .. %s\n",
           o->label, r->msgs, wall, r->msgs / wall, r->bytes / wall / 1e6, (user + sys) / mm,
           user / mm, sys / mm, (nv + niv) / mm, nv / mm, niv / mm, al, f, l);
    printf("fetch: label=%s status=%s msgs=%" PRIu64 " bytes=%" PRIu64 " wall_s=%.3f msgs_per_s=%.0f "
           "MB_per_s=%.2f user_s=%.3f sys_s=%.3f cpu_s_per_M=%.4f user_s_per_M=%.4f sys_s_per_M=%.4f "
           "nvcsw_per_M=%.0f nivcsw_per_M=%.0f minflt=%ld allocs_per_msg=%.3f frees_per_msg=%.3f "
           "reallocs_per_msg=%.3f allocs=%" PRIu64 " frees=%" PRIu64 " id_regressions=%" PRIu64
           " queue=%d ack=%d batch=%d loop=%d warm=%d\n",
           o->label, r->status, r->msgs, r->bytes, wall, r->msgs / wall, r->bytes / wall / 1e6, user, sys,
           (user + sys) / mm, user / mm, sys / mm, nv / mm, niv / mm, minflt, al, fr, re,
           b->a.allocs - a->a.allocs, b->a.frees - a->a.frees, r->regressions, o->queue, o->ack, o->batch,
           o->loop, o->warm);
}

/* --warm: waits (polling every 5 ms, at most 2 s) until the receive queue
 * holds min(its size, N) messages. */
static void warm_up(pulsarc_consumer_t *c, const opts_t *o) {
    double until = now_s() + 2;
    pulsarc_consumer_stats_t st;
    while (now_s() < until && pulsarc_consumer_stats(c, &st) == PULSARC_OK &&
           st.queue_len < (st.queue_size < o->n ? st.queue_size : o->n)) {
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv) {
    opts_t o;
    char err[512] = "";
    if (parse_args(argc, argv, &o)) {
        usage();
        return 2;
    }
    pulsarc_conf_t *conf = make_conf(&o, err, sizeof err);
    pulsarc_client_t *client = NULL;
    pulsarc_consumer_t *consumer = NULL;
    if (!conf || pulsarc_client_new(conf, &client, err, sizeof err) ||
        pulsarc_consumer_new(client, o.topic, o.sub, conf, &consumer, err, sizeof err)) {
        fprintf(stderr, "fetch: set-up failed: %s\n", err);
        printf("fetch: label=%s status=setup-failed\n", o.label);
        pulsarc_client_destroy(client);
        pulsarc_conf_destroy(conf);
        return 1;
    }
    snap_t a, b;
    result_t r = {0};
    if (o.warm)
        warm_up(consumer, &o);
    take(&a);
    consume(consumer, &o, &r);
    take(&b);
    report(&o, &r, &a, &b);
    pulsarc_consumer_destroy(consumer);
    pulsarc_client_destroy(client);
    pulsarc_conf_destroy(conf);
    return strcmp(r.status, "ok") ? 1 : 0;
}
