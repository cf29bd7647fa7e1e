/*
 * The metrics room (lib/client/metrics.c) and pulsarc_client_metrics:
 * which bucket a duration lands in, label escaping, the exact text of a
 * histogram, and the export of a client whose producers and consumer talk
 * to the fake broker (test/faults/): two producers of one topic summed
 * into one series, a failed send counted as failed, a consumer's
 * subscription name escaped, received and acked counts as the program did.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../faults/fake_broker.h"
#include "PulsarApi.pb-c.h"
#include "client/metrics.h"
#include "testutil.h"

START_TEST(test_bucket_placement) {
    /* Bounds are inclusive: a value equal to a bound belongs to its bucket. */
    ck_assert_int_eq(pc_hist_bucket(0), 0);
    ck_assert_int_eq(pc_hist_bucket(1), 0);
    ck_assert_int_eq(pc_hist_bucket(2), 1);
    ck_assert_int_eq(pc_hist_bucket(3), 2);
    ck_assert_int_eq(pc_hist_bucket(1000), 9);
    ck_assert_int_eq(pc_hist_bucket(1001), 10);
    ck_assert_int_eq(pc_hist_bucket(60000), PC_HIST_NBOUNDS - 1);
    ck_assert_int_eq(pc_hist_bucket(60001), PC_HIST_NBOUNDS);
    ck_assert_int_eq(pc_hist_bucket(UINT64_MAX), PC_HIST_NBOUNDS);
    for (int i = 1; i < PC_HIST_NBOUNDS; i++)
        ck_assert_uint_gt(pc_hist_bounds_ms[i], pc_hist_bounds_ms[i - 1]);

    pc_hist_t h;
    memset(&h, 0, sizeof h);
    const uint64_t values[] = {0, 1, 7, 7, 99999};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        pc_hist_record(&h, values[i]);
    pc_hist_snap_t s, sum = {0};
    pc_hist_read(&h, &s);
    ck_assert_uint_eq(s.counts[0], 2);
    ck_assert_uint_eq(s.counts[3], 2); /* 7 ms: (5, 10] */
    ck_assert_uint_eq(s.counts[PC_HIST_NBOUNDS], 1);
    ck_assert_uint_eq(s.sum_ms, 0 + 1 + 7 + 7 + 99999);
    pc_hist_add(&sum, &s);
    pc_hist_add(&sum, &s);
    ck_assert_uint_eq(sum.counts[3], 4);
    ck_assert_uint_eq(sum.sum_ms, 2 * s.sum_ms);
}
END_TEST

START_TEST(test_label_escaping) {
    pc_text_t t;
    pc_text_init(&t);
    pc_text_label_value(&t, "plain");
    ck_assert_str_eq(pc_text_str(&t), "plain");
    t.b.len = 0;
    pc_text_label_value(&t, "a\\b\"c\nd");
    ck_assert_str_eq(pc_text_str(&t), "a\\\\b\\\"c\\nd");
    t.b.len = 0;
    pc_text_label_value(&t, "\"\"\n");
    ck_assert_str_eq(pc_text_str(&t), "\\\"\\\"\\n");
    ck_assert_int_eq(t.oom, 0);
    pc_buf_free(&t.b);
}
END_TEST

START_TEST(test_writer_text) {
    pc_text_t t;
    pc_text_init(&t);
    pc_label_t labels[] = {{"pulsar_topic", "persistent://a/b/c"}, {"x", "q\""}};
    pc_prom_family(&t, "m_total_thing", "counter", "Some help.");
    pc_prom_sample(&t, "m_total_thing_total", labels, 2, 42);
    pc_prom_sample(&t, "bare", NULL, 0, 0);
    ck_assert_str_eq(pc_text_str(&t), "# HELP m_total_thing Some help.\n"
                            "# TYPE m_total_thing counter\n"
                            "m_total_thing_total{pulsar_topic=\"persistent://a/b/c\",x=\"q\\\"\"} 42\n"
                            "bare{} 0\n");
    t.b.len = 0;
    pc_hist_snap_t h = {0};
    h.counts[0] = 1;    /* <= 1 ms */
    h.counts[2] = 2;    /* (2, 5] ms */
    h.counts[PC_HIST_NBOUNDS] = 1;
    h.sum_ms = 1 + 3 + 4 + 70500;
    pc_prom_histogram(&t, "d_seconds", labels, 1, &h);
    const char *want_lines[] = {
        "d_seconds_bucket{pulsar_topic=\"persistent://a/b/c\",le=\"0.001\"} 1\n",
        "d_seconds_bucket{pulsar_topic=\"persistent://a/b/c\",le=\"0.002\"} 1\n",
        "d_seconds_bucket{pulsar_topic=\"persistent://a/b/c\",le=\"0.005\"} 3\n",
        "d_seconds_bucket{pulsar_topic=\"persistent://a/b/c\",le=\"2.500\"} 3\n",
        "d_seconds_bucket{pulsar_topic=\"persistent://a/b/c\",le=\"60.000\"} 3\n",
        "d_seconds_bucket{pulsar_topic=\"persistent://a/b/c\",le=\"+Inf\"} 4\n",
        "d_seconds_sum{pulsar_topic=\"persistent://a/b/c\"} 70.508\n",
        "d_seconds_count{pulsar_topic=\"persistent://a/b/c\"} 4\n",
    };
    for (size_t i = 0; i < sizeof want_lines / sizeof want_lines[0]; i++)
        ck_assert_msg(strstr(pc_text_str(&t), want_lines[i]), "missing %s in:\n%s", want_lines[i],
                      pc_text_str(&t));
    size_t lines = 0;
    for (const char *p = pc_text_str(&t); *p; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, PC_HIST_NBOUNDS + 1 + 2);
    pc_buf_free(&t.b);
}
END_TEST

