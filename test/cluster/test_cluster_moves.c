/*
 * Topic ownership moving under load, on the three-broker test cluster
 * (run under run-with-cluster.sh; via.sh picks broker 1 or the proxy as
 * the service URL). Each case runs one producer (batching on, a fixed
 * producer name, so its sequence ids survive a reconnect) and one consumer
 * while 200,000 messages (PULSARC_MOVES_MESSAGES) flow, paced at 10,000/s
 * (PULSARC_MOVES_RATE), through a namespace with broker-side
 * deduplication on; when a third of them are acknowledged, a mover thread
 * moves the topic:
 *   - unload of the topic (admin REST);
 *   - unload of its namespace bundle, to a named other broker;
 *   - split of its bundle, the halves unloaded;
 *   - kill -9 of the owning broker (restart.sh kills and relaunches it);
 *   - a restart of the pulsar-proxy (SIGTERM, started again at once), with
 *     the clients on the proxy's URL whatever the pass.
 * Each case uses another subscription type (Exclusive, Shared, Failover,
 * Key_Shared; Shared again for the proxy).
 *
 * What is asserted, per case:
 *   - every send succeeds (no send times out or fails);
 *   - lost = 0: every index sent is received;
 *   - duplicated = 0: no index is stored twice, i.e. received under two
 *     different message ids. This is what broker deduplication with the
 *     producer's sequence ids promises for a resend after a reconnect.
 *     The same message id received again is a redelivery of an unacked
 *     message (at-least-once delivery, allowed): counted and printed only.
 * Printed, not asserted: sent, received, lost, duplicated, redelivered, the
 * owner before and after, and for the producer and the consumer the longest
 * pause in their successes after the move and when it ended (time from the
 * move to the first success after that pause).
 *
 * Threads: the Check test process runs the producer (main thread: sends;
 * the library's callback thread: receipts), a consumer thread and a mover
 * thread. Counters are atomics or written by one thread and read after a
 * join.
 */
#include <curl/curl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster_util.h"
#include "testutil.h"

#define DEFAULT_MESSAGES 200000
#define NKEYS 64
/* Hang bound for one case: the kill case waits for a ZooKeeper session to
 * expire and a JVM to restart on a loaded 2-core machine. */
#define CASE_TIMEOUT_S 900

/* Producer pace, messages per second: the load must still be flowing
 * while the move happens and after it (unpaced, 200,000 batched messages
 * are sent in about a second). */
static int moves_rate(void) {
    const char *v = getenv("PULSARC_MOVES_RATE");
    int n = v && *v ? atoi(v) : 10000;
    return n > 0 ? n : 10000;
}

static int moves_messages(void) {
    const char *v = getenv("PULSARC_MOVES_MESSAGES");
    int n = v && *v ? atoi(v) : DEFAULT_MESSAGES;
    return n > 0 ? n : DEFAULT_MESSAGES;
}

/* The owner's pulsar:// URL of ns/topic (an HTTP lookup assigns it if unowned). */
static void owner_of(const char *ns, const char *topic, char *out, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", ns, topic);
    lookup_owner(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), path, out, len);
}

/* The bundle range ("0x..._0x...", answered as plain text) of ns/topic. */
static void bundle_of(const char *ns, const char *topic, char *out, size_t len) {
    char url[1024], *text = NULL;
    snprintf(url, sizeof url, "%s/lookup/v2/topic/persistent/%s/%s/bundle",
             cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), ns, topic);
    long code = http_call("GET", url, &text);
    ck_assert_msg(code == 200 && strncmp(text, "0x", 2) == 0 && strlen(text) < len, "GET %s: HTTP %ld: %s", url,
                  code, text);
    snprintf(out, len, "%.*s", (int)strspn(text, "0123456789abcdefx_"), text);
    free(text);
}

/* Polls (every 100 ms, at most 600 s) until the topic's owner answers for
 * it: the admin stats call, redirected to the owner, returns 200. */
static double wait_owner_ready(const char *ns, const char *topic) {
    char url[1024];
    snprintf(url, sizeof url, "%s/admin/v2/persistent/%s/%s/stats", cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"),
             ns, topic);
    for (double t0 = now_s(); now_s() - t0 < 600; usleep(100000))
        if (http_call("GET", url, NULL) == 200)
            return now_s();
    ck_abort_msg("no broker answered for %s/%s within 600 s", ns, topic);
    return 0;
}

