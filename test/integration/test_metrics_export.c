/*
 * pulsarc_client_metrics against the real broker, read back by the
 * reference Prometheus text parser (prometheus_client, through
 * test/metrics/validate.sh): a producer of a plain topic and one of a
 * 3-partition topic, a consumer that receives and acks everything, then
 * the export is written to a file and checked for its families, their
 * types, the label set of every sample and counters equal to what this
 * program did (messages sent, bytes, received, acked; one partition-count
 * lookup per handle and one topic lookup per topic or partition; every
 * connection opened still open). A second client, pointed at a port
 * nobody listens on, counts its failed connections and lookups; a third,
 * on an http:// service URL, its lookups over HTTP. Unloading a topic
 * counts one reconnect of its producer and of its consumer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

enum { N_PLAIN = 200, N_PARTS = 90, PAYLOAD = 10 };

static void produce(pulsarc_producer_t *p, int n) {
    for (int i = 0; i < n; i++) {
        char buf[PAYLOAD + 1];
        snprintf(buf, sizeof buf, "msg-%06d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, buf, PAYLOAD, 0);
        pulsarc_msgid_t id;
        ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
}

/* The export's text, to a file under dir; returns the text (caller frees). */
static char *dump(pulsarc_client_t *c, const char *path) {
    char *text = NULL;
    size_t len = 0;
    ck_assert_int_eq(pulsarc_client_metrics(c, &text, &len), PULSARC_OK);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return text;
}

/* Acks are counted on the io thread after the call: wait (bounded) for them. */
static void wait_acks(pulsarc_consumer_t *cons, uint64_t n) {
    pulsarc_consumer_stats_t st = {0};
    for (int i = 0; i < 2000; i++) {
        ck_assert_int_eq(pulsarc_consumer_stats(cons, &st), PULSARC_OK);
        if (st.acked >= n)
            return;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    ck_abort_msg("acked %llu of %llu", (unsigned long long)st.acked, (unsigned long long)n);
}

/* The client's own families and their label sets. */
static void expect_client_families(FILE *f) {
    const char *lk = "pulsar_client_lookup_duration_seconds";
    fprintf(f, "family\t%s\thistogram\n", lk);
    fprintf(f, "labels\t%s\tpulsar_lookup_transport_type,pulsar_lookup_type,pulsar_response_status\n", lk);
    fprintf(f, "family\tpulsar_client_connection_opened\tcounter\n");
    fprintf(f, "family\tpulsar_client_connection_closed\tcounter\n");
    fprintf(f, "family\tpulsar_client_connection_failed\tcounter\n");
    fprintf(f, "labels\tpulsar_client_connection_failed\tpulsar_failure_type\n");
    fprintf(f, "family\tpulsar_client_connection_open_count\tgauge\n");
}

/* The count of lookups over transport of kind with outcome status (how: value or atleast). */
static void expect_lookups_by(FILE *f, const char *transport, const char *kind, const char *status,
                              const char *how, int n) {
    fprintf(f, "%s\tpulsar_client_lookup_duration_seconds_count\tpulsar_lookup_transport_type=%s;"
            "pulsar_lookup_type=%s;pulsar_response_status=%s\t%d\n", how, transport, kind, status, n);
}

static void expect_lookups(FILE *f, const char *kind, const char *status, const char *how, int n) {
    expect_lookups_by(f, "binary", kind, status, how, n);
}

/* Writes the export and the expectations to dir, runs the check. */
static void validate(pulsarc_client_t *c, const char *dir, void (*expect)(FILE *f, void *arg), void *arg) {
    char prom[600], path[600], cmd[1400];
    snprintf(prom, sizeof prom, "%s/metrics.prom", dir);
    snprintf(path, sizeof path, "%s/expect.tsv", dir);
    char *text = dump(c, prom);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    expect(f, arg);
    fclose(f);
    snprintf(cmd, sizeof cmd, "bash test/metrics/validate.sh '%s' '%s'", prom, path);
    int rc = system(cmd);
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
        fprintf(stderr, "the export checked:\n%s", text);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "prometheus_client check failed (%d)", rc);
    pulsarc_metrics_free(text);
    unlink(prom);
    unlink(path);
}

