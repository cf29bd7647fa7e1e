/*
 * Reliability against the real broker through the fault proxy
 * (test/faults/proxy.c): connections cut at random moments (RST, often in
 * the middle of a frame), stalls longer than the keep-alive interval,
 * per-chunk delays, and closes while the network is stuck. Nothing
 * produced may be lost; unacked messages must come back; acked ones must
 * never reach the application again (an ack the broker did not confirm is
 * sent again after the reconnect, and a redelivery of an acked message is
 * dropped by the consumer); the consumer must never stall for good (flow
 * permits neither lost nor doubled).
 *
 * Each scenario prints one "counts:" line: sent, received (deliveries),
 * unique, lost, duplicated, reconnects, longest stall; and, for the cuts
 * and the stall's end, how long the producer and the consumer took from
 * that moment (the proxy passes traffic again) to their first send receipt
 * / first message produced after it, with the median and max per scenario
 * ("recovery:" lines, recovery.h; a cut that comes before the handles got
 * over the previous one supersedes it). After a cut the consumer counts as
 * recovered at its first message on a new subscription (its reconnect
 * count grew): it lags behind production, so "a message produced after the
 * cut" would mostly come after the next cut. Printed, not asserted; a
 * handle still not working 60 s after the stall's end fails as a hang
 * (after cuts, the end-of-run checks catch a stuck handle: every message
 * must arrive within the deadline).
 *
 * Sizes: the default run is 20,000 messages and 20 cuts (about a minute on
 * 2 cores). PULSARC_LONG=1 adds the long scenario: 1,000,000
 * messages and 100 cuts (several minutes).
 *
 * Design notes
 *  - Producer and consumer use separate clients, both through the proxy,
 *    so cuts hit two connections that reconnect independently.
 *  - Cuts are placed by production progress (random thresholds over the
 *    message count), so they land during production whatever its speed;
 *    every other cut is a byte-budget cut that fires mid-stream.
 *  - Classification per message index: the first message id seen is "the"
 *    entry; a different id for the same index is a producer resend after a
 *    lost receipt (allowed without broker deduplication); the same id again
 *    is a redelivery: expected for nacked messages, "dup after ack" for
 *    acked ones, which must not happen.
 *  - At the end a fresh consumer on the same subscription, directly on the
 *    broker, must find nothing: every ack reached the broker eventually.
 *  - The "held" cases place the rare event of the long runs on purpose: the
 *    application holds a message while a cut makes the broker resend it,
 *    acks it once the copy is queued, and receives at once.
 *  - Cuts are not held back until the handles have recovered: they keep
 *    landing during production, in quick succession too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../faults/proxy.h"
#include "core/url.h"
#include "recovery.h"
#include "testutil.h"

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

static pc_proxy_t *proxy_to_broker(void) {
    pc_service_url_t u;
    char err[256];
    ck_assert_msg(!pc_service_url_parse(pct_service_url(), &u, err, sizeof err), "%s", err);
    pc_proxy_t *px = pc_proxy_new(u.hosts[0].host, u.hosts[0].port);
    ck_assert_ptr_nonnull(px);
    return px;
}

static pulsarc_client_t *client_op(const char *url, const char *keepalive_s, const char *op_ms) {
    const char *kv[] = {"serviceUrl", url, "operationTimeoutMs", op_ms,
                        "initialBackoffIntervalMs", "100", "maxBackoffIntervalMs", "1000",
                        "keepAliveIntervalSeconds", keepalive_s, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_client_t *c = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client: %s", err);
    return c;
}

static pulsarc_client_t *client_via(const char *url, const char *keepalive_s) {
    return client_op(url, keepalive_s, "10000");
}

/* ---------- the scenario state ---------- */

#define NACK_EVERY 50 /* index % NACK_EVERY == 7: nacked on its first delivery */
#define QUEUE_SIZE 1000

