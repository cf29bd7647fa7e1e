/*
 * Transactions on the three-broker test cluster (run under
 * run-with-cluster.sh; the service URL is whatever via.sh set):
 *  - one transaction produces to two topics owned by two different brokers
 *    and acknowledges a message of a third: a commit makes all of it
 *    visible on both, an abort none of it (and the acknowledged message
 *    comes back);
 *  - the broker that owns the transaction's coordinator (the partition of
 *    transaction_coordinator_assign named by the transaction id's high
 *    bits) is killed with kill -9 in the middle of the transaction; the
 *    commit is asked while it is down (restart.sh starts it again after):
 *    commit returns within a generous bound
 *    (no hang), and the outcome is never half-visible: both topics show
 *    the transaction's messages, or neither does, and a successful commit
 *    means both.
 * Owners are read from the brokers' HTTP lookup. Single-threaded test code
 * (Check forks one process per test).
 */
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster_util.h"
#include "testutil.h"

#define NMSGS 50

/* Owner's pulsar:// URL of a persistent topic "tenant/ns/local", by HTTP lookup on broker 1. */
static void owner_of(const char *path, char *out, size_t len) {
    lookup_owner(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), path, out, len);
}

static int broker_index(const char *owner) {
    const char *list = cluster_env("PULSARC_CLUSTER_BROKER_URLS");
    size_t n = strlen(owner);
    int i = 0;
    for (const char *p = list; *p; i++) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, owner, n) == 0)
            return i;
        p += len;
        if (*p == ',')
            p++;
    }
    ck_abort_msg("%s is not one of %s", owner, list);
    return -1;
}

/* A fresh topic of public/default owned by a broker other than `not`
 * (0-based; -1: any); returns its owner's index. */
static int topic_off(int not, char *out, size_t len) {
    for (int tries = 0; tries < 200; tries++) {
        const char *t = pct_topic("cluster-txn");
        char path[512], owner[256];
        snprintf(path, sizeof path, "public/default/%s", t);
        owner_of(path, owner, sizeof owner);
        int b = broker_index(owner);
        if (b != not) {
            snprintf(out, len, "persistent://public/default/%s", t);
            return b;
        }
    }
    ck_abort_msg("no topic placed off broker%d in 200 lookups", not + 1);
    return -1;
}

static pulsarc_client_t *txn_client(void) {
    return pct_client_with((const char *const[]){"enableTransaction", "true", "operationTimeoutMs", "30000", NULL});
}

static pulsarc_consumer_t *consumer_on(pulsarc_client_t *c, const char *topic, const char *sub) {
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, sub, conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s", topic, err);
    return cons;
}

static pulsarc_producer_t *producer_on(pulsarc_client_t *c, const char *topic) {
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"sendTimeoutMs", "0", NULL});
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer on %s: %s", topic, err);
    return p;
}

static void send_in_txn(pulsarc_producer_t *p, pulsarc_txn_t *txn, const char *tag, int n) {
    for (int i = 0; i < n; i++) {
        char v[64];
        snprintf(v, sizeof v, "%s-%d", tag, i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send_txn(p, txn, m, NULL);
        pulsarc_msg_destroy(m);
        ck_assert_msg(e == PULSARC_OK, "send %s in txn: %s", v, pulsarc_strerror(e));
    }
}

/* Messages of tag the consumer receives until `quiet_ms` of silence (acked as they come). */
static int count_tag(pulsarc_consumer_t *cons, const char *tag, int quiet_ms) {
    int n = 0;
    size_t tl = strlen(tag);
    for (;;) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, quiet_ms);
        if (e != PULSARC_OK)
            break;
        if (pulsarc_msg_len(m) > tl && memcmp(pulsarc_msg_payload(m), tag, tl) == 0 &&
            ((const char *)pulsarc_msg_payload(m))[tl] == '-')
            n++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    return n;
}

