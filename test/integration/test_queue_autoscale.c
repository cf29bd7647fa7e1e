/*
 * Live-broker tests of autoScaledReceiverQueueSizeEnabled: the receive
 * queue of a single-topic consumer starts at one message and doubles (never
 * past receiverQueueSize) each time the application finds it empty after
 * the broker had used up its permits (what that saves a slow application
 * is measured by bench/autoscale.c, not asserted here). Order and count of
 * messages are unchanged; the queue never holds more than its current size,
 * and what the broker was granted beyond what arrived
 * (pc_consumer_permits_sent against stats.received) never exceeds it.
 * Idle (autoScaledReceiverQueueIdleMs), the queue halves down to one
 * message; the permits the broker still held are withheld from what the
 * application returns, so what the consumer holds follows the queue down.
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

static pulsarc_consumer_t *consumer_idle(pulsarc_client_t *c, const char *topic, int autoscale,
                                          const char *idle_ms) {
    char q[16];
    snprintf(q, sizeof q, "%d", MAX_QUEUE);
    const char *kv[] = {"receiverQueueSize", q, "autoScaledReceiverQueueSizeEnabled",
                        autoscale ? "true" : "false", "subscriptionInitialPosition", "Earliest",
                        "autoScaledReceiverQueueIdleMs", idle_ms, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "as", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

/* Never shrinking: what the growth tests see does not depend on the machine's pace. */
static pulsarc_consumer_t *consumer(pulsarc_client_t *c, const char *topic, int autoscale) {
    return consumer_idle(c, topic, autoscale, "0");
}

static pulsarc_consumer_stats_t stats(pulsarc_consumer_t *cons) {
    pulsarc_consumer_stats_t st;
    ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
    return st;
}

/* Receives message i. */
static void take_next(pulsarc_consumer_t *cons, int i) {
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 20000), PULSARC_OK);
    ck_assert_int_eq(atoi(pulsarc_msg_property(m, "i")), i);
    pulsarc_msg_destroy(m);
}

/* Receives message i and checks the queue's bounds; returns the queue's size after. */
static size_t take(pulsarc_consumer_t *cons, int i) {
    take_next(cons, i);
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

/* What the consumer has taken on and not handed out: queued, plus granted and not yet arrived. */
static uint64_t held(pulsarc_consumer_t *cons) {
    pulsarc_consumer_stats_t st = stats(cons);
    return st.queue_len + (pc_consumer_permits_sent(cons) - st.received);
}

START_TEST(test_shrinks_when_idle) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("autoscale-idle");
    publish(c, topic, TOTAL);
    pulsarc_consumer_t *cons = consumer_idle(c, topic, 1, "200");
    int i = 0;
    for (; i < TOTAL; i++) /* a tight loop: grows while messages flow */
        take(cons, i);
    size_t grown = stats(cons).queue_size;
    ck_assert_uint_gt(grown, 1); /* a tight receive loop outruns a queue of one */
    /* Idle: each check halves it, never granting anything, down to one
     * message. The permits the last receives returned went out on the io
     * thread before its first check: count from the first halving. */
    size_t prev = grown;
    uint64_t granted = 0;
    for (int k = 0; k < 3000 && prev > 1; k++) { /* a 60 s hang bound */
        usleep(20000);
        size_t q = stats(cons).queue_size;
        ck_assert_uint_le(q, prev);
        if (q < grown && !granted)
            granted = pc_consumer_permits_sent(cons);
        if (granted)
            ck_assert_uint_eq(pc_consumer_permits_sent(cons), granted);
        prev = q;
    }
    ck_assert_uint_eq(prev, 1);
    ck_assert_uint_eq(pc_consumer_permits_sent(cons), granted);
    uint64_t before = held(cons); /* the broker still holds the grown queue's permits */
    fprintf(stderr, "autoscale: idle, the queue shrank from %zu to 1; the broker held %llu permits\n", grown,
           (unsigned long long)before);

    /* A burst fills what the broker held; handing it out returns no permit
     * until the shrink's debt is paid, so the consumer then holds about the
     * shrunk queue (one message; two for slack), not the grown one. */
    uint64_t rx0 = stats(cons).received;
    publish(c, topic, TOTAL);
    pulsarc_consumer_stats_t st = stats(cons);
    for (int k = 0; k < 3000 && st.received < rx0 + before; k++) {
        usleep(20000);
        st = stats(cons);
    }
    size_t queued = st.queue_len;
    ck_assert_uint_eq(queued, before);
    for (size_t k = 0; k < queued; k++, i++) /* more queued than the shrunk size, for now */
        take_next(cons, i - TOTAL);
    uint64_t after = held(cons);
    fprintf(stderr, "autoscale: after handing out the %zu queued, the consumer holds %llu (queue %zu)\n", queued,
           (unsigned long long)after, stats(cons).queue_size);
    ck_assert_uint_le(after, 2);
    for (; i < 2 * TOTAL; i++) /* the rest, in order: the queue grows again */
        take(cons, i - TOTAL);
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
    tcase_add_test(tc, test_shrinks_when_idle);
    tcase_add_test(tc, test_fixed_queue_does_not_scale);
    tcase_add_test(tc, test_not_with_zero_queue);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(autoscale_suite)