/* The sample line that starts with prefix (name and labels), its value. */
static double sample(const char *text, const char *prefix) {
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, prefix, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    ck_abort_msg("no sample %s in:\n%s", prefix, text);
    return -1;
}

/* Acks and nacks are counted on the io thread after the call returns: wait
 * (bounded) until the client's export shows value for prefix. */
static void wait_sample(pulsarc_client_t *c, const char *prefix, double value) {
    for (int i = 0; i < 1000; i++) {
        char *text = NULL;
        ck_assert_int_eq(pulsarc_client_metrics(c, &text, NULL), PULSARC_OK);
        double v = strstr(text, prefix) ? sample(text, prefix) : -1;
        pulsarc_metrics_free(text);
        if (v == value)
            return;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    ck_abort_msg("%s never reached %g", prefix, value);
}

#define TOPIC "persistent://public/default/t"
#define PLABELS "pulsar_tenant=\"public\",pulsar_namespace=\"default\",pulsar_topic=\"" TOPIC "\""

START_TEST(test_client_export) {
    char err[256];
    ck_assert_int_eq(pulsarc_client_metrics(NULL, NULL, NULL), PULSARC_ERR_INVALID_ARG);
    pulsarc_metrics_free(NULL);
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *kv[] = {"serviceUrl", pc_fb_url(fb), "operationTimeoutMs", "5000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    char *text = NULL;
    size_t len = 99;
    ck_assert_int_eq(pulsarc_client_metrics(c, NULL, &len), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_client_metrics(c, &text, &len), PULSARC_OK);
    /* nothing registered, nothing connected: only the client's own families, at 0 */
    ck_assert_uint_eq(len, strlen(text));
    ck_assert_ptr_null(strstr(text, "pulsar_client_producer"));
    ck_assert_ptr_null(strstr(text, "pulsar_client_consumer"));
    ck_assert_double_eq(sample(text, "pulsar_client_connection_opened_total{}"), 0);
    ck_assert_double_eq(sample(text, "pulsar_client_connection_open_count{}"), 0);
    ck_assert_ptr_nonnull(strstr(text, "# TYPE pulsar_client_lookup_duration_seconds histogram\n"));
    ck_assert_ptr_null(strstr(text, "pulsar_client_lookup_duration_seconds_count"));
    pulsarc_metrics_free(text);

    /* Two producers of one topic; the broker answers the first 3 sends only. */
    const char *pkv[] = {"batchingEnabled", "false", "sendTimeoutMs", "300", NULL};
    pulsarc_conf_t *pconf = pct_conf(pkv);
    pulsarc_producer_t *p1 = NULL, *p2 = NULL;
    ck_assert_msg(pulsarc_producer_new(c, "t", pconf, &p1, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_msg(pulsarc_producer_new(c, "t", pconf, &p2, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(pconf);
    pc_fb_rule(fb, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND, PC_FB_IGNORE, 0, NULL, 3, -1);
    pulsarc_producer_t *order[] = {p1, p2, p1, p2};
    for (int i = 0; i < 4; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, "hello", 5, 0);
        pulsarc_msgid_t id;
        pulsarc_err_t e = pulsarc_producer_send(order[i], m, &id);
        ck_assert_int_eq(e, i < 3 ? PULSARC_OK : PULSARC_ERR_TIMEOUT);
        pulsarc_msg_destroy(m);
    }

    /* A consumer whose subscription name needs escaping, given 2 messages. */
    const char *sub = "s\"\\x";
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, "t", sub, NULL, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pc_fb_push(fb, "m1", 2, PC_FB_GOOD);
    pc_fb_push(fb, "m2", 2, PC_FB_GOOD);
    pulsarc_msg_t *rm = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &rm, 10000), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_ack(cons, rm), PULSARC_OK);
    pulsarc_msg_destroy(rm);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &rm, 10000), PULSARC_OK);
    pulsarc_consumer_nack(cons, rm);
    pulsarc_msg_destroy(rm);

#define CLABELS PLABELS ",pulsar_subscription=\"s\\\"\\\\x\"}"
    wait_sample(c, "pulsar_client_consumer_message_ack_total{" CLABELS, 1);
    wait_sample(c, "pulsar_client_consumer_message_nack_total{" CLABELS, 1);
    ck_assert_int_eq(pulsarc_client_metrics(c, &text, &len), PULSARC_OK);
    ck_assert_uint_eq(len, strlen(text));
    ck_assert_ptr_nonnull(strstr(text, "# TYPE pulsar_client_producer_message_send_duration_seconds histogram\n"));
    ck_assert_ptr_nonnull(strstr(text, "# TYPE pulsar_client_producer_message_send_size_bytes_total counter\n"));
    ck_assert_ptr_nonnull(strstr(text, "# TYPE pulsar_client_consumer_receive_queue_count gauge\n"));
    const char *d = "pulsar_client_producer_message_send_duration_seconds_count{" PLABELS;
    char key[512];
    snprintf(key, sizeof key, "%s,pulsar_response_status=\"success\"}", d);
    ck_assert_double_eq(sample(text, key), 3);
    snprintf(key, sizeof key, "%s,pulsar_response_status=\"failed\"}", d);
    ck_assert_double_eq(sample(text, key), 1);
    ck_assert_double_eq(sample(text, "pulsar_client_producer_message_send_size_bytes_total{" PLABELS "}"), 15);
    ck_assert_double_eq(sample(text, "pulsar_client_producer_message_pending_count{" PLABELS "}"), 0);
    /* one series for both producers: the name appears once with these labels */
    const char *first = strstr(text, "pulsar_client_producer_message_send_size_bytes_total{");
    ck_assert_ptr_null(strstr(first + 1, "pulsar_client_producer_message_send_size_bytes_total{"));
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_message_received_count_total{" CLABELS), 2);
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_message_ack_total{" CLABELS), 1);
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_message_nack_total{" CLABELS), 1);
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_receive_queue_count{" CLABELS), 0);
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_message_received_size_bytes_total{" CLABELS), 4);
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_receive_queue_size_bytes{" CLABELS), 0);
    ck_assert_double_eq(sample(text, "pulsar_client_consumer_reconnect_total{" CLABELS), 0);
    /* one connection to the fake broker, opened and still open */
    ck_assert_double_eq(sample(text, "pulsar_client_connection_opened_total{}"), 1);
    ck_assert_double_eq(sample(text, "pulsar_client_connection_open_count{}"), 1);
    /* 3 handles of "t": each asked for the partition count and where "t" lives */
    const char *lk = "pulsar_client_lookup_duration_seconds_count{pulsar_lookup_transport_type=\"binary\","
                     "pulsar_lookup_type=";
    snprintf(key, sizeof key, "%s\"metadata\",pulsar_response_status=\"success\"}", lk);
    ck_assert_double_eq(sample(text, key), 3);
    snprintf(key, sizeof key, "%s\"topic\",pulsar_response_status=\"success\"}", lk);
    ck_assert_double_eq(sample(text, key), 3);
    pulsarc_metrics_free(text);

    /* A destroyed handle leaves the export. */
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    ck_assert_int_eq(pulsarc_client_metrics(c, &text, NULL), PULSARC_OK);
    ck_assert_ptr_null(strstr(text, "pulsar_client_producer"));
    ck_assert_ptr_null(strstr(text, "pulsar_client_consumer"));
    pulsarc_metrics_free(text);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* Exports from another thread while partitioned producers are created and
 * destroyed: a producer appears in the export only once whole. */
typedef struct scraper {
    pulsarc_client_t *c;
    atomic_int stop;
    int calls, failures;
} scraper_t;

static void *scrape(void *arg) {
    scraper_t *s = arg;
    while (!atomic_load(&s->stop) && s->calls < 200000) {
        char *text = NULL;
        if (pulsarc_client_metrics(s->c, &text, NULL) != PULSARC_OK)
            s->failures++;
        pulsarc_metrics_free(text);
        s->calls++;
    }
    return NULL;
}

START_TEST(test_export_while_handles_come_and_go) {
    char err[256];
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_set_partitions(fb, 4);
    const char *kv[] = {"serviceUrl", pc_fb_url(fb), "operationTimeoutMs", "5000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    scraper_t s = {0};
    ck_assert_msg(pulsarc_client_new(conf, &s.c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, scrape, &s), 0);
    for (int i = 0; i < 20; i++) {
        pulsarc_producer_t *p = NULL;
        ck_assert_msg(pulsarc_producer_new(s.c, "pt", NULL, &p, err, sizeof err) == PULSARC_OK, "%s",
                      err);
        ck_assert_int_eq(pulsarc_producer_partitions(p), 4);
        pulsarc_producer_destroy(p);
    }
    atomic_store(&s.stop, 1);
    pthread_join(t, NULL);
    ck_assert_int_gt(s.calls, 0);
    ck_assert_int_eq(s.failures, 0);
    pulsarc_client_destroy(s.c);
    pc_fb_destroy(fb);
}
END_TEST

static Suite *metrics_suite(void) {
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bucket_placement);
    tcase_add_test(tc, test_label_escaping);
    tcase_add_test(tc, test_writer_text);
    tcase_add_test(tc, test_client_export);
    tcase_add_test(tc, test_export_while_handles_come_and_go);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(metrics_suite)
