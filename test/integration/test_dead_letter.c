/*
 * Live-broker dead-letter and retry topics: a message nacked past
 * deadLetterPolicy.maxRedeliverCount lands on the dead-letter topic (with
 * REAL_TOPIC and ORIGIN_MESSAGE_ID) and is not redelivered again; with
 * retryEnable, pulsarc_consumer_reconsume_later() brings a message back
 * through the retry topic, counting rounds, then dead-letters it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static void send_one(pulsarc_client_t *c, const char *topic, const char *body, const char *key) {
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
    pulsarc_msg_set_key(m, key);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
    pulsarc_producer_destroy(p);
    pulsarc_conf_destroy(conf);
}

static pulsarc_consumer_t *subscribe(pulsarc_client_t *c, const char *topic, const char *sub,
                                     const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, sub, conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

START_TEST(test_nacked_past_limit_goes_to_dlq) {
    pulsarc_client_t *c = pct_client();
    char topic[256], dlq[512];
    snprintf(topic, sizeof topic, "%s", pct_topic("dlq"));
    snprintf(dlq, sizeof dlq, "persistent://public/default/%s-sub-DLQ", topic);
    pulsarc_consumer_t *dlqc = subscribe(c, dlq, "watch", NULL); /* exists before the first letter */
    const char *kv[] = {"subscriptionType", "Shared", "deadLetterPolicy.maxRedeliverCount", "2",
                        "negativeAckRedeliveryDelayMicros", "100000", "tickDurationMillis", "50", NULL};
    pulsarc_consumer_t *cons = subscribe(c, topic, "sub", kv);
    send_one(c, topic, "poison", "k1");
    int deliveries = 0;
    pulsarc_msg_t *m;
    while (pulsarc_consumer_receive(cons, &m, 3000) == PULSARC_OK) {
        ck_assert_uint_eq(pulsarc_msg_redelivery_count(m), (uint32_t)deliveries);
        deliveries++;
        pulsarc_consumer_nack(cons, m);
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(deliveries, 3); /* counts 0, 1, 2; the next nack dead-letters it */
    ck_assert_int_eq(pulsarc_consumer_receive(dlqc, &m, 10000), PULSARC_OK);
    ck_assert_uint_eq(pulsarc_msg_len(m), 6);
    ck_assert(memcmp(pulsarc_msg_payload(m), "poison", 6) == 0);
    ck_assert_str_eq(pulsarc_msg_key(m), "k1");
    ck_assert_msg(strstr(pulsarc_msg_property(m, "REAL_TOPIC"), topic) != NULL, "%s",
                  pulsarc_msg_property(m, "REAL_TOPIC"));
    ck_assert_ptr_nonnull(pulsarc_msg_property(m, "ORIGIN_MESSAGE_ID"));
    pulsarc_msg_destroy(m);
    pulsarc_consumer_destroy(cons);
    cons = subscribe(c, topic, "sub", kv); /* the original was acked once dead-lettered */
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 1500), PULSARC_ERR_NO_MESSAGE);
    pulsarc_consumer_destroy(cons);
    pulsarc_consumer_destroy(dlqc);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_reconsume_later_through_retry_topic) {
    pulsarc_client_t *c = pct_client();
    char topic[256], dlq[512];
    snprintf(topic, sizeof topic, "%s", pct_topic("retry"));
    snprintf(dlq, sizeof dlq, "persistent://public/default/%s-rs-DLQ", topic);
    pulsarc_consumer_t *dlqc = subscribe(c, dlq, "watch", NULL);
    const char *kv[] = {"subscriptionType", "Shared", "retryEnable", "true",
                        "deadLetterPolicy.maxRedeliverCount", "2", NULL};
    pulsarc_consumer_t *cons = subscribe(c, topic, "rs", kv);
    send_one(c, topic, "again", "k2");
    pulsarc_msg_t *m;
    for (int round = 0; round <= 2; round++) {
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_OK);
        ck_assert(memcmp(pulsarc_msg_payload(m), "again", 5) == 0);
        const char *times = pulsarc_msg_property(m, "RECONSUMETIMES");
        ck_assert_int_eq(times ? atoi(times) : 0, round);
        ck_assert_int_eq(pulsarc_consumer_reconsume_later(cons, m, 200), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 1500), PULSARC_ERR_NO_MESSAGE);
    ck_assert_int_eq(pulsarc_consumer_receive(dlqc, &m, 10000), PULSARC_OK); /* round 3: dead */
    ck_assert_str_eq(pulsarc_msg_property(m, "RECONSUMETIMES"), "3");
    pulsarc_msg_destroy(m);
    pulsarc_consumer_destroy(cons);
    pulsarc_consumer_destroy(dlqc);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *dlq_suite(void) {
    Suite *s = suite_create("live-dead-letter");
    TCase *tc = tcase_create("dlq");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_nacked_past_limit_goes_to_dlq);
    tcase_add_test(tc, test_reconsume_later_through_retry_topic);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(dlq_suite)
