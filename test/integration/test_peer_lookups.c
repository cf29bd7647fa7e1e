/*
 * A consumer over many partitions, subscribed while the broker throttles
 * lookups. The broker's maxConcurrentLookupRequest (a dynamic setting,
 * changed through the admin API for this test and restored after it) is
 * cut to a handful, so most of the partitions' concurrent lookups are
 * answered TooManyRequests. Those answers must be retried with backoff
 * until every partition is subscribed: pulsarc_consumer_new succeeds, and
 * one message produced to every partition is received, each once.
 *
 * 1,000 partitions with PULSARC_LONG=1 (make long), 200 otherwise.
 *
 * Printed ("lookups:" line): partitions, how long the subscribe took, the
 * broker's lookup answers and failures during it (from its /metrics), the
 * messages received. Asserted: the subscribe succeeded and every partition's
 * message arrived exactly once; the broker did refuse lookups is printed
 * (the throttle's strength depends on timing), not asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_util.h"

#define LOOKUP_LIMIT "3" /* concurrent lookups the broker allows during the test */
#define BUNDLES "128"     /* bundles of the test's namespace */
#define METRICS_MAX (8 << 20)

static int partitions(void) { return peer_env_on("PULSARC_LONG") ? 1000 : 200; }

/* The broker's counter name{...} value from its Prometheus page, or -1. */
static double broker_metric(const char *name) {
    char *page = malloc(METRICS_MAX);
    ck_assert_ptr_nonnull(page);
    double v = -1;
    if (peer_admin_get("/metrics/", page, METRICS_MAX) == 200) {
        size_t n = strlen(name);
        for (char *l = page; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (strncmp(l, name, n) == 0 && (l[n] == '{' || l[n] == ' ')) {
                const char *sp = strchr(l, ' ');
                v = sp ? strtod(sp + 1, NULL) : -1;
                break;
            }
    }
    free(page);
    return v;
}

static void throttle_lookups(void) {
    int code = pct_admin("POST", "/admin/v2/brokers/configuration/maxConcurrentLookupRequest/"
                         LOOKUP_LIMIT, NULL);
    ck_assert_msg(code == 200 || code == 204, "setting maxConcurrentLookupRequest: HTTP %d", code);
}

/* Runs in the parent process (unchecked fixture), whatever the test did. */
static void restore_lookups(void) {
    pct_admin("DELETE", "/admin/v2/brokers/configuration/maxConcurrentLookupRequest", NULL);
}

static void produce_one_each(pulsarc_client_t *c, const char *topic, int n) {
    char part[512], body[32];
    for (int i = 0; i < n; i++) {
        snprintf(part, sizeof part, "%s-partition-%d", topic, i);
        pulsarc_producer_t *p = peer_producer(c, part, NULL);
        pulsarc_msg_t *m = pulsarc_msg_new();
        snprintf(body, sizeof body, "m%d", i);
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
        pulsarc_msg_destroy(m);
        pulsarc_producer_destroy(p);
        ck_assert_msg(e == PULSARC_OK, "send to %s: %s", part, pulsarc_errname(e));
    }
}

START_TEST(test_subscribe_under_lookup_throttling) {
    const int n = partitions();
    const char *ns = pct_topic("peer-lookups-ns");
    char full[512], path[512];
    /* Many bundles, none owned yet: each first lookup waits for the broker
     * to take its bundle, so lookups are pending long enough to be throttled. */
    snprintf(path, sizeof path, "/admin/v2/namespaces/public/%s", ns);
    int code = pct_admin("PUT", path, "{\"bundles\":{\"numBundles\":" BUNDLES "}}");
    ck_assert_msg(code == 204 || code == 200, "creating namespace public/%s: HTTP %d", ns, code);
    snprintf(full, sizeof full, "persistent://public/%s/lookups", ns);
    pct_create_partitioned(full, n);
    double answers0 = broker_metric("pulsar_broker_lookup_answers_total");
    double failures0 = broker_metric("pulsar_broker_lookup_failures_total");
    throttle_lookups();
    pulsarc_client_t *c = peer_client(NULL, (const char *const[]){"operationTimeoutMs", "60000",
                                                                  NULL});
    int64_t t0 = peer_now_ms();
    pulsarc_consumer_t *cons = peer_consumer(
        c, full, "lookups-sub",
        (const char *const[]){"subscriptionInitialPosition", "Earliest", "receiverQueueSize", "10",
                              NULL});
    int64_t took = peer_now_ms() - t0;
    double answers = broker_metric("pulsar_broker_lookup_answers_total") - answers0;
    double failures = broker_metric("pulsar_broker_lookup_failures_total") - failures0;
    restore_lookups();
    produce_one_each(c, full, n);
    int *seen = calloc((size_t)n, sizeof *seen);
    int unique = 0, deliveries = 0;
    pulsarc_err_t last = PULSARC_OK;
    while (unique < n) {
        pulsarc_msg_t *m = NULL;
        last = pulsarc_consumer_receive(cons, &m, PEER_HANG_MS);
        if (last != PULSARC_OK)
            break;
        int i = peer_payload_index(m);
        deliveries++;
        if (i >= 0 && i < n && !seen[i]++)
            unique++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    printf("lookups: partitions=%d limit=%s subscribe_ms=%lld broker_lookup_answers=%.0f "
           "broker_lookup_failures=%.0f received=%d unique=%d last=%s\n",
           n, LOOKUP_LIMIT, (long long)took, answers, failures, deliveries, unique,
           pulsarc_errname(last));
    fflush(stdout);
    ck_assert_msg(unique == n, "%d of %d partitions' messages arrived (receive said %s)", unique, n,
                  pulsarc_errname(last));
    ck_assert_int_eq(deliveries, n);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    free(seen);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-lookups");
    TCase *t = tcase_create("lookups");
    tcase_set_timeout(t, 900);
    tcase_add_unchecked_fixture(t, NULL, restore_lookups);
    tcase_add_test(t, test_subscribe_under_lookup_throttling);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
