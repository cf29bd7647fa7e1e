/*
 * Design notes: `pulsarc perf produce` and `pulsarc perf consume`, load
 * generators with pulsar-perf's flag spellings (-r, -s, -m, -time, -db,
 * -bm, -ss, -st, ...), printing rates every interval and a latency
 * histogram at the end.
 *
 *  - Producing is paced by cli_pacer_t (absolute deadlines, no busy-wait):
 *    the offered rate is honoured even after a stall, so the latencies are
 *    those of the rate asked for, not of a sender that slowed down.
 *  - Publish latency is send_async → send callback. The send time travels
 *    in the callback's opaque pointer as microseconds since the run began
 *    (fits a pointer for over an hour even on 32 bits), so no per-message
 *    allocation or lookup is needed.
 *  - Callbacks record into an interval histogram under a mutex; once per
 *    interval the main thread takes it, prints it and merges it into the
 *    run's histogram, except during --warmup-time (as pulsar-perf does).
 *  - Consume latency is end to end: receive time minus the message's
 *    publish time (both wall clocks, millisecond resolution).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct perf_opts {
    double rate, duration, batch_ms, interval, warmup;
    int64_t size, num;
    const char *sub;
} perf_opts_t;

#define OFF(f) offsetof(perf_opts_t, f)
#define PERF_COMMON_FLAGS                                                                     \
    {"-m,--num-messages", CLI_INT, "N", OFF(num), NULL, NULL, 0, INT64_MAX,                   \
     "stop after N messages; 0 = no limit (default)"},                                        \
    {"-time,--test-duration", CLI_NUM, "SECONDS", OFF(duration), NULL, NULL, 0, 0,            \
     "stop after this long; 0 = no limit (default)"},                                         \
    {"-i,--stats-interval-seconds", CLI_NUM, "SECONDS", OFF(interval), NULL, NULL, 0, 0,      \
     "print rates this often (default 1)"},                                                    \
    {"--warmup-time", CLI_NUM, "SECONDS", OFF(warmup), NULL, NULL, 0, 0,                      \
     "leave the first seconds out of the final histogram (default 1)"}

static const cli_opt_t perf_produce_flags[] = {
    {"-r,--rate", CLI_NUM, "PER_SECOND", OFF(rate), NULL, NULL, 0, 0,
     "messages per second; 0 = unthrottled (default 100)"},
    {"-s,--size", CLI_INT, "BYTES", OFF(size), NULL, NULL, 0, 100 << 20,
     "payload size (default 1024)"},
    PERF_COMMON_FLAGS,
    {"-b,--batch-time-window", CLI_NUM, "MS", OFF(batch_ms), NULL, NULL, 0, 0,
     "batching delay in ms (default 1)"},
    {"-db,--disable-batching", CLI_CONF_SET, NULL, 0, "batchingEnabled", "false", 0, 0,
     "send every message as its own entry"},
    {"-bm,--batch-max-messages", CLI_CONF, "N", 0, "batchingMaxMessages", NULL, 0, 0,
     "most messages per batch (default 1000)"},
    {"-bb,--batch-max-bytes", CLI_CONF, "BYTES", 0, "batchingMaxBytes", NULL, 0, 0,
     "most payload bytes per batch (default 131072)"},
    {"-z,--compression", CLI_CONF, "CODEC", 0, "compressionType", NULL, 0, 0,
     "NONE, LZ4, ZLIB, ZSTD or SNAPPY"},
    {"-o,--max-outstanding", CLI_CONF, "N", 0, "maxPendingMessages", NULL, 0, 0,
     "most messages awaiting a receipt (default 1000)"},
    {"-p,--max-outstanding-across-partitions", CLI_CONF, "N", 0,
     "maxPendingMessagesAcrossPartitions", NULL, 0, 0, "the same, over all partitions"},
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};

static const cli_opt_t perf_consume_flags[] = {
    {"-ss,--subscriptions", CLI_STR, "NAME", OFF(sub), NULL, NULL, 0, 0,
     "subscription name (default sub)"},
    {"-st,--subscription-type", CLI_CONF, "TYPE", 0, "subscriptionType", NULL, 0, 0,
     "Exclusive (default), Shared, Failover or Key_Shared"},
    {"-sp,--subscription-position", CLI_CONF, "POS", 0, "subscriptionInitialPosition", NULL, 0,
     0, "Latest (default) or Earliest"},
    {"-q,--receiver-queue-size", CLI_CONF, "N", 0, "receiverQueueSize", NULL, 0, 0,
     "messages prefetched (default 1000)"},
    PERF_COMMON_FLAGS,
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};
#undef OFF

static const cli_spec_t perf_produce_spec = {
    "pulsarc perf produce", "[flags] TOPIC",
    "Sends SIZE-byte messages to TOPIC at RATE per second, prints the rates and publish\n"
    "latency (send to receipt) every interval, and a latency histogram at the end.\n"
    "Stops after -m messages, -time seconds, or Ctrl-C.",
    perf_produce_flags, 1,
};

static const cli_spec_t perf_consume_spec = {
    "pulsarc perf consume", "[flags] TOPIC",
    "Receives and acknowledges messages of TOPIC, prints the rates and end-to-end\n"
    "latency (publish to receive) every interval, and a latency histogram at the end.",
    perf_consume_flags, 1,
};

/* ---- shared figures ------------------------------------------------------ */

