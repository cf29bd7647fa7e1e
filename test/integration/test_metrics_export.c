/*
 * pulsarc_client_metrics against the real broker, read back by the
 * reference Prometheus text parser (prometheus_client, through
 * test/metrics/validate.sh): a producer of a plain topic and one of a
 * 3-partition topic, a consumer that receives and acks everything, then
 * the export is written to a file and checked for its families, their
 * types, the label set of every sample and counters equal to what this
 * program did (messages sent, bytes, received, acked).
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

static Suite *metrics_export_suite(void) {
    Suite *s = suite_create("metrics-export");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 300); /* the first run makes the virtualenv */
    tcase_add_test(tc, test_export_parsed_by_prometheus_client);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(metrics_export_suite)
