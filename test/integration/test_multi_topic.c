/*
 * Live-broker behaviour of one consumer handle over many topics: a
 * partitioned topic, a list of topics, a regex subscription, and the
 * discovery of partitions and topics created after subscribing.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static void make_partitioned(const char *topic, int n, const char *method) {
    if (strcmp(method, "PUT") == 0) { /* creation: through the project's admin client */
        pct_create_partitioned(topic, n);
        return;
    }
    char path[512], body[16];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", topic);
    snprintf(body, sizeof body, "%d", n);
    int code = pct_admin(method, path, body);
    ck_assert_msg(code == 204 || code == 200, "%s partitions of %s: HTTP %d", method, topic, code);
}

/* Receives until a quiet period; counts bodies starting with tag, checks partitions. */
static int drain(pulsarc_consumer_t *cons, const char *tag, int quiet_ms, int *partitions_seen) {
    int n = 0;
    pulsarc_msg_t *m;
    while (pulsarc_consumer_receive(cons, &m, quiet_ms) == PULSARC_OK) {
        if (strncmp(pulsarc_msg_payload(m), tag, strlen(tag)) == 0)
            n++;
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        if (partitions_seen && id.partition >= 0 && id.partition < 32)
            partitions_seen[id.partition]++;
        ck_assert_ptr_nonnull(pulsarc_msg_topic(m));
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    return n;
}

static pulsarc_consumer_t *subscribe(pulsarc_client_t *c, const char *topic, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "multi", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

START_TEST(test_partitioned_topic_behind_one_handle) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("parts");
    make_partitioned(topic, 3, "PUT");
    pulsarc_consumer_t *cons = subscribe(c, topic, NULL);
    char name[512];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s-partition-%d", topic, i);
        pct_send_tagged(c, name, "p", 10);
    }
    int seen[32] = {0};
    ck_assert_int_eq(drain(cons, "p-", 2000, seen), 30);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(seen[i], 10);
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    ck_assert_uint_eq(st.received, 30);
    ck_assert_uint_eq(st.acked, 30);
    pulsarc_msgid_t last;
    ck_assert_int_eq(pulsarc_consumer_last_message_id(cons, &last), PULSARC_ERR_UNSUPPORTED);
    usleep(300000); /* grouped acks out */
    pulsarc_consumer_destroy(cons);
    cons = subscribe(c, topic, NULL); /* everything was acked, per partition */
    ck_assert_int_eq(drain(cons, "p-", 1500, NULL), 0);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * The partitions are subscribed together: when some are refused (another
 * handle holds the Exclusive subscription on two of four), creation fails
 * with the broker's answer, the partitions that did subscribe are closed
 * again, and the holder is untouched.
 */
START_TEST(test_partition_refused_fails_the_whole_handle) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("parts-busy");
    make_partitioned(topic, 4, "PUT");
    char name[512];
    pulsarc_consumer_t *holders[2];
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "%s-partition-%d", topic, i * 2);
        holders[i] = subscribe(c, name, NULL);
    }
    pulsarc_conf_t *conf = pct_conf(NULL);
    pulsarc_consumer_t *cons = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "multi", conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_ERR_BROKER_CONSUMER_BUSY, "creation said %s: %s", pulsarc_errname(e), err);
    ck_assert_ptr_null(cons);
    snprintf(name, sizeof name, "%s-partition-1", topic);
    pulsarc_consumer_t *free_part = subscribe(c, name, NULL); /* closed again: free to take */
    pct_send_tagged(c, name, "q", 3);
    ck_assert_int_eq(drain(free_part, "q-", 1500, NULL), 3);
    pulsarc_consumer_destroy(free_part);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pulsarc_consumer_is_connected(holders[i]), 1);
        pulsarc_consumer_destroy(holders[i]);
    }
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_list_of_topics) {
    pulsarc_client_t *c = pct_client();
    char a[256], b[256];
    snprintf(a, sizeof a, "%s", pct_topic("list-a"));
    snprintf(b, sizeof b, "%s", pct_topic("list-b"));
    make_partitioned(b, 2, "PUT");
    const char *topics[] = {a, b};
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new_multi(c, topics, 2, "multi", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pct_send_tagged(c, a, "a", 7);
    char part[512];
    snprintf(part, sizeof part, "%s-partition-1", b);
    pct_send_tagged(c, part, "b", 5);
    ck_assert_int_eq(drain(cons, "a-", 1500, NULL), 7); /* counts only a-: b- drained alongside */
    pulsarc_consumer_destroy(cons);
    ck_assert_msg(pulsarc_consumer_new_multi(c, topics, 2, "multi2", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    int total = drain(cons, "", 1500, NULL);
    ck_assert_int_eq(total, 12);
    pulsarc_consumer_destroy(cons);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_regex_subscription_and_discovery) {
    pulsarc_client_t *c = pct_client();
    char prefix[128], a[256], b[256], other[256], later[256], pattern[300];
    snprintf(prefix, sizeof prefix, "%s", pct_topic("re"));
    snprintf(a, sizeof a, "%s-x", prefix);
    snprintf(b, sizeof b, "%s-y", prefix);
    snprintf(other, sizeof other, "zz-%s", prefix);
    snprintf(later, sizeof later, "%s-z", prefix);
    pct_send_tagged(c, a, "a", 3); /* creates the topics */
    pct_send_tagged(c, b, "b", 4);
    pct_send_tagged(c, other, "o", 5);
    snprintf(pattern, sizeof pattern, "persistent://public/default/%s-.*", prefix);
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "patternAutoDiscoveryPeriod", "1", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new_pattern(c, pattern, "re", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(drain(cons, "", 1500, NULL), 7); /* a and b, not the other topic */
    pct_send_tagged(c, later, "z", 6);                          /* a new matching topic */
    int got = 0;
    for (int i = 0; i < 10 && got < 6; i++)
        got += drain(cons, "z-", 1000, NULL);
    ck_assert_int_eq(got, 6);
    pulsarc_consumer_destroy(cons);
    ck_assert_int_eq(pulsarc_consumer_new_pattern(c, "persistent://public/default/([", "re", conf, &cons,
                                                  err, sizeof err), PULSARC_ERR_BAD_TOPIC);
    ck_assert_msg(strstr(err, "regular expression") != NULL, "%s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_new_partitions_are_discovered) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("grow");
    make_partitioned(topic, 2, "PUT");
    const char *kv[] = {"autoUpdatePartitionsInterval", "1", NULL};
    pulsarc_consumer_t *cons = subscribe(c, topic, kv);
    make_partitioned(topic, 3, "POST"); /* grow to 3 */
    sleep(3);                           /* a discovery round subscribes partition 2 */
    char name[512];
    snprintf(name, sizeof name, "%s-partition-2", topic);
    pct_send_tagged(c, name, "new", 4);
    int seen[32] = {0}, got = 0;
    for (int i = 0; i < 10 && got < 4; i++)
        got += drain(cons, "new-", 1000, seen);
    ck_assert_int_eq(got, 4);
    ck_assert_int_eq(seen[2], 4);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * Destroyed after its client was closed, while it follows the partition
 * count of the topic it subscribed: the watch goes with the handle and
 * nothing is left behind (valgrind and ASan see the rest); in between
 * the handle answers CLOSED.
 */
START_TEST(test_destroy_after_client_close) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("watch-closed");
    make_partitioned(topic, 2, "PUT");
    const char *kv[] = {"autoUpdatePartitionsInterval", "1", NULL};
    pulsarc_consumer_t *cons = subscribe(c, topic, kv);
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 0), PULSARC_ERR_CLOSED);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *multi_suite(void) {
    Suite *s = suite_create("live-multi-topic");
    TCase *tc = tcase_create("multi");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_partitioned_topic_behind_one_handle);
    tcase_add_test(tc, test_partition_refused_fails_the_whole_handle);
    tcase_add_test(tc, test_list_of_topics);
    tcase_add_test(tc, test_regex_subscription_and_discovery);
    tcase_add_test(tc, test_new_partitions_are_discovered);
    suite_add_tcase(s, tc);
    TCase *closed = tcase_create("after-client-close");
    tcase_set_timeout(closed, 120);
    tcase_add_test(closed, test_destroy_after_client_close);
    suite_add_tcase(s, closed);
    return s;
}

PC_TEST_MAIN(multi_suite)
