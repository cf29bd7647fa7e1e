/*
 * Live-broker behaviour of the source (include/pulsarc/source.h): splits
 * and discovery, start cursors on new / existing / reset subscriptions,
 * stop cursors and end of input (empty partitions included), the fetch
 * limits, checkpoints that resume without loss or duplicates (also inside
 * a batch), commits on completion and on the auto-ack timer, restore
 * verification, subscription types and metrics, and the round trip of a
 * sink and a source given an http:// service URL (lookups over the
 * broker's REST API). One test per behaviour.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pulsarc/admin.h"
#include "pulsarc/connector.h"
#include "pulsarc/sink.h"
#include "pulsarc/source.h"
#include "testutil.h"

/* ---------- helpers ---------- */

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static pulsarc_producer_t *producer(pulsarc_client_t *c, const char *topic, int batch) {
    const char *plain[] = {"batchingEnabled", "false", NULL};
    const char *batched[] = {"batchingEnabled", "true", "batchingMaxMessages", "20",
                             "batchingMaxPublishDelayMicros", "5000000", NULL};
    pulsarc_conf_t *conf = pct_conf(batch ? batched : plain);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

static pulsarc_msg_t *body(int i) {
    char b[32];
    snprintf(b, sizeof b, "msg-%d", i);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, b, strlen(b), PULSARC_MSG_F_COPY);
    return m;
}

/* Sends msg-from .. msg-(to-1) synchronously; ids (may be NULL) get their ids. */
static void send_range(pulsarc_producer_t *p, int from, int to, pulsarc_msgid_t *ids) {
    for (int i = from; i < to; i++) {
        pulsarc_msg_t *m = body(i);
        pulsarc_msgid_t id;
        ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
        if (ids)
            ids[i - from] = id;
        pulsarc_msg_destroy(m);
    }
}