typedef struct scen {
    int n, cuts;
    int dedup;       /* dedup namespace, named batching producer, no nacks */
    const char *name;
    pulsarc_producer_t *p;
    pulsarc_consumer_t *c;
    pc_proxy_t *px;
    /* producer side */
    _Atomic int queued, sent_ok, send_failed;
    _Atomic int producing;
    /* consumer side (consumer thread only, read after join) */
    int64_t *first_ledger, *first_entry;
    int *deliveries, *acked;
    long deliveries_total, unique, producer_dups, dup_after_ack, nack_redeliveries;
    long out_of_order; /* first deliveries below the highest index seen */
    int max_first;
    size_t max_queue;
    int64_t longest_gap_ms;
    _Atomic int stop_consumer;
    _Atomic int satisfied; /* indices with all the deliveries they need */
    pct_recovery_t rec_p, rec_c; /* producer's and consumer's recovery figures */
    pct_recovery_t rec_cut;      /* the consumer's after cuts: by its reconnect count */
} scen_t;

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    scen_t *s = opaque;
    if (err == PULSARC_OK) {
        atomic_fetch_add(&s->sent_ok, 1);
        pct_recovery_ok(&s->rec_p);
    } else
        atomic_fetch_add(&s->send_failed, 1);
}

static void *produce(void *arg) {
    scen_t *s = arg;
    char body[32];
    for (int i = 0; i < s->n; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        int len = snprintf(body, sizeof body, "m-%d", i);
        pulsarc_msg_set_payload(m, body, (size_t)len, PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send_async(s->p, m, on_sent, s);
        if (e != PULSARC_OK)
            fprintf(stderr, "send_async %d: %s\n", i, pulsarc_errname(e));
        atomic_fetch_add(&s->queued, 1);
    }
    pulsarc_producer_flush(s->p, 120000);
    atomic_store(&s->producing, 0);
    return NULL;
}

static int msg_index(const pulsarc_msg_t *m, int n) {
    char buf[32];
    size_t len = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(buf, pulsarc_msg_payload(m), len);
    buf[len] = '\0';
    int i = -1;
    return sscanf(buf, "m-%d", &i) == 1 && i >= 0 && i < n ? i : -1;
}

static int nacked_first(const scen_t *s, int i) { return !s->dedup && i % NACK_EVERY == 7; }

static void first_delivery(scen_t *s, int i, pulsarc_msgid_t id) {
    s->first_ledger[i] = id.ledger_id;
    s->first_entry[i] = id.entry_id;
    s->unique++;
    if (i < s->max_first)
        s->out_of_order++;
    else
        s->max_first = i;
}

/* Books one delivery and acks or nacks it. */
static void take(scen_t *s, pulsarc_msg_t *m) {
    int i = msg_index(m, s->n);
    ck_assert_int_ge(i, 0);
    pulsarc_msgid_t id = pulsarc_msg_id(m);
    s->deliveries_total++;
    pct_recovery_recv(&s->rec_c, i);
    if (s->deliveries[i] == 0) {
        first_delivery(s, i, id);
    } else if (s->first_ledger[i] != id.ledger_id || s->first_entry[i] != id.entry_id) {
        s->producer_dups++; /* a resent copy: a distinct entry, just ack it */
        pulsarc_consumer_ack(s->c, m);
        return;
    } else if (s->acked[i]) {
        s->dup_after_ack++;
    } else {
        s->nack_redeliveries++;
    }
    s->deliveries[i]++;
    if (s->deliveries[i] == (nacked_first(s, i) ? 2 : 1))
        atomic_fetch_add(&s->satisfied, 1);
    if (nacked_first(s, i) && s->deliveries[i] == 1) {
        pulsarc_consumer_nack(s->c, m);
    } else {
        pulsarc_consumer_ack(s->c, m);
        s->acked[i] = 1;
    }
}

static void *consume(void *arg) {
    scen_t *s = arg;
    int64_t last = 0;
    while (!atomic_load(&s->stop_consumer)) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(s->c, &m, 200);
        pulsarc_consumer_stats_t st;
        pulsarc_consumer_stats(s->c, &st);
        if (st.queue_len > s->max_queue)
            s->max_queue = st.queue_len;
        if (e != PULSARC_OK)
            continue;
        pct_recovery_recv(&s->rec_cut, (long)st.reconnects);
        int64_t now = mono_ms();
        if (last && now - last > s->longest_gap_ms)
            s->longest_gap_ms = now - last;
        last = now;
        take(s, m);
        pulsarc_msg_destroy(m);
    }
    return NULL;
}

