/*
 * The sink against the live broker, one test per behaviour: builder rules,
 * NONE, AT_LEAST_ONCE (checkpoint waits for receipts, send errors
 * reported), routing (round-robin on the batch boundary across topics, key
 * hash, custom router), delayed delivery (fixed, callback), producer names,
 * event time, partition refresh, and EXACTLY_ONCE (commit at completion,
 * kill between checkpoint and commit then restore from the blob).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/hash.h"
#include "pulsarc.h"
#include "pulsarc/sink.h"
#include "testutil.h"

/* ---------- helpers ---------- */

/* What the tests write: payload, optional key, optional event time. */
typedef struct elem {
    const char *payload;
    const char *key;
    uint64_t event_time;
} elem_t;

static pulsarc_err_t ser(void *opaque, const void *element, pulsarc_msg_t *m) {
    const elem_t *e = element;
    (void)opaque;
    pulsarc_err_t err = pulsarc_msg_set_payload(m, e->payload, strlen(e->payload),
                                                PULSARC_MSG_F_COPY);
    if (!err && e->key)
        err = pulsarc_msg_set_key(m, e->key);
    if (!err && e->event_time)
        err = pulsarc_msg_set_event_time(m, e->event_time);
    return err;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A builder with the broker, topics (NULL-terminated), the serialiser and kv pairs. */
static pulsarc_sink_builder_t *builder(const char *const *topics, const char *const *kv) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    size_t n = 0;
    while (topics && topics[n])
        n++;
    if (n)
        ck_assert_int_eq(pulsarc_sink_builder_set_topics(b, topics, n), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_service_url(b, pct_service_url()), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_admin_url(b, pct_admin_url()), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_serializer(b, ser, NULL), PULSARC_OK);
    char err[256];
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_msg(pulsarc_sink_builder_set_config(b, kv[i], kv[i + 1], err, sizeof err) ==
                          PULSARC_OK, "%s", err);
    return b;
}

static pulsarc_sink_t *build(pulsarc_sink_builder_t *b, const void *blob, size_t len) {
    pulsarc_sink_t *sink = NULL;
    char err[256];
    ck_assert_msg(pulsarc_sink_builder_build(b, blob, len, &sink, err, sizeof err) == PULSARC_OK,
                  "build: %s", err);
    return sink;
}

static void write_one(pulsarc_sink_t *sink, const char *payload, const char *key) {
    elem_t e = {payload, key, 0};
    char err[256];
    ck_assert_msg(pulsarc_sink_write(sink, &e, 0, err, sizeof err) == PULSARC_OK, "write: %s",
                  err);
}

/* Writes "<prefix><i>" for i in [from, to). */
static void write_range(pulsarc_sink_t *sink, const char *prefix, int from, int to) {
    char buf[64];
    for (int i = from; i < to; i++) {
        snprintf(buf, sizeof buf, "%s%d", prefix, i);
        write_one(sink, buf, NULL);
    }
}

static void *checkpoint(pulsarc_sink_t *sink, uint64_t id, size_t *len) {
    void *blob = NULL;
    size_t l = 0;
    char err[256];
    ck_assert_msg(pulsarc_sink_checkpoint(sink, id, 20000, &blob, &l, err, sizeof err) ==
                      PULSARC_OK, "checkpoint: %s", err);
    if (len)
        *len = l;
    return blob;
}

static void close_sink(pulsarc_sink_t *sink) {
    char err[256];
    ck_assert_msg(pulsarc_sink_close(sink, err, sizeof err) == PULSARC_OK, "close: %s", err);
    pulsarc_sink_destroy(sink);
}

static void partitioned(const char *topic, int n) {
    char path[512], body[16];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", topic);
    snprintf(body, sizeof body, "%d", n);
    int code = pct_admin("PUT", path, body);
    ck_assert_msg(code == 204 || code == 200, "create partitioned: HTTP %d", code);
}

static pulsarc_consumer_t *consumer(pulsarc_client_t *c, const char *const *topics,
                                    const char *type) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "subscriptionType", type,
                        NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    size_t n = 0;
    while (topics[n])
        n++;
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new_multi(c, topics, n, "sink-test", conf, &cons, err,
                                             sizeof err) == PULSARC_OK, "subscribe: %s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