/* Sends asynchronously (many messages, or one batch), then flushes. */
static void send_async_range(pulsarc_producer_t *p, int from, int to) {
    for (int i = from; i < to; i++) {
        ck_assert_int_eq(pulsarc_producer_send_async(p, body(i), NULL, NULL), PULSARC_OK);
        if ((i - from) % 500 == 499) /* stay under the pending-message limit */
            ck_assert_int_eq(pulsarc_producer_flush(p, 60000), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 60000), PULSARC_OK);
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

/* A source conf on topics (NULL-terminated) with extra key, value pairs. */
static pulsarc_source_conf_t *sconf(const char *const *topics, const char *sub,
                                    const char *const *kv) {
    pulsarc_source_conf_t *c = pulsarc_source_conf_new();
    char err[256];
    for (size_t i = 0; topics[i]; i++)
        ck_assert_int_eq(pulsarc_source_conf_add_topic(c, topics[i]), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(c, "pulsar.consumer.subscriptionName", sub, err,
                                             sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(c, "pulsar.source.maxFetchTime", "1500", err,
                                             sizeof err), PULSARC_OK);
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_msg(pulsarc_source_conf_set(c, kv[i], kv[i + 1], err, sizeof err) == PULSARC_OK,
                      "%s", err);
    return c;
}

static pulsarc_source_t *open_source(pulsarc_client_t *c, const pulsarc_source_conf_t *conf,
                                     const void *blob, size_t len) {
    pulsarc_source_t *s = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_source_new(c, conf, blob, len, &s, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "source_new: %s (%s)", pulsarc_errname(e), err);
    return s;
}

/* Result of draining a source. */
typedef struct drained {
    int count, dups, ended;
    int first, last;        /* first and last index seen */
    unsigned char *seen;    /* per index */
} drained_t;

/*
 * Fetches until want messages (0: until end of input or an empty fetch) or
 * end of input; counts duplicates in seen (size max).
 */
static drained_t drain(pulsarc_source_t *src, int want, unsigned char *seen, int max) {
    drained_t d = {0, 0, 0, -1, -1, seen};
    pulsarc_msg_t *out[100];
    for (int idle = 0; idle < 2 && (want == 0 || d.count < want);) {
        size_t cap = want ? (size_t)(want - d.count < 100 ? want - d.count : 100) : 100, n = 0;
        pulsarc_err_t e = pulsarc_source_fetch(src, out, cap, &n);
        if (e == PULSARC_SOURCE_END_OF_INPUT) {
            d.ended = 1;
            break;
        }
        ck_assert_msg(e == PULSARC_OK, "fetch: %s", pulsarc_errname(e));
        idle = n == 0 ? idle + 1 : 0;
        for (size_t i = 0; i < n; i++) {
            int x = index_of(out[i]);
            ck_assert(x >= 0 && x < max);
            d.dups += seen[x]++ > 0;
            d.first = d.first < 0 ? x : d.first;
            d.last = x;
            d.count++;
            pulsarc_msg_destroy(out[i]);
        }
    }
    return d;
}

static pulsarc_admin_t *admin(void) {
    pulsarc_admin_t *a = NULL;
    char err[256];
    ck_assert_msg(pulsarc_admin_new(NULL, &a, err, sizeof err) == PULSARC_OK, "%s", err);
    return a;
}

static void partitioned(const char *topic, int n) {
    pulsarc_admin_t *a = admin();
    char err[256];
    ck_assert_msg(pulsarc_admin_create_partitioned_topic(a, topic, n, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_admin_destroy(a);
}

static int64_t backlog(const char *topic, const char *sub) {
    pulsarc_admin_t *a = admin();
    int64_t b = -1;
    char err[256];
    ck_assert_msg(pulsarc_admin_subscription_backlog(a, topic, sub, &b, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    pulsarc_admin_destroy(a);
    return b;
}

/* The backlog of sub once it equals want, or the last seen after 30 s: the
 * acknowledgments a commit sends reach the broker's cursor a moment later,
 * longer on a loaded machine. */
static int64_t backlog_settled(const char *topic, const char *sub, int64_t want) {
    int64_t b = backlog(topic, sub);
    for (int i = 0; i < 300 && b != want; i++) {
        usleep(100 * 1000);
        b = backlog(topic, sub);
    }
    return b;
}

static const char *partition(const char *topic, int p) {
    static char names[8][300];
    static int k;
    char *b = names[k++ % 8];
    snprintf(b, 300, "%s-partition-%d", topic, p);
    return b;
}

/* ---------- splits ---------- */

START_TEST(test_splits_per_partition_and_plain_topic) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-splits"), *plain = pct_topic("src-plain");
    partitioned(t, 3);
    pulsarc_producer_t *p = producer(c, plain, 0);
    send_range(p, 0, 1, NULL);
    const char *topics[] = {t, partition(t, 0), plain, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    ck_assert_uint_eq(pulsarc_source_split_count(src), 4); /* t-partition-0 absorbed by t */
    int parts[4] = {0}, minus1 = 0;
    for (size_t i = 0; i < 4; i++) {
        pulsarc_source_split_metrics_t m;
        ck_assert_int_eq(pulsarc_source_split_metrics(src, i, &m), PULSARC_OK);
        if (m.partition < 0)
            minus1++;
        else
            parts[m.partition]++;
    }
    ck_assert_int_eq(minus1, 1);
    ck_assert(parts[0] == 1 && parts[1] == 1 && parts[2] == 1);
    unsigned char seen[4] = {0};
    drained_t d = drain(src, 1, seen, 4); /* the non-partitioned split is read (id -1) */
    ck_assert_int_eq(d.count, 1);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_partition_discovery_adds_new_partitions) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-disc");
    partitioned(t, 1);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.source.partitionDiscoveryIntervalMs", "300", NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    ck_assert_uint_eq(pulsarc_source_split_count(src), 1);
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", t);
    int code = pct_admin("POST", path, "2");
    ck_assert_msg(code == 204 || code == 200, "update partitions: HTTP %d", code);
    pulsarc_producer_t *p = producer(c, partition(t, 1), 0);
    send_range(p, 0, 5, NULL);
    unsigned char seen[8] = {0};
    drained_t d = drain(src, 5, seen, 8); /* new partition starts at the start cursor (earliest) */
    ck_assert_int_eq(d.count, 5);
    ck_assert_uint_eq(pulsarc_source_split_count(src), 2);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- start cursors ---------- */

/* Reads a fresh subscription sub with start cursor st; returns the first index (-1: none). */
static int first_with_start(pulsarc_client_t *c, const char *t, const char *sub,
                            pulsarc_start_cursor_t st, int *count) {
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, sub, NULL);
    pulsarc_stop_cursor_t bounded = pulsarc_stop_cursor_latest();
    ck_assert_int_eq(pulsarc_source_conf_set_start_cursor(conf, &st), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set_stop_cursor(conf, &bounded), PULSARC_OK);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    drained_t d = drain(src, 0, seen, 64);
    *count = d.count;
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    return d.first;
}

START_TEST(test_start_cursors_on_new_subscriptions) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-start");
    pulsarc_producer_t *p = producer(c, t, 0);
    pulsarc_msgid_t ids[20];
    send_range(p, 0, 10, ids);
    usleep(30000);
    uint64_t t10 = now_ms();
    usleep(30000);
    send_range(p, 10, 20, ids + 10);
    int n;
    ck_assert_int_eq(first_with_start(c, t, "e", pulsarc_start_cursor_earliest(), &n), 0);
    ck_assert_int_eq(n, 20);
    ck_assert_int_eq(first_with_start(c, t, "in", pulsarc_start_cursor_message_id(ids[5], 1), &n), 5);
    ck_assert_int_eq(n, 15);
    ck_assert_int_eq(first_with_start(c, t, "ex", pulsarc_start_cursor_message_id(ids[5], 0), &n), 6);
    ck_assert_int_eq(n, 14);
    ck_assert_int_eq(first_with_start(c, t, "pt", pulsarc_start_cursor_publish_time(t10), &n), 10);
    ck_assert_int_eq(n, 10);
    ck_assert_int_eq(first_with_start(c, t, "l", pulsarc_start_cursor_latest(), &n), -1);
    ck_assert_int_eq(n, 0);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_exclusive_start_survives_checkpoint_before_first_message) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-early");
    pulsarc_producer_t *p = producer(c, t, 0);
    pulsarc_msgid_t ids[10];
    send_range(p, 0, 10, ids);
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_start_cursor_t st = pulsarc_start_cursor_message_id(ids[4], 0);
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    pulsarc_source_conf_set_start_cursor(conf, &st);
    pulsarc_source_conf_set_stop_cursor(conf, &stop);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    pulsarc_source_destroy(src); /* nothing emitted yet */
    src = open_source(c, conf, blob, len);
    unsigned char seen[16] = {0};
    drained_t d = drain(src, 0, seen, 16);
    ck_assert(d.ended && d.first == 5 && d.count == 5);
    free(blob);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_existing_subscription_continues_unless_reset) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-exist");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 20, NULL);
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_stop_cursor_t bounded = pulsarc_stop_cursor_latest();
    pulsarc_source_conf_set_stop_cursor(conf, &bounded);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[32] = {0};
    ck_assert_int_eq(drain(src, 8, seen, 32).count, 8);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 1), PULSARC_OK);
    free(blob);
    pulsarc_source_destroy(src);
    /* No checkpoint, existing subscription, start cursor latest: continues at 8. */
    pulsarc_start_cursor_t latest = pulsarc_start_cursor_latest();
    pulsarc_source_conf_set_start_cursor(conf, &latest);
    src = open_source(c, conf, NULL, 0);
    memset(seen, 0, sizeof seen);
    drained_t d = drain(src, 0, seen, 32);
    ck_assert_int_eq(d.first, 8);
    ck_assert_int_eq(d.count, 12);
    pulsarc_source_destroy(src);
    /* resetSubscriptionCursor: the start cursor wins (earliest → 0). */
    pulsarc_start_cursor_t earliest = pulsarc_start_cursor_earliest();
    pulsarc_source_conf_set_start_cursor(conf, &earliest);
    pulsarc_source_conf_set(conf, "pulsar.source.resetSubscriptionCursor", "true", NULL, 0);
    src = open_source(c, conf, NULL, 0);
    memset(seen, 0, sizeof seen);
    d = drain(src, 0, seen, 32);
    ck_assert_int_eq(d.first, 0);
    ck_assert_int_eq(d.count, 20);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- stop cursors ---------- */

START_TEST(test_stop_latest_ends_including_empty_partition) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-latest");
    partitioned(t, 3);
    pulsarc_producer_t *p0 = producer(c, partition(t, 0), 0);
    pulsarc_producer_t *p1 = producer(c, partition(t, 1), 0);
    send_range(p0, 0, 30, NULL);
    send_range(p1, 30, 40, NULL); /* partition 2 stays empty */
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    pulsarc_source_conf_set_stop_cursor(conf, &stop);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    send_range(p0, 40, 45, NULL); /* after the bound was resolved: not part of the read */
    unsigned char seen[64] = {0};
    uint64_t t0 = now_ms();
    drained_t d = drain(src, 0, seen, 64);
    printf("stop latest: %d messages, ended=%d after %llu ms\n", d.count, d.ended,
           (unsigned long long)(now_ms() - t0));
    ck_assert_int_eq(d.ended, 1);
    ck_assert_int_eq(d.count, 40);
    ck_assert_int_eq(d.dups, 0);
    ck_assert_int_eq(pulsarc_source_is_finished(src), 1);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p0);
    pulsarc_producer_destroy(p1);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_stop_latest_with_start_latest_ends_at_once) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-ll");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 5, NULL);
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    pulsarc_start_cursor_t start = pulsarc_start_cursor_latest();
    pulsarc_source_conf_set_stop_cursor(conf, &stop);
    pulsarc_source_conf_set_start_cursor(conf, &start);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    pulsarc_msg_t *out[4];
    size_t n = 9;
    ck_assert_int_eq(pulsarc_source_fetch(src, out, 4, &n), PULSARC_SOURCE_END_OF_INPUT);
    ck_assert_uint_eq(n, 0);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_stop_latest_frozen_in_checkpoint) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-frozen");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 20, NULL);
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    pulsarc_source_conf_set_stop_cursor(conf, &stop);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    ck_assert_int_eq(drain(src, 8, seen, 64).count, 8);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    pulsarc_source_destroy(src);
    send_range(p, 20, 30, NULL); /* written after the bound was fixed */
    src = open_source(c, conf, blob, len);
    drained_t d = drain(src, 0, seen, 64);
    ck_assert(d.ended && d.count == 12 && d.first == 8 && d.last == 19 && d.dups == 0);
    free(blob);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

