/*
 * parallel — the connector's source and sink with 1, 2 and 4 parallel
 * readers / writers in one process, against a live broker.
 *
 * Design notes
 *  - Sink: for each N of --counts (default 1,2,4) a fresh topic of
 *    --partitions partitions (default 12); N sink writers
 *    (pulsarc_sink_builder_set_writer(i, N)), AT_LEAST_ONCE, each on a
 *    thread of its own, write --messages / N payloads of --size bytes, then
 *    checkpoint (which waits for every receipt). Time is from the first
 *    write to the last receipt.
 *  - Source: on the topic the first sink run wrote, for each N a fresh
 *    subscription and N source readers (pulsarc_source_conf_set_reader(i, N)),
 *    each on its thread, with the stop cursor at the latest message, read
 *    to the end. Time is from before the readers open to the last one's
 *    end: subscribing is counted, because the broker starts pushing while
 *    a reader opens and its receive queue holds the first thousand
 *    messages of every split before the first fetch.
 *  - CPU per message is the process's user + system time (every thread:
 *    the writers' or readers' own and the clients' io and callback threads)
 *    over the run, divided by the messages. On a 2-core machine shared with
 *    the broker, more readers or writers than cores mostly measure
 *    contention; the figures are printed, never asserted.
 *  - Output: one human line and one `parallel: key=value ...` line per run.
 *  - The broker: --url (default $PULSAR_SERVICE_URL or
 *    pulsar://127.0.0.1:6650); topics are created through the admin API at
 *    $PULSAR_ADMIN_URL (default http://127.0.0.1:8080).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "pulsarc.h"
#include "pulsarc/admin.h"
#include "pulsarc/sink.h"
#include "pulsarc/source.h"

#define MAX_N 16

typedef struct opts {
    const char *url;
    int messages, partitions, size;
    int counts[MAX_N], ncounts;
} opts_t;

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

static void die(const char *what, const char *err) {
    fprintf(stderr, "parallel: %s: %s\n", what, err);
    exit(1);
}

/* ---------- sink ---------- */

typedef struct writer {
    const opts_t *o;
    const char *topic;
    int index, count, n;
    char *payload;
} writer_t;

/* element: the writer's payload buffer; opaque: its writer (for the size). */
static pulsarc_err_t ser(void *opaque, const void *element, pulsarc_msg_t *m) {
    const writer_t *w = opaque;
    return pulsarc_msg_set_payload(m, element, (size_t)w->o->size, PULSARC_MSG_F_COPY);
}

static pulsarc_sink_t *open_writer(writer_t *w) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    char err[512];
    const char *topics[] = {w->topic};
    if (!b || pulsarc_sink_builder_set_topics(b, topics, 1) ||
        pulsarc_sink_builder_set_service_url(b, w->o->url) ||
        pulsarc_sink_builder_set_serializer(b, ser, w) ||
        pulsarc_sink_builder_set_delivery_guarantee(b, PULSARC_SINK_AT_LEAST_ONCE) ||
        pulsarc_sink_builder_set_writer(b, w->index, w->count, err, sizeof err))
        die("sink builder", "a setting was refused");
    pulsarc_sink_t *s = NULL;
    if (pulsarc_sink_builder_build(b, NULL, 0, &s, err, sizeof err))
        die("sink build", err);
    pulsarc_sink_builder_destroy(b);
    return s;
}

typedef struct writer_run {
    writer_t w;
    pulsarc_sink_t *sink;
    int failed;
} writer_run_t;

static void *write_all(void *arg) {
    writer_run_t *r = arg;
    char err[512];
    for (int i = 0; i < r->w.n && !r->failed; i++)
        r->failed = pulsarc_sink_write(r->sink, r->w.payload, 0, err, sizeof err) != PULSARC_OK;
    void *blob = NULL;
    size_t len = 0;
    if (!r->failed)
        r->failed = pulsarc_sink_checkpoint(r->sink, 1, -1, &blob, &len, err, sizeof err) != 0;
    if (r->failed)
        fprintf(stderr, "parallel: writer %d: %s\n", r->w.index, err);
    free(blob);
    return NULL;
}

static void create_topic(const char *topic, int partitions) {
    pulsarc_admin_t *a = NULL;
    char err[512];
    if (pulsarc_admin_new(NULL, &a, err, sizeof err) ||
        pulsarc_admin_create_partitioned_topic(a, topic, partitions, err, sizeof err))
        die("create topic", err);
    pulsarc_admin_destroy(a);
}

static void report(const char *side, int n, int msgs, double secs, double cpu) {
    printf("%s with %d %s: %d messages in %.2f s = %.0f msg/s, %.2f us CPU per message\n", side,
           n, strcmp(side, "sink") ? "readers" : "writers", msgs, secs, msgs / secs,
           cpu * 1e6 / msgs);
    printf("parallel: side=%s n=%d msgs=%d secs=%.3f msgs_per_s=%.0f cpu_us_per_msg=%.3f\n", side,
           n, msgs, secs, msgs / secs, cpu * 1e6 / msgs);
    fflush(stdout);
}