/* The i-th entry of a comma-separated list. */
static void nth_in_list(const char *list, int i, char *out, size_t len) {
    const char *p = list;
    for (; i > 0 && p; i--)
        p = (p = strchr(p, ',')) ? p + 1 : NULL;
    ck_assert_ptr_nonnull(p);
    snprintf(out, len, "%.*s", (int)strcspn(p, ","), p);
}

/* A broker's id as the load manager names it: the advertised host of its
 * pulsar:// URL and the port of its HTTP one ("localhost:9020"). */
static void broker_id(int i, char *out, size_t len) {
    char bin[256], web[256];
    nth_in_list(cluster_env("PULSARC_CLUSTER_BROKER_URLS"), i, bin, sizeof bin);
    nth_in_list(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URLS"), i, web, sizeof web);
    const char *host = strstr(bin, "://") + 3;
    snprintf(out, len, "%.*s%s", (int)strcspn(host, ":"), host, strrchr(web, ':'));
}

static int owner_index(const char *ns, const char *topic) {
    char owner[256];
    owner_of(ns, topic, owner, sizeof owner);
    int b = index_in_list(cluster_env("PULSARC_CLUSTER_BROKER_URLS"), owner);
    ck_assert_msg(b >= 0, "%s owned by %s, not one of the brokers", topic, owner);
    return b;
}

/* ---- one case ---- */

typedef enum move_kind {
    MOVE_UNLOAD_TOPIC,
    MOVE_UNLOAD_BUNDLE,
    MOVE_SPLIT_BUNDLE,
    MOVE_KILL_OWNER,
    MOVE_RESTART_PROXY
} move_kind_t;

static const char *const move_names[] = {"unload of the topic", "unload of its bundle to another broker",
                                         "split of its bundle", "kill -9 of the owning broker",
                                         "restart of the proxy the clients go through"};

typedef struct run {
    move_kind_t kind;
    char ns[128], topic[128], full[300];
    int total;
    /* producer: receipts and failures (callback thread), receipt times */
    atomic_int acked, failed;
    double *ack_t;
    /* consumer: per index, times received and the first message id */
    unsigned char *seen;
    pulsarc_msgid_t *first_id;
    double *recv_t;
    int received, duplicated, redelivered, distinct;
    pulsarc_err_t consumer_err;
    pulsarc_consumer_t *cons;
    atomic_int stop_consumer;
    /* mover */
    double t_move, move_took, t_owner_ready;
    int owner_before, owner_after;
    char move_detail[512];
} run_t;

static void on_receipt(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id, pulsarc_msg_t *msg,
                       void *opaque) {
    (void)p;
    (void)id;
    (void)msg;
    run_t *r = opaque;
    if (err != PULSARC_OK) {
        if (atomic_fetch_add(&r->failed, 1) < 5)
            fprintf(stderr, "send failed: %s\n", pulsarc_strerror(err));
        return;
    }
    int n = atomic_fetch_add(&r->acked, 1);
    if (n < r->total)
        r->ack_t[n] = now_s();
}

static int same_id(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    return a->ledger_id == b->ledger_id && a->entry_id == b->entry_id && a->batch_index == b->batch_index;
}

/* Receives until every index has been seen (or the stop flag and 60 s of silence). */
static void *consumer_main(void *arg) {
    run_t *r = arg;
    double last = now_s();
    while (r->distinct < r->total) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(r->cons, &m, 1000);
        if (e == PULSARC_ERR_NO_MESSAGE || e == PULSARC_ERR_TIMEOUT) {
            if (atomic_load(&r->stop_consumer) && now_s() - last > 60)
                break;
            continue;
        }
        if (e != PULSARC_OK) {
            r->consumer_err = e;
            break;
        }
        last = now_s();
        int i = atoi(pulsarc_msg_payload(m) ? (const char *)pulsarc_msg_payload(m) : "-1");
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        if (i >= 0 && i < r->total) {
            if (!r->seen[i]) {
                r->first_id[i] = id;
                r->seen[i] = 1;
                r->distinct++;
            } else if (same_id(&r->first_id[i], &id)) {
                r->redelivered++;
            } else {
                if (r->duplicated++ < 5)
                    fprintf(stderr, "index %d stored twice: %lld:%lld:%d and %lld:%lld:%d\n", i,
                            (long long)r->first_id[i].ledger_id, (long long)r->first_id[i].entry_id,
                            r->first_id[i].batch_index, (long long)id.ledger_id, (long long)id.entry_id,
                            id.batch_index);
            }
            if (r->received < r->total)
                r->recv_t[r->received] = last;
            r->received++;
        }
        pulsarc_consumer_ack(r->cons, m);
        pulsarc_msg_destroy(m);
    }
    return NULL;
}

