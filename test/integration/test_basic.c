/*
 * Live-broker conformance for the foundation: connect, partition metadata,
 * produce and consume 10,000 messages in order with bytes and properties
 * intact, no redelivery of acked messages after re-subscribing, and clear,
 * prompt errors for an unknown host and a refused port.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST(test_connect_and_partitions_of_plain_topic) {
    pulsarc_client_t *c = pct_client();
    char err[256];
    int n = -1;
    const char *topic = pct_topic("plain");
    ck_assert_int_eq(pct_admin("GET", "/admin/v2/clusters", NULL), 200);
    ck_assert_msg(pulsarc_client_partitions(c, topic, &n, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(n, 0);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_partitions_of_three_partition_topic) {
    const char *topic = pct_topic("part3");
    pct_create_partitioned(topic, 3); /* through the project's admin client */
    pulsarc_client_t *c = pct_client();
    char err[256];
    int n = -1;
    ck_assert_msg(pulsarc_client_partitions(c, topic, &n, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(n, 3);
    char full[512];
    snprintf(full, sizeof full, "persistent://public/default/%s", topic);
    n = -1;
    ck_assert(pulsarc_client_partitions(c, full, &n, err, sizeof err) == PULSARC_OK);
    ck_assert_int_eq(n, 3);
    pulsarc_client_destroy(c);
}
END_TEST

#define N_MSGS 10000

static void fill_payload(char *buf, size_t len, int i) {
    for (size_t k = 0; k < len; k++)
        buf[k] = (char)((i * 31 + (int)k * 7) & 0xff);
}

static void produce_n(pulsarc_client_t *c, const char *topic, int n, double *rate) {
    char err[256];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_ptr_nonnull(pulsarc_producer_name(p));
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char payload[64], key[32], val[32];
        fill_payload(payload, sizeof payload, i);
        snprintf(key, sizeof key, "key-%d", i % 17);
        snprintf(val, sizeof val, "%d", i);
        pulsarc_msg_set_payload(m, payload, (size_t)(i % 64) + 1, PULSARC_MSG_F_COPY);
        pulsarc_msg_set_key(m, key);
        pulsarc_msg_set_property(m, "index", val);
        pulsarc_msg_set_property(m, "kind", "test");
        pulsarc_msg_set_event_time(m, 1000000 + (uint64_t)i);
        pulsarc_msgid_t id;
        pulsarc_err_t e = pulsarc_producer_send(p, m, &id);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_strerror(e));
        ck_assert_int_ge(id.ledger_id, 0);
        ck_assert_int_ge(id.entry_id, 0);
        pulsarc_msg_destroy(m);
    }
    *rate = n / (now_s() - t0);
    ck_assert_int_eq(pulsarc_producer_last_sequence_id(p), n - 1);
    pulsarc_producer_destroy(p);
}

static void check_message(const pulsarc_msg_t *m, int i) {
    char payload[64], key[32], val[32];
    fill_payload(payload, sizeof payload, i);
    snprintf(key, sizeof key, "key-%d", i % 17);
    snprintf(val, sizeof val, "%d", i);
    ck_assert_uint_eq(pulsarc_msg_len(m), (size_t)(i % 64) + 1);
    ck_assert(memcmp(pulsarc_msg_payload(m), payload, pulsarc_msg_len(m)) == 0);
    ck_assert_str_eq(pulsarc_msg_key(m), key);
    ck_assert_str_eq(pulsarc_msg_property(m, "index"), val);
    ck_assert_str_eq(pulsarc_msg_property(m, "kind"), "test");
    ck_assert_uint_eq(pulsarc_msg_property_count(m), 2);
    ck_assert_uint_eq(pulsarc_msg_event_time(m), 1000000 + (uint64_t)i);
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), i);
    ck_assert_uint_gt(pulsarc_msg_publish_time(m), 0);
}

START_TEST(test_produce_consume_10000_in_order) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("order");
    char err[256];
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *cc = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, topic, "sub-order", cc, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    double prate;
    produce_n(c, topic, N_MSGS, &prate);
    double t0 = now_s();
    pulsarc_msgid_t prev = pulsarc_msgid_earliest();
    for (int i = 0; i < N_MSGS; i++) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, 10000);
        ck_assert_msg(e == PULSARC_OK, "receive %d: %s", i, pulsarc_strerror(e));
        check_message(m, i);
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        ck_assert_int_gt(pulsarc_msgid_compare(&id, &prev), 0);
        prev = id;
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    double crate = N_MSGS / (now_s() - t0);
    printf("produce (sync, unbatched): %.0f msg/s; consume: %.0f msg/s\n", prate, crate);
    pulsarc_msg_t *extra = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &extra, 500), PULSARC_ERR_NO_MESSAGE);
    pulsarc_consumer_destroy(cons);
    pulsarc_conf_destroy(cc);
    pulsarc_client_destroy(c);
}
END_TEST