typedef struct perf_stats {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    cli_hist_t interval, total, warm; /* warm: the warm-up's, used if nothing else */
    uint64_t msgs, bytes, errors, done; /* done: callbacks run, all time */
    uint64_t total_msgs, total_bytes, total_errors;
} perf_stats_t;

typedef struct perf_run {
    const char *prog, *verb;
    const perf_opts_t *o;
    perf_stats_t *st;
    uint64_t start_ns, next_report, end_ns, warm_end;
    uint64_t interval_start; /* when the interval being filled began */
    pulsarc_producer_t *prod;
} perf_run_t;

static perf_stats_t *stats_new(void) {
    perf_stats_t *st = calloc(1, sizeof *st);
    if (st) {
        pthread_mutex_init(&st->lock, NULL);
        pthread_cond_init(&st->cond, NULL);
    }
    return st;
}

static void stats_free(perf_stats_t *st) {
    if (!st)
        return;
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->cond);
    free(st);
}

static void stats_add(perf_stats_t *st, pulsarc_err_t err, uint64_t bytes, uint64_t lat_us) {
    pthread_mutex_lock(&st->lock);
    if (err) {
        st->errors++;
    } else {
        st->msgs++;
        st->bytes += bytes;
        cli_hist_record(&st->interval, lat_us);
    }
    st->done++;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->lock);
}

static uint64_t pending_of(const perf_run_t *r) {
    pulsarc_producer_stats_t ps;
    if (!r->prod || pulsarc_producer_stats(r->prod, &ps) != PULSARC_OK)
        return 0;
    return ps.pending;
}

/* Folds the interval into the totals and, when print, prints its line. */
static void report_interval(perf_run_t *r, uint64_t now, double secs, int print) {
    static cli_hist_t snap; /* main thread only; too big for the stack */
    perf_stats_t *st = r->st;
    pthread_mutex_lock(&st->lock);
    snap = st->interval;
    uint64_t msgs = st->msgs, bytes = st->bytes, errors = st->errors;
    cli_hist_reset(&st->interval);
    st->msgs = st->bytes = st->errors = 0;
    pthread_mutex_unlock(&st->lock);
    st->total_msgs += msgs, st->total_bytes += bytes, st->total_errors += errors;
    /* whole intervals after the warm-up only */
    cli_hist_merge(r->interval_start >= r->warm_end ? &st->total : &st->warm, &snap);
    r->interval_start = now;
    if (!print)
        return;
    char lat[200];
    cli_hist_summary(&snap, lat, sizeof lat);
    fprintf(stdout, "%s [%7.1f s] %10.1f msg/s %9.2f Mbit/s  total %llu  errors %llu",
            r->prog, (double)(now - r->start_ns) / 1e9, (double)msgs / secs,
            (double)bytes * 8 / secs / 1e6, (unsigned long long)st->total_msgs,
            (unsigned long long)st->total_errors);
    if (r->prod)
        fprintf(stdout, "  pending %llu", (unsigned long long)pending_of(r));
    fprintf(stdout, "  latency ms %s\n", lat);
    fflush(stdout);
}

static void maybe_report(perf_run_t *r) {
    uint64_t now = cli_now_ns();
    if (now < r->next_report)
        return;
    uint64_t step = (uint64_t)(r->o->interval * 1e9);
    report_interval(r, now, (double)step / 1e9, 1);
    while (r->next_report <= now)
        r->next_report += step;
}

static void report_run(perf_run_t *r) {
    uint64_t now = cli_now_ns();
    double secs = (double)(now - r->start_ns) / 1e9;
    perf_stats_t *st = r->st;
    fprintf(stdout, "%s: %llu messages in %.1f s: %.1f msg/s, %.2f Mbit/s, %llu errors\n",
            r->prog, (unsigned long long)st->total_msgs, secs,
            secs > 0 ? (double)st->total_msgs / secs : 0,
            secs > 0 ? (double)st->total_bytes * 8 / secs / 1e6 : 0,
            (unsigned long long)st->total_errors);
    int warm_only = !st->total.total && st->warm.total; /* a run shorter than its warm-up */
    fprintf(stdout, "%s%s ", r->verb, warm_only ? " (warm-up included)" : "");
    cli_hist_print(warm_only ? &st->warm : &st->total, stdout);
    fflush(stdout);
}

