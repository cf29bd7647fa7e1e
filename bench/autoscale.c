/*
 * autoscale — a fixed receive queue beside an auto-scaled one
 * (autoScaledReceiverQueueSizeEnabled), on a live broker: what each holds
 * in memory and how fast it drains a backlog, for a fast application (no
 * work per message) and a slow one (--work-us per message).
 *
 * Design notes
 *  - Public API only, plus nothing: the queue's current size and length
 *    come from pulsarc_consumer_stats, sampled after every receive; memory
 *    is the payload bytes queued (queue_len x --size), its peak and mean.
 *  - One topic, filled once (--messages of --size bytes, unbatched); each
 *    run reads it from the start on a subscription of its own.
 *  - After each run the consumer sits idle for --idle-ms with nothing
 *    to receive; "idle size" is its queue's size then: an auto-scaled
 *    queue halves every --idle-check-ms (autoScaledReceiverQueueIdleMs)
 *    that it stayed small and quiet, and "idle KiB" is what a burst could
 *    fill once the broker's old permits are used (idle size x --size).
 *  - Prints a table; asserts nothing (figures vary with the machine).
 *
 * Run: PULSARC_BROKER_INSTANCE=N bash test/broker/run-with-broker.sh \
 *        sh -c 'build/bench/autoscale --url $PULSAR_SERVICE_URL'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "pulsarc.h"

typedef struct opts {
    const char *url;
    int messages, size, queue, work_us, slow_messages, idle_ms, idle_check_ms;
} opts_t;

typedef struct run {
    double secs, peak_kb, mean_kb;
    size_t last_size, peak_size;
    int got;
} run_t;

static int parse(int argc, char **argv, opts_t *o) {
    *o = (opts_t){"pulsar://127.0.0.1:6650", 20000, 1024, 1000, 2000, 500, 3000, 250};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--url")) o->url = v;
        else if (!strcmp(a, "--messages")) o->messages = atoi(v);
        else if (!strcmp(a, "--size")) o->size = atoi(v);
        else if (!strcmp(a, "--queue")) o->queue = atoi(v);
        else if (!strcmp(a, "--work-us")) o->work_us = atoi(v);
        else if (!strcmp(a, "--slow-messages")) o->slow_messages = atoi(v);
        else if (!strcmp(a, "--idle-ms")) o->idle_ms = atoi(v);
        else if (!strcmp(a, "--idle-check-ms")) o->idle_check_ms = atoi(v);
        else return -1;
    }
    if (argc % 2 == 0 || o->messages <= 0 || o->size <= 0 || o->queue < 2 || o->work_us < 0 ||
        o->slow_messages <= 0 || o->slow_messages > o->messages || o->idle_ms < 0 || o->idle_check_ms < 0)
        return -1;
    return 0;
}

static int fill(pulsarc_client_t *cl, const char *topic, const opts_t *o) {
    char err[256];
    const char *const kv[][2] = {{"batchingEnabled", "false"}};
    pulsarc_conf_t *conf = conf_from_pairs(kv, 1, err, sizeof err);
    pulsarc_producer_t *p = NULL;
    if (!conf || pulsarc_producer_new(cl, topic, conf, &p, err, sizeof err)) {
        fprintf(stderr, "autoscale: producer: %s\n", err);
        pulsarc_conf_destroy(conf);
        return -1;
    }
    pulsarc_conf_destroy(conf);
    char *payload = calloc(1, (size_t)o->size);
    int rc = payload ? 0 : -1;
    for (int i = 0; !rc && i < o->messages; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new(); /* the library owns it after the call, whatever the result */
        pulsarc_msg_set_payload(m, payload, (size_t)o->size, PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send_async(p, m, NULL, NULL);
        if (e == PULSARC_ERR_QUEUE_FULL) { /* pending queue full: let it drain, then send it again */
            rc = pulsarc_producer_flush(p, 60000) == PULSARC_OK ? 0 : -1;
            i--;
        } else if (e) {
            rc = -1;
        }
    }
    if (!rc && pulsarc_producer_flush(p, 60000) != PULSARC_OK)
        rc = -1;
    free(payload);
    pulsarc_producer_destroy(p);
    return rc;
}

static pulsarc_consumer_t *subscribe(pulsarc_client_t *cl, const char *topic, const char *sub,
                                     const opts_t *o, int autoscale) {
    char q[32], idle[32], err[256];
    snprintf(q, sizeof q, "%d", o->queue);
    snprintf(idle, sizeof idle, "%d", o->idle_check_ms);
    const char *const kv[][2] = {{"receiverQueueSize", q},
                                 {"subscriptionInitialPosition", "Earliest"},
                                 {"autoScaledReceiverQueueSizeEnabled", autoscale ? "true" : "false"},
                                 {"autoScaledReceiverQueueIdleMs", idle}};
    pulsarc_conf_t *conf = conf_from_pairs(kv, 4, err, sizeof err);
    pulsarc_consumer_t *c = NULL;
    if (!conf || pulsarc_consumer_new(cl, topic, sub, conf, &c, err, sizeof err))
        fprintf(stderr, "autoscale: consumer: %s\n", err);
    pulsarc_conf_destroy(conf);
    return c;
}

