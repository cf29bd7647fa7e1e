/*
 * latency — send at a fixed rate through the public API and report the send
 * latency distribution (to the receipt) or, with --e2e 1, the end-to-end
 * one (to a consumer of the same process receiving it), measured from each
 * message's *intended* send time.
 *
 * Design notes
 *  - Message i is due at t0 + i / rate. The sender sleeps until it is due
 *    (clock_nanosleep on an absolute deadline: no spinning), sends, and
 *    stamps the message with its due time, not with the time the call was
 *    made. If the client stalls, the messages that should have gone out
 *    meanwhile are late from their due time, so a stall shows up in the
 *    tail instead of being hidden (coordinated omission).
 *  - Latency = receipt callback time - due time, kept per message in one
 *    preallocated array; percentiles by sorting it after the run.
 *  - A message already due is sent without a sleep call: on a loaded
 *    machine each expired clock_nanosleep could still give the CPU away,
 *    so a sender that fell behind never caught up and the backlog (seconds
 *    at 50,000 msg/s) was charged to the client. The worst lateness of the
 *    paced loop itself is reported as sender_late_ms, to tell the two apart.
 *  - Timer slack is set to 1 ns: with the default 50 us every sleep would
 *    end late at 50,000 msg/s (a 20 us period) and the pacing, not the
 *    client, would be measured.
 *  - The producer batches as the saturation bench does (1 ms, 1,000
 *    messages, 128 KiB) unless --batch 0; a warm-up second at the same
 *    rate precedes the measured window and is not counted.
 *  - End to end: the consumer subscribes before the first send; each
 *    message carries its index + 1 as its event time (metadata, no payload
 *    change), and the receiving thread charges it from its due time.
 *  - Output: a human summary, then one `latency: key=value ...` line for
 *    bench/latency_compare.sh. Figures only.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "bench_util.h"
#include "pulsarc.h"

typedef struct opts {
    const char *url, *topic, *label;
    int rate, seconds, size, batch, e2e;
} opts_t;

typedef struct slot {
    double due;      /* intended send time, CLOCK_MONOTONIC seconds */
    double *lat_out; /* where the callback writes the latency, NULL in warm-up */
} slot_t;

/* What the receiving thread of --e2e needs. */
typedef struct e2e {
    pulsarc_consumer_t *consumer;
    const slot_t *slots;
    uint64_t warm, total;
    double *lat; /* indexed by message index - warm */
    uint64_t got;
} e2e_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static uint64_t outstanding, failures;
static int mode_e2e;
static double sender_late_max; /* seconds the paced loop was behind, at worst */

static void sleep_until(double t) {
    if (now_s() >= t)
        return; /* catching up: a sleep call, even one already due, may yield the CPU */
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - (double)(time_t)t) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    slot_t *s = opaque;
    double lat = now_s() - s->due;
    if (s->lat_out && !mode_e2e)
        *s->lat_out = err ? -1 : lat;
    pthread_mutex_lock(&lock);
    failures += err != 0;
    if (--outstanding == 0)
        pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

static int parse(int argc, char **argv, opts_t *o) {
    *o = (opts_t){.url = "pulsar://127.0.0.1:6650", .label = "pulsarc", .rate = 1000,
                  .seconds = 10, .size = 1024, .batch = 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--url")) o->url = v;
        else if (!strcmp(a, "--topic")) o->topic = v;
        else if (!strcmp(a, "--label")) o->label = v;
        else if (!strcmp(a, "--rate")) o->rate = atoi(v);
        else if (!strcmp(a, "--seconds")) o->seconds = atoi(v);
        else if (!strcmp(a, "--size")) o->size = atoi(v);
        else if (!strcmp(a, "--batch")) o->batch = atoi(v);
        else if (!strcmp(a, "--e2e")) o->e2e = atoi(v);
        else return -1;
    }
    return argc % 2 == 1 && o->topic && o->rate > 0 && o->seconds > 0 && o->size >= 0 ? 0 : -1;
}

static pulsarc_conf_t *make_conf(const opts_t *o, char *err, size_t el) {
    const char *const kv[][2] = {
        {"serviceUrl", o->url},
        {"blockIfQueueFull", "true"},
        {"maxPendingMessages", "100000"},
        {"batchingEnabled", o->batch ? "true" : "false"},
        {"batchingMaxPublishDelayMicros", "1000"},
        {"batchingMaxMessages", "1000"},
        {"batchingMaxBytes", "131072"},
    };
    return conf_from_pairs(kv, sizeof kv / sizeof kv[0], err, el);
}

/* Sends n messages due at t0 + i / rate, each stamped through slots[i]. */
static void paced(pulsarc_producer_t *p, const opts_t *o, const char *payload, slot_t *first,
                  slot_t *slots, uint64_t n, double t0) {
    for (uint64_t i = 0; i < n; i++) {
        slots[i].due = t0 + (double)i / o->rate;
        sleep_until(slots[i].due);
        double late = now_s() - slots[i].due;
        if (late > sender_late_max)
            sender_late_max = late;
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, payload, (size_t)o->size, PULSARC_MSG_F_BORROW);
        pulsarc_msg_set_event_time(m, (uint64_t)(slots + i - first) + 1);
        pthread_mutex_lock(&lock);
        outstanding++;
        pthread_mutex_unlock(&lock);
        pulsarc_producer_send_async(p, m, on_sent, &slots[i]);
    }
}