static void bench_sink(const opts_t *o, const char *topic, int n) {
    create_topic(topic, o->partitions);
    writer_run_t runs[MAX_N];
    pthread_t th[MAX_N];
    char *payload = malloc((size_t)o->size);
    memset(payload, 'x', (size_t)o->size);
    int total = 0;
    for (int i = 0; i < n; i++) {
        writer_t w = {o, topic, i, n, o->messages / n + (i < o->messages % n), payload};
        runs[i].w = w;
        runs[i].failed = 0;
        runs[i].sink = open_writer(&runs[i].w);
        total += w.n;
    }
    double t0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, write_all, &runs[i]);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        failed |= runs[i].failed;
    }
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    for (int i = 0; i < n; i++)
        pulsarc_sink_destroy(runs[i].sink);
    free(payload);
    if (failed)
        die("sink", "a writer failed");
    report("sink", n, total, secs, cpu);
}

/* ---------- source ---------- */

typedef struct reader_run {
    pulsarc_source_t *src;
    int count, failed;
} reader_run_t;

static void *read_all(void *arg) {
    reader_run_t *r = arg;
    pulsarc_msg_t *out[100];
    for (;;) {
        size_t got = 0;
        pulsarc_err_t e = pulsarc_source_fetch(r->src, out, 100, &got);
        for (size_t i = 0; i < got; i++)
            pulsarc_msg_destroy(out[i]);
        r->count += (int)got;
        if (e == PULSARC_SOURCE_END_OF_INPUT)
            break;
        if (e) {
            fprintf(stderr, "parallel: fetch: %s\n", pulsarc_errname(e));
            r->failed = 1;
            break;
        }
    }
    return NULL;
}

static pulsarc_source_t *open_reader(pulsarc_client_t *c, const char *topic, const char *sub,
                                     int i, int n) {
    pulsarc_source_conf_t *conf = pulsarc_source_conf_new();
    char err[512];
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    if (!conf || pulsarc_source_conf_add_topic(conf, topic) ||
        pulsarc_source_conf_set(conf, "pulsar.consumer.subscriptionName", sub, err, sizeof err) ||
        pulsarc_source_conf_set(conf, "pulsar.source.maxFetchRecords", "100", err, sizeof err) ||
        pulsarc_source_conf_set_stop_cursor(conf, &stop) ||
        pulsarc_source_conf_set_reader(conf, i, n, err, sizeof err))
        die("source conf", "a setting was refused");
    pulsarc_source_t *s = NULL;
    if (pulsarc_source_new(c, conf, NULL, 0, &s, err, sizeof err))
        die("source", err);
    pulsarc_source_conf_destroy(conf);
    return s;
}

static void bench_source(const opts_t *o, pulsarc_client_t *c, const char *topic, int n) {
    char sub[64];
    snprintf(sub, sizeof sub, "parallel-%d-%ld", n, (long)time(NULL));
    reader_run_t runs[MAX_N];
    pthread_t th[MAX_N];
    double t0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < n; i++) {
        runs[i].src = open_reader(c, topic, sub, i, n);
        runs[i].count = runs[i].failed = 0;
    }
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, read_all, &runs[i]);
    int total = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        total += runs[i].count;
        failed |= runs[i].failed;
    }
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    for (int i = 0; i < n; i++)
        pulsarc_source_destroy(runs[i].src);
    if (failed)
        die("source", "a reader failed");
    if (total != o->messages)
        fprintf(stderr, "parallel: %d readers read %d messages, %d written\n", n, total,
                o->messages);
    report("source", n, total, secs, cpu);
}

/* ---------- main ---------- */

static void parse_counts(opts_t *o, const char *s) {
    o->ncounts = 0;
    for (char *end; *s && o->ncounts < MAX_N; s = *end ? end + 1 : end) {
        long v = strtol(s, &end, 10);
        if (v < 1 || v > MAX_N || (*end && *end != ','))
            die("--counts", "a list of 1 to 16, comma separated");
        o->counts[o->ncounts++] = (int)v;
    }
}

static void parse(opts_t *o, int argc, char **argv) {
    const char *env = getenv("PULSAR_SERVICE_URL");
    *o = (opts_t){env && *env ? env : "pulsar://127.0.0.1:6650", 60000, 12, 100, {1, 2, 4}, 3};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--url"))
            o->url = argv[i + 1];
        else if (!strcmp(argv[i], "--messages"))
            o->messages = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--partitions"))
            o->partitions = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--size"))
            o->size = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--counts"))
            parse_counts(o, argv[i + 1]);
        else
            die(argv[i], "unknown option (--url, --messages, --partitions, --size, --counts)");
    }
    if (argc % 2 == 0)
        die(argv[argc - 1], "option without a value");
    if (o->messages < 1 || o->partitions < 1 || o->size < 1)
        die("options", "--messages, --partitions and --size must be positive");
}

int main(int argc, char **argv) {
    opts_t o;
    parse(&o, argc, argv);
    char first[128] = "";
    for (int k = 0; k < o.ncounts; k++) {
        char topic[128];
        snprintf(topic, sizeof topic, "bench-parallel-%d-%ld-%d", (int)getpid(), (long)time(NULL),
                 k);
        bench_sink(&o, topic, o.counts[k]);
        if (!*first)
            snprintf(first, sizeof first, "%s", topic);
    }
    pulsarc_conf_t *cc = pulsarc_conf_new();
    pulsarc_client_t *c = NULL;
    char err[512];
    if (!cc || pulsarc_conf_set(cc, "serviceUrl", o.url, err, sizeof err) ||
        pulsarc_client_new(cc, &c, err, sizeof err))
        die("client", err);
    pulsarc_conf_destroy(cc);
    for (int k = 0; k < o.ncounts; k++)
        bench_source(&o, c, first, o.counts[k]);
    pulsarc_client_destroy(c);
    return 0;
}