static drained_t read_with_stop(pulsarc_client_t *c, const char *t, const char *sub,
                                pulsarc_stop_cursor_t stop, unsigned char *seen) {
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, sub, NULL);
    ck_assert_int_eq(pulsarc_source_conf_set_stop_cursor(conf, &stop), PULSARC_OK);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    drained_t d = drain(src, 0, seen, 64);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    return d;
}

START_TEST(test_stop_at_and_after_message_id) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-stopid");
    pulsarc_producer_t *p = producer(c, t, 0);
    pulsarc_msgid_t ids[20];
    send_range(p, 0, 20, ids);
    unsigned char seen[64] = {0};
    drained_t d = read_with_stop(c, t, "at", pulsarc_stop_cursor_at_id(ids[10]), seen);
    ck_assert(d.ended && d.count == 10 && d.last == 9); /* exclusive */
    memset(seen, 0, sizeof seen);
    d = read_with_stop(c, t, "after", pulsarc_stop_cursor_after_id(ids[10]), seen);
    ck_assert(d.ended && d.count == 11 && d.last == 10); /* inclusive */
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_stop_at_publish_time) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-stoptime");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 10, NULL);
    usleep(30000);
    uint64_t t10 = now_ms();
    usleep(30000);
    send_range(p, 10, 20, NULL);
    unsigned char seen[64] = {0};
    drained_t d = read_with_stop(c, t, "s", pulsarc_stop_cursor_at_publish_time(t10), seen);
    ck_assert(d.ended && d.count == 10 && d.last == 9);
    /* A time bound with nothing at or after it still ends once caught up. */
    const char *t2 = pct_topic("src-stoptime2");
    pulsarc_producer_t *p2 = producer(c, t2, 0);
    send_range(p2, 0, 3, NULL);
    memset(seen, 0, sizeof seen);
    d = read_with_stop(c, t2, "s", pulsarc_stop_cursor_at_publish_time(now_ms()), seen);
    ck_assert(d.ended && d.count == 3);
    pulsarc_producer_destroy(p);
    pulsarc_producer_destroy(p2);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- fetch limits ---------- */