/* Receives until quiet_ms pass without a message or max arrive; the caller frees. */
static size_t receive_all(pulsarc_consumer_t *cons, pulsarc_msg_t **out, size_t max,
                          int quiet_ms) {
    size_t n = 0;
    pulsarc_msg_t *m;
    while (n < max && pulsarc_consumer_receive(cons, &m, quiet_ms) == PULSARC_OK) {
        pulsarc_consumer_ack(cons, m);
        out[n++] = m;
    }
    return n;
}

static void free_msgs(pulsarc_msg_t **v, size_t n) {
    for (size_t i = 0; i < n; i++)
        pulsarc_msg_destroy(v[i]);
}

static int payload_is(const pulsarc_msg_t *m, const char *s) {
    return pulsarc_msg_len(m) == strlen(s) && !memcmp(pulsarc_msg_payload(m), s, strlen(s));
}

/* The number in a "<prefix><i>" payload. */
static int payload_num(const pulsarc_msg_t *m) {
    char buf[64];
    size_t n = pulsarc_msg_len(m) < 63 ? pulsarc_msg_len(m) : 63;
    memcpy(buf, pulsarc_msg_payload(m), n);
    buf[n] = 0;
    const char *d = buf;
    while (*d && (*d < '0' || *d > '9'))
        d++;
    return atoi(d);
}

static const char *full(const char *local, char *buf, size_t len) {
    snprintf(buf, len, "persistent://public/default/%s", local);
    return buf;
}

/* ---------- builder ---------- */

START_TEST(test_builder_rules) {
    char err[256];
    pulsarc_sink_t *sink = NULL;
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    const char *t[] = {"a"};
    pulsarc_sink_builder_set_service_url(b, pct_service_url());
    pulsarc_sink_builder_set_topics(b, t, 1);
    ck_assert_int_eq(pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_str_eq(err, "serializationSchema must be set.");
    ck_assert_int_eq(pulsarc_sink_builder_set_topics(b, t, 1), PULSARC_ERR_STATE);
    pulsarc_sink_builder_destroy(b);

    b = pulsarc_sink_builder_new();
    pulsarc_sink_builder_set_service_url(b, pct_service_url());
    pulsarc_sink_builder_set_serializer(b, ser, NULL);
    ck_assert_int_eq(pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_str_eq(err, "No topic names or custom topic router are provided.");
    ck_assert_int_eq(pulsarc_sink_builder_set_routing_mode(b, PULSARC_SINK_KEY_HASH), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_topic_router(b, (pulsarc_sink_router_cb)1, NULL),
                     PULSARC_ERR_STATE);

    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.sink.nope", "1", err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "pulsar.sink.nope"));
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.sink.deliveryGuarantee", "twice",
                                                     err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "pulsar.sink.deliveryGuarantee"));
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.producer.batchingMaxMessages",
                                                     "zero", err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.producer.noSuchKey", "1", err,
                                                     sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.client.callbackMode", "poll",
                                                     err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    /* client keys are read by the connector's table: its names, units and URL rules */
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.client.initialBackoffIntervalNanos",
                                                     "250000000", err, sizeof err),
                     PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.client.serviceUrl", "ftp://h:21",
                                                     err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "pulsar.client.serviceUrl: unknown scheme 'ftp'"));
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.client.numIoThreads", "4", err,
                                                     sizeof err),
                     PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.sink.messageKeyHash", "java-hash",
                                                     err, sizeof err),
                     PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.sink.enableMetrics", "false",
                                                     err, sizeof err),
                     PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_config(b, "pulsar.admin.adminUrl", pct_admin_url(),
                                                     err, sizeof err),
                     PULSARC_OK);
    pulsarc_sink_builder_destroy(b);
}
END_TEST


