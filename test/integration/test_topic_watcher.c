/*
 * Live-broker behaviour of the topic-list watcher of a regex subscription
 * (lib/client/consumer/topic_watcher.c): with patternAutoDiscoveryPeriod at
 * an hour, so polling cannot be what finds them, a topic created after
 * subscribing is subscribed and its messages received, a deleted topic's
 * child is closed, a topic that does not match is left alone, and after
 * the connection is cut the watch comes back and still picks topics up.
 * With the watcher turned off (patternTopicWatcherEnabled=false) the same
 * happens through polling.
 *
 * Each pick-up prints how long it took from the moment the producer was
 * created (which creates the topic) to the first message received; the
 * figures are printed, not asserted. Every wait has a hang bound.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../faults/proxy.h"
#include "core/url.h"
#include "testutil.h"

#define HANG_BOUND_MS 20000

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pulsarc_client_t *client_at(const char *url, const char *initial_backoff_ms) {
    const char *kv[] = {"serviceUrl", url, "initialBackoffIntervalMs", initial_backoff_ms,
                        "maxBackoffIntervalMs", "10000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_client_t *c = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client: %s", err);
    return c;
}

/* A regex consumer on public/default/<prefix>-.* from the earliest message. */
static pulsarc_consumer_t *subscribe(pulsarc_client_t *c, const char *prefix, const char *period_s,
                                     const char *watcher) {
    char pattern[300];
    snprintf(pattern, sizeof pattern, "persistent://public/default/%s-.*", prefix);
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "patternAutoDiscoveryPeriod",
                        period_s, "patternTopicWatcherEnabled", watcher, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new_pattern(c, pattern, "watch", conf, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

/*
 * Receives until `want` messages tagged tag arrived (others are counted in
 * *others when given) or the hang bound passed; returns the count and the
 * time of the first tagged one in *first_at.
 */
static int receive_tagged(pulsarc_consumer_t *cons, const char *tag, int want, int *others,
                          int64_t *first_at) {
    int n = 0;
    int64_t end = now_ms() + HANG_BOUND_MS;
    while (n < want && now_ms() < end) {
        pulsarc_msg_t *m;
        if (pulsarc_consumer_receive(cons, &m, 200) != PULSARC_OK)
            continue;
        if (strncmp(pulsarc_msg_payload(m), tag, strlen(tag)) == 0) {
            if (n++ == 0 && first_at)
                *first_at = now_ms();
        } else if (others) {
            (*others)++;
        }
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    return n;
}

/* Whatever else arrives within quiet_ms, counted. */
static int drain(pulsarc_consumer_t *cons, int quiet_ms) {
    int n = 0;
    pulsarc_msg_t *m;
    while (pulsarc_consumer_receive(cons, &m, quiet_ms) == PULSARC_OK) {
        n++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    return n;
}

/* Produces to topic and waits for its n messages on cons; prints the pick-up time. */
static void expect_picked_up(pulsarc_client_t *pc, pulsarc_consumer_t *cons, const char *topic,
                             const char *tag, int n, const char *what) {
    int64_t t0 = now_ms(), first = 0;
    pct_send_tagged(pc, topic, tag, n);
    ck_assert_int_eq(receive_tagged(cons, tag, n, NULL, &first), n);
    printf("pick-up (%s): first message %lld ms after the producer was created\n", what,
           (long long)(first - t0));
    fflush(stdout);
}

static int topic_exists(const char *topic) {
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/stats", topic);
    int code = pct_admin("GET", path, NULL);
    ck_assert_msg(code == 200 || code == 404, "stats of %s: HTTP %d", topic, code);
    return code == 200;
}

/*
 * Force-deletes topic (closing our child's subscription on the broker),
 * then checks it stays deleted past the child's reconnect delay: a child
 * left open would subscribe again and so create the topic anew.
 */
static void delete_and_expect_dropped(const char *topic, int reconnect_ms) {
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s?force=true", topic);
    int code = pct_admin("DELETE", path, NULL);
    ck_assert_msg(code == 204 || code == 200, "delete %s: HTTP %d", topic, code);
    usleep((useconds_t)(reconnect_ms + 3000) * 1000);
    ck_assert_msg(!topic_exists(topic), "%s came back: its child was not closed", topic);
}

START_TEST(test_pushed_topics_are_subscribed_and_dropped) {
    /* The children's reconnect waits 4 s: a deleted topic's child must be closed by then. */
    pulsarc_client_t *c = client_at(pct_service_url(), "4000");
    char prefix[128], first[256], later[256], other[256];
    snprintf(prefix, sizeof prefix, "%s", pct_topic("tw"));
    snprintf(first, sizeof first, "%s-a", prefix);
    snprintf(later, sizeof later, "%s-b", prefix);
    snprintf(other, sizeof other, "other-%s", prefix);
    pct_send_tagged(c, first, "a", 2);
    pulsarc_consumer_t *cons = subscribe(c, prefix, "3600", "true");
    int others = 0;
    ck_assert_int_eq(receive_tagged(cons, "a-", 2, &others, NULL), 2);
    expect_picked_up(c, cons, later, "b", 5, "pushed");
    pct_send_tagged(c, other, "o", 3); /* does not match: never subscribed */
    delete_and_expect_dropped(later, 4000);
    others += drain(cons, 1000);
    ck_assert_int_eq(others, 0);
    expect_picked_up(c, cons, later, "again", 3, "the deleted topic created again");
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_watch_comes_back_after_a_cut) {
    pc_service_url_t u;
    char err[256];
    ck_assert_msg(!pc_service_url_parse(pct_service_url(), &u, err, sizeof err), "%s", err);
    pc_proxy_t *px = pc_proxy_new(u.hosts[0].host, u.hosts[0].port);
    ck_assert_ptr_nonnull(px);
    pulsarc_client_t *through = client_at(pc_proxy_url(px), "100");
    pulsarc_client_t *direct = client_at(pct_service_url(), "100");
    char prefix[128], a[256], b[256];
    snprintf(prefix, sizeof prefix, "%s", pct_topic("twcut"));
    snprintf(a, sizeof a, "%s-a", prefix);
    snprintf(b, sizeof b, "%s-b", prefix);
    pct_send_tagged(direct, a, "a", 1);
    pulsarc_consumer_t *cons = subscribe(through, prefix, "3600", "true");
    ck_assert_int_eq(receive_tagged(cons, "a-", 1, NULL, NULL), 1);
    pc_proxy_cut_all(px);
    int64_t end = now_ms() + HANG_BOUND_MS; /* the child is back ... */
    while (!pulsarc_consumer_is_connected(cons) && now_ms() < end)
        usleep(50000);
    ck_assert_int_eq(pulsarc_consumer_is_connected(cons), 1);
    pc_proxy_stats_t st;
    pc_proxy_stats(px, &st);
    ck_assert_uint_ge(st.conns_cut, 1);
    expect_picked_up(direct, cons, b, "b", 4, "after a cut"); /* ... and so is the watch */
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(through);
    pulsarc_client_destroy(direct);
    pc_proxy_destroy(px);
}
END_TEST

START_TEST(test_polling_without_the_watcher) {
    pulsarc_client_t *c = client_at(pct_service_url(), "4000");
    char prefix[128], a[256], b[256];
    snprintf(prefix, sizeof prefix, "%s", pct_topic("twoff"));
    snprintf(a, sizeof a, "%s-a", prefix);
    snprintf(b, sizeof b, "%s-b", prefix);
    pct_send_tagged(c, a, "a", 1);
    pulsarc_consumer_t *cons = subscribe(c, prefix, "1", "false");
    ck_assert_int_eq(receive_tagged(cons, "a-", 1, NULL, NULL), 1);
    expect_picked_up(c, cons, b, "b", 3, "polled every second, watcher off");
    delete_and_expect_dropped(b, 4000); /* the poll's full list closes its child */
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *watcher_suite(void) {
    Suite *s = suite_create("live-topic-watcher");
    TCase *tc = tcase_create("watcher");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_pushed_topics_are_subscribed_and_dropped);
    tcase_add_test(tc, test_watch_comes_back_after_a_cut);
    tcase_add_test(tc, test_polling_without_the_watcher);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(watcher_suite)