/* Reads n messages, working work_us on each; samples the queue after every receive. */
static int drain(pulsarc_consumer_t *c, int n, int work_us, int size, run_t *r) {
    memset(r, 0, sizeof *r);
    double sum_kb = 0, t0 = now_s();
    for (; r->got < n; r->got++) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(c, &m, 10000);
        if (e != PULSARC_OK) {
            pulsarc_consumer_stats_t st;
            pulsarc_consumer_stats(c, &st);
            fprintf(stderr, "autoscale: %s; received %llu, queued %zu, queue size %zu\n",
                    pulsarc_strerror(e), (unsigned long long)st.received, st.queue_len, st.queue_size);
            return -1;
        }
        pulsarc_msg_destroy(m);
        pulsarc_consumer_stats_t st;
        pulsarc_consumer_stats(c, &st);
        double kb = (double)st.queue_len * size / 1024;
        sum_kb += kb;
        r->peak_kb = kb > r->peak_kb ? kb : r->peak_kb;
        r->peak_size = st.queue_size > r->peak_size ? st.queue_size : r->peak_size;
        r->last_size = st.queue_size;
        if (work_us)
            usleep((useconds_t)work_us);
    }
    r->secs = now_s() - t0;
    r->mean_kb = sum_kb / n;
    return 0;
}

static int one(pulsarc_client_t *cl, const char *topic, const opts_t *o, int autoscale, int slow) {
    char sub[64];
    snprintf(sub, sizeof sub, "bench-%s-%s", autoscale ? "auto" : "fixed", slow ? "slow" : "fast");
    pulsarc_consumer_t *c = subscribe(cl, topic, sub, o, autoscale);
    if (!c)
        return -1;
    usleep(300000); /* let a fixed queue fill, as it would while the application starts */
    run_t r;
    int n = slow ? o->slow_messages : o->messages;
    int rc = drain(c, n, slow ? o->work_us : 0, o->size, &r);
    pulsarc_consumer_stats_t st = {0};
    if (!rc) { /* nothing more to receive: how far does the queue come down? */
        usleep((useconds_t)o->idle_ms * 1000);
        pulsarc_consumer_stats(c, &st);
    }
    pulsarc_consumer_destroy(c);
    if (rc) {
        fprintf(stderr, "autoscale: %s: receive failed after %d messages\n", sub, r.got);
        return -1;
    }
    printf("%-6s %-5s %8d %10.0f %12.1f %12.1f %10zu %10zu %10zu %10.1f\n", autoscale ? "auto" : "fixed",
           slow ? "slow" : "fast", n, n / r.secs, r.peak_kb, r.mean_kb, r.peak_size, r.last_size,
           st.queue_size, (double)st.queue_size * o->size / 1024);
    return 0;
}

int main(int argc, char **argv) {
    opts_t o;
    if (parse(argc, argv, &o)) {
        fprintf(stderr, "usage: autoscale [--url U] [--messages N (20000)] [--size BYTES (1024)]\n"
                        "                 [--queue receiverQueueSize (1000)] [--work-us US (2000)]\n"
                        "                 [--slow-messages N (500)] [--idle-ms MS (3000)]\n"
                        "                 [--idle-check-ms autoScaledReceiverQueueIdleMs (250)]\n");
        return 2;
    }
    char err[256], topic[128];
    const char *const kv[][2] = {{"serviceUrl", o.url}};
    pulsarc_conf_t *conf = conf_from_pairs(kv, 1, err, sizeof err);
    pulsarc_client_t *cl = NULL;
    if (!conf || pulsarc_client_new(conf, &cl, err, sizeof err)) {
        fprintf(stderr, "autoscale: client: %s\n", err);
        return 1;
    }
    pulsarc_conf_destroy(conf);
    snprintf(topic, sizeof topic, "persistent://public/default/autoscale-bench-%d", (int)getpid());
    int rc = fill(cl, topic, &o);
    if (!rc) {
        printf("receiverQueueSize %d, %d-byte messages; slow: %d us of work per message; idle %d ms "
               "(checked every %d ms)\n", o.queue, o.size, o.work_us, o.idle_ms, o.idle_check_ms);
        printf("%-6s %-5s %8s %10s %12s %12s %10s %10s %10s %10s\n", "queue", "app", "msgs", "msgs/s",
               "peak KiB", "mean KiB", "peak size", "end size", "idle size", "idle KiB");
        for (int slow = 0; slow <= 1 && !rc; slow++)
            for (int autoscale = 0; autoscale <= 1 && !rc; autoscale++)
                rc = one(cl, topic, &o, autoscale, slow);
    }
    pulsarc_client_destroy(cl);
    return rc ? 1 : 0;
}