/* ---------- chaos ---------- */

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Waits until production passed `at` messages (or ended). */
static void wait_progress(scen_t *s, int at) {
    while (atomic_load(&s->queued) < at && atomic_load(&s->producing))
        sleep_ms(5);
}

/* A producer receipt can still come: production has not finished. */
static int producer_busy(void *arg) { return atomic_load(&((scen_t *)arg)->producing); }

/* A message from the consumer's mark on will still be produced. */
static int more_to_consume(void *arg) {
    scen_t *s = arg;
    return atomic_load(&s->rec_c.from_index) < s->n;
}

/* Traffic passes again now (the stall ended): start timing both handles. */
static void mark_recovery(scen_t *s) {
    pct_recovery_mark(&s->rec_p, 0);
    pct_recovery_mark(&s->rec_c, atomic_load(&s->queued));
}

/* A cut just happened: the consumer recovers on its next subscription. */
static void mark_cut(scen_t *s) {
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(s->c, &st);
    pct_recovery_mark(&s->rec_p, 0);
    pct_recovery_mark(&s->rec_cut, (long)st.reconnects + 1);
}

/* Both handles must work again within the hang bound (after the last event). */
static void await_recovery(scen_t *s, const char *event) {
    int64_t p = pct_recovery_wait(&s->rec_p, producer_busy, s);
    int64_t c = pct_recovery_wait(&s->rec_c, more_to_consume, s);
    printf("recovery-event: %-10s producer_ms=%lld consumer_ms=%lld\n", event, (long long)p,
           (long long)c);
    fflush(stdout);
    ck_assert_msg(p != -1, "%s: the producer sent nothing for %d s after traffic resumed", event,
                  PCT_RECOVERY_HANG_MS / 1000);
    ck_assert_msg(c != -1, "%s: the consumer received nothing new for %d s after traffic resumed",
                  event, PCT_RECOVERY_HANG_MS / 1000);
}

/* One cut: a reset now (even k) or after a random byte budget (odd k). */
static void cut(scen_t *s, int k, unsigned *seed) {
    pc_proxy_stats_t ps;
    pc_proxy_stats(s->px, &ps);
    if (k % 2 == 0) {
        pc_proxy_cut_all(s->px);
        return;
    }
    pc_proxy_cut_after(s->px, 1 + (uint64_t)(rand_r(seed) % 65536));
    uint64_t before = ps.cut_events;
    for (int waited = 0; waited < 3000; waited += 5) {
        pc_proxy_stats(s->px, &ps);
        if (ps.cut_events > before)
            return;
        sleep_ms(5);
    }
    pc_proxy_cut_after(s->px, 0); /* idle stream: cut now instead */
    pc_proxy_cut_all(s->px);
}

static void run_cuts(scen_t *s, unsigned seed) {
    int *at = calloc((size_t)s->cuts, sizeof *at);
    for (int k = 0; k < s->cuts; k++)
        at[k] = s->n / 20 + (int)(rand_r(&seed) % (unsigned)(s->n * 9 / 10));
    qsort(at, (size_t)s->cuts, sizeof *at, cmp_int);
    for (int k = 0; k < s->cuts; k++) {
        wait_progress(s, at[k]);
        sleep_ms((int)(rand_r(&seed) % 100));
        cut(s, k, &seed);
        mark_cut(s);
    }
    free(at);
}

/* ---------- the scenario ---------- */

/* dedup: named (the broker keys deduplication on the name) and batching. */
static pulsarc_producer_t *make_producer_for(pulsarc_client_t *c, const char *topic, int dedup) {
    const char *kv[] = {"batchingEnabled", dedup ? "true" : "false", "sendTimeoutMs", "0",
                        "maxPendingMessages", "2000", "blockIfQueueFull", "true",
                        dedup ? "producerName" : NULL, "faults-writer", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer: %s", err);
    return p;
}

static pulsarc_producer_t *make_producer(pulsarc_client_t *c, const char *topic) {
    return make_producer_for(c, topic, 0);
}

static pulsarc_consumer_t *make_consumer(pulsarc_client_t *c, const char *topic) {
    char qs[16];
    snprintf(qs, sizeof qs, "%d", QUEUE_SIZE);
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "receiverQueueSize", qs,
                        "negativeAckRedeliveryDelayMicros", "200000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "faults-sub", conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer: %s", err);
    return cons;
}

