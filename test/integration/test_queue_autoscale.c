/*
 * Live-broker tests of autoScaledReceiverQueueSizeEnabled: the receive
 * queue of a single-topic consumer starts at one message and doubles (never
 * past receiverQueueSize) each time the application finds it empty after
 * the broker had used up its permits (what that saves a slow application
 * is measured by bench/autoscale.c, not asserted here). Order and count of
 * messages are unchanged; the queue never holds more than its current size,
 * and what the broker was granted beyond what arrived
 * (pc_consumer_permits_sent against stats.received) never exceeds it.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/consumer/consumer_int.h"
#include "testutil.h"

#define MAX_QUEUE 64
#define TOTAL 300

static void publish(pulsarc_client_t *c, const char *topic, int n) {
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    for (int i = 0; i < n; i++) {
        char body[32];
        snprintf(body, sizeof body, "msg-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_property(m, "i", body + 4);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, NULL, NULL), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    pulsarc_producer_destroy(p);
}

static pulsarc_consumer_t *consumer(pulsarc_client_t *c, const char *topic, int autoscale) {
    char q[16];
    snprintf(q, sizeof q, "%d", MAX_QUEUE);
    const char *kv[] = {"receiverQueueSize", q, "autoScaledReceiverQueueSizeEnabled",
                        autoscale ? "true" : "false", "subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "as", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

static pulsarc_consumer_stats_t stats(pulsarc_consumer_t *cons) {
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    return st;
}

/* Receives message i and checks the queue's bounds; returns the queue's size after. */
static size_t take(pulsarc_consumer_t *cons, int i) {
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 20000), PULSARC_OK);
    ck_assert_int_eq(atoi(pulsarc_msg_property(m, "i")), i);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_stats_t st = stats(cons);
    uint64_t granted = pc_consumer_permits_sent(cons);
    ck_assert_uint_le(st.queue_size, MAX_QUEUE);
    ck_assert_uint_le(st.queue_len, st.queue_size);
    ck_assert_uint_ge(granted, st.received);
    ck_assert_uint_le(granted - st.received, MAX_QUEUE);
    return st.queue_size;
}

START_TEST(test_grows_while_drained) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("autoscale");
    publish(c, topic, TOTAL);
    pulsarc_consumer_t *cons = consumer(c, topic, 1);
    ck_assert_uint_eq(stats(cons).queue_size, 1); /* starts at one message */
    size_t prev = 1;
    int i = 0;
    for (; i < TOTAL / 2; i++) {
        size_t q = take(cons, i);
        ck_assert(q == prev || q == prev * 2 || q == MAX_QUEUE); /* only ever doubles */
        prev = q;
    }
    ck_assert_uint_gt(prev, 1); /* a tight receive loop outruns a queue of one */
    /* The application stops: the broker uses up its permits; the queue holds at most its size. */
    pulsarc_consumer_stats_t st = stats(cons);
    for (int k = 0; k < 750 && pc_consumer_permits_sent(cons) != st.received; k++) {
        usleep(20000);
        st = stats(cons);
    }
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), st.received);
    ck_assert_uint_le(st.queue_len, st.queue_size);
    printf("autoscale: queue grew to %zu of %d in %d receives; %zu queued when the application "
           "stopped\n", st.queue_size, MAX_QUEUE, TOTAL / 2, st.queue_len);
    for (; i < TOTAL; i++)
        take(cons, i);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 500), PULSARC_ERR_NO_MESSAGE);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_fixed_queue_does_not_scale) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("autoscale-off");
    publish(c, topic, 100);
    pulsarc_consumer_t *cons = consumer(c, topic, 0);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(take(cons, i), MAX_QUEUE);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_not_with_zero_queue) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"receiverQueueSize", "0", "autoScaledReceiverQueueSizeEnabled", "true", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_int_eq(pulsarc_consumer_new(c, pct_topic("autoscale-zero"), "as", conf, &cons, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "autoScaledReceiverQueueSizeEnabled"), "%s", err);
    ck_assert_ptr_null(cons);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *autoscale_suite(void) {
    Suite *s = suite_create("live-queue-autoscale");
    TCase *tc = tcase_create("autoscale");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_grows_while_drained);
    tcase_add_test(tc, test_fixed_queue_does_not_scale);
    tcase_add_test(tc, test_not_with_zero_queue);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(autoscale_suite)