/* The receiving thread of --e2e: until every message arrived or 30 s of silence. */
static void *receive_all(void *arg) {
    e2e_t *e = arg;
    uint64_t seen = 0;
    while (seen < e->total) {
        pulsarc_msg_t *m = NULL;
        if (pulsarc_consumer_receive(e->consumer, &m, 30000) != PULSARC_OK)
            break;
        double t = now_s();
        uint64_t idx = pulsarc_msg_event_time(m) - 1;
        if (idx < e->total && idx >= e->warm) {
            e->lat[idx - e->warm] = t - e->slots[idx].due;
            e->got++;
        }
        seen++;
        pulsarc_msg_destroy(m);
    }
    return NULL;
}

static void drain(void) {
    pthread_mutex_lock(&lock);
    while (outstanding > 0)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, uint64_t n, double q) {
    uint64_t k = (uint64_t)(q * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1] * 1e3;
}

static void report(const opts_t *o, double *lat, uint64_t n) {
    uint64_t ok = 0;
    for (uint64_t i = 0; i < n; i++)
        if (lat[i] > 0)
            lat[ok++] = lat[i];
    qsort(lat, ok, sizeof *lat, cmp_d);
    double p50 = ok ? pct(lat, ok, 0.50) : 0, p99 = ok ? pct(lat, ok, 0.99) : 0;
    double p999 = ok ? pct(lat, ok, 0.999) : 0, max = ok ? lat[ok - 1] * 1e3 : 0;
    const char *status = failures ? "errors" : ok == n ? "ok" : "short";
    printf("%s: %s, %d msg/s x %d B %s for %d s: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, "
           "max %.3f ms (%" PRIu64 " msgs, %" PRIu64 " failed; sender behind by up to %.3f ms)\n",
           o->label, o->e2e ? "end to end" : "send", o->rate, o->size,
           o->batch ? "batched" : "unbatched", o->seconds, p50, p99,
           p999, max, ok, failures, sender_late_max * 1e3);
    printf("latency: label=%s status=%s mode=%s rate=%d size=%d batch=%d msgs=%" PRIu64
           " p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f sender_late_ms=%.3f\n",
           o->label, status, o->e2e ? "e2e" : "send", o->rate, o->size, o->batch, ok, p50, p99,
           p999, max, sender_late_max * 1e3);
}

/* Subscribes the --e2e consumer before anything is sent (Latest is then enough). */
static pulsarc_consumer_t *subscribe(pulsarc_client_t *client, const opts_t *o, char *err,
                                     size_t el) {
    pulsarc_consumer_t *c = NULL;
    pulsarc_conf_t *conf = pulsarc_conf_new();
    if (conf && !pulsarc_conf_set(conf, "receiverQueueSize", "10000", err, el))
        pulsarc_consumer_new(client, o->topic, "latency-e2e", conf, &c, err, el);
    pulsarc_conf_destroy(conf);
    return c;
}

int main(int argc, char **argv) {
    opts_t o;
    if (parse(argc, argv, &o)) {
        fprintf(stderr, "usage: %s --url URL --topic TOPIC [--rate N] [--seconds S] [--size B] "
                        "[--batch 0|1] [--e2e 0|1] [--label NAME]\n", argv[0]);
        return 2;
    }
    mode_e2e = o.e2e;
    char err[512] = "";
    pulsarc_conf_t *conf = make_conf(&o, err, sizeof err);
    pulsarc_client_t *client = NULL;
    pulsarc_producer_t *prod = NULL;
    e2e_t e = {0};
    if (!conf || pulsarc_client_new(conf, &client, err, sizeof err) ||
        (o.e2e && !(e.consumer = subscribe(client, &o, err, sizeof err))) ||
        pulsarc_producer_new(client, o.topic, conf, &prod, err, sizeof err)) {
        fprintf(stderr, "latency: set-up failed: %s\n", err);
        printf("latency: label=%s status=setup-failed\n", o.label);
        pulsarc_consumer_destroy(e.consumer);
        pulsarc_client_destroy(client);
        pulsarc_conf_destroy(conf);
        return 1;
    }
    /* Default timer slack (50 us) would make every sleep late at high rates. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uint64_t warm = (uint64_t)o.rate, n = (uint64_t)o.rate * (uint64_t)o.seconds;
    char *payload = calloc(1, (size_t)o.size + 1);
    slot_t *slots = calloc(warm + n, sizeof *slots);
    double *lat = calloc(n, sizeof *lat);
    for (uint64_t i = 0; i < n; i++)
        slots[warm + i].lat_out = &lat[i];
    e = (e2e_t){.consumer = e.consumer, .slots = slots, .warm = warm, .total = warm + n, .lat = lat};
    pthread_t rx;
    int rx_started = o.e2e && pthread_create(&rx, NULL, receive_all, &e) == 0;
    double t0 = now_s() + 0.01;
    paced(prod, &o, payload, slots, slots, warm, t0);
    paced(prod, &o, payload, slots, slots + warm, n, t0 + (double)warm / o.rate);
    drain();
    if (rx_started)
        pthread_join(rx, NULL);
    report(&o, lat, n);
    pulsarc_producer_destroy(prod);
    pulsarc_consumer_destroy(e.consumer);
    pulsarc_client_destroy(client);
    pulsarc_conf_destroy(conf);
    free(payload), free(slots), free(lat);
    return failures ? 1 : 0;
}