/* Runs `restart.sh ROLE ARGS` (the harness: kill -9 / relaunch and wait until ready). */
static void restart_sh(const char *role, const char *args) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash '%s/restart.sh' %s %s", cluster_env("PULSARC_CLUSTER_SCRIPTS"), role, args);
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "%s failed with %d", cmd, rc);
}

/* kill -9 of the owner; once another broker answers for the topic, the
 * killed one is started again (so its topics really move to the others). */
static void kill_owner(run_t *r) {
    char role[16];
    snprintf(role, sizeof role, "broker%d", r->owner_before + 1);
    restart_sh(role, "--kill --down");
    r->t_owner_ready = wait_owner_ready(r->ns, r->topic);
    double t_up = now_s();
    restart_sh(role, "--up");
    snprintf(r->move_detail, sizeof r->move_detail, "kill -9 of %s, started again %.1f s after the kill, ready %.1f s "
             "later", role, t_up - r->t_move, now_s() - t_up);
}

static void do_move(run_t *r) {
    const char *admin = cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL");
    char url[1024], bundle[128], dest[256];
    long code;
    r->t_move = now_s();
    switch (r->kind) {
    case MOVE_UNLOAD_TOPIC:
        snprintf(url, sizeof url, "%s/admin/v2/persistent/%s/%s/unload", admin, r->ns, r->topic);
        code = http_call("PUT", url, NULL);
        snprintf(r->move_detail, sizeof r->move_detail, "PUT .../unload: HTTP %ld", code);
        ck_assert_msg(code == 204 || code == 200, "unload %s: HTTP %ld", r->full, code);
        break;
    case MOVE_UNLOAD_BUNDLE:
        bundle_of(r->ns, r->topic, bundle, sizeof bundle);
        broker_id(r->owner_before == 2 ? 0 : r->owner_before + 1, dest, sizeof dest);
        snprintf(url, sizeof url, "%s/admin/v2/namespaces/%s/%s/unload?destinationBroker=%s", admin, r->ns, bundle,
                 dest);
        code = http_call("PUT", url, NULL);
        snprintf(r->move_detail, sizeof r->move_detail, "bundle %s unloaded towards %s: HTTP %ld", bundle, dest,
                 code);
        ck_assert_msg(code == 204 || code == 200, "unload of bundle %s: HTTP %ld", bundle, code);
        break;
    case MOVE_SPLIT_BUNDLE:
        bundle_of(r->ns, r->topic, bundle, sizeof bundle);
        snprintf(url, sizeof url, "%s/admin/v2/namespaces/%s/%s/split?unload=true", admin, r->ns, bundle);
        code = http_call("PUT", url, NULL);
        snprintf(r->move_detail, sizeof r->move_detail, "bundle %s split and unloaded: HTTP %ld", bundle, code);
        ck_assert_msg(code == 204 || code == 200, "split of bundle %s: HTTP %ld", bundle, code);
        break;
    case MOVE_KILL_OWNER:
        kill_owner(r);
        break;
    case MOVE_RESTART_PROXY:
        restart_sh("proxy", "");
        r->t_owner_ready = now_s();
        snprintf(r->move_detail, sizeof r->move_detail, "proxy stopped (SIGTERM) and started again, listening "
                 "%.1f s after the signal", r->t_owner_ready - r->t_move);
        break;
    }
    r->move_took = now_s() - r->t_move;
    if (r->kind != MOVE_KILL_OWNER && r->kind != MOVE_RESTART_PROXY)
        r->t_owner_ready = wait_owner_ready(r->ns, r->topic);
}

static void *mover_main(void *arg) {
    run_t *r = arg;
    while (atomic_load(&r->acked) < r->total / 3 && atomic_load(&r->failed) == 0)
        usleep(10000);
    do_move(r);
    return NULL;
}

/* The longest pause between successive events from 1 s before the move to
 * 5 s after the new owner answered (later pauses are not the move's):
 * *pause its length, *resumed the time from the move to its end. */