static pulsarc_consumer_t *subscribe(pulsarc_client_t *c, const char *topic, const char *sub) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *cc = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, sub, cc, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(cc);
    return cons;
}

START_TEST(test_acked_not_redelivered_after_resubscribe) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("redeliver");
    pulsarc_consumer_t *cons = subscribe(c, topic, "sub-re");
    double rate;
    produce_n(c, topic, 20, &rate);
    /* Ack the first 10 only. */
    for (int i = 0; i < 20; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_OK);
        check_message(m, i);
        if (i < 10)
            ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_close(cons);
    pulsarc_consumer_destroy(cons);
    /* Re-subscribe: exactly messages 10..19 come back. */
    cons = subscribe(c, topic, "sub-re");
    for (int i = 10; i < 20; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_OK);
        check_message(m, i);
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_msg_t *extra = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &extra, 1000), PULSARC_ERR_NO_MESSAGE);
    ck_assert_int_eq(pulsarc_consumer_unsubscribe(cons), PULSARC_OK);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static pulsarc_err_t try_connect(const char *url, char *err, size_t len, double *secs) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_conf_set(conf, "serviceUrl", url, NULL, 0);
    pulsarc_conf_set(conf, "operationTimeoutMs", "5000", NULL, 0);
    pulsarc_client_t *c = NULL;
    ck_assert_int_eq(pulsarc_client_new(conf, &c, err, len), PULSARC_OK);
    pulsarc_conf_destroy(conf);
    int n;
    double t0 = now_s();
    pulsarc_producer_t *p = NULL;
    pulsarc_err_t e = pulsarc_producer_new(c, "t", NULL, &p, err, len);
    *secs = now_s() - t0;
    ck_assert_ptr_null(p);
    ck_assert_int_ne(pulsarc_client_partitions(c, "t", &n, NULL, 0), PULSARC_OK);
    pulsarc_client_destroy(c);
    return e;
}

START_TEST(test_unknown_host_fails_clearly) {
    char err[512];
    double secs;
    pulsarc_err_t e = try_connect("pulsar://no-such-host.invalid:6650", err, sizeof err, &secs);
    ck_assert_msg(e == PULSARC_ERR_RESOLVE || e == PULSARC_ERR_TIMEOUT, "got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, "no-such-host.invalid") != NULL, "error does not name the host: %s", err);
    ck_assert_msg(secs < 15, "took %.1f s", secs);
}
END_TEST

START_TEST(test_refused_port_fails_clearly) {
    char err[512];
    double secs;
    pulsarc_err_t e = try_connect("pulsar://127.0.0.1:1", err, sizeof err, &secs);
    ck_assert_msg(e == PULSARC_ERR_CONNECT, "got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, "127.0.0.1:1") && strstr(err, "refused"), "unclear error: %s", err);
    ck_assert_msg(secs < 15, "took %.1f s", secs);
}
END_TEST

START_TEST(test_bad_service_url_rejected) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    char err[256];
    ck_assert_int_eq(pulsarc_conf_set(conf, "serviceUrl", "kafka://x:1", err, sizeof err), PULSARC_OK);
    pulsarc_client_t *c = NULL;
    ck_assert_int_eq(pulsarc_client_new(conf, &c, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(err, "kafka") != NULL, "%s", err);
    ck_assert_int_eq(pulsarc_conf_set(conf, "noSuchKey", "1", err, sizeof err), PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_msg(strstr(err, "noSuchKey") != NULL, "%s", err);
    ck_assert_int_eq(pulsarc_conf_set(conf, "operationTimeoutMs", "abc", err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "operationTimeoutMs") && strstr(err, "abc"), "%s", err);
    pulsarc_conf_destroy(conf);
}
END_TEST

static Suite *basic_suite(void) {
    Suite *s = suite_create("live-basic");
    TCase *tc = tcase_create("foundation");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bad_service_url_rejected);
    tcase_add_test(tc, test_connect_and_partitions_of_plain_topic);
    tcase_add_test(tc, test_partitions_of_three_partition_topic);
    tcase_add_test(tc, test_produce_consume_10000_in_order);
    tcase_add_test(tc, test_acked_not_redelivered_after_resubscribe);
    tcase_add_test(tc, test_unknown_host_fails_clearly);
    tcase_add_test(tc, test_refused_port_fails_clearly);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(basic_suite)
