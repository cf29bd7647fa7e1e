/*
 * The connector with an http:// pulsar.client.serviceUrl: the broker's web
 * port, where the client looks topics up over the REST lookup endpoints.
 * A sink writes a partitioned topic and a source reads it back, both
 * configured through the connector's keys with nothing but that http://
 * URL to reach the broker, so every partition count and topic lookup of
 * the round trip goes over HTTP. Checked: every message arrives once, on
 * every partition. The transactional (exactly-once) sink is run the same
 * way, its coordinator found over HTTP too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pulsarc.h"
#include "pulsarc/connector.h"
#include "pulsarc/sink.h"
#include "pulsarc/source.h"
#include "testutil.h"

#define PARTITIONS 3

/* The broker's web URL, which the tests give as pulsar.client.serviceUrl. */
static const char *http_url(void) {
    const char *u = pct_admin_url();
    ck_assert_msg(!strncmp(u, "http://", 7), "PULSAR_ADMIN_URL is not http://: %s", u);
    return u;
}

static pulsarc_err_t ser(void *opaque, const void *element, pulsarc_msg_t *m) {
    (void)opaque;
    const char *s = element;
    return pulsarc_msg_set_payload(m, s, strlen(s), PULSARC_MSG_F_COPY);
}

/* A sink on topic whose only broker address is the http:// service URL. */
static pulsarc_sink_t *http_sink(const char *topic, const char *guarantee) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    const char *topics[] = {topic};
    char err[512];
    ck_assert_int_eq(pulsarc_sink_builder_set_topics(b, topics, 1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_serializer(b, ser, NULL), PULSARC_OK);
    const char *kv[] = {"pulsar.client.serviceUrl", http_url(),
                        "pulsar.admin.adminUrl", pct_admin_url(),
                        "pulsar.sink.deliveryGuarantee", guarantee,
                        "pulsar.producer.batchingMaxMessages", "16",
                        NULL};
    for (size_t i = 0; kv[i]; i += 2)
        ck_assert_msg(pulsarc_sink_builder_set_config(b, kv[i], kv[i + 1], err, sizeof err) ==
                          PULSARC_OK, "%s: %s", kv[i], err);
    pulsarc_sink_t *sink = NULL;
    ck_assert_msg(pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err) == PULSARC_OK,
                  "build: %s", err);
    pulsarc_sink_builder_destroy(b);
    return sink;
}

/* Writes msg-0 .. msg-(n-1), checkpoints (id 1) and completes or closes as guarantee needs. */
static void sink_round(const char *topic, const char *guarantee, int n) {
    pulsarc_sink_t *sink = http_sink(topic, guarantee);
    char err[512], buf[32];
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "msg-%d", i);
        ck_assert_msg(pulsarc_sink_write(sink, buf, 0, err, sizeof err) == PULSARC_OK,
                      "write %d: %s", i, err);
    }
    void *blob = NULL;
    size_t len = 0;
    ck_assert_msg(pulsarc_sink_checkpoint(sink, 1, 60000, &blob, &len, err, sizeof err) ==
                      PULSARC_OK, "checkpoint: %s", err);
    if (!strcmp(guarantee, "exactly-once"))
        ck_assert_msg(pulsarc_sink_checkpoint_complete(sink, 1, err, sizeof err) == PULSARC_OK,
                      "commit: %s", err);
    free(blob);
    ck_assert_msg(pulsarc_sink_close(sink, err, sizeof err) == PULSARC_OK, "close: %s", err);
    pulsarc_sink_destroy(sink);
}

