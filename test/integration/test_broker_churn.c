/*
 * Broker churn with broker deduplication on: a named, batching producer
 * and an Exclusive consumer keep working while
 *  - the topic is unloaded through the admin REST API 10 times
 *    (PUT /admin/v2/persistent/<ns>/<topic>/unload), and
 *  - the whole broker is stopped and started again on the same data
 *    (test/broker/stop.sh, then start.sh --keep-data): 3 times by default,
 *    10 with PULSARC_LONG=1; the second stop of each three is a SIGKILL.
 * Nothing may be lost, nothing may be stored twice, and each producer's
 * messages arrive in the order they were sent.
 *
 * Each scenario prints one "counts:" line: sent, received (deliveries),
 * unique, lost, duplicated, redelivered, out_of_order, reconnects, longest
 * stall (as test_faults does). After every unload or restart it prints how
 * long the producer and the consumer took from "the broker is reachable
 * again" (the unload call or start.sh returned) to their first send receipt
 * / first message produced after that moment, and per scenario the median
 * and max of those figures ("recovery:" lines, recovery.h). Printed, not
 * asserted; a handle still not working 60 s after the broker is back fails
 * the test as a hang.
 *
 * Design notes
 *  - "duplicated" is a second *entry* (a different message id) for one
 *    message index: what broker deduplication must prevent. The same id
 *    delivered again is a consumer redelivery (an ack in flight when the
 *    connection dropped); allowed, counted as "redelivered", not asserted.
 *  - Order is checked on first deliveries: each new index must be higher
 *    than every index seen before (one producer, so per-producer order),
 *    and the sequence id must equal the index (named producer, new topic).
 *  - Churn is placed by production progress, never by wall time, so it
 *    lands while messages are in flight whatever the machine's speed.
 *    Production is paced (2,000 msg/s at most) and open-ended: it runs
 *    until the last unload or restart plus a tail, however long the broker
 *    takes to come back.
 *  - The restart scenario drives the test/broker scripts through system(): it
 *    needs the broker that run-with-broker.sh started (PULSARC_TEST_MINT_TOKEN
 *    names the scripts' directory, PULSARC_BROKER_INSTANCE is inherited);
 *    with a broker of your own it prints "skipped". Data and secrets are
 *    kept across restarts so the other tests of the run are unaffected.
 *  - The producer of the restart scenario runs until the last restart is
 *    done plus a tail, so production spans every restart; between two
 *    restarts the test waits until both handles work again, then for fresh
 *    acknowledged sends: a restart never lands on a handle that has not
 *    recovered from the previous one.
 */
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recovery.h"
#include "testutil.h"

#define CAP 1000000      /* most messages a scenario can send */
#define PACE_EVERY 100   /* production pauses PACE_MS after every PACE_EVERY messages: */
#define PACE_MS 50       /* at most 2,000 msg/s, so open-ended runs stay far below CAP */
#define TAIL 2000        /* sent after the last restart */
#define BETWEEN 2000     /* acknowledged sends required between restarts */
#define UNLOAD_GAP 2000  /* messages queued before each unload, and after the last */

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

static int long_run(void) {
    const char *v = getenv("PULSARC_LONG");
    return v && strcmp(v, "1") == 0;
}

/* ---------- scenario state ---------- */

typedef struct churn {
    const char *name;
    char topic[512];
    int limit;               /* messages to send; grows to CAP when open-ended */
    pulsarc_producer_t *p;
    pulsarc_consumer_t *c;
    _Atomic int queued, sent_ok, send_failed, producing;
    _Atomic int stop_after;  /* open-ended production: total to send, 0 = unknown */
    /* consumer thread only, read after join */
    int64_t *ledger, *entry;
    int *seen;
    long deliveries, dups, redelivered, out_of_order, bad_seq;
    _Atomic long unique;     /* also read by the main thread while waiting */
    int max_index;
    int64_t longest_gap_ms;
    _Atomic int stop_consumer;
    pct_recovery_t rec_p, rec_c; /* producer's and consumer's recovery figures */
} churn_t;

static void churn_init(churn_t *s, const char *name, int limit) {
    memset(s, 0, sizeof *s);
    s->name = name;
    s->limit = limit;
    s->max_index = -1;
    s->ledger = calloc(CAP, sizeof(int64_t));
    s->entry = calloc(CAP, sizeof(int64_t));
    s->seen = calloc(CAP, sizeof(int));
    atomic_store(&s->producing, 1);
    pct_recovery_init(&s->rec_p, "producer");
    pct_recovery_init(&s->rec_c, "consumer");
}

