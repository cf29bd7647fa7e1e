/*
 * A consumer resumes after the topic is unloaded and after its connection
 * is cut in the middle of the flow, with no flow permits lost or doubled:
 * the peers' "consumer silently stops receiving" reports come from permits
 * the client believes it granted but the broker never got (or the reverse).
 *
 * One scenario per kind of interruption: a producer (directly on the
 * broker) sends N messages while an Exclusive consumer with a small
 * receiver queue (so permits are granted again and again) receives and
 * acknowledges them; the topic is unloaded through the admin API, or every
 * connection of the consumer's client is reset by the fault proxy, EVENTS
 * times at even steps of the consumer's progress; or the whole broker is
 * stopped and started again on its data (RESTARTS times, the second with
 * SIGKILL) through the test/broker scripts of run-with-broker.sh (skipped,
 * with a line saying so, on a broker the test did not start). The restarts
 * run in make long only (PULSARC_LONG=1): a broker start took up to a
 * minute here with other suites beside it. While the broker is down on
 * purpose the stall clock stands still.
 *
 * Asserted:
 *  - every message arrives (unique count N) and the consumer never goes
 *    PEER_STALL_MS without a message while some are outstanding (a silent
 *    stall fails the test with the counts at that moment);
 *  - after the run, with the consumer's queue drained, the broker's count
 *    of permits this consumer holds ("availablePermits" in the topic's
 *    stats) is above 0 and at most the receiver queue size: 0 would be a
 *    stall waiting to happen, more than the queue size means permits were
 *    granted twice (the broker would push more than the queue holds);
 *  - one more message sent then still arrives.
 * Printed ("resume:" lines): sent, unique, deliveries, redelivered,
 * reconnects, the broker's permits, the longest gap between two messages.
 */
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_util.h"

#define N 6000
#define EVENTS 5
#define RESTARTS 2
#define QUEUE 50
#define QUEUE_STR "50"
#define PEER_STALL_MS PEER_HANG_MS

/* ---------- the broker's permits ---------- */

/* availablePermits of the (only) consumer in the stats of topic (a short name in
 * public/default); -1 if not found. */
static long broker_permits(const char *topic) {
    char path[1024];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/stats", topic);
    char *body = malloc(PEER_BODY_MAX);
    long permits = -1;
    if (peer_admin_get(path, body, PEER_BODY_MAX) == 200) {
        const char *k = strstr(body, "\"availablePermits\"");
        if (k && (k = strchr(k, ':')))
            permits = strtol(k + 1, NULL, 10);
    }
    free(body);
    return permits;
}

/* ---------- scenario ---------- */

typedef struct resume {
    const char *topic;
    pulsarc_consumer_t *c;
    int seen[N + 1];
    _Atomic int unique, deliveries, redelivered;
    _Atomic int64_t last_msg_ms, longest_gap_ms;
    _Atomic int stop, stalled;
    _Atomic int outage; /* the broker is down on purpose: no stall is counted */
    _Atomic int target; /* messages produced so far that must arrive */
} resume_t;

static void *consume(void *arg) {
    resume_t *s = arg;
    atomic_store(&s->last_msg_ms, peer_now_ms());
    while (!atomic_load(&s->stop)) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(s->c, &m, 200);
        int64_t now = peer_now_ms();
        if (e != PULSARC_OK) {
            if (atomic_load(&s->outage))
                atomic_store(&s->last_msg_ms, now);
            else if (atomic_load(&s->unique) < atomic_load(&s->target) &&
                     now - atomic_load(&s->last_msg_ms) > PEER_STALL_MS) {
                atomic_store(&s->stalled, 1);
                break;
            }
            continue;
        }
        int64_t gap = now - atomic_load(&s->last_msg_ms);
        if (gap > atomic_load(&s->longest_gap_ms))
            atomic_store(&s->longest_gap_ms, gap);
        atomic_store(&s->last_msg_ms, now);
        int i = peer_payload_index(m);
        atomic_fetch_add(&s->deliveries, 1);
        if (i >= 0 && i <= N) {
            if (s->seen[i]++)
                atomic_fetch_add(&s->redelivered, 1);
            else
                atomic_fetch_add(&s->unique, 1);
        }
        pulsarc_consumer_ack(s->c, m);
        pulsarc_msg_destroy(m);
    }
    return NULL;
}

static void send_index(pulsarc_producer_t *p, int i) {
    char body[16];
    int len = snprintf(body, sizeof body, "m%d", i);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, body, (size_t)len, PULSARC_MSG_F_COPY);
    pulsarc_producer_send_async(p, m, NULL, NULL);
}

static void unload(const char *topic) {
    char path[1024];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/unload", topic);
    int code = -1;
    for (int attempt = 0; attempt < 50 && code != 204 && code != 200; attempt++) {
        code = pct_admin("PUT", path, NULL);
        if (code != 204 && code != 200)
            peer_sleep_ms(200);
    }
    ck_assert_msg(code == 204 || code == 200, "unload %s: HTTP %d", topic, code);
}

/* Waits (bounded) until the consumer has at least n unique messages or stalled. */
static void wait_unique(resume_t *s, int n) {
    while (atomic_load(&s->unique) < n && !atomic_load(&s->stalled))
        peer_sleep_ms(20);
}

/* "<dir of PULSARC_TEST_MINT_TOKEN>" = the test/broker scripts of run-with-broker.sh, or NULL. */
static const char *broker_dir(void) {
    static char dir[1024];
    const char *mint = getenv("PULSARC_TEST_MINT_TOKEN");
    if (!mint || !*mint)
        return NULL;
    snprintf(dir, sizeof dir, "%s", mint);
    return dirname(dir);
}

static void run_script(const char *script, const char *arg) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "bash '%s/%s' %s", broker_dir(), script, arg);
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "%s failed (status %d)", cmd, rc);
}