/* The last, partial interval (printed unless it is too short to mean much), then the run. */
static void report_final(perf_run_t *r) {
    uint64_t now = cli_now_ns();
    double part = ((double)now - (double)r->next_report) / 1e9 + r->o->interval;
    report_interval(r, now, part, part >= 0.1);
    report_run(r);
}

static void run_init(perf_run_t *r, const perf_opts_t *o, const char *prog, const char *verb) {
    r->prog = prog, r->verb = verb, r->o = o;
    r->start_ns = r->interval_start = cli_now_ns();
    r->next_report = r->start_ns + (uint64_t)(o->interval * 1e9);
    r->end_ns = o->duration > 0 ? r->start_ns + (uint64_t)(o->duration * 1e9) : 0;
    r->warm_end = r->start_ns + (uint64_t)(o->warmup * 1e9);
}

static int run_over(const perf_run_t *r, uint64_t count) {
    if (cli_interrupted() || (r->o->num && count >= (uint64_t)r->o->num))
        return 1;
    return r->end_ns && cli_now_ns() >= r->end_ns;
}

/* The earlier of the next report and the end of the run. */
static uint64_t next_wake(const perf_run_t *r) {
    return r->end_ns && r->end_ns < r->next_report ? r->end_ns : r->next_report;
}

/* ---- perf produce -------------------------------------------------------- */

typedef struct send_ctx {
    perf_run_t *run;
    size_t size;
} send_ctx_t;

static send_ctx_t g_send; /* one run per process; the callback's context */

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    uint64_t now_us = (cli_now_ns() - g_send.run->start_ns) / 1000;
    uint64_t sent_us = (uint64_t)(uintptr_t)opaque;
    stats_add(g_send.run->st, err, g_send.size, now_us - sent_us);
}

static char *make_payload(size_t size) {
    char *p = malloc(size ? size : 1);
    uint32_t x = 2463534242u; /* xorshift: varied bytes, so codecs are not flattered */
    for (size_t i = 0; p && i < size; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (char)('a' + x % 26);
    }
    return p;
}

static void send_one(perf_run_t *r, const char *payload, size_t size) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    if (!m)
        return;
    pulsarc_msg_set_payload(m, payload, size, PULSARC_MSG_F_BORROW);
    uint64_t sent_us = (cli_now_ns() - r->start_ns) / 1000;
    pulsarc_producer_send_async(r->prod, m, on_sent, (void *)(uintptr_t)sent_us);
}

static void wait_callbacks(perf_stats_t *st, uint64_t submitted) {
    pthread_mutex_lock(&st->lock);
    while (st->done < submitted)
        pthread_cond_wait(&st->cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
}

static void produce_loop(perf_run_t *r, const char *payload) {
    cli_pacer_t pacer;
    cli_pacer_init(&pacer, r->o->rate);
    uint64_t submitted = 0;
    g_send.run = r, g_send.size = (size_t)r->o->size;
    while (!run_over(r, submitted)) {
        if (cli_pacer_wait(&pacer, next_wake(r)))
            send_one(r, payload, (size_t)r->o->size), submitted++;
        maybe_report(r);
    }
    pulsarc_producer_flush(r->prod, -1);
    wait_callbacks(r->st, submitted);
    report_final(r);
}

static void add_batch_window(const perf_opts_t *o, cli_common_t *c) {
    char us[32], origin[64];
    snprintf(us, sizeof us, "%.0f", o->batch_ms * 1000);
    snprintf(origin, sizeof origin, "--batch-time-window %g", o->batch_ms);
    if (o->batch_ms > 0)
        cli_settings_add(&c->flags, "batchingMaxPublishDelayMicros", us, origin);
}

static int perf_produce(const perf_opts_t *o, cli_common_t *c) {
    cli_settings_t defaults = {0};
    cli_settings_add(&defaults, "blockIfQueueFull", "true", "perf default");
    add_batch_window(o, c);
    cli_config_t cfg;
    pulsarc_client_t *client;
    int rc = cli_open_client(c, &defaults, &cfg, &client);
    cli_settings_free(&defaults);
    if (rc)
        return rc;
    perf_run_t r = {0};
    char err[512], *payload = make_payload((size_t)o->size);
    r.st = stats_new();
    if (!payload || !r.st)
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "out of memory");
    else if (pulsarc_producer_new(client, c->args.v[0], cfg.conf, &r.prod, err, sizeof err))
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "cannot create a producer on '%s': %s",
                      c->args.v[0], err);
    else {
        run_init(&r, o, c->prog, "publish");
        produce_loop(&r, payload);
        rc = r.st->total_errors ? CLI_EXIT_RUNTIME : 0;
        pulsarc_producer_destroy(r.prod);
    }
    stats_free(r.st);
    free(payload);
    pulsarc_client_destroy(client);
    cli_config_free(&cfg);
    return rc;
}