static void churn_free(churn_t *s) {
    free(s->ledger);
    free(s->entry);
    free(s->seen);
}

/* ---------- set-up ---------- */

static const char *dedup_namespace(void) {
    static char ns[128];
    snprintf(ns, sizeof ns, "public/churn-%d-%ld", (int)getpid(), (long)time(NULL));
    pct_create_dedup_namespace(ns);
    return ns;
}

/* A client that keeps retrying quickly while the broker is away. */
static pulsarc_client_t *churn_client(void) {
    const char *kv[] = {"operationTimeoutMs", "10000", "initialBackoffIntervalMs", "100",
                        "maxBackoffIntervalMs", "1000", NULL};
    return pct_client_with(kv);
}

static pulsarc_producer_t *churn_producer(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"producerName", "churn-writer", "batchingEnabled", "true",
                        "sendTimeoutMs", "0", "maxPendingMessages", "2000",
                        "blockIfQueueFull", "true", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer: %s", err);
    return p;
}

static pulsarc_consumer_t *churn_consumer(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "subscriptionType", "Exclusive",
                        "receiverQueueSize", "1000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "churn-sub", conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer: %s", err);
    return cons;
}

/* ---------- producer ---------- */

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    churn_t *s = opaque;
    atomic_fetch_add(err == PULSARC_OK ? &s->sent_ok : &s->send_failed, 1);
    if (err == PULSARC_OK)
        pct_recovery_ok(&s->rec_p);
    if (err != PULSARC_OK)
        fprintf(stderr, "send failed: %s\n", pulsarc_errname(err));
}

static int produce_more(churn_t *s, int i) {
    int stop = atomic_load(&s->stop_after);
    return i < s->limit && (stop == 0 || i < stop);
}