START_TEST(test_export_parsed_by_prometheus_client) {
    char plain[512], parted[512], dir[] = "/tmp/pulsarc-metrics-XXXXXX";
    snprintf(plain, sizeof plain, "persistent://public/default/%s", pct_topic("metrics-plain"));
    snprintf(parted, sizeof parted, "persistent://public/default/%s", pct_topic("metrics-part"));
    pct_create_partitioned(parted, 3);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    pulsarc_client_t *c = pct_client();
    char err[512];
    pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, plain, "metrics-sub", cc, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_conf_destroy(cc);
    pulsarc_producer_t *p1 = NULL, *p2 = NULL;
    ck_assert_msg(pulsarc_producer_new(c, plain, NULL, &p1, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_msg(pulsarc_producer_new(c, parted, NULL, &p2, err, sizeof err) == PULSARC_OK, "%s", err);
    produce(p1, N_PLAIN);
    produce(p2, N_PARTS);
    for (int i = 0; i < N_PLAIN; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 30000), PULSARC_OK);
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    wait_acks(cons, N_PLAIN);

    char prom[600], expect[600], cmd[1400];
    snprintf(prom, sizeof prom, "%s/metrics.prom", dir);
    snprintf(expect, sizeof expect, "%s/expect.tsv", dir);
    char *text = dump(c, prom);
    FILE *f = fopen(expect, "w");
    ck_assert_ptr_nonnull(f);
    const char *pl = "pulsar_tenant,pulsar_namespace,pulsar_topic";
    const char *dur = "pulsar_client_producer_message_send_duration_seconds";
    fprintf(f, "family\t%s\thistogram\n", dur);
    fprintf(f, "labels\t%s\t%s,pulsar_response_status\n", dur, pl);
    fprintf(f, "series\t%s\t4\n", dur); /* 2 topics x success/failed */
    fprintf(f, "family\tpulsar_client_producer_message_send_size_bytes\tcounter\n");
    fprintf(f, "labels\tpulsar_client_producer_message_send_size_bytes\t%s\n", pl);
    fprintf(f, "family\tpulsar_client_producer_message_pending_count\tgauge\n");
    fprintf(f, "family\tpulsar_client_consumer_message_received_count\tcounter\n");
    fprintf(f, "labels\tpulsar_client_consumer_message_received_count\t%s,pulsar_subscription\n", pl);
    fprintf(f, "family\tpulsar_client_consumer_receive_queue_count\tgauge\n");
    fprintf(f, "family\tpulsar_client_consumer_message_ack\tcounter\n");
    fprintf(f, "family\tpulsar_client_consumer_message_nack\tcounter\n");
    const char *topics[] = {plain, parted};
    const int sent[] = {N_PLAIN, N_PARTS};
    for (int i = 0; i < 2; i++) {
        char l[1200];
        snprintf(l, sizeof l, "pulsar_tenant=public;pulsar_namespace=default;pulsar_topic=%s", topics[i]);
        fprintf(f, "value\t%s_count\t%s;pulsar_response_status=success\t%d\n", dur, l, sent[i]);
        fprintf(f, "value\t%s_count\t%s;pulsar_response_status=failed\t0\n", dur, l);
        fprintf(f, "value\t%s_bucket\t%s;pulsar_response_status=success;le=+Inf\t%d\n", dur, l, sent[i]);
        fprintf(f, "value\tpulsar_client_producer_message_send_size_bytes_total\t%s\t%d\n", l,
                sent[i] * PAYLOAD);
        fprintf(f, "value\tpulsar_client_producer_message_pending_count\t%s\t0\n", l);
    }
    char cl[1200];
    snprintf(cl, sizeof cl, "pulsar_tenant=public;pulsar_namespace=default;pulsar_topic=%s;"
             "pulsar_subscription=metrics-sub", plain);
    fprintf(f, "value\tpulsar_client_consumer_message_received_count_total\t%s\t%d\n", cl, N_PLAIN);
    fprintf(f, "value\tpulsar_client_consumer_message_ack_total\t%s\t%d\n", cl, N_PLAIN);
    fprintf(f, "value\tpulsar_client_consumer_message_nack_total\t%s\t0\n", cl);
    fprintf(f, "value\tpulsar_client_consumer_receive_queue_count\t%s\t0\n", cl);
    fprintf(f, "value\tpulsar_client_consumer_message_received_size_bytes_total\t%s\t%d\n", cl,
            N_PLAIN * PAYLOAD);
    fprintf(f, "value\tpulsar_client_consumer_receive_queue_size_bytes\t%s\t0\n", cl);
    fprintf(f, "value\tpulsar_client_consumer_redelivery_request_total\t%s\t0\n", cl);
    fprintf(f, "value\tpulsar_client_consumer_reconnect_total\t%s\t0\n", cl);
    fprintf(f, "family\tpulsar_client_consumer_receive_queue_capacity\tgauge\n");
    expect_client_families(f);
    /* 3 handles, one PARTITIONED_METADATA each; LOOKUP for the plain topic
     * (producer and consumer) and each of the 3 partitions. */
    expect_lookups(f, "metadata", "success", "value", 3);
    expect_lookups(f, "topic", "success", "value", 2 + 3);
    /* (a lookup the broker answered with a retriable error would add a failed
     * series, not change these: each handle's lookups succeed once) */
    fprintf(f, "atleast\tpulsar_client_connection_opened_total\t\t1\n");
    fprintf(f, "value\tpulsar_client_connection_closed_total\t\t0\n");
    fprintf(f, "value\tpulsar_client_connection_failed_total\tpulsar_failure_type=tcp-failed\t0\n");
    fprintf(f, "value\tpulsar_client_connection_failed_total\tpulsar_failure_type=handshake\t0\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "bash test/metrics/validate.sh '%s' '%s'", prom, expect);
    int rc = system(cmd);
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
        fprintf(stderr, "the export checked:\n%s", text);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "prometheus_client check failed (%d)", rc);
    pulsarc_metrics_free(text);

    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    pulsarc_client_destroy(c);
    unlink(prom);
    unlink(expect);
    rmdir(dir);
}
END_TEST

static void expect_failures(FILE *f, void *arg) {
    (void)arg;
    expect_client_families(f);
    fprintf(f, "atleast\tpulsar_client_connection_failed_total\tpulsar_failure_type=tcp-failed\t1\n");
    fprintf(f, "value\tpulsar_client_connection_failed_total\tpulsar_failure_type=handshake\t0\n");
    fprintf(f, "value\tpulsar_client_connection_opened_total\t\t0\n");
    fprintf(f, "value\tpulsar_client_connection_open_count\t\t0\n");
    expect_lookups(f, "metadata", "failed", "atleast", 1);
}

/* Port 1 on loopback refuses: every connection fails before TCP is up. */
START_TEST(test_failed_connections_and_lookups) {
    char dir[] = "/tmp/pulsarc-metrics-XXXXXX", err[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"serviceUrl", "pulsar://127.0.0.1:1",
                                                         "operationTimeoutMs", "1500", NULL});
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_producer_t *p = NULL;
    ck_assert_int_ne(pulsarc_producer_new(c, "persistent://public/default/nowhere", NULL, &p, err, sizeof err),
                     PULSARC_OK);
    ck_assert_ptr_null(p);
    validate(c, dir, expect_failures, NULL);
    pulsarc_client_destroy(c);
    rmdir(dir);
}
END_TEST