START_TEST(test_fetch_limits) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-fetch");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 30, NULL);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.source.maxFetchRecords", "7", "pulsar.source.maxFetchTime",
                        "1000", NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    pulsarc_msg_t *out[100];
    size_t n = 0;
    ck_assert_int_eq(pulsarc_source_fetch(src, out, 100, &n), PULSARC_OK);
    ck_assert_uint_eq(n, 7); /* maxFetchRecords */
    for (size_t i = 0; i < n; i++)
        pulsarc_msg_destroy(out[i]);
    ck_assert_int_eq(pulsarc_source_fetch(src, out, 3, &n), PULSARC_OK);
    ck_assert_uint_eq(n, 3); /* the caller's capacity */
    for (size_t i = 0; i < n; i++)
        pulsarc_msg_destroy(out[i]);
    unsigned char seen[64] = {0};
    ck_assert_int_eq(drain(src, 20, seen, 64).count, 20);
    /* Caught up, no fetchOneMessageTime: the receive waits out maxFetchTime. */
    uint64_t t0 = now_ms();
    ck_assert_int_eq(pulsarc_source_fetch(src, out, 100, &n), PULSARC_OK);
    uint64_t waited = now_ms() - t0;
    ck_assert_uint_eq(n, 0);
    ck_assert_msg(waited >= 900 && waited < 2500, "waited %llu ms", (unsigned long long)waited);
    pulsarc_source_destroy(src);
    /* fetchOneMessageTime: the first empty receive ends the batch. */
    pulsarc_source_conf_set(conf, "pulsar.source.fetchOneMessageTime", "100", NULL, 0);
    pulsarc_source_conf_set(conf, "pulsar.consumer.subscriptionName", "caught-up", NULL, 0);
    pulsarc_start_cursor_t latest = pulsarc_start_cursor_latest();
    pulsarc_source_conf_set_start_cursor(conf, &latest);
    pulsarc_source_conf_set(conf, "pulsar.source.maxFetchTime", "10000", NULL, 0);
    src = open_source(c, conf, NULL, 0);
    t0 = now_ms();
    ck_assert_int_eq(pulsarc_source_fetch(src, out, 100, &n), PULSARC_OK);
    waited = now_ms() - t0;
    printf("fetchOneMessageTime=100: empty batch after %llu ms\n", (unsigned long long)waited);
    ck_assert_uint_eq(n, 0);
    ck_assert_msg(waited < 1500, "waited %llu ms", (unsigned long long)waited);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- checkpoints ---------- */