static void scen_alloc(scen_t *s, int n, int cuts, const char *name) {
    memset(s, 0, sizeof *s);
    s->n = n;
    s->cuts = cuts;
    s->name = name;
    s->first_ledger = calloc((size_t)n, sizeof(int64_t));
    s->first_entry = calloc((size_t)n, sizeof(int64_t));
    s->deliveries = calloc((size_t)n, sizeof(int));
    s->acked = calloc((size_t)n, sizeof(int));
    atomic_store(&s->producing, 1);
    pct_recovery_init(&s->rec_p, "producer");
    pct_recovery_init(&s->rec_c, "consumer");
    pct_recovery_init(&s->rec_cut, "consumer");
}

static void scen_free(scen_t *s) {
    free(s->first_ledger);
    free(s->first_entry);
    free(s->deliveries);
    free(s->acked);
}

/* Messages a fresh consumer on the subscription still gets (should be none). */
static int leftovers(const char *topic) {
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = make_consumer(c, topic);
    int n = 0;
    pulsarc_msg_t *m = NULL;
    while (pulsarc_consumer_receive(cons, &m, 3000) == PULSARC_OK) {
        n++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    return n;
}

static void report(const scen_t *s, long lost, long dups, uint64_t reconnects,
                   const pc_proxy_stats_t *ps, int left, int64_t took) {
    printf("counts: %-16s sent=%d received=%ld unique=%ld lost=%ld duplicated=%ld "
           "(producer_resends=%ld dup_after_ack=%ld) nack_redeliveries=%ld out_of_order=%ld reconnects=%llu "
           "longest_stall_ms=%lld max_queue=%zu cuts=%llu conns_cut=%llu proxy_accepted=%llu "
           "send_failed=%d leftovers=%d took_ms=%lld\n",
           s->name, atomic_load(&s->sent_ok), s->deliveries_total, s->unique, lost, dups,
           s->producer_dups, s->dup_after_ack, s->nack_redeliveries, s->out_of_order,
           (unsigned long long)reconnects,
           (long long)s->longest_gap_ms, s->max_queue, (unsigned long long)ps->cut_events,
           (unsigned long long)ps->conns_cut, (unsigned long long)ps->accepted,
           atomic_load(&s->send_failed), left, (long long)took);
    fflush(stdout);
}

typedef void (*chaos_fn)(scen_t *s, unsigned seed);

/* A topic of its own in a namespace with broker deduplication on. */
static const char *dedup_topic(void) {
    static char ns[128], topic[512];
    snprintf(ns, sizeof ns, "public/faults-%d-%ld", (int)getpid(), (long)time(NULL));
    pct_create_dedup_namespace(ns);
    snprintf(topic, sizeof topic, "%s/%s", ns, pct_topic("faults-dedup"));
    return topic;
}

static void run_scenario(int n, int cuts, const char *name, int deadline_s, chaos_fn chaos,
                         const char *keepalive_s, int dedup) {
    static scen_t s;
    scen_alloc(&s, n, cuts, name);
    s.dedup = dedup;
    const char *topic = dedup ? dedup_topic() : pct_topic("faults");
    s.px = proxy_to_broker();
    pulsarc_client_t *pc = client_via(pc_proxy_url(s.px), keepalive_s);
    pulsarc_client_t *cc = client_via(pc_proxy_url(s.px), keepalive_s);
    s.c = make_consumer(cc, topic);
    s.p = make_producer_for(pc, topic, dedup);
    int64_t t0 = mono_ms();
    pthread_t pt, ct;
    pthread_create(&ct, NULL, consume, &s);
    pthread_create(&pt, NULL, produce, &s);
    chaos(&s, (unsigned)time(NULL));
    pthread_join(pt, NULL);
    int64_t deadline = mono_ms() + deadline_s * 1000;
    while (atomic_load(&s.satisfied) < n && mono_ms() < deadline)
        sleep_ms(50);
    sleep_ms(300); /* late duplicates, and the last grouped acks */
    atomic_store(&s.stop_consumer, 1);
    pthread_join(ct, NULL);
    int64_t took = mono_ms() - t0;
    pulsarc_consumer_stats_t cst;
    pulsarc_consumer_stats(s.c, &cst);
    pulsarc_consumer_destroy(s.c); /* flushes pending acks */
    pulsarc_producer_destroy(s.p);
    pulsarc_client_destroy(cc);
    pulsarc_client_destroy(pc);
    pc_proxy_stats_t ps;
    pc_proxy_stats(s.px, &ps);
    pc_proxy_destroy(s.px);
    long lost = 0;
    for (int i = 0; i < n; i++)
        lost += s.deliveries[i] == 0;
    int left = leftovers(topic);
    long dups = s.producer_dups + s.dup_after_ack;
    report(&s, lost, dups, cst.reconnects, &ps, left, took);
    pct_recovery_print(name, &s.rec_p);
    pct_recovery_print(name, s.rec_cut.marks ? &s.rec_cut : &s.rec_c);
    ck_assert_int_eq(atomic_load(&s.send_failed), 0);
    ck_assert_int_eq(atomic_load(&s.sent_ok), n);
    ck_assert_int_eq(lost, 0);
    ck_assert_int_eq(atomic_load(&s.satisfied), n); /* every nacked message came back */
    ck_assert_uint_ge(ps.cut_events, (uint64_t)cuts);
    ck_assert_uint_ge(cst.reconnects, cuts > 0 ? 1 : 0);
    /* Never again after an ack, whatever was in flight when a connection died. */
    ck_assert_int_eq(s.dup_after_ack, 0);
    /* Permits never doubled. Unbatched only: for batch entries the broker
     * turns permits into an entry count by its running average of messages
     * per entry (1 at first), so one read may overshoot by a whole read's
     * worth of batches without the client asking twice. */
    if (!dedup)
        ck_assert_uint_le(s.max_queue, QUEUE_SIZE);
    ck_assert_int_lt(s.longest_gap_ms, 15000);  /* never stalled for good */
    ck_assert_int_eq(left, 0);
    if (dedup) { /* exactly once, in order: no second entry for any message */
        ck_assert_int_eq(s.producer_dups, 0);
        ck_assert_int_eq(s.out_of_order, 0);
    }
    scen_free(&s);
}

START_TEST(test_cuts_nothing_lost) { run_scenario(20000, 20, "cuts 20k/20", 120, run_cuts, "30", 0); }
END_TEST

START_TEST(test_cuts_dedup_exactly_once) {
    run_scenario(20000, 20, "cuts 20k/20 dedup", 120, run_cuts, "30", 1);
}
END_TEST

static int long_or_skip(const char *name) {
    const char *v = getenv("PULSARC_LONG");
    if (v && strcmp(v, "1") == 0)
        return 1;
    printf("counts: %-16s skipped (set PULSARC_LONG=1)\n", name);
    return 0;
}

START_TEST(test_cuts_long) {
    if (long_or_skip("cuts 1M/100"))
        run_scenario(1000000, 100, "cuts 1M/100", 900, run_cuts, "30", 0);
}
END_TEST

START_TEST(test_cuts_long_dedup) {
    if (long_or_skip("cuts 1M/100 dedup"))
        run_scenario(1000000, 100, "cuts 1M/100 dedup", 900, run_cuts, "30", 1);
}
END_TEST

/* A 3.5 s stall (keep-alive 1 s: the client must give up on the connection
 * and reconnect), then 20 ms per chunk for the rest of the run. */
static void run_stall_delay(scen_t *s, unsigned seed) {
    (void)seed;
    wait_progress(s, s->n / 3);
    pc_proxy_stall(s->px, 3500);
    sleep_ms(3500);
    mark_recovery(s);
    await_recovery(s, "stall end");
    wait_progress(s, 2 * s->n / 3);
    pc_proxy_delay(s->px, 20);
    while (atomic_load(&s->producing))
        sleep_ms(20);
    pc_proxy_delay(s->px, 0);
}

START_TEST(test_stall_and_delay) {
    run_scenario(5000, 0, "stall+delay 5k", 60, run_stall_delay, "1", 0);
}
END_TEST

/* ---------- close while the network is stuck ---------- */

#define NPEND 300

static _Atomic int calls[NPEND];
static _Atomic int total_calls, closed_calls, ok_calls;

static void on_pending(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                       pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    atomic_fetch_add(&calls[(intptr_t)opaque], 1);
    atomic_fetch_add(&total_calls, 1);
    if (err == PULSARC_ERR_CLOSED)
        atomic_fetch_add(&closed_calls, 1);
    else if (err == PULSARC_OK)
        atomic_fetch_add(&ok_calls, 1);
}

typedef struct rx {
    pulsarc_consumer_t *c;
    pulsarc_err_t err;
} rx_t;

static void *blocked_receive(void *arg) {
    rx_t *r = arg;
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e;
    while ((e = pulsarc_consumer_receive(r->c, &m, 30000)) == PULSARC_OK)
        pulsarc_msg_destroy(m);
    r->err = e;
    return NULL;
}

static void *close_client(void *arg) {
    pulsarc_client_close(arg, 3000);
    return NULL;
}

START_TEST(test_close_while_stalled) {
    const char *topic = pct_topic("faults-close");
    pc_proxy_t *px = proxy_to_broker();
    pulsarc_client_t *c = client_op(pc_proxy_url(px), "30", "3000");
    pulsarc_consumer_t *cons = make_consumer(c, topic);
    pulsarc_producer_t *p = make_producer(c, topic);
    rx_t rx = {cons, PULSARC_OK};
    pthread_t rt, ct;
    pthread_create(&rt, NULL, blocked_receive, &rx);
    pc_proxy_stall(px, 60000); /* nothing moves: every send stays pending */
    for (int i = 0; i < NPEND; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, "pending", 7, PULSARC_MSG_F_COPY);
        pulsarc_producer_send_async(p, m, on_pending, (void *)(intptr_t)i);
    }
    sleep_ms(300);
    int64_t t0 = mono_ms();
    pthread_create(&ct, NULL, close_client, c);
    pthread_join(ct, NULL);
    pthread_join(rt, NULL);
    int64_t close_ms = mono_ms() - t0;
    for (int w = 0; w < 5000 && atomic_load(&total_calls) < NPEND; w += 10)
        sleep_ms(10);
    sleep_ms(200);
    int once = 1;
    for (int i = 0; i < NPEND; i++)
        once &= atomic_load(&calls[i]) == 1;
    printf("counts: close while stalled sent=%d callbacks=%d closed=%d ok=%d exactly_once=%d "
           "receive=%s close_ms=%lld\n",
           NPEND, atomic_load(&total_calls), atomic_load(&closed_calls), atomic_load(&ok_calls), once,
           pulsarc_errname(rx.err), (long long)close_ms);
    fflush(stdout);
    ck_assert_int_eq(atomic_load(&total_calls), NPEND);
    ck_assert(once);
    ck_assert_int_eq(atomic_load(&closed_calls) + atomic_load(&ok_calls), NPEND);
    ck_assert_int_eq(rx.err, PULSARC_ERR_CLOSED);
    ck_assert_int_lt(close_ms, 3000 + 1500); /* pulsarc_client_close(c, 3000) */
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
}
END_TEST