static void expect_http(FILE *f, void *arg) {
    (void)arg;
    expect_client_families(f);
    expect_lookups_by(f, "http", "metadata", "success", "value", 1);
    expect_lookups_by(f, "http", "topic", "success", "value", 1);
    fprintf(f, "series\tpulsar_client_lookup_duration_seconds\t2\n"); /* no binary lookup */
    fprintf(f, "atleast\tpulsar_client_connection_opened_total\t\t1\n");
}

/* An http:// service URL: lookups go to the REST API and are labelled so. */
START_TEST(test_http_lookups) {
    char dir[] = "/tmp/pulsarc-metrics-XXXXXX", err[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"serviceUrl", pct_admin_url(), NULL});
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    char topic[512];
    snprintf(topic, sizeof topic, "persistent://public/default/%s", pct_topic("metrics-http"));
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    validate(c, dir, expect_http, NULL);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    rmdir(dir);
}
END_TEST

/* The value of the sample line that starts with prefix (name{labels), or -1. */
static double sample_of(const char *text, const char *prefix) {
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, prefix, n)) {
            const char *sp = strchr(p, ' ');
            return sp ? strtod(sp + 1, NULL) : -1;
        }
    return -1;
}

typedef struct reconnected {
    const char *topic;
} reconnected_t;