START_TEST(test_restore_after_half_gets_exactly_the_other_half) {
    enum { N = 10000 };
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-half");
    partitioned(t, 2);
    pulsarc_producer_t *p = producer(c, t, 0);
    send_async_range(p, 0, N);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.source.maxFetchTime", "3000", NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char *seen = calloc(N, 1);
    drained_t d = drain(src, N / 2, seen, N);
    ck_assert_int_eq(d.count, N / 2);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 7, &blob, &len), PULSARC_OK);
    pulsarc_source_destroy(src); /* no completion: nothing acknowledged */
    src = open_source(c, conf, blob, len);
    d = drain(src, 0, seen, N);
    printf("restored: %d more messages, %d duplicates\n", d.count, d.dups);
    ck_assert_int_eq(d.count, N / 2);
    ck_assert_int_eq(d.dups, 0);
    for (int i = 0; i < N; i++)
        ck_assert_msg(seen[i] == 1, "message %d seen %d times", i, seen[i]);
    free(seen);
    free(blob);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_restore_inside_a_batch) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-batch");
    pulsarc_producer_t *p = producer(c, t, 1);
    send_async_range(p, 0, 20); /* one entry of 20 messages */
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[32] = {0};
    ck_assert_int_eq(drain(src, 3, seen, 32).count, 3); /* up to batch index 2 */
    pulsarc_source_split_metrics_t m;
    ck_assert_int_eq(pulsarc_source_split_metrics(src, 0, &m), PULSARC_OK);
    ck_assert_int_eq(m.last_emitted.batch_index, 2);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    pulsarc_source_destroy(src);
    src = open_source(c, conf, blob, len);
    drained_t d = drain(src, 0, seen, 32);
    ck_assert_int_eq(d.count, 17);
    ck_assert_int_eq(d.first, 3);
    ck_assert_int_eq(d.dups, 0);
    free(blob);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_corrupt_checkpoint_rejected) {
    pulsarc_client_t *c = pct_client();
    const char *topics[] = {pct_topic("src-corrupt"), NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    pulsarc_source_destroy(src);
    ((unsigned char *)blob)[len / 2] ^= 0x10;
    char err[512];
    pulsarc_source_t *bad = NULL;
    ck_assert_int_eq(pulsarc_source_new(c, conf, blob, len, &bad, err, sizeof err),
                     PULSARC_ERR_CHECKSUM);
    ck_assert_ptr_null(bad);
    printf("corrupt checkpoint: %s\n", err);
    free(blob);
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- commits ---------- */

START_TEST(test_commit_on_checkpoint_complete) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-commit");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 30, NULL);
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    drain(src, 10, seen, 64);
    void *b1, *b2;
    size_t l1, l2;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &b1, &l1), PULSARC_OK);
    drain(src, 10, seen, 64);
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 2, &b2, &l2), PULSARC_OK);
    sleep(1);
    ck_assert_int_eq(backlog(t, "s"), 30); /* nothing acknowledged before completion */
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 1), PULSARC_OK);
    ck_assert_int_eq(backlog_settled(t, "s", 20), 20);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 2), PULSARC_OK);
    ck_assert_int_eq(backlog_settled(t, "s", 10), 10);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 1), PULSARC_ERR_NOT_FOUND);
    free(b1);
    free(b2);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_shared_commits_individual_acks) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-shared");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 30, NULL);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.consumer.subscriptionType", "Shared", NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    ck_assert_int_eq(drain(src, 12, seen, 64).count, 12);
    void *b;
    size_t l;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &b, &l), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 1), PULSARC_OK);
    ck_assert_int_eq(backlog_settled(t, "s", 18), 18);
    free(b);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_auto_acknowledge_on_timer) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-autoack");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 25, NULL);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.source.enableAutoAcknowledgeMessage", "true",
                        "pulsar.source.autoCommitCursorInterval", "300",
                        "pulsar.source.maxFetchTime", "400", NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    ck_assert_int_eq(drain(src, 25, seen, 64).count, 25);
    pulsarc_msg_t *out[8];
    size_t n;
    for (int i = 0; i < 3; i++) /* the timer runs inside fetch */
        pulsarc_source_fetch(src, out, 8, &n);
    ck_assert_int_eq(backlog_settled(t, "s", 0), 0);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- restore verification ---------- */

static char logged[1024];
static void capture(void *opaque, pulsarc_source_log_level_t level, const char *line) {
    (void)opaque;
    if (level == PULSARC_SOURCE_LOG_WARN)
        snprintf(logged, sizeof logged, "%s", line);
}