static void *produce(void *arg) {
    churn_t *s = arg;
    char body[32];
    for (int i = 0; produce_more(s, i); i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        int len = snprintf(body, sizeof body, "m-%d", i);
        pulsarc_msg_set_payload(m, body, (size_t)len, PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send_async(s->p, m, on_sent, s);
        if (e != PULSARC_OK) {
            fprintf(stderr, "send_async %d: %s\n", i, pulsarc_errname(e));
            atomic_fetch_add(&s->send_failed, 1);
        }
        atomic_fetch_add(&s->queued, 1);
        if (i % PACE_EVERY == PACE_EVERY - 1)
            sleep_ms(PACE_MS);
    }
    pulsarc_producer_flush(s->p, 90000); /* bounded: a stuck producer fails with counts */
    atomic_store(&s->producing, 0);
    return NULL;
}

/* ---------- consumer ---------- */

static int msg_index(const pulsarc_msg_t *m) {
    char buf[32];
    size_t len = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(buf, pulsarc_msg_payload(m), len);
    buf[len] = '\0';
    int i = -1;
    return sscanf(buf, "m-%d", &i) == 1 && i >= 0 && i < CAP ? i : -1;
}

/* A message index seen for the first time: order and sequence id. */
static void first_delivery(churn_t *s, const pulsarc_msg_t *m, int i, pulsarc_msgid_t id) {
    s->ledger[i] = id.ledger_id;
    s->entry[i] = id.entry_id;
    s->unique++;
    if (i < s->max_index)
        s->out_of_order++;
    else
        s->max_index = i;
    if (pulsarc_msg_sequence_id(m) != i)
        s->bad_seq++;
}

static void take(churn_t *s, pulsarc_msg_t *m) {
    int i = msg_index(m);
    ck_assert_int_ge(i, 0);
    pulsarc_msgid_t id = pulsarc_msg_id(m);
    s->deliveries++;
    pct_recovery_recv(&s->rec_c, i);
    if (!s->seen[i])
        first_delivery(s, m, i, id);
    else if (s->ledger[i] != id.ledger_id || s->entry[i] != id.entry_id)
        s->dups++; /* a second entry for one message: dedup failed */
    else
        s->redelivered++;
    s->seen[i] = 1;
    pulsarc_consumer_ack(s->c, m);
}

static void *consume(void *arg) {
    churn_t *s = arg;
    int64_t last = 0;
    while (!atomic_load(&s->stop_consumer)) {
        pulsarc_msg_t *m = NULL;
        if (pulsarc_consumer_receive(s->c, &m, 200) != PULSARC_OK)
            continue;
        int64_t now = mono_ms();
        if (last && now - last > s->longest_gap_ms)
            s->longest_gap_ms = now - last;
        last = now;
        take(s, m);
        pulsarc_msg_destroy(m);
    }
    return NULL;
}

/* ---------- recovery ---------- */

/* A producer receipt can still come: production has not finished. */
static int producer_busy(void *arg) { return atomic_load(&((churn_t *)arg)->producing); }

/* A message from the consumer's mark on will still be produced. */
static int more_to_consume(void *arg) {
    churn_t *s = arg;
    long from = atomic_load(&s->rec_c.from_index);
    int stop = atomic_load(&s->stop_after);
    return from < s->limit && (stop == 0 || from < stop);
}

/* The broker is reachable again: both handles must work within the hang bound. */
static void await_recovery(churn_t *s, const char *event) {
    pct_recovery_mark(&s->rec_p, 0); /* now: the unload call or start.sh returned */
    pct_recovery_mark(&s->rec_c, atomic_load(&s->queued));
    int64_t p = pct_recovery_wait(&s->rec_p, producer_busy, s);
    int64_t c = pct_recovery_wait(&s->rec_c, more_to_consume, s);
    printf("recovery-event: %-24s producer_ms=%lld consumer_ms=%lld\n", event, (long long)p,
           (long long)c);
    fflush(stdout);
    ck_assert_msg(p != -1, "%s: the producer sent nothing for %d s after the broker was back", event,
                  PCT_RECOVERY_HANG_MS / 1000);
    ck_assert_msg(c != -1, "%s: the consumer received nothing new for %d s after the broker was back",
                  event, PCT_RECOVERY_HANG_MS / 1000);
}

/* ---------- churn ---------- */

static void wait_queued(churn_t *s, int at) {
    while (atomic_load(&s->queued) < at && atomic_load(&s->producing))
        sleep_ms(5);
}

static void wait_acked(churn_t *s, int at) {
    while (atomic_load(&s->sent_ok) < at && atomic_load(&s->producing))
        sleep_ms(20);
}

/* Unloads the topic; the broker may refuse while it is still loading it. */
static void unload(const char *topic) {
    char path[1024];
    snprintf(path, sizeof path, "/admin/v2/persistent/%s/unload", topic);
    int code = -1;
    for (int attempt = 0; attempt < 50; attempt++) {
        code = pct_admin("PUT", path, NULL);
        if (code == 204 || code == 200)
            return;
        sleep_ms(200);
    }
    ck_abort_msg("unload %s: HTTP %d", topic, code);
}

/* Open-ended production: each unload after fresh progress, a tail after the last. */
static void unload_churn(churn_t *s, int times) {
    for (int k = 1; k <= times; k++) {
        wait_queued(s, atomic_load(&s->queued) + UNLOAD_GAP);
        unload(s->topic);
        char event[64];
        snprintf(event, sizeof event, "unload %d", k);
        await_recovery(s, event);
    }
    atomic_store(&s->stop_after, atomic_load(&s->queued) + UNLOAD_GAP);
}

/* "<dir of PULSARC_TEST_MINT_TOKEN>" = test/broker of run-with-broker.sh, or NULL. */
static const char *broker_dir(void) {
    static char dir[1024];
    const char *mint = getenv("PULSARC_TEST_MINT_TOKEN");
    if (!mint || !*mint)
        return NULL;
    snprintf(dir, sizeof dir, "%s", mint);
    return dirname(dir);
}

static void run_script(const char *dir, const char *script, const char *arg) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "bash '%s/%s' %s", dir, script, arg);
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "%s failed (status %d)", cmd, rc);
}

/* Stop (SIGKILL when kill is set) and start again on the same data. */
static void restart_broker(const char *dir, int kill) {
    run_script(dir, "stop.sh", kill ? "--kill" : "");
    run_script(dir, "start.sh", "--keep-data");
}

static void restart_churn(churn_t *s, int times) {
    const char *dir = broker_dir();
    for (int k = 0; k < times; k++) {
        wait_acked(s, atomic_load(&s->sent_ok) + BETWEEN);
        restart_broker(dir, k % 3 == 1);
        char event[64];
        snprintf(event, sizeof event, "restart %d (%s)", k + 1, k % 3 == 1 ? "SIGKILL" : "SIGTERM");
        await_recovery(s, event);
    }
    wait_acked(s, atomic_load(&s->sent_ok) + BETWEEN);
    atomic_store(&s->stop_after, atomic_load(&s->queued) + TAIL);
}