/* ---- perf consume -------------------------------------------------------- */

static int consume_one(perf_run_t *r, pulsarc_consumer_t *cons, int wait_ms) {
    pulsarc_msg_t *m;
    pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, wait_ms);
    if (e == PULSARC_ERR_NO_MESSAGE)
        return 0;
    if (e)
        return cli_fail(r->prog, CLI_EXIT_RUNTIME, "receive failed: %s", pulsarc_strerror(e));
    uint64_t now = cli_wall_ms(), pub = pulsarc_msg_publish_time(m);
    stats_add(r->st, PULSARC_OK, pulsarc_msg_len(m), now > pub ? (now - pub) * 1000 : 0);
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    return 0;
}

static int wait_ms_until(uint64_t t_ns) {
    uint64_t now = cli_now_ns();
    uint64_t ms = t_ns > now ? (t_ns - now + 999999) / 1000000 : 0;
    return ms > 250 ? 250 : (int)ms;
}

static int consume_loop(perf_run_t *r, pulsarc_consumer_t *cons) {
    int rc = 0;
    while (!rc && !run_over(r, r->st->total_msgs + r->st->msgs)) {
        rc = consume_one(r, cons, wait_ms_until(next_wake(r)));
        maybe_report(r);
    }
    report_final(r);
    return rc;
}

static int perf_consume(const perf_opts_t *o, const cli_common_t *c) {
    cli_config_t cfg;
    pulsarc_client_t *client;
    int rc = cli_open_client(c, NULL, &cfg, &client);
    if (rc)
        return rc;
    perf_run_t r = {0};
    pulsarc_consumer_t *cons;
    char err[512];
    const char *sub = o->sub ? o->sub : "sub";
    r.st = stats_new();
    if (!r.st)
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "out of memory");
    else if (pulsarc_consumer_new(client, c->args.v[0], sub, cfg.conf, &cons, err, sizeof err))
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "cannot subscribe '%s' to '%s': %s", sub,
                      c->args.v[0], err);
    else {
        run_init(&r, o, c->prog, "end-to-end");
        rc = consume_loop(&r, cons);
        pulsarc_consumer_destroy(cons);
    }
    stats_free(r.st);
    pulsarc_client_destroy(client);
    cli_config_free(&cfg);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------ */

static int check_opts(const cli_spec_t *spec, const perf_opts_t *o) {
    if (o->interval < 0.1)
        return cli_usage(spec->prog, "--stats-interval-seconds '%g': must be at least 0.1",
                         o->interval);
    return 0;
}

static int run_sub(const cli_spec_t *spec, int produce, int argc, char **argv) {
    perf_opts_t o = {.rate = 100, .size = 1024, .interval = 1, .warmup = 1};
    cli_common_t c = {0};
    int rc = cli_parse(spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(spec, stdout);
    else if (!rc && !(rc = cli_want_args(&c, 1, 1, "TOPIC")) && !(rc = check_opts(spec, &o))) {
        cli_trap_signals();
        rc = produce ? perf_produce(&o, &c) : perf_consume(&o, &c);
    }
    cli_common_free(&c);
    return rc;
}

static void perf_help(FILE *out) {
    fputs("Usage: pulsarc perf produce [flags] TOPIC\n"
          "       pulsarc perf consume [flags] TOPIC\n\n"
          "Load generators in the manner of pulsar-perf: rates every interval, a latency\n"
          "histogram at the end. 'pulsarc perf produce --help' lists the flags.\n",
          out);
}

int cli_cmd_perf(int argc, char **argv) {
    if (argc < 1)
        return perf_help(stderr), CLI_EXIT_USAGE;
    if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))
        return perf_help(stdout), CLI_EXIT_OK;
    if (!strcmp(argv[0], "produce"))
        return run_sub(&perf_produce_spec, 1, argc - 1, argv + 1);
    if (!strcmp(argv[0], "consume"))
        return run_sub(&perf_consume_spec, 0, argc - 1, argv + 1);
    return cli_usage("pulsarc perf", "unknown mode '%s' (expected produce or consume)", argv[0]);
}