/* ---------- an ack of a message held across a reconnect ---------- */

#define HELD_N 60
#define HELD_ROUNDS 6

/* HELD_N messages "m-<i>", directly on the broker: in batches of 10, or one an entry. */
static void send_numbered(const char *topic, int batched) {
    pulsarc_client_t *c = pct_client();
    pct_send_tagged_async(c, topic, "m", HELD_N, batched ? 10 : 0);
    pulsarc_client_destroy(c);
}

/* The broker resends what is unacked: after a cut, or asked to redeliver everything. */
static int resend_seen(const pulsarc_consumer_stats_t *now, const pulsarc_consumer_stats_t *before,
                       int redeliver) {
    return redeliver ? now->redelivery_requests > before->redelivery_requests
                     : now->reconnects > before->reconnects;
}

/* Makes the broker resend, and waits until the resend reached the queue. */
static void force_resend(pc_proxy_t *px, pulsarc_consumer_t *c, int redeliver) {
    pulsarc_consumer_stats_t before, st;
    pulsarc_consumer_stats(c, &before);
    if (redeliver)
        ck_assert_int_eq(pulsarc_consumer_redeliver_unacked(c), PULSARC_OK);
    else
        pc_proxy_cut_all(px);
    int seen_at = -1;
    for (int waited = 0; waited < 30000; waited += 10) {
        pulsarc_consumer_stats(c, &st);
        if (seen_at < 0 && resend_seen(&st, &before, redeliver))
            seen_at = waited;
        /* a moment after it: the io thread emptied the queue right after counting */
        if (seen_at >= 0 && waited - seen_at >= 50 && st.queue_len > 0)
            return;
        sleep_ms(10);
    }
    ck_abort_msg("no resend within 30 s");
}