START_TEST(test_verify_initial_offsets) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-verify");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 10, NULL);
    const char *topics[] = {t, NULL};
    const char *kv[] = {"pulsar.source.verifyInitialOffsets", "FAIL_ON_MISMATCH", NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    drain(src, 5, seen, 64);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    pulsarc_source_destroy(src);
    /* The checkpointed data disappears: the topic is deleted and written anew. */
    pulsarc_producer_destroy(p);
    pulsarc_admin_t *a = admin();
    char err[512];
    ck_assert_msg(pulsarc_admin_delete_topic(a, t, 1, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_admin_destroy(a);
    p = producer(c, t, 0);
    send_range(p, 20, 25, NULL);
    pulsarc_source_t *bad = NULL;
    ck_assert_int_eq(pulsarc_source_new(c, conf, blob, len, &bad, err, sizeof err),
                     PULSARC_ERR_NOT_FOUND);
    printf("FAIL_ON_MISMATCH: %s\n", err);
    ck_assert_ptr_nonnull(strstr(err, t));
    pulsarc_source_conf_set(conf, "pulsar.source.verifyInitialOffsets", "WARN_ON_MISMATCH", NULL, 0);
    pulsarc_source_conf_set_log_cb(conf, capture, NULL);
    src = open_source(c, conf, blob, len);
    ck_assert_ptr_nonnull(strstr(logged, "can no longer be read"));
    memset(seen, 0, sizeof seen);
    drained_t d = drain(src, 0, seen, 64);
    ck_assert_int_eq(d.first, 20); /* from the first valid position */
    ck_assert_int_eq(d.count, 5);
    free(blob);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- subscription types, metrics ---------- */

START_TEST(test_subscription_types) {
    static const char *types[] = {"Exclusive", "Shared", "Failover", "Key_Shared"};
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-types");
    partitioned(t, 2);
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 40, NULL);
    for (int k = 0; k < 4; k++) {
        const char *topics[] = {t, NULL};
        const char *kv[] = {"pulsar.consumer.subscriptionType", types[k],
                            "pulsar.source.allowKeySharedOutOfOrderDelivery", "true", NULL};
        pulsarc_source_conf_t *conf = sconf(topics, types[k], kv);
        pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
        pulsarc_source_conf_set_stop_cursor(conf, &stop);
        pulsarc_source_t *src = open_source(c, conf, NULL, 0);
        unsigned char seen[64] = {0};
        drained_t d = drain(src, 0, seen, 64);
        ck_assert_msg(d.ended && d.count == 40 && d.dups == 0, "%s: %d messages, ended %d",
                      types[k], d.count, d.ended);
        pulsarc_source_destroy(src);
        pulsarc_source_conf_destroy(conf);
    }
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_metrics_counts_and_lag) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-metrics");
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, 20, NULL);
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", NULL);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[64] = {0};
    drain(src, 15, seen, 64);
    pulsarc_source_split_metrics_t m;
    ck_assert_int_eq(pulsarc_source_split_metrics(src, 0, &m), PULSARC_OK);
    ck_assert_uint_eq(m.emitted, 15);
    ck_assert_uint_eq(m.emitted_bytes, 10 * 5 + 5 * 6); /* "msg-0".."msg-14" */
    ck_assert_int_eq(m.lag_entries, 5);
    ck_assert_int_ge(m.lag_ms, 0);
    ck_assert_int_eq(m.finished, 0);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_set(conf, "pulsar.source.enableMetrics", "false", NULL, 0);
    src = open_source(c, conf, NULL, 0);
    ck_assert_int_eq(pulsarc_source_split_metrics(src, 0, &m), PULSARC_ERR_UNSUPPORTED);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_conf_keys) {
    pulsarc_source_conf_t *conf = pulsarc_source_conf_new();
    char err[256];
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.source.maxFetchRecords", "0", err,
                                             sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "pulsar.source.maxFetchRecords"));
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.source.nope", "1", err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.consumer.subscriptionType", "Bogus",
                                             err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.source.partitionDiscoveryIntervalMs",
                                             "-1", err, sizeof err), PULSARC_OK);
    pulsarc_stop_cursor_t bad = pulsarc_stop_cursor_at_id(pulsarc_msgid_latest());
    ck_assert_int_eq(pulsarc_source_conf_set_stop_cursor(conf, &bad), PULSARC_ERR_INVALID_ARG);
    pulsarc_client_t *c = pct_client();
    pulsarc_source_t *src = NULL;
    ck_assert_int_eq(pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG); /* no subscription name */
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