START_TEST(test_null_arguments) {
    char err[128];
    void *blob = NULL;
    size_t len = 0;
    pulsarc_sink_t *sink = NULL;
    pulsarc_sink_stats_t st;
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    ck_assert_int_ne(pulsarc_sink_builder_set_service_url(NULL, "x"), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_service_url(b, NULL), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_admin_url(b, ""), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_topics(b, NULL, 1), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_serializer(b, NULL, NULL), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_delivery_guarantee(b, 7), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_producer_name(NULL, "p"), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_delay(NULL, 1), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_delayer(b, NULL, NULL), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_routing_mode(b, 9), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_topic_router(b, NULL, NULL), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_set_config(b, NULL, "v", err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_build(NULL, NULL, 0, &sink, err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_builder_build(b, NULL, 0, NULL, err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_write(NULL, "x", 0, err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_flush(NULL, 0, err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_checkpoint(NULL, 1, 0, &blob, &len, err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_checkpoint_complete(NULL, 1, err, sizeof err), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_stats(NULL, &st), PULSARC_OK);
    ck_assert_int_ne(pulsarc_sink_close(NULL, NULL, 0), PULSARC_OK);
    pulsarc_sink_destroy(NULL);
    pulsarc_sink_builder_destroy(NULL);
    pulsarc_sink_builder_destroy(b);
}
END_TEST

/* ---------- NONE ---------- */

START_TEST(test_none_fire_and_forget) {
    const char *t = pct_topic("sink-none");
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    pulsarc_sink_builder_t *b = builder(topics, NULL);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_range(sink, "n", 0, 50);
    size_t len;
    void *blob = checkpoint(sink, 1, &len); /* NONE: no flush, nothing to wait for */
    free(blob);
    close_sink(sink); /* end of input flushes */
    pulsarc_msg_t *got[64];
    size_t n = receive_all(cons, got, 64, 2000);
    ck_assert_uint_eq(n, 50);
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* A message above the broker's 5 MiB limit fails its send. */
static char *huge_payload(void) {
    size_t n = 6u << 20;
    char *p = malloc(n + 1);
    memset(p, 'x', n);
    p[n] = 0;
    return p;
}

START_TEST(test_none_ignores_send_errors) {
    const char *t = pct_topic("sink-none-err");
    const char *topics[] = {t, NULL};
    pulsarc_sink_builder_t *b = builder(topics, NULL);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    char *big = huge_payload();
    elem_t e = {big, NULL, 0};
    char err[256];
    pulsarc_sink_write(sink, &e, 0, err, sizeof err); /* may fail at once: fine */
    write_range(sink, "after", 0, 3);
    size_t len;
    free(checkpoint(sink, 1, &len));
    ck_assert_int_eq(pulsarc_sink_flush(sink, 10000, err, sizeof err), PULSARC_OK);
    pulsarc_sink_stats_t st;
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.failed, 1);
    ck_assert_uint_eq(st.acked, 3);
    close_sink(sink);
    free(big);
    pulsarc_sink_builder_destroy(b);
}
END_TEST

/* ---------- AT_LEAST_ONCE ---------- */

START_TEST(test_at_least_once_checkpoint_waits_for_receipts) {
    const char *t = pct_topic("sink-alo");
    const char *topics[] = {t, NULL};
    /* Batches would wait 10 s on their own: the checkpoint must push them. */
    const char *kv[] = {"pulsar.sink.deliveryGuarantee", "at-least-once",
                        "pulsar.producer.batchingMaxPublishDelayMicros", "10000000", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_range(sink, "a", 0, 20);
    pulsarc_sink_stats_t st;
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.written, 20);
    ck_assert_uint_gt(st.pending, 0);
    uint64_t t0 = now_ms();
    size_t len;
    void *blob = checkpoint(sink, 1, &len);
    ck_assert_uint_lt(now_ms() - t0, 5000);
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.pending, 0);
    ck_assert_uint_eq(st.acked, 20);
    free(blob);
    close_sink(sink);
    pulsarc_sink_builder_destroy(b);
}
END_TEST

START_TEST(test_at_least_once_reports_send_error) {
    const char *t = pct_topic("sink-alo-err");
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.sink.deliveryGuarantee", "at-least-once", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_range(sink, "ok", 0, 3);
    char *big = huge_payload();
    elem_t e = {big, NULL, 0};
    char err[256];
    pulsarc_sink_write(sink, &e, 0, err, sizeof err);
    void *blob = NULL;
    size_t len;
    pulsarc_err_t rc = pulsarc_sink_checkpoint(sink, 1, 20000, &blob, &len, err, sizeof err);
    ck_assert_int_ne(rc, PULSARC_OK);
    ck_assert_ptr_null(blob);
    ck_assert_msg(strstr(err, "Failed to send data to Pulsar"), "%s", err);
    ck_assert_msg(strstr(err, t), "%s", err);
    elem_t ok = {"later", NULL, 0};
    ck_assert_int_eq(pulsarc_sink_write(sink, &ok, 0, err, sizeof err), rc); /* sticky */
    ck_assert_int_eq(pulsarc_sink_close(sink, err, sizeof err), rc);
    pulsarc_sink_destroy(sink);
    free(big);
    pulsarc_sink_builder_destroy(b);
}
END_TEST

/* ---------- routing ---------- */

START_TEST(test_round_robin_on_batch_boundary_across_topics) {
    const char *a = pct_topic("sink-rr-a"), *bt = pct_topic("sink-rr-b");
    partitioned(a, 2);
    partitioned(bt, 3);
    const char *topics[] = {a, bt, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    const char *kv[] = {"pulsar.producer.batchingMaxMessages", "5", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    pulsarc_sink_stats_t st;
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.partitions, 5);
    write_range(sink, "r", 0, 10);
    close_sink(sink);
    pulsarc_msg_t *got[16];
    size_t n = receive_all(cons, got, 16, 2000);
    ck_assert_uint_eq(n, 10);
    /* Flattened order: a-0, a-1, b-0, b-1, b-2. Messages 0-4 share one
     * partition, 5-9 the next one in that order (the start is random). */
    char names[5][300];
    for (int i = 0; i < 5; i++)
        snprintf(names[i], 300, "persistent://public/default/%s-partition-%d", i < 2 ? a : bt,
                 i < 2 ? i : i - 2);
    int where[10];
    for (size_t i = 0; i < n; i++) {
        int k = payload_num(got[i]), p = -1;
        for (int j = 0; j < 5; j++)
            if (!strcmp(pulsarc_msg_topic(got[i]), names[j]))
                p = j;
        ck_assert_int_ge(p, 0);
        where[k] = p;
    }
    for (int k = 1; k < 5; k++) {
        ck_assert_int_eq(where[k], where[0]);
        ck_assert_int_eq(where[5 + k], where[5]);
    }
    ck_assert_int_eq(where[5], (where[0] + 1) % 5);
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static int partition_of(const pulsarc_msg_t *m) {
    const char *s = strstr(pulsarc_msg_topic(m), "-partition-");
    return s ? atoi(s + 11) : -1;
}

static void check_key_hash(const char *hash_name, int java) {
    const char *t = pct_topic("sink-keyhash");
    partitioned(t, 4);
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    const char *kv[] = {"pulsar.sink.messageKeyHash", hash_name,
                        "pulsar.producer.batchingMaxMessages", "5", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    ck_assert_int_eq(pulsarc_sink_builder_set_routing_mode(b, PULSARC_SINK_KEY_HASH), PULSARC_OK);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    char key[32], payload[32];
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(payload, sizeof payload, "k%d", i);
        write_one(sink, payload, key);
    }
    write_range(sink, "u", 100, 110); /* key-less: one partition per 5 */
    close_sink(sink);
    pulsarc_msg_t *got[40];
    size_t n = receive_all(cons, got, 40, 2000);
    ck_assert_uint_eq(n, 30);
    int unkeyed[10];
    for (size_t i = 0; i < n; i++) {
        const char *k = pulsarc_msg_key(got[i]);
        int num = payload_num(got[i]);
        if (!k) {
            unkeyed[num - 100] = partition_of(got[i]);
            continue;
        }
        int32_t h = java ? pc_hash_java_string(k, strlen(k)) : pc_hash_murmur3(k, strlen(k));
        ck_assert_int_eq(partition_of(got[i]), (int)((uint32_t)h % 4u));
    }
    for (int i = 1; i < 5; i++) {
        ck_assert_int_eq(unkeyed[i], unkeyed[0]);
        ck_assert_int_eq(unkeyed[5 + i], unkeyed[5]);
    }
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}

START_TEST(test_key_hash_murmur3) { check_key_hash("murmur-3-32-hash", 0); }
END_TEST

START_TEST(test_key_hash_java) { check_key_hash("java-hash", 1); }
END_TEST

typedef struct router_ctx {
    char other[300];
    size_t seen_n;
} router_ctx_t;

/* "x..." goes to the other topic, "drop" nowhere, the rest to the last entry. */
static const char *route(void *opaque, const pulsarc_msg_t *m, const char *const *parts,
                         size_t n) {
    router_ctx_t *ctx = opaque;
    ctx->seen_n = n;
    if (payload_is(m, "drop"))
        return NULL;
    if (((const char *)pulsarc_msg_payload(m))[0] == 'x')
        return ctx->other;
    return parts[n - 1];
}

START_TEST(test_custom_router) {
    const char *t = pct_topic("sink-router"), *o = pct_topic("sink-router-other");
    partitioned(t, 2);
    const char *topics[] = {t, NULL}, *both[] = {t, o, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, both, "Exclusive");
    router_ctx_t ctx;
    full(o, ctx.other, sizeof ctx.other);
    pulsarc_sink_builder_t *b = builder(topics, NULL);
    ck_assert_int_eq(pulsarc_sink_builder_set_topic_router(b, route, &ctx), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_routing_mode(b, PULSARC_SINK_KEY_HASH),
                     PULSARC_ERR_STATE);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_one(sink, "x1", NULL);
    write_one(sink, "p1", NULL);
    write_one(sink, "p2", NULL);
    elem_t drop = {"drop", NULL, 0};
    char err[256];
    ck_assert_int_ne(pulsarc_sink_write(sink, &drop, 0, err, sizeof err), PULSARC_OK);
    ck_assert_ptr_nonnull(strstr(err, "router"));
    ck_assert_uint_eq(ctx.seen_n, 2);
    close_sink(sink);
    pulsarc_msg_t *got[8];
    size_t n = receive_all(cons, got, 8, 2000);
    ck_assert_uint_eq(n, 3);
    for (size_t i = 0; i < n; i++) {
        if (payload_is(got[i], "x1"))
            ck_assert_str_eq(pulsarc_msg_topic(got[i]), ctx.other);
        else
            ck_assert_int_eq(partition_of(got[i]), 1);
    }
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_router_without_topics) {
    const char *o = pct_topic("sink-router-only");
    const char *only[] = {o, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, only, "Exclusive");
    router_ctx_t ctx;
    full(o, ctx.other, sizeof ctx.other);
    pulsarc_sink_builder_t *b = builder(NULL, NULL);
    pulsarc_sink_builder_set_topic_router(b, route, &ctx);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_one(sink, "x-only", NULL);
    ck_assert_uint_eq(ctx.seen_n, 0);
    close_sink(sink);
    pulsarc_msg_t *got[4];
    size_t n = receive_all(cons, got, 4, 2000);
    ck_assert_uint_eq(n, 1);
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- delayed delivery ---------- */

START_TEST(test_fixed_delay) {
    const char *t = pct_topic("sink-delay");
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Shared"); /* delays need Shared */
    pulsarc_sink_builder_t *b = builder(topics, NULL);
    ck_assert_int_eq(pulsarc_sink_builder_set_delay(b, 3000), PULSARC_OK);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    uint64_t t0 = now_ms();
    write_one(sink, "later", NULL);
    char err[256];
    ck_assert_int_eq(pulsarc_sink_flush(sink, 10000, err, sizeof err), PULSARC_OK);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 1500), PULSARC_ERR_NO_MESSAGE);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_OK);
    ck_assert_uint_ge(now_ms() - t0, 2900);
    uint64_t at = pulsarc_msg_deliver_at(m);
    if (at) /* when the consumer reports it */
        ck_assert(at >= t0 + 3000 && at <= now_ms() + 1000);
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    close_sink(sink);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Keyed "late" messages wait 3 s, the rest go at once. */
static uint64_t delayer(void *opaque, const pulsarc_msg_t *m, uint64_t now) {
    int *calls = opaque;
    (*calls)++;
    const char *k = pulsarc_msg_key(m);
    return k && !strcmp(k, "late") ? now + 3000 : 0;
}

START_TEST(test_delayer_callback) {
    const char *t = pct_topic("sink-delayer");
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Shared");
    pulsarc_sink_builder_t *b = builder(topics, NULL);
    int calls = 0;
    ck_assert_int_eq(pulsarc_sink_builder_set_delayer(b, delayer, &calls), PULSARC_OK);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_one(sink, "slow", "late");
    write_one(sink, "fast", NULL);
    ck_assert_int_eq(calls, 2);
    char err[256];
    ck_assert_int_eq(pulsarc_sink_flush(sink, 10000, err, sizeof err), PULSARC_OK);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 5000), PULSARC_OK);
    ck_assert(payload_is(m, "fast"));
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 1000), PULSARC_ERR_NO_MESSAGE);
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 10000), PULSARC_OK);
    ck_assert(payload_is(m, "slow"));
    pulsarc_consumer_ack(cons, m);
    pulsarc_msg_destroy(m);
    close_sink(sink);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- names, event time, refresh ---------- */

START_TEST(test_producer_name_and_event_time) {
    const char *t = pct_topic("sink-name");
    partitioned(t, 2);
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    const char *kv[] = {"pulsar.producer.batchingMaxMessages", "1", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    ck_assert_int_eq(pulsarc_sink_builder_set_producer_name(b, "job-%s-w"), PULSARC_OK);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    elem_t own = {"own", NULL, 777}, rec = {"rec", NULL, 0};
    char err[256];
    ck_assert_int_eq(pulsarc_sink_write(sink, &own, 555, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_write(sink, &rec, 555, err, sizeof err), PULSARC_OK);
    close_sink(sink);
    pulsarc_msg_t *got[4];
    size_t n = receive_all(cons, got, 4, 2000);
    ck_assert_uint_eq(n, 2);
    const char *names[2];
    for (size_t i = 0; i < n; i++) {
        /* the message's own event time wins; the record timestamp fills in */
        ck_assert_uint_eq(pulsarc_msg_event_time(got[i]), payload_is(got[i], "own") ? 777 : 555);
        names[i] = pulsarc_msg_producer_name(got[i]);
        ck_assert_ptr_nonnull(names[i]);
        ck_assert_msg(!strncmp(names[i], "job-", 4) && strstr(names[i], "-w") &&
                          strlen(names[i]) == strlen("job--w") + 16, "%s", names[i]);
    }
    ck_assert_str_ne(names[0], names[1]); /* one producer per partition, each named */
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* enableSchemaEvolution: the sink's producers declare its schema; another type is refused. */
START_TEST(test_schema_evolution) {
    const char *t = pct_topic("sink-schema");
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    const char *kv[] = {"pulsar.sink.enableSchemaEvolution", "true", "pulsar.sink.schemaType",
                        "STRING", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_one(sink, "typed", NULL);
    close_sink(sink);
    pulsarc_msg_t *got[2];
    size_t n = receive_all(cons, got, 2, 2000);
    ck_assert_uint_eq(n, 1);
    size_t vlen = 0;
    ck_assert_ptr_nonnull(pulsarc_msg_schema_version(got[0], &vlen)); /* the topic's version */
    ck_assert_uint_eq(vlen, 8);
    free_msgs(got, n);
    pulsarc_sink_builder_destroy(b);
    const char *int_kv[] = {"pulsar.sink.enableSchemaEvolution", "true", "pulsar.sink.schemaType",
                            "INT64", NULL};
    b = builder(topics, int_kv);
    sink = build(b, NULL, 0);
    elem_t e = {"x", NULL, 0};
    char err[512] = "";
    pulsarc_err_t w = pulsarc_sink_write(sink, &e, 0, err, sizeof err);
    if (w == PULSARC_OK) /* or the refusal surfaces at the flush */
        w = pulsarc_sink_flush(sink, 10000, err, sizeof err);
    printf("[sink] INT64 writer on a STRING topic: %s (%.120s)\n", pulsarc_errname(w), err);
    ck_assert_int_eq(w, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA);
    pulsarc_sink_destroy(sink);
    pulsarc_sink_builder_destroy(b);
    /* Schema keys without evolution are refused at build. */
    const char *half_kv[] = {"pulsar.sink.schemaType", "STRING", NULL};
    b = builder(topics, half_kv);
    ck_assert_int_eq(pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "enableSchemaEvolution"));
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_partition_list_refresh) {
    const char *t = pct_topic("sink-refresh");
    partitioned(t, 1);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.sink.topicMetadataRefreshInterval", "300",
                        "pulsar.producer.batchingMaxMessages", "1", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    pulsarc_sink_stats_t st;
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.partitions, 1);
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", t);
    int code = pct_admin("POST", path, "3");
    ck_assert_msg(code == 204 || code == 200, "update partitions: HTTP %d", code);
    usleep(500 * 1000);
    write_range(sink, "f", 0, 6); /* round-robin by 1 now spans 3 partitions */
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.partitions, 3);
    ck_assert_uint_eq(st.producers, 3);
    close_sink(sink);
    pulsarc_sink_builder_destroy(b);
}
END_TEST


/* ---------- EXACTLY_ONCE ---------- */

static const char *eo_kv[] = {"pulsar.sink.deliveryGuarantee", "exactly-once",
                              "pulsar.sink.transactionTimeoutMillis", "120000", NULL};

/* Payload numbers received, each counted; returns how many arrived. */
static size_t count_payloads(pulsarc_consumer_t *cons, int *seen, int max, int quiet_ms) {
    pulsarc_msg_t *m;
    size_t n = 0;
    while (pulsarc_consumer_receive(cons, &m, quiet_ms) == PULSARC_OK) {
        int k = payload_num(m);
        if (k >= 0 && k < max)
            seen[k]++;
        n++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    return n;
}

static void complete(pulsarc_sink_t *sink, uint64_t id) {
    char err[256];
    ck_assert_msg(pulsarc_sink_checkpoint_complete(sink, id, err, sizeof err) == PULSARC_OK,
                  "complete: %s", err);
}

START_TEST(test_exactly_once_visible_at_commit) {
    const char *t = pct_topic("sink-eo");
    partitioned(t, 2);
    const char *topics[] = {t, NULL};
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    pulsarc_sink_builder_t *b = builder(topics, eo_kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_range(sink, "e", 0, 10);
    size_t len;
    void *blob = checkpoint(sink, 1, &len);
    free(blob);
    int seen[16] = {0};
    ck_assert_uint_eq(count_payloads(cons, seen, 16, 1500), 0); /* not before the commit */
    complete(sink, 1);
    ck_assert_uint_eq(count_payloads(cons, seen, 16, 3000), 10);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(seen[i], 1);
    pulsarc_sink_stats_t st;
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.txn_committed, 1);
    close_sink(sink);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static int save(const char *path, const void *blob, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(blob, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static void *load(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[4096];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* The doomed writer, in a child process: epochs 0-9 (checkpoint 1,
 * completed), 10-19 (checkpoint 2, never completed), 20-24 (never
 * checkpointed), then SIGKILL. No Check macros here: plain exit codes. */
static int doomed_writer(const char *topic, const char *blob1, const char *blob2) {
    const char *topics[] = {topic};
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    pulsarc_sink_builder_set_topics(b, topics, 1);
    pulsarc_sink_builder_set_service_url(b, pct_service_url());
    pulsarc_sink_builder_set_serializer(b, ser, NULL);
    for (int i = 0; eo_kv[i]; i += 2)
        pulsarc_sink_builder_set_config(b, eo_kv[i], eo_kv[i + 1], NULL, 0);
    pulsarc_sink_t *sink;
    char err[256], buf[32];
    if (pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err))
        return 2;
    void *blob;
    size_t len;
    for (int i = 0; i < 25; i++) {
        elem_t e = {buf, NULL, 0};
        snprintf(buf, sizeof buf, "k%d", i);
        if (pulsarc_sink_write(sink, &e, 0, err, sizeof err))
            return 3;
        if (i != 9 && i != 19)
            continue;
        if (pulsarc_sink_checkpoint(sink, i == 9 ? 1 : 2, 20000, &blob, &len, err, sizeof err) ||
            save(i == 9 ? blob1 : blob2, blob, len))
            return 4;
        free(blob);
        if (i == 9 && pulsarc_sink_checkpoint_complete(sink, 1, err, sizeof err))
            return 5;
    }
    if (pulsarc_sink_flush(sink, 20000, err, sizeof err)) /* 20-24 reach the broker, uncommitted */
        return 6;
    kill(getpid(), SIGKILL);
    return 7;
}

static void run_doomed_writer(const char *topic, const char *blob1, const char *blob2) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(doomed_writer(topic, blob1, blob2));
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "writer did not die as planned (exit %d)", WEXITSTATUS(status));
}

/* Restores from blob (as of checkpoint `from`), replays what that checkpoint
 * does not cover, and checks a consumer sees 0-24 exactly once. */
static void restore_and_check(const char *blob_path, int replay_from) {
    const char *t = pct_topic("sink-eo-kill");
    char b1[128], b2[128];
    snprintf(b1, sizeof b1, "/tmp/pulsarc-sink-%d-1.blob", (int)getpid());
    snprintf(b2, sizeof b2, "/tmp/pulsarc-sink-%d-2.blob", (int)getpid());
    run_doomed_writer(t, b1, b2); /* forks before this process makes any client */
    size_t len;
    void *blob = load(!strcmp(blob_path, "1") ? b1 : b2, &len);
    const char *topics[] = {t, NULL};
    pulsarc_sink_builder_t *b = builder(topics, eo_kv);
    pulsarc_sink_t *sink = build(b, blob, len);
    write_range(sink, "k", replay_from, 25);
    free(checkpoint(sink, 3, &len));
    complete(sink, 3);
    close_sink(sink);
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    int seen[32] = {0};
    size_t n = count_payloads(cons, seen, 32, 3000);
    for (int i = 0; i < 25; i++)
        ck_assert_msg(seen[i] == 1, "message %d seen %d times", i, seen[i]);
    ck_assert_uint_eq(n, 25);
    unlink(b1);
    unlink(b2);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}

/* Killed after checkpoint 2, before its commit: the restored sink commits
 * epoch 10-19 and aborts the open 20-24, which the application replays. */
START_TEST(test_exactly_once_killed_between_checkpoint_and_commit) { restore_and_check("2", 20); }
END_TEST

/* Checkpoint 2 never completed, so the application restores from
 * checkpoint 1: epoch 1 is already committed (the coordinator forgot it),
 * epoch 10-19 is aborted and replayed with 20-24. */
START_TEST(test_exactly_once_restore_from_older_checkpoint) { restore_and_check("1", 10); }
END_TEST

START_TEST(test_exactly_once_close_aborts_open_transaction) {
    const char *t = pct_topic("sink-eo-close");
    const char *topics[] = {t, NULL};
    pulsarc_sink_builder_t *b = builder(topics, eo_kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_range(sink, "c", 0, 3);
    size_t len;
    free(checkpoint(sink, 1, &len));
    complete(sink, 1);
    write_range(sink, "c", 3, 5); /* never checkpointed */
    pulsarc_sink_stats_t st;
    close_sink(sink);
    /* A reader is not held up by a dangling transaction: a later plain
     * message arrives right after the committed ones. */
    pulsarc_client_t *c = pct_client();
    pulsarc_producer_t *p;
    char err[256];
    ck_assert_int_eq(pulsarc_producer_new(c, t, NULL, &p, err, sizeof err), PULSARC_OK);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "c9", 2, PULSARC_MSG_F_COPY);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_t *cons = consumer(c, topics, "Exclusive");
    int seen[16] = {0};
    ck_assert_uint_eq(count_payloads(cons, seen, 16, 3000), 4);
    ck_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[9] == 1);
    (void)st;
    pulsarc_producer_destroy(p);
    pulsarc_sink_builder_destroy(b);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_exactly_once_timed_out_transaction_is_an_error) {
    const char *t = pct_topic("sink-eo-timeout");
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.sink.deliveryGuarantee", "exactly-once",
                        "pulsar.sink.transactionTimeoutMillis", "2000", NULL};
    pulsarc_sink_builder_t *b = builder(topics, kv);
    pulsarc_sink_t *sink = build(b, NULL, 0);
    write_range(sink, "t", 0, 3);
    size_t len;
    free(checkpoint(sink, 1, &len));
    sleep(6); /* the broker aborts it */
    char err[256];
    ck_assert_int_ne(pulsarc_sink_checkpoint_complete(sink, 1, err, sizeof err), PULSARC_OK);
    ck_assert_msg(strstr(err, "lost"), "%s", err);
    pulsarc_sink_stats_t st;
    pulsarc_sink_stats(sink, &st);
    ck_assert_uint_eq(st.txn_committed, 0);
    pulsarc_sink_close(sink, err, sizeof err);
    pulsarc_sink_destroy(sink);
    pulsarc_sink_builder_destroy(b);
}
END_TEST

static Suite *sink_suite(void) {
    Suite *s = suite_create("sink");
    TCase *tc = tcase_create("sink");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_builder_rules);
    tcase_add_test(tc, test_null_arguments);
    tcase_add_test(tc, test_none_fire_and_forget);
    tcase_add_test(tc, test_none_ignores_send_errors);
    tcase_add_test(tc, test_at_least_once_checkpoint_waits_for_receipts);
    tcase_add_test(tc, test_at_least_once_reports_send_error);
    tcase_add_test(tc, test_round_robin_on_batch_boundary_across_topics);
    tcase_add_test(tc, test_key_hash_murmur3);
    tcase_add_test(tc, test_key_hash_java);
    tcase_add_test(tc, test_custom_router);
    tcase_add_test(tc, test_router_without_topics);
    tcase_add_test(tc, test_fixed_delay);
    tcase_add_test(tc, test_delayer_callback);
    tcase_add_test(tc, test_producer_name_and_event_time);
    tcase_add_test(tc, test_schema_evolution);
    tcase_add_test(tc, test_partition_list_refresh);
    tcase_add_test(tc, test_exactly_once_visible_at_commit);
    tcase_add_test(tc, test_exactly_once_killed_between_checkpoint_and_commit);
    tcase_add_test(tc, test_exactly_once_restore_from_older_checkpoint);
    tcase_add_test(tc, test_exactly_once_close_aborts_open_transaction);
    tcase_add_test(tc, test_exactly_once_timed_out_transaction_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(sink_suite)