/* Receives one message, counts it, and returns it (NULL at the end). */
static pulsarc_msg_t *take_counted(pulsarc_consumer_t *c, int *seen, int timeout_ms) {
    pulsarc_msg_t *m = NULL;
    if (pulsarc_consumer_receive(c, &m, timeout_ms) != PULSARC_OK)
        return NULL;
    int i = msg_index(m, HELD_N);
    ck_assert_int_ge(i, 0);
    seen[i]++;
    return m;
}

static void ack_and_destroy(pulsarc_consumer_t *c, pulsarc_msg_t *m, int cumulative) {
    ck_assert_int_eq(cumulative ? pulsarc_consumer_ack_cumulative(c, m) : pulsarc_consumer_ack(c, m),
                     PULSARC_OK);
    pulsarc_msg_destroy(m);
}

static void check_exactly_once(const int *seen, const char *name, pulsarc_consumer_t *c) {
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(c, &st);
    int once = 0;
    for (int i = 0; i < HELD_N; i++)
        once += seen[i] == 1;
    printf("counts: held across, %s: rounds=%d exactly_once=%d/%d reconnects=%llu "
           "redelivery_requests=%llu\n", name, HELD_ROUNDS, once, HELD_N,
           (unsigned long long)st.reconnects, (unsigned long long)st.redelivery_requests);
    fflush(stdout);
    for (int i = 0; i < HELD_N; i++)
        ck_assert_msg(seen[i] == 1, "%s: m-%d reached the application %d times", name, i, seen[i]);
}