enum interruption { UNLOAD, CUT, RESTART };

static void run(const char *scenario, enum interruption how, int events) {
    int cut = how == CUT;
    resume_t *s = calloc(1, sizeof *s);
    s->topic = pct_topic(how == CUT ? "peer-resume-cut" : how == UNLOAD ? "peer-resume-unload"
                                                                        : "peer-resume-restart");
    pc_proxy_t *px = cut ? peer_proxy() : NULL;
    const char *ckv[] = {"operationTimeoutMs", "10000", NULL};
    pulsarc_client_t *cc = peer_client(px ? pc_proxy_url(px) : NULL, ckv);
    const char *kv[] = {"subscriptionType", "Exclusive", "subscriptionInitialPosition", "Earliest",
                        "receiverQueueSize", QUEUE_STR, NULL};
    s->c = peer_consumer(cc, s->topic, "resume", kv);
    pulsarc_client_t *pc = peer_client(NULL, NULL);
    const char *pkv[] = {"batchingEnabled", "false", "sendTimeoutMs", "0", "blockIfQueueFull",
                         "true", "maxPendingMessages", "500", NULL};
    pulsarc_producer_t *p = peer_producer(pc, s->topic, pkv);
    pthread_t thr;
    pthread_create(&thr, NULL, consume, s);
    /* Production in steps; an interruption when the consumer reached each step. */
    int step = N / (events + 1), sent = 0;
    for (int k = 0; k <= events; k++) {
        for (; sent < (k + 1) * step; sent++)
            send_index(p, sent);
        atomic_store(&s->target, sent);
        if (k == events)
            break;
        wait_unique(s, k * step + step / 2); /* mid-flow: half of this step consumed */
        if (how == CUT) {
            pc_proxy_cut_all(px);
        } else if (how == UNLOAD) {
            unload(s->topic);
        } else {
            atomic_store(&s->outage, 1);
            run_script("stop.sh", k % 2 ? "--kill" : "");
            run_script("start.sh", "--keep-data");
            atomic_store(&s->last_msg_ms, peer_now_ms()); /* the stall clock starts again */
            atomic_store(&s->outage, 0);
        }
    }
    for (; sent < N; sent++)
        send_index(p, sent);
    atomic_store(&s->target, N);
    ck_assert_int_eq(pulsarc_producer_flush(p, PEER_HANG_MS), PULSARC_OK);
    wait_unique(s, N);
    peer_sleep_ms(500); /* the flow after the last receive reaches the broker */
    long permits = broker_permits(s->topic);
    pulsarc_consumer_stats_t cs;
    pulsarc_consumer_stats(s->c, &cs);
    pulsarc_producer_stats_t ps;
    pulsarc_producer_stats(p, &ps);
    /* One more message must still come. */
    send_index(p, N);
    atomic_store(&s->target, N + 1);
    pulsarc_producer_flush(p, PEER_HANG_MS);
    wait_unique(s, N + 1);
    atomic_store(&s->stop, 1);
    pthread_join(thr, NULL);
    printf("resume: %-7s sent=%d unique=%d deliveries=%d redelivered=%d reconnects=%llu "
           "queue_len=%zu broker_permits=%ld queue_size=%d longest_gap_ms=%lld stalled=%d "
           "producer_acked=%llu producer_pending=%llu producer_errors=%llu\n",
           scenario, N + 1, atomic_load(&s->unique), atomic_load(&s->deliveries),
           atomic_load(&s->redelivered), (unsigned long long)cs.reconnects, cs.queue_len, permits,
           QUEUE, (long long)atomic_load(&s->longest_gap_ms), atomic_load(&s->stalled),
           (unsigned long long)ps.msgs_sent, (unsigned long long)ps.pending,
           (unsigned long long)ps.send_errors);
    fflush(stdout);
    ck_assert_msg(!atomic_load(&s->stalled), "%s: no message for %d ms with %d of %d received",
                  scenario, PEER_STALL_MS, atomic_load(&s->unique), N);
    ck_assert_msg(atomic_load(&s->unique) == N + 1, "%s: %d of %d messages arrived", scenario,
                  atomic_load(&s->unique), N + 1);
    ck_assert_msg(cs.reconnects >= 1, "%s: the consumer never reconnected", scenario);
    ck_assert_msg(permits > 0 && permits <= QUEUE,
                  "%s: the broker holds %ld permits for a consumer with a queue of %d", scenario,
                  permits, QUEUE);
    pulsarc_consumer_destroy(s->c);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(cc);
    pulsarc_client_destroy(pc);
    pc_proxy_destroy(px);
    free(s);
}

START_TEST(test_resume_after_unload) { run("unload", UNLOAD, EVENTS); }
END_TEST

START_TEST(test_resume_after_cut) { run("cut", CUT, EVENTS); }
END_TEST

START_TEST(test_resume_after_restart) {
    if (!peer_env_on("PULSARC_LONG")) {
        printf("resume: restart skipped: runs in make long (PULSARC_LONG=1), a broker start "
               "takes up to a minute on a loaded machine\n");
        return;
    }
    if (!broker_dir()) {
        printf("resume: restart skipped: not on a broker started by run-with-broker.sh\n");
        return;
    }
    run("restart", RESTART, RESTARTS);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-resume");
    TCase *t = tcase_create("resume"), *r = tcase_create("restart");
    tcase_set_timeout(t, 300);
    tcase_set_timeout(r, 600);
    tcase_add_test(t, test_resume_after_unload);
    tcase_add_test(t, test_resume_after_cut);
    tcase_add_test(r, test_resume_after_restart);
    suite_add_tcase(s, t);
    suite_add_tcase(s, r);
    return s;
}

PC_TEST_MAIN(suite)