/* ---------- the scenario ---------- */

static void report(const churn_t *s, long lost, uint64_t reconnects, int64_t took) {
    printf("counts: %-18s sent=%d received=%ld unique=%ld lost=%ld duplicated=%ld "
           "redelivered=%ld out_of_order=%ld bad_seq=%ld reconnects=%llu longest_stall_ms=%lld "
           "send_failed=%d took_ms=%lld\n",
           s->name, atomic_load(&s->sent_ok), s->deliveries, s->unique, lost, s->dups,
           s->redelivered, s->out_of_order, s->bad_seq, (unsigned long long)reconnects,
           (long long)s->longest_gap_ms, atomic_load(&s->send_failed), (long long)took);
    fflush(stdout);
}

static void wait_all_received(churn_t *s, int n, int deadline_s) {
    int64_t deadline = mono_ms() + (int64_t)deadline_s * 1000;
    while (mono_ms() < deadline && atomic_load(&s->unique) < n)
        sleep_ms(50);
    sleep_ms(500); /* late duplicates */
    atomic_store(&s->stop_consumer, 1);
}

static long count_lost(const churn_t *s, int n) {
    long lost = 0;
    for (int i = 0; i < n; i++)
        lost += !s->seen[i];
    return lost;
}

static void verify(const churn_t *s, int n, long lost) {
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(atomic_load(&s->send_failed), 0);
    ck_assert_int_eq(atomic_load(&s->sent_ok), n);
    ck_assert_int_eq(lost, 0);
    ck_assert_int_eq(s->dups, 0);
    ck_assert_int_eq(s->out_of_order, 0);
    ck_assert_int_eq(s->bad_seq, 0);
    ck_assert_int_eq(s->unique, n);
}

typedef void (*churn_fn)(churn_t *s, int times);

static void run_scenario(const char *name, int limit, int times, churn_fn churn, int deadline_s) {
    static churn_t s;
    churn_init(&s, name, limit);
    snprintf(s.topic, sizeof s.topic, "%s/%s", dedup_namespace(), pct_topic("churn"));
    pulsarc_client_t *pc = churn_client(), *cc = churn_client();
    s.c = churn_consumer(cc, s.topic);
    s.p = churn_producer(pc, s.topic);
    int64_t t0 = mono_ms();
    pthread_t pt, ct;
    pthread_create(&ct, NULL, consume, &s);
    pthread_create(&pt, NULL, produce, &s);
    churn(&s, times);
    pthread_join(pt, NULL);
    int n = atomic_load(&s.queued);
    wait_all_received(&s, n, deadline_s);
    pthread_join(ct, NULL);
    pulsarc_consumer_stats_t cst;
    pulsarc_consumer_stats(s.c, &cst);
    pulsarc_consumer_destroy(s.c);
    pulsarc_producer_destroy(s.p);
    pulsarc_client_destroy(cc);
    pulsarc_client_destroy(pc);
    long lost = count_lost(&s, n);
    report(&s, lost, cst.reconnects, mono_ms() - t0);
    pct_recovery_print(name, &s.rec_p);
    pct_recovery_print(name, &s.rec_c);
    verify(&s, n, lost);
    ck_assert_uint_ge(cst.reconnects, 1);
    churn_free(&s);
}

START_TEST(test_repeated_unload) {
    run_scenario("unload 10", CAP, 10, unload_churn, 120);
}
END_TEST

START_TEST(test_broker_restarts) {
    int times = long_run() ? 10 : 3;
    if (!broker_dir()) {
        printf("counts: restarts           skipped (run under test/broker/run-with-broker.sh)\n");
        return;
    }
    run_scenario(times == 10 ? "restarts 10" : "restarts 3", CAP, times, restart_churn, 180);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-broker-churn");
    TCase *unl = tcase_create("unload"), *rst = tcase_create("restart");
    tcase_set_timeout(unl, 300);
    tcase_set_timeout(rst, long_run() ? 1800 : 600);
    tcase_add_test(unl, test_repeated_unload);
    tcase_add_test(rst, test_broker_restarts);
    suite_add_tcase(s, unl);
    suite_add_tcase(s, rst);
    return s;
}

PC_TEST_MAIN(suite)