typedef struct held_case {
    const char *name;
    int batched, cumulative, redeliver;
} held_case_t;

/*
 * The application holds a message while the broker resends everything
 * unacked, this message's copy first (a cut, or a redeliver-everything
 * request); it acks the message once the copy is queued, and receives at
 * once. Every message must reach it exactly once: the copy may neither be
 * handed out nor be lost with the rest.
 */
static void held_across_resends(const held_case_t *hc) {
    const char *topic = pct_topic("faults-held");
    send_numbered(topic, hc->batched);
    pc_proxy_t *px = proxy_to_broker();
    pulsarc_client_t *cc = client_via(pc_proxy_url(px), "30");
    pulsarc_consumer_t *c = make_consumer(cc, topic);
    int seen[HELD_N] = {0};
    for (int round = 0; round < HELD_ROUNDS; round++) {
        pulsarc_msg_t *held = take_counted(c, seen, 10000);
        ck_assert_ptr_nonnull(held);
        force_resend(px, c, hc->redeliver);
        ack_and_destroy(c, held, hc->cumulative);
        for (int k = 0; k < 4; k++) {
            pulsarc_msg_t *m = take_counted(c, seen, 10000);
            ck_assert_ptr_nonnull(m);
            ack_and_destroy(c, m, hc->cumulative);
        }
    }
    pulsarc_msg_t *m;
    while ((m = take_counted(c, seen, 2000)))
        ack_and_destroy(c, m, hc->cumulative);
    check_exactly_once(seen, hc->name, c);
    pulsarc_consumer_destroy(c);
    pulsarc_client_destroy(cc);
    pc_proxy_destroy(px);
}

static const held_case_t held_cases[] = {
    {"unbatched", 0, 0, 0},
    {"batched", 1, 0, 0},
    {"cumulative", 0, 1, 0},
    {"redeliver everything", 0, 0, 1},
};

START_TEST(test_ack_held_across_resend) { held_across_resends(&held_cases[_i]); }
END_TEST

/* A listener that holds every tenth message until the test lets it go. */
typedef struct held_listener {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int seen[HELD_N];
    int delivered, holding, release, bad;
} held_listener_t;

static void hold_until_released(held_listener_t *h) {
    h->holding = 1;
    pthread_cond_broadcast(&h->cond);
    while (!h->release)
        pthread_cond_wait(&h->cond, &h->lock);
    h->release = h->holding = 0;
}