/* A client made from connector keys alone: pulsar.client.serviceUrl = the http:// URL. */
static pulsarc_client_t *http_client(void) {
    pulsarc_connector_config_t *cfg = pulsarc_connector_config_new();
    char err[512];
    ck_assert_msg(pulsarc_connector_config_set(cfg, "pulsar.client.serviceUrl", http_url(), err,
                                               sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_t *conf = NULL;
    ck_assert_msg(pulsarc_connector_config_to_client_conf(cfg, &conf, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    char url[256];
    size_t len = sizeof url;
    ck_assert_int_eq(pulsarc_conf_get(conf, "serviceUrl", url, &len), PULSARC_OK);
    ck_assert_str_eq(url, http_url());
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "client: %s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_connector_config_destroy(cfg);
    return c;
}

static int index_of(const pulsarc_msg_t *m) {
    char b[32];
    size_t n = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(b, pulsarc_msg_payload(m), n);
    b[n] = '\0';
    int i = -1;
    sscanf(b, "msg-%d", &i);
    return i;
}

/*
 * Reads topic from the earliest message to the latest with a source on an
 * http:// client; checks msg-0 .. msg-(n-1) each arrive once and that
 * every partition delivered some of them.
 */
static void source_reads_back(const char *topic, const char *sub, int n) {
    pulsarc_client_t *c = http_client();
    pulsarc_source_conf_t *conf = pulsarc_source_conf_new();
    char err[512];
    ck_assert_int_eq(pulsarc_source_conf_add_topic(conf, topic), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.consumer.subscriptionName", sub, err,
                                             sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.source.maxFetchTime", "1500", err,
                                             sizeof err), PULSARC_OK);
    pulsarc_start_cursor_t start = pulsarc_start_cursor_earliest();
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    ck_assert_int_eq(pulsarc_source_conf_set_start_cursor(conf, &start), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set_stop_cursor(conf, &stop), PULSARC_OK);
    pulsarc_source_t *src = NULL;
    pulsarc_err_t e = pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "source: %s (%s)", pulsarc_errname(e), err);

    unsigned char *seen = calloc((size_t)n, 1);
    int count = 0, dups = 0, per_partition[PARTITIONS] = {0};
    pulsarc_msg_t *out[100];
    /* bounded: stop-at-latest ends the input; 600 fetches of at most 1.5 s is the hang bound */
    for (int round = 0; round < 600; round++) {
        size_t got = 0;
        e = pulsarc_source_fetch(src, out, 100, &got);
        if (e == PULSARC_SOURCE_END_OF_INPUT)
            break;
        ck_assert_msg(e == PULSARC_OK, "fetch: %s", pulsarc_errname(e));
        for (size_t i = 0; i < got; i++) {
            int x = index_of(out[i]);
            ck_assert_msg(x >= 0 && x < n, "unexpected payload");
            dups += seen[x]++ > 0;
            const char *t = pulsarc_msg_topic(out[i]);
            const char *p = t ? strstr(t, "-partition-") : NULL;
            int part = p ? atoi(p + 11) : -1;
            ck_assert_msg(part >= 0 && part < PARTITIONS, "message from %s", t ? t : "(null)");
            per_partition[part]++;
            count++;
            pulsarc_msg_destroy(out[i]);
        }
    }
    ck_assert_int_eq(e, PULSARC_SOURCE_END_OF_INPUT);
    printf("http round trip on %s: %d read, %d duplicates, per partition %d/%d/%d\n", topic,
           count, dups, per_partition[0], per_partition[1], per_partition[2]);
    ck_assert_int_eq(dups, 0);
    ck_assert_int_eq(count, n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(seen[i] == 1, "msg-%d missing", i);
    for (int p = 0; p < PARTITIONS; p++)
        ck_assert_msg(per_partition[p] > 0, "partition %d delivered nothing", p);
    free(seen);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(c);
}

START_TEST(test_at_least_once_sink_then_source_over_http) {
    const char *topic = pct_topic("conn-http");
    pct_create_partitioned(topic, PARTITIONS);
    sink_round(topic, "at-least-once", 300);
    source_reads_back(topic, "conn-http-sub", 300);
}
END_TEST

START_TEST(test_exactly_once_sink_then_source_over_http) {
    const char *topic = pct_topic("conn-http-eo");
    pct_create_partitioned(topic, PARTITIONS);
    sink_round(topic, "exactly-once", 120);
    source_reads_back(topic, "conn-http-eo-sub", 120);
}
END_TEST

static Suite *connector_http_suite(void) {
    Suite *s = suite_create("connector_http");
    TCase *tc = tcase_create("round_trip");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_at_least_once_sink_then_source_over_http);
    tcase_add_test(tc, test_exactly_once_sink_then_source_over_http);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(connector_http_suite)