/* enableSchemaEvolution: each split declares the application's schema and the broker judges it. */
START_TEST(test_schema_evolution) {
    static const char *v1 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                            "{\"name\":\"a\",\"type\":\"int\"}]}";
    static const char *v2 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                            "{\"name\":\"a\",\"type\":\"int\"},"
                            "{\"name\":\"b\",\"type\":\"long\",\"default\":0}]}";
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("src-schema");
    const char *pkv[] = {"schemaType", "AVRO", "schemaDefinition", v1, "batchingEnabled", "false",
                         NULL};
    pulsarc_conf_t *pconf = pct_conf(pkv);
    pulsarc_producer_t *p = NULL;
    char err[512];
    ck_assert_msg(pulsarc_producer_new(c, t, pconf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    send_range(p, 0, 5, NULL);
    const char *topics[] = {t, NULL};
    const char *ok_kv[] = {"pulsar.source.enableSchemaEvolution", "true",
                           "pulsar.source.schemaType", "AVRO",
                           "pulsar.source.schemaDefinition", v2, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "s", ok_kv);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char seen[8] = {0};
    ck_assert_int_eq(drain(src, 5, seen, 8).count, 5);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    /* A type the topic's schema cannot be read as: refused, naming the split. */
    const char *bad_kv[] = {"pulsar.source.enableSchemaEvolution", "true",
                            "pulsar.source.schemaType", "INT64", NULL};
    conf = sconf(topics, "s2", bad_kv);
    src = NULL;
    pulsarc_err_t e = pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err);
    printf("[source] incompatible schema: %s (%.160s)\n", pulsarc_errname(e), err);
    ck_assert_int_eq(e, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err, t));
    ck_assert_ptr_null(src);
    pulsarc_source_conf_destroy(conf);
    /* Without evolution the schema keys are refused; with it, a type is required. */
    const char *half_kv[] = {"pulsar.source.schemaType", "AVRO", NULL};
    conf = sconf(topics, "s3", half_kv);
    ck_assert_int_eq(pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "enableSchemaEvolution"));
    pulsarc_source_conf_destroy(conf);
    const char *untyped_kv[] = {"pulsar.source.enableSchemaEvolution", "true",
                                "pulsar.source.schemaType", "AVRO", NULL};
    conf = sconf(topics, "s4", untyped_kv);
    ck_assert_int_eq(pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "schemaDefinition"));
    pulsarc_source_conf_destroy(conf);
    pulsarc_conf_destroy(pconf);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- an http:// service URL ---------- */

/* The broker's web URL, given as pulsar.client.serviceUrl below. */
static const char *http_url(void) {
    const char *u = pct_admin_url();
    ck_assert_msg(!strncmp(u, "http://", 7), "PULSAR_ADMIN_URL is not http://: %s", u);
    return u;
}

static pulsarc_err_t ser_text(void *opaque, const void *element, pulsarc_msg_t *m) {
    (void)opaque;
    return pulsarc_msg_set_payload(m, element, strlen(element), PULSARC_MSG_F_COPY);
}

/*
 * A sink whose only broker address is the http:// service URL writes
 * msg-0 .. msg-(n-1) to topic, checkpoints (id 1), completes it (commits,
 * for exactly-once) and closes.
 */
static void http_sink_writes(const char *topic, const char *guarantee, int n) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    const char *topics[] = {topic};
    const char *kv[] = {"pulsar.client.serviceUrl", http_url(),
                        "pulsar.admin.adminUrl", pct_admin_url(),
                        "pulsar.sink.deliveryGuarantee", guarantee,
                        "pulsar.producer.batchingMaxMessages", "16",
                        NULL};
    char err[512], buf[32];
    ck_assert_int_eq(pulsarc_sink_builder_set_topics(b, topics, 1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_serializer(b, ser_text, NULL), PULSARC_OK);
    for (size_t i = 0; kv[i]; i += 2)
        ck_assert_msg(pulsarc_sink_builder_set_config(b, kv[i], kv[i + 1], err, sizeof err) ==
                          PULSARC_OK, "%s: %s", kv[i], err);
    pulsarc_sink_t *sink = NULL;
    ck_assert_msg(pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err) == PULSARC_OK,
                  "build: %s", err);
    pulsarc_sink_builder_destroy(b);
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "msg-%d", i);
        ck_assert_msg(pulsarc_sink_write(sink, buf, 0, err, sizeof err) == PULSARC_OK,
                      "write %d: %s", i, err);
    }
    void *blob = NULL;
    size_t len = 0;
    ck_assert_msg(pulsarc_sink_checkpoint(sink, 1, 60000, &blob, &len, err, sizeof err) ==
                      PULSARC_OK, "checkpoint: %s", err);
    free(blob);
    ck_assert_msg(pulsarc_sink_checkpoint_complete(sink, 1, err, sizeof err) == PULSARC_OK,
                  "complete: %s", err);
    ck_assert_msg(pulsarc_sink_close(sink, err, sizeof err) == PULSARC_OK, "close: %s", err);
    pulsarc_sink_destroy(sink);
}