static void on_held_message(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *arg) {
    held_listener_t *h = arg;
    int i = msg_index(m, HELD_N);
    pthread_mutex_lock(&h->lock);
    if (i < 0) {
        h->bad++;
    } else {
        h->seen[i]++;
        h->delivered++;
        pthread_cond_broadcast(&h->cond);
        if (i % (HELD_N / HELD_ROUNDS) == 0 && h->seen[i] == 1)
            hold_until_released(h);
    }
    pthread_mutex_unlock(&h->lock);
    pulsarc_err_t e = pulsarc_consumer_ack(c, m); /* inside the callback: it waits there too */
    pulsarc_msg_destroy(m);
    if (e != PULSARC_OK) {
        pthread_mutex_lock(&h->lock);
        h->bad++;
        pthread_mutex_unlock(&h->lock);
    }
}

/* Until the listener holds a message (or delivered reaches want), 30 s at most. */
static void await_listener(held_listener_t *h, int want_holding, int want_delivered) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 30;
    pthread_mutex_lock(&h->lock);
    int ok = 1;
    while (ok && (want_holding ? !h->holding : h->delivered < want_delivered))
        ok = pthread_cond_timedwait(&h->cond, &h->lock, &dl) == 0;
    int delivered = h->delivered, holding = h->holding;
    pthread_mutex_unlock(&h->lock);
    ck_assert_msg(ok, "listener: waited 30 s for %s (delivered %d, holding %d)",
                  want_holding ? "a held message" : "every message", delivered, holding);
}

/* The same with a message listener, whose ack runs inside the callback. */
START_TEST(test_ack_held_across_reconnect_listener) {
    const char *topic = pct_topic("faults-held-l");
    send_numbered(topic, 0);
    static held_listener_t h;
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    pc_proxy_t *px = proxy_to_broker();
    pulsarc_client_t *cc = client_via(pc_proxy_url(px), "30");
    char qs[16];
    snprintf(qs, sizeof qs, "%d", QUEUE_SIZE);
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "receiverQueueSize", qs, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set_message_listener(conf, on_held_message, &h);
    pulsarc_consumer_t *c = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(cc, topic, "faults-sub", conf, &c, err, sizeof err) ==
                      PULSARC_OK, "consumer: %s", err);
    pulsarc_conf_destroy(conf);
    for (int round = 0; round < HELD_ROUNDS; round++) {
        await_listener(&h, 1, 0);
        force_resend(px, c, 0);
        pthread_mutex_lock(&h.lock);
        h.release = 1;
        pthread_cond_broadcast(&h.cond);
        pthread_mutex_unlock(&h.lock);
    }
    await_listener(&h, 0, HELD_N);
    sleep_ms(500); /* a late copy would come by now */
    pthread_mutex_lock(&h.lock);
    ck_assert_int_eq(h.bad, 0);
    check_exactly_once(h.seen, "listener", c);
    pthread_mutex_unlock(&h.lock);
    pulsarc_consumer_destroy(c);
    pulsarc_client_destroy(cc);
    pc_proxy_destroy(px);
}
END_TEST

static TCase *tcase(const char *name, int timeout_s) {
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, getenv("PULSARC_LONG") ? 1800 : timeout_s);
    return tc;
}

static Suite *suite(void) {
    Suite *s = suite_create("live-faults");
    TCase *cuts = tcase("cuts", 300), *stall = tcase("stall", 120), *close = tcase("close", 60);
    TCase *held = tcase("held", 120);
    tcase_add_test(cuts, test_cuts_nothing_lost);
    tcase_add_test(cuts, test_cuts_dedup_exactly_once);
    tcase_add_test(cuts, test_cuts_long);
    tcase_add_test(cuts, test_cuts_long_dedup);
    tcase_add_test(stall, test_stall_and_delay);
    tcase_add_test(close, test_close_while_stalled);
    tcase_add_loop_test(held, test_ack_held_across_resend, 0,
                        (int)(sizeof held_cases / sizeof held_cases[0]));
    tcase_add_test(held, test_ack_held_across_reconnect_listener);
    suite_add_tcase(s, cuts);
    suite_add_tcase(s, stall);
    suite_add_tcase(s, close);
    suite_add_tcase(s, held);
    return s;
}

PC_TEST_MAIN(suite)