static void expect_reconnected(FILE *f, void *arg) {
    reconnected_t *r = arg;
    char l[1200];
    snprintf(l, sizeof l, "pulsar_tenant=public;pulsar_namespace=default;pulsar_topic=%s", r->topic);
    fprintf(f, "family\tpulsar_client_producer_reconnect\tcounter\n");
    fprintf(f, "family\tpulsar_client_consumer_reconnect\tcounter\n");
    fprintf(f, "value\tpulsar_client_producer_reconnect_total\t%s\t1\n", l);
    fprintf(f, "value\tpulsar_client_consumer_reconnect_total\t%s;pulsar_subscription=rc-sub\t1\n", l);
    /* 2 sent; the first, unacked, may come again after the reconnect */
    fprintf(f, "atleast\tpulsar_client_consumer_message_received_count_total\t%s;pulsar_subscription=rc-sub\t2\n",
            l);
    /* each handle looked the topic up when created and again after the unload */
    expect_lookups(f, "topic", "success", "atleast", 4);
    expect_lookups(f, "metadata", "success", "value", 2);
}

/* An unloaded topic: its producer and consumer are each created again once. */
START_TEST(test_reconnects_counted) {
    char dir[] = "/tmp/pulsarc-metrics-XXXXXX", topic[512], err[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *name = pct_topic("metrics-rc");
    snprintf(topic, sizeof topic, "persistent://public/default/%s", name);
    pulsarc_client_t *c = pct_client();
    pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, topic, "rc-sub", cc, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(cc);
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    produce(p, 1);
    char path[700];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/unload", name);
    ck_assert_int_eq(pct_admin("PUT", path, NULL), 204);
    char pl[800], cl[900];
    snprintf(pl, sizeof pl, "pulsar_client_producer_reconnect_total{pulsar_tenant=\"public\","
             "pulsar_namespace=\"default\",pulsar_topic=\"%s\"}", topic);
    snprintf(cl, sizeof cl, "pulsar_client_consumer_reconnect_total{pulsar_tenant=\"public\","
             "pulsar_namespace=\"default\",pulsar_topic=\"%s\",pulsar_subscription=\"rc-sub\"}", topic);
    double pr = 0, cr = 0;
    for (int i = 0; i < 3000 && (pr < 1 || cr < 1); i++) { /* a 60 s hang bound */
        char *text = NULL;
        ck_assert_int_eq(pulsarc_client_metrics(c, &text, NULL), PULSARC_OK);
        pr = sample_of(text, pl);
        cr = sample_of(text, cl);
        pulsarc_metrics_free(text);
        if (pr < 1 || cr < 1)
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    produce(p, 1); /* through the new producer */
    for (int i = 0; i < 2; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 30000), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    reconnected_t r = {topic};
    validate(c, dir, expect_reconnected, &r);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    rmdir(dir);
}
END_TEST

static Suite *metrics_export_suite(void) {
    Suite *s = suite_create("metrics-export");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 300); /* the first run makes the virtualenv */
    tcase_add_test(tc, test_export_parsed_by_prometheus_client);
    tcase_add_test(tc, test_failed_connections_and_lookups);
    tcase_add_test(tc, test_http_lookups);
    tcase_add_test(tc, test_reconnects_counted);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(metrics_export_suite)