static void longest_pause(const double *t, int n, double t_move, double t_ready, double *pause, double *resumed) {
    *pause = 0;
    *resumed = 0;
    for (int i = 1; i < n; i++) {
        if (t[i] < t_move - 1 || t[i - 1] > t_ready + 5)
            continue;
        double gap = t[i] - t[i - 1];
        if (gap > *pause) {
            *pause = gap;
            *resumed = t[i] - t_move;
        }
    }
}

static const char *const sub_types[] = {"Exclusive", "Shared", "Failover", "Key_Shared", "Shared"};

/* A fresh namespace with deduplication on, and a topic in it that broker 2
 * or 3 owns (so that killing the owner leaves broker 1, the service URL of
 * the broker pass, able to answer lookups). */
static void place_topic(run_t *r) {
    snprintf(r->ns, sizeof r->ns, "public/moves-%d-%d-%ld", (int)r->kind, (int)getpid(), (long)time(NULL));
    pct_create_dedup_namespace(r->ns);
    for (int tries = 0; tries < 100; tries++) {
        snprintf(r->topic, sizeof r->topic, "move-%d", tries);
        r->owner_before = owner_index(r->ns, r->topic);
        if (r->kind != MOVE_KILL_OWNER || r->owner_before != 0)
            break;
    }
    ck_assert_msg(r->kind != MOVE_KILL_OWNER || r->owner_before != 0, "no topic placed off broker 1");
    snprintf(r->full, sizeof r->full, "persistent://%s/%s", r->ns, r->topic);
}

