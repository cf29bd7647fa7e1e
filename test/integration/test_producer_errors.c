/*
 * Live-broker tests of the producer's error paths and flow control: an
 * oversized message without chunking, the send timeout, a full pending
 * queue (fail fast, and block bounded by the send timeout), the client-wide
 * memory limit, and producers the broker refuses (terminated topic,
 * exclusive access taken, bad configuration).
 *
 * To keep sends pending without racing the broker, a test unloads the
 * topic while the client's reconnect backoff is one minute: the broker
 * closes the producer and nothing it sends afterwards can be acknowledged.
 */
#include <stdlib.h>

#include "producer_util.h"

/* Random bytes do not compress, so the size check sees the real size. */
static pulsarc_msg_t *random_msg(size_t len) {
    uint8_t *buf = malloc(len);
    unsigned seed = 7;
    for (size_t k = 0; k < len; k++)
        buf[k] = (uint8_t)rand_r(&seed);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, buf, len, PULSARC_MSG_F_FREE);
    return m;
}

/* _i: batching off (0) / on (1); the broker's maxMessageSize is 1,024,000. */
START_TEST(test_oversized_without_chunking) {
    pulsarc_client_t *c = pct_client();
    const char *kv[] = {"batchingEnabled", _i ? "true" : "false", "compressionType", "LZ4", NULL};
    pulsarc_producer_t *p = make_producer(c, pct_topic("too-big"), kv);
    pulsarc_msg_t *m = random_msg(1500 * 1000);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_MSG_TOO_BIG);
    pulsarc_msg_destroy(m);
    sent_log_t log;
    sent_log_init(&log);
    m = random_msg(1500 * 1000);
    pulsarc_msg_set_property(m, "i", "0");
    pulsarc_producer_send_async(p, m, on_sent_cb, &log);
    sent_log_wait(&log, 1);
    ck_assert_int_eq(log.errs[0], PULSARC_ERR_MSG_TOO_BIG);
    send_text(p, "small ones still go"); /* the producer is unharmed */
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_send_timeout) {
    pulsarc_client_t *c = backoff_client("60000", NULL, NULL);
    const char *topic = pct_topic("send-timeout");
    const char *kv[] = {"sendTimeoutMs", "300", "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = stalled_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(i, 10), on_sent_cb, &log), PULSARC_OK);
    sent_log_wait(&log, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(log.calls_for[i], 1);
        ck_assert_int_eq(log.errs[i], PULSARC_ERR_TIMEOUT);
    }
    pulsarc_msg_t *m = msg_i(3, 10);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_ERR_TIMEOUT);
    pulsarc_msg_destroy(m);
    pulsarc_producer_stats_t st;
    pulsarc_producer_stats(p, &st);
    ck_assert_uint_eq(st.send_errors, 4);
    ck_assert_uint_eq(st.pending, 0);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_queue_full_fail_fast) {
    pulsarc_client_t *c = backoff_client("60000", NULL, NULL);
    const char *topic = pct_topic("queue-full");
    const char *kv[] = {"maxPendingMessages", "2", "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = stalled_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(0, 10), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(1, 10), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(2, 10), on_sent_cb, &log),
                     PULSARC_ERR_QUEUE_FULL);
    ck_assert_int_eq(log.calls_for[2], 1); /* told at once, through the callback too */
    ck_assert_int_eq(log.errs[2], PULSARC_ERR_QUEUE_FULL);
    pulsarc_producer_close(p); /* the two pending ones fail with CLOSED, once each */
    sent_log_wait(&log, 3);
    ck_assert_int_eq(log.errs[0], PULSARC_ERR_CLOSED);
    ck_assert_int_eq(log.errs[1], PULSARC_ERR_CLOSED);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* blockIfQueueFull: the sender waits, at most sendTimeoutMs. */
START_TEST(test_queue_full_blocks_until_timeout) {
    pulsarc_client_t *c = backoff_client("60000", NULL, NULL);
    const char *topic = pct_topic("queue-block");
    const char *kv[] = {"maxPendingMessages", "1", "blockIfQueueFull", "true",
                        "sendTimeoutMs", "400", "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = stalled_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p, msg_i(0, 10), on_sent_cb, &log), PULSARC_OK);
    /* Either the wait for a slot or the send itself times out: never success. */
    pulsarc_err_t e = pulsarc_producer_send_async(p, msg_i(1, 10), on_sent_cb, &log);
    sent_log_wait(&log, 2);
    ck_assert(e == PULSARC_ERR_TIMEOUT || e == PULSARC_OK);
    ck_assert_int_eq(log.errs[0], PULSARC_ERR_TIMEOUT);
    ck_assert_int_eq(log.errs[1], PULSARC_ERR_TIMEOUT);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* memoryLimitBytes is client-wide: two producers share one budget. */
START_TEST(test_memory_limit_fail_fast) {
    pulsarc_client_t *c = backoff_client("60000", "memoryLimitBytes", "1000");
    const char *t1 = pct_topic("mem-a"), *t2 = pct_topic("mem-b");
    const char *kv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p1 = stalled_producer(c, t1, kv), *p2 = stalled_producer(c, t2, kv);
    sent_log_t log;
    sent_log_init(&log);
    ck_assert_int_eq(pulsarc_producer_send_async(p1, msg_i(0, 600), on_sent_cb, &log), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_send_async(p2, msg_i(1, 600), on_sent_cb, &log),
                     PULSARC_ERR_QUEUE_FULL);
    ck_assert_int_eq(pulsarc_producer_send_async(p2, msg_i(2, 400), on_sent_cb, &log), PULSARC_OK);
    pulsarc_producer_close(p1); /* frees its 600 bytes */
    ck_assert_int_eq(pulsarc_producer_send_async(p2, msg_i(3, 600), on_sent_cb, &log), PULSARC_OK);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    sent_log_wait(&log, 4);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_terminated_topic_refuses_producer) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("terminated");
    pulsarc_producer_t *p = make_producer(c, topic, NULL);
    send_text(p, "last words");
    pulsarc_producer_destroy(p);
    int code = pct_admin("POST", topic_path(topic, "/terminate"), NULL);
    ck_assert_msg(code == 200 || code == 204, "terminate: HTTP %d", code);
    char err[512];
    p = NULL;
    pulsarc_err_t e = pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err);
    ck_assert_int_eq(e, PULSARC_ERR_BROKER_TOPIC_TERMINATED);
    ck_assert_ptr_null(p);
    ck_assert_msg(strlen(err) > 0, "no reason given");
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_bad_producer_config) {
    pulsarc_client_t *c = pct_client();
    char err[512];
    pulsarc_producer_t *p = NULL;
    const char *kv[] = {"chunkingEnabled", "true", NULL}; /* batching is on by default */
    pulsarc_conf_t *conf = pct_conf(kv);
    ck_assert_int_eq(pulsarc_producer_new(c, pct_topic("bad-conf"), conf, &p, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "batching"));
    pulsarc_conf_destroy(conf);
    conf = pulsarc_conf_new();
    ck_assert_int_eq(pulsarc_conf_set(conf, "compressionType", "BROTLI", err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-errors");
    TCase *t = tcase_create("errors");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_oversized_without_chunking, 0, 2);
    tcase_add_test(t, test_send_timeout);
    tcase_add_test(t, test_queue_full_fail_fast);
    tcase_add_test(t, test_queue_full_blocks_until_timeout);
    tcase_add_test(t, test_memory_limit_fail_fast);
    tcase_add_test(t, test_terminated_topic_refuses_producer);
    tcase_add_test(t, test_bad_producer_config);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