/* A client made from connector keys alone: pulsar.client.serviceUrl = the http:// URL. */
static pulsarc_client_t *http_client(void) {
    pulsarc_connector_config_t *cfg = pulsarc_connector_config_new();
    char err[512], url[256];
    ck_assert_msg(pulsarc_connector_config_set(cfg, "pulsar.client.serviceUrl", http_url(), err,
                                               sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_t *conf = NULL;
    ck_assert_msg(pulsarc_connector_config_to_client_conf(cfg, &conf, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    size_t len = sizeof url;
    ck_assert_int_eq(pulsarc_conf_get(conf, "serviceUrl", url, &len), PULSARC_OK);
    ck_assert_str_eq(url, http_url());
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "client: %s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_connector_config_destroy(cfg);
    return c;
}

/*
 * Sink then source over HTTP lookup on a 3-partition topic: every message
 * read back once, each partition's split emitting some of them.
 */
static void http_round_trip(const char *guarantee, int n) {
    const char *t = pct_topic("src-http");
    partitioned(t, 3);
    http_sink_writes(t, guarantee, n);
    pulsarc_client_t *c = http_client();
    const char *topics[] = {t, NULL};
    pulsarc_source_conf_t *conf = sconf(topics, "http-sub", NULL);
    pulsarc_start_cursor_t start = pulsarc_start_cursor_earliest();
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest();
    ck_assert_int_eq(pulsarc_source_conf_set_start_cursor(conf, &start), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set_stop_cursor(conf, &stop), PULSARC_OK);
    pulsarc_source_t *src = open_source(c, conf, NULL, 0);
    unsigned char *seen = calloc((size_t)n, 1);
    drained_t d = drain(src, 0, seen, n);
    ck_assert_uint_eq(pulsarc_source_split_count(src), 3);
    uint64_t per[3] = {0};
    for (size_t i = 0; i < 3; i++) {
        pulsarc_source_split_metrics_t m;
        ck_assert_int_eq(pulsarc_source_split_metrics(src, i, &m), PULSARC_OK);
        ck_assert(m.partition >= 0 && m.partition < 3);
        per[m.partition] = m.emitted;
    }
    printf("%s over http: %d of %d read, %d duplicates, ended=%d, per partition %llu/%llu/%llu\n",
           guarantee, d.count, n, d.dups, d.ended, (unsigned long long)per[0],
           (unsigned long long)per[1], (unsigned long long)per[2]);
    ck_assert_int_eq(d.ended, 1);
    ck_assert_int_eq(d.dups, 0);
    ck_assert_int_eq(d.count, n);
    ck_assert(per[0] > 0 && per[1] > 0 && per[2] > 0);
    free(seen);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(c);
}

START_TEST(test_http_service_url_at_least_once_round_trip) { http_round_trip("at-least-once", 300); }
END_TEST

/* The transaction coordinator is found over HTTP too. */
START_TEST(test_http_service_url_exactly_once_round_trip) { http_round_trip("exactly-once", 120); }
END_TEST

static Suite *source_suite(void) {
    Suite *s = suite_create("live-source");
    TCase *tc = tcase_create("source");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_conf_keys);
    tcase_add_test(tc, test_splits_per_partition_and_plain_topic);
    tcase_add_test(tc, test_partition_discovery_adds_new_partitions);
    tcase_add_test(tc, test_start_cursors_on_new_subscriptions);
    tcase_add_test(tc, test_exclusive_start_survives_checkpoint_before_first_message);
    tcase_add_test(tc, test_existing_subscription_continues_unless_reset);
    tcase_add_test(tc, test_stop_latest_ends_including_empty_partition);
    tcase_add_test(tc, test_stop_latest_with_start_latest_ends_at_once);
    tcase_add_test(tc, test_stop_latest_frozen_in_checkpoint);
    tcase_add_test(tc, test_stop_at_and_after_message_id);
    tcase_add_test(tc, test_stop_at_publish_time);
    tcase_add_test(tc, test_fetch_limits);
    tcase_add_test(tc, test_restore_after_half_gets_exactly_the_other_half);
    tcase_add_test(tc, test_restore_inside_a_batch);
    tcase_add_test(tc, test_corrupt_checkpoint_rejected);
    tcase_add_test(tc, test_commit_on_checkpoint_complete);
    tcase_add_test(tc, test_shared_commits_individual_acks);
    tcase_add_test(tc, test_auto_acknowledge_on_timer);
    tcase_add_test(tc, test_verify_initial_offsets);
    tcase_add_test(tc, test_subscription_types);
    tcase_add_test(tc, test_metrics_counts_and_lag);
    tcase_add_test(tc, test_schema_evolution);
    tcase_add_test(tc, test_http_service_url_at_least_once_round_trip);
    tcase_add_test(tc, test_http_service_url_exactly_once_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(source_suite)