static void run_case(move_kind_t kind) {
    run_t *r = calloc(1, sizeof *r);
    r->kind = kind;
    r->total = moves_messages();
    r->ack_t = calloc((size_t)r->total, sizeof *r->ack_t);
    r->recv_t = calloc((size_t)r->total, sizeof *r->recv_t);
    r->seen = calloc((size_t)r->total, 1);
    r->first_id = calloc((size_t)r->total, sizeof *r->first_id);
    place_topic(r);

    /* The proxy case goes through the proxy whatever the pass. */
    const char *url = kind == MOVE_RESTART_PROXY ? cluster_env("PULSARC_CLUSTER_PROXY_URL") : pct_service_url();
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"serviceUrl", url, "operationTimeoutMs", "60000", NULL});
    pulsarc_client_t *c = NULL;
    char err[512];
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "client on %s: %s", url, err);
    pulsarc_conf_destroy(conf);
    pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionType", sub_types[kind], "receiverQueueSize",
                                                        "2000", "subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_err_t e = pulsarc_consumer_new(c, r->full, "moves", cc, &r->cons, err, sizeof err);
    pulsarc_conf_destroy(cc);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s", r->full, err);
    char pname[64];
    snprintf(pname, sizeof pname, "moves-producer-%d", (int)getpid());
    pulsarc_conf_t *pc =
        pct_conf((const char *const[]){"producerName", pname, "batchingEnabled", "true", "batchingMaxMessages",
                                       "500", "batchingMaxPublishDelayMicros", "5000", "maxPendingMessages", "5000",
                                       "blockIfQueueFull", "true", "sendTimeoutMs", "600000", NULL});
    pulsarc_producer_t *p = NULL;
    e = pulsarc_producer_new(c, r->full, pc, &p, err, sizeof err);
    pulsarc_conf_destroy(pc);
    ck_assert_msg(e == PULSARC_OK, "producer on %s: %s", r->full, err);

    printf("== %s (%s subscription), %s on broker%d, %d messages at %d/s, via %s\n", move_names[kind],
           sub_types[kind], r->full, r->owner_before + 1, r->total, moves_rate(), url);
    fflush(stdout);
    pthread_t ct, mt;
    ck_assert_int_eq(pthread_create(&ct, NULL, consumer_main, r), 0);
    ck_assert_int_eq(pthread_create(&mt, NULL, mover_main, r), 0);
    double t0 = now_s(), rate = moves_rate();
    int sent = 0;
    for (int i = 0; i < r->total; i++) {
        double ahead = t0 + i / rate - now_s();
        if (ahead > 0.001)
            usleep((useconds_t)(ahead * 1e6));
        char v[16], key[16];
        snprintf(v, sizeof v, "%d", i);
        snprintf(key, sizeof key, "k%d", i % NKEYS);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, v, strlen(v) + 1, PULSARC_MSG_F_COPY);
        pulsarc_msg_set_key(m, key);
        e = pulsarc_producer_send_async(p, m, on_receipt, r);
        if (e != PULSARC_OK) {
            fprintf(stderr, "send_async %d: %s\n", i, pulsarc_strerror(e));
            break;
        }
        sent++;
    }
    e = pulsarc_producer_flush(p, CASE_TIMEOUT_S * 1000);
    double t_sent = now_s();
    /* Receipt callbacks run on the callback thread and may trail the flush. */
    for (double t = now_s(); atomic_load(&r->acked) + atomic_load(&r->failed) < sent && now_s() - t < 60;)
        usleep(10000);
    ck_assert_int_eq(pthread_join(mt, NULL), 0);
    atomic_store(&r->stop_consumer, 1);
    ck_assert_int_eq(pthread_join(ct, NULL), 0);
    double t_done = now_s();

    int acked = atomic_load(&r->acked), failed = atomic_load(&r->failed);
    char owner_now[256];
    owner_of(r->ns, r->topic, owner_now, sizeof owner_now);
    double ppause, presumed, cpause, cresumed;
    longest_pause(r->ack_t, acked < r->total ? acked : r->total, r->t_move, r->t_owner_ready, &ppause, &presumed);
    longest_pause(r->recv_t, r->received < r->total ? r->received : r->total, r->t_move, r->t_owner_ready, &cpause, &cresumed);
    int lost = r->total - r->distinct;
    printf("   move: %s, took %.2f s; owner before broker%d, after %s, answering %.3f s after the move\n",
           r->move_detail, r->move_took, r->owner_before + 1, owner_now, r->t_owner_ready - r->t_move);
    printf("   sent %d, acked %d, send failures %d, flush %s, sent in %.1f s\n", sent, acked, failed,
           pulsarc_errname(e), t_sent - t0);
    printf("   received %d (distinct %d), lost %d, duplicated %d, redelivered %d, all received in %.1f s\n",
           r->received, r->distinct, lost, r->duplicated, r->redelivered, t_done - t0);
    double ready = r->t_owner_ready - r->t_move;
    printf("   producer: longest pause %.3f s, first receipt after it %.3f s after the move (%+.3f s from the owner "
           "answering)\n", ppause, presumed, presumed - ready);
    printf("   consumer: longest pause %.3f s, first message after it %.3f s after the move (%+.3f s from the owner "
           "answering)\n", cpause, cresumed, cresumed - ready);
    fflush(stdout);

    ck_assert_msg(r->consumer_err == PULSARC_OK, "consumer: %s", pulsarc_strerror(r->consumer_err));
    ck_assert_msg(sent == r->total && acked == r->total && failed == 0, "sent %d, acked %d, failed %d of %d", sent,
                  acked, failed, r->total);
    ck_assert_msg(lost == 0, "%d of %d messages lost", lost, r->total);
    ck_assert_msg(r->duplicated == 0, "%d messages stored twice", r->duplicated);

    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(r->cons);
    pulsarc_client_destroy(c);
    free(r->ack_t);
    free(r->recv_t);
    free(r->seen);
    free(r->first_id);
    free(r);
}

START_TEST(test_unload_topic_under_load) { run_case(MOVE_UNLOAD_TOPIC); }
END_TEST

START_TEST(test_unload_bundle_under_load) { run_case(MOVE_UNLOAD_BUNDLE); }
END_TEST

START_TEST(test_split_bundle_under_load) { run_case(MOVE_SPLIT_BUNDLE); }
END_TEST

START_TEST(test_kill_owner_under_load) { run_case(MOVE_KILL_OWNER); }
END_TEST

START_TEST(test_restart_proxy_under_load) { run_case(MOVE_RESTART_PROXY); }
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("cluster_moves");
    TCase *t = tcase_create("moves");
    tcase_set_timeout(t, CASE_TIMEOUT_S);
    tcase_add_test(t, test_unload_topic_under_load);
    tcase_add_test(t, test_unload_bundle_under_load);
    tcase_add_test(t, test_split_bundle_under_load);
    tcase_add_test(t, test_kill_owner_under_load);
    suite_add_tcase(s, t);
    TCase *px = tcase_create("proxy"); /* CK_RUN_CASE=proxy runs it alone */
    tcase_set_timeout(px, CASE_TIMEOUT_S);
    tcase_add_test(px, test_restart_proxy_under_load);
    suite_add_tcase(s, px);
    return s;
}

PC_TEST_MAIN(suite)