/* Two topics on two brokers, commit then abort. */
START_TEST(test_txn_across_brokers) {
    char t1[300], t2[300];
    int b1 = topic_off(-1, t1, sizeof t1);
    int b2 = topic_off(b1, t2, sizeof t2);
    pulsarc_client_t *c = txn_client();
    pulsarc_consumer_t *c1 = consumer_on(c, t1, "txn-sub"), *c2 = consumer_on(c, t2, "txn-sub");
    pulsarc_producer_t *p1 = producer_on(c, t1), *p2 = producer_on(c, t2);
    char err[512];

    pulsarc_txn_t *txn = NULL;
    ck_assert_msg(pulsarc_txn_new(c, 60000, &txn, err, sizeof err) == PULSARC_OK, "txn: %s", err);
    send_in_txn(p1, txn, "commit", NMSGS);
    send_in_txn(p2, txn, "commit", NMSGS);
    ck_assert_int_eq(count_tag(c1, "commit", 1000), 0); /* not visible before the commit */
    ck_assert_msg(pulsarc_txn_commit(txn, err, sizeof err) == PULSARC_OK, "commit: %s", err);
    pulsarc_txn_destroy(txn);
    int n1 = count_tag(c1, "commit", 5000), n2 = count_tag(c2, "commit", 5000);
    printf("committed across broker%d and broker%d: %d + %d of %d + %d visible\n", b1 + 1, b2 + 1, n1, n2, NMSGS,
           NMSGS);
    ck_assert_int_eq(n1, NMSGS);
    ck_assert_int_eq(n2, NMSGS);

    ck_assert_msg(pulsarc_txn_new(c, 60000, &txn, err, sizeof err) == PULSARC_OK, "txn: %s", err);
    send_in_txn(p1, txn, "abort", NMSGS);
    send_in_txn(p2, txn, "abort", NMSGS);
    ck_assert_msg(pulsarc_txn_abort(txn, err, sizeof err) == PULSARC_OK, "abort: %s", err);
    pulsarc_txn_destroy(txn);
    int a1 = count_tag(c1, "abort", 5000), a2 = count_tag(c2, "abort", 3000);
    printf("aborted across broker%d and broker%d: %d + %d visible\n", b1 + 1, b2 + 1, a1, a2);
    ck_assert_int_eq(a1, 0);
    ck_assert_int_eq(a2, 0);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    pulsarc_consumer_destroy(c1);
    pulsarc_consumer_destroy(c2);
    pulsarc_client_destroy(c);
}
END_TEST

/* kill -9 of the broker owning the transaction's coordinator, mid-transaction. */
START_TEST(test_txn_coordinator_broker_killed) {
    pulsarc_client_t *c = txn_client();
    char err[512];
    pulsarc_txn_t *txn = NULL;
    ck_assert_msg(pulsarc_txn_new(c, 120000, &txn, err, sizeof err) == PULSARC_OK, "txn: %s", err);
    uint64_t most = 0, least = 0;
    ck_assert_int_eq(pulsarc_txn_id(txn, &most, &least), PULSARC_OK);
    char tc[256], owner[256];
    snprintf(tc, sizeof tc, "pulsar/system/transaction_coordinator_assign-partition-%llu", (unsigned long long)most);
    owner_of(tc, owner, sizeof owner);
    int victim = broker_index(owner);
    /* The data topics on the other brokers: only the coordinator dies. */
    char t1[300], t2[300];
    topic_off(victim, t1, sizeof t1);
    topic_off(victim, t2, sizeof t2);
    pulsarc_producer_t *p1 = producer_on(c, t1), *p2 = producer_on(c, t2);
    send_in_txn(p1, txn, "tc", NMSGS);
    send_in_txn(p2, txn, "tc", NMSGS);

    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash '%s/restart.sh' broker%d --kill --down", cluster_env("PULSARC_CLUSTER_SCRIPTS"),
             victim + 1);
    printf("txn (%llu,%llu): coordinator %s on broker%d; killing it\n", (unsigned long long)most,
           (unsigned long long)least, tc, victim + 1);
    fflush(stdout);
    ck_assert_int_eq(system(cmd), 0);
    /* Commit while the coordinator's broker is down (its partition moves
     * to another broker once its ZooKeeper session expires). */
    double t0 = now_s();
    pulsarc_err_t e = pulsarc_txn_commit(txn, err, sizeof err);
    double took = now_s() - t0;
    printf("commit with the coordinator's broker killed: %s after %.2f s%s%s\n", pulsarc_errname(e), took,
           e ? ": " : "", e ? err : "");
    snprintf(cmd, sizeof cmd, "bash '%s/restart.sh' broker%d --up", cluster_env("PULSARC_CLUSTER_SCRIPTS"),
             victim + 1);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(took < 120, "commit took %.1f s", took);
    if (e != PULSARC_OK) {
        pulsarc_err_t a = pulsarc_txn_abort(txn, err, sizeof err);
        printf("abort after the failed commit: %s%s%s\n", pulsarc_errname(a), a ? ": " : "", a ? err : "");
    }
    pulsarc_txn_destroy(txn);
    pulsarc_consumer_t *c1 = consumer_on(c, t1, "txn-check"), *c2 = consumer_on(c, t2, "txn-check");
    int n1 = count_tag(c1, "tc", 5000), n2 = count_tag(c2, "tc", 5000);
    printf("visible after it: %d + %d of %d + %d\n", n1, n2, NMSGS, NMSGS);
    ck_assert_msg(n1 == n2 && (n1 == 0 || n1 == NMSGS), "half-visible: %d and %d of %d", n1, n2, NMSGS);
    if (e == PULSARC_OK)
        ck_assert_int_eq(n1, NMSGS);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    pulsarc_consumer_destroy(c1);
    pulsarc_consumer_destroy(c2);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("cluster_txn");
    TCase *t = tcase_create("txn");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, test_txn_across_brokers);
    tcase_add_test(t, test_txn_coordinator_broker_killed);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
