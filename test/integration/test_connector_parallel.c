/*
 * Live-broker behaviour of parallel source readers (include/pulsarc/source.h,
 * "Parallel readers"): N sources on one subscription, each told its index,
 * read every message exactly once between them; their checkpoints, merged,
 * restore into more or fewer readers with nothing lost or repeated; a
 * partition added while they run is read by exactly one of them (also when
 * that reader owned no split before); Shared and
 * Key_Shared readers share the subscription (Key_Shared keeps each key's
 * order); bad reader indexes and checkpoints of another reader, another
 * topic set or a newer format are refused with errors naming the problem.
 *
 * Threads: each reader runs on a thread of its own (a source is driven by
 * one thread at a time) and writes only its own record; the test thread
 * reads the records after joining.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pulsarc/connector.h"
#include "pulsarc/source.h"
#include "testutil.h"

#define MAX_READERS 8
/* Hang bound of one reader's loop (fetches of at most maxFetchTime each). */
#define MAX_FETCHES 600

/* ---------- producing ---------- */

static pulsarc_producer_t *producer(pulsarc_client_t *c, const char *topic, int batch) {
    const char *plain[] = {"batchingEnabled", "false", NULL};
    const char *batched[] = {"batchingEnabled", "true", "batchingMaxMessages", "10", NULL};
    pulsarc_conf_t *conf = pct_conf(batch ? batched : plain);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

/* Sends msg-from .. msg-(to-1); with nkeys > 0 message i has key "k<i mod nkeys>". */
static void send_range(pulsarc_producer_t *p, int from, int to, int nkeys) {
    for (int i = from; i < to; i++) {
        char b[32], k[16];
        snprintf(b, sizeof b, "msg-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, b, strlen(b), PULSARC_MSG_F_COPY);
        if (nkeys > 0) {
            snprintf(k, sizeof k, "k%d", i % nkeys);
            ck_assert_int_eq(pulsarc_msg_set_key(m, k), PULSARC_OK);
        }
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, NULL, NULL), PULSARC_OK);
        if ((i - from) % 500 == 499)
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

/* ---------- readers ---------- */

static pulsarc_source_conf_t *reader_conf(const char *topic, const char *sub, const char *type,
                                          int index, int count, const char *const *kv) {
    pulsarc_source_conf_t *c = pulsarc_source_conf_new();
    char err[256];
    ck_assert_int_eq(pulsarc_source_conf_add_topic(c, topic), PULSARC_OK);
    const char *base[] = {"pulsar.consumer.subscriptionName", sub,
                          "pulsar.consumer.subscriptionType", type,
                          "pulsar.source.maxFetchTime", "500",
                          "pulsar.source.fetchOneMessageTime", "200", NULL};
    for (size_t i = 0; base[i]; i += 2)
        ck_assert_int_eq(pulsarc_source_conf_set(c, base[i], base[i + 1], err, sizeof err),
                         PULSARC_OK);
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_msg(pulsarc_source_conf_set(c, kv[i], kv[i + 1], err, sizeof err) == PULSARC_OK,
                      "%s", err);
    ck_assert_msg(pulsarc_source_conf_set_reader(c, index, count, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    return c;
}

/* One reader and what it saw; written only by its own thread while it runs. */
typedef struct reader {
    pulsarc_source_t *src;
    int index, max;          /* max: message indexes are 0..max-1 */
    int quota;               /* stop after this many (0: at end of input, or when *total_done) */
    int checkpoint;          /* after the quota: checkpoint, then fetch once more (lost in a crash) */
    void *blob;
    size_t len;
    int count, ended;
    unsigned char *seen;     /* per message index, counted up to the checkpoint */
    int *keys_last;          /* Key_Shared: last index seen per key (-1 none) */
    int nkeys, out_of_order;
    atomic_int *total;       /* shared count of messages read by every reader (may be NULL) */
    int total_want;          /* stop once *total reaches it */
} reader_t;

static void record(reader_t *r, const pulsarc_msg_t *m) {
    int x = index_of(m);
    ck_assert_msg(x >= 0 && x < r->max, "unexpected payload in reader %d", r->index);
    r->seen[x]++;
    r->count++;
    if (r->nkeys > 0) {
        int k = x % r->nkeys;
        r->out_of_order += r->keys_last[k] > x;
        r->keys_last[k] = x;
    }
    if (r->total)
        atomic_fetch_add(r->total, 1);
}

static int done(const reader_t *r) {
    if (r->quota > 0)
        return r->count >= r->quota;
    return r->total && atomic_load(r->total) >= r->total_want;
}

/* Fetches up to cap messages and records them (record=0: fetched and dropped). */
static pulsarc_err_t fetch_once(reader_t *r, size_t cap, int keep) {
    pulsarc_msg_t *out[100];
    size_t n = 0;
    pulsarc_err_t e = pulsarc_source_fetch(r->src, out, cap < 100 ? cap : 100, &n);
    if (e == PULSARC_SOURCE_END_OF_INPUT)
        return e;
    ck_assert_msg(e == PULSARC_OK, "reader %d fetch: %s", r->index, pulsarc_errname(e));
    for (size_t i = 0; i < n; i++) {
        if (keep)
            record(r, out[i]);
        pulsarc_msg_destroy(out[i]);
    }
    return e;
}

static void *run_reader(void *arg) {
    reader_t *r = arg;
    for (int i = 0; i < MAX_FETCHES && !done(r); i++) {
        size_t cap = r->quota > 0 ? (size_t)(r->quota - r->count) : 100;
        if (fetch_once(r, cap, 1) == PULSARC_SOURCE_END_OF_INPUT) {
            r->ended = 1;
            break;
        }
    }
    if (r->checkpoint) {
        ck_assert_int_eq(pulsarc_source_checkpoint(r->src, 1, &r->blob, &r->len), PULSARC_OK);
        if (!r->ended)
            fetch_once(r, 100, 0); /* emitted after the checkpoint: a crash loses them */
    }
    return NULL;
}

static void run_all(reader_t *rs, int n) {
    pthread_t th[MAX_READERS];
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, run_reader, &rs[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

static pulsarc_source_t *open_reader(pulsarc_client_t *c, const pulsarc_source_conf_t *conf,
                                     const void *blob, size_t len) {
    pulsarc_source_t *s = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_source_new(c, conf, blob, len, &s, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "source_new: %s (%s)", pulsarc_errname(e), err);
    return s;
}

/* Every split a reader holds is one the assignment rule gives it. */
static void assert_owned_splits(reader_t *r, int readers, size_t want) {
    size_t n = pulsarc_source_split_count(r->src);
    ck_assert_uint_eq(n, want);
    for (size_t i = 0; i < n; i++) {
        pulsarc_source_split_metrics_t m;
        ck_assert_int_eq(pulsarc_source_split_metrics(r->src, i, &m), PULSARC_OK);
        ck_assert_int_eq(pulsarc_source_split_owner(m.topic, m.partition, (uint32_t)readers),
                         r->index);
    }
}

/* Opens n readers (index i of n) from blob, each with its own record over max messages. */
static void open_readers(pulsarc_client_t *c, reader_t *rs, int n, const char *topic,
                         const char *sub, const char *type, const void *blob, size_t len,
                         int max) {
    const char *kv[] = {"pulsar.source.verifyInitialOffsets", "FAIL_ON_MISMATCH", NULL};
    for (int i = 0; i < n; i++) {
        memset(&rs[i], 0, sizeof rs[i]);
        pulsarc_source_conf_t *conf = reader_conf(topic, sub, type, i, n, kv);
        rs[i].src = open_reader(c, conf, blob, len);
        pulsarc_source_conf_destroy(conf);
        rs[i].index = i;
        rs[i].max = max;
        rs[i].seen = calloc((size_t)max, 1);
    }
}

/* Adds what each reader counted into seen; returns the merged checkpoint of their blobs. */
static void *close_readers(reader_t *rs, int n, unsigned char *seen, int max, size_t *len) {
    const void *blobs[MAX_READERS];
    size_t lens[MAX_READERS];
    for (int i = 0; i < n; i++) {
        for (int x = 0; x < max; x++)
            seen[x] += rs[i].seen[x];
        pulsarc_source_destroy(rs[i].src);
        free(rs[i].seen);
        blobs[i] = rs[i].blob;
        lens[i] = rs[i].len;
    }
    void *merged = NULL;
    char err[512] = "";
    *len = 0;
    if (rs[0].blob)
        ck_assert_msg(pulsarc_source_checkpoint_merge(blobs, lens, (size_t)n, &merged, len, err,
                                                      sizeof err) == PULSARC_OK, "%s", err);
    for (int i = 0; i < n; i++)
        free(rs[i].blob);
    return merged;
}

/* ---------- Exclusive / Failover: splits divided, restore into 3 and 6 ---------- */

#define PARTS 12
#define PER_PART 100
#define TOTAL (PARTS * PER_PART)

static void divided_then_restored(const char *type) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("par-div");
    pct_create_partitioned(t, PARTS);
    pulsarc_producer_t *p = producer(c, t, 1);
    send_range(p, 0, TOTAL, 0);
    pulsarc_stop_cursor_t stop = pulsarc_stop_cursor_latest(); /* frozen in the checkpoints */
    unsigned char seen[TOTAL] = {0};
    reader_t rs[MAX_READERS];
    /* 4 readers, 3 partitions each, a third of the way; then a crash. */
    const char *kv_verify[] = {"pulsar.source.verifyInitialOffsets", "FAIL_ON_MISMATCH", NULL};
    for (int i = 0; i < 4; i++) {
        memset(&rs[i], 0, sizeof rs[i]);
        pulsarc_source_conf_t *conf = reader_conf(t, "par", type, i, 4, kv_verify);
        ck_assert_int_eq(pulsarc_source_conf_set_stop_cursor(conf, &stop), PULSARC_OK);
        rs[i].src = open_reader(c, conf, NULL, 0);
        pulsarc_source_conf_destroy(conf);
        rs[i].index = i;
        rs[i].max = TOTAL;
        rs[i].seen = calloc(TOTAL, 1);
        rs[i].quota = 100;
        rs[i].checkpoint = 1;
        assert_owned_splits(&rs[i], 4, 3);
    }
    run_all(rs, 4);
    size_t len4;
    void *merged4 = close_readers(rs, 4, seen, TOTAL, &len4);
    /* 3 readers, 4 partitions each, resume after what the 4 emitted; another crash. */
    open_readers(c, rs, 3, t, "par", type, merged4, len4, TOTAL);
    for (int i = 0; i < 3; i++) {
        assert_owned_splits(&rs[i], 3, 4);
        rs[i].quota = 150;
        rs[i].checkpoint = 1;
    }
    run_all(rs, 3);
    size_t len3;
    void *merged3 = close_readers(rs, 3, seen, TOTAL, &len3);
    /* 6 readers, 2 partitions each, to the end. */
    open_readers(c, rs, 6, t, "par", type, merged3, len3, TOTAL);
    for (int i = 0; i < 6; i++)
        assert_owned_splits(&rs[i], 6, 2);
    run_all(rs, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(rs[i].ended, "reader %d of 6 did not reach the end of its splits", i);
    size_t none;
    ck_assert_ptr_null(close_readers(rs, 6, seen, TOTAL, &none));
    int missing = 0, repeated = 0;
    for (int x = 0; x < TOTAL; x++) {
        missing += seen[x] == 0;
        repeated += seen[x] > 1;
    }
    ck_assert_msg(missing == 0 && repeated == 0, "%s: %d messages missing, %d repeated", type,
                  missing, repeated);
    free(merged4);
    free(merged3);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}

START_TEST(test_exclusive_four_readers_restored_into_three_then_six) {
    divided_then_restored("Exclusive");
}
END_TEST

START_TEST(test_failover_four_readers_restored_into_three_then_six) {
    divided_then_restored("Failover");
}
END_TEST

/* ---------- discovery ---------- */

START_TEST(test_added_partition_read_by_exactly_one_reader) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("par-disc");
    pct_create_partitioned(t, 2);
    enum { N = 3, MSGS = 20 };
    const char *kv[] = {"pulsar.source.partitionDiscoveryIntervalMs", "300", NULL};
    reader_t rs[N];
    atomic_int total = 0;
    for (int i = 0; i < N; i++) {
        memset(&rs[i], 0, sizeof rs[i]);
        pulsarc_source_conf_t *conf = reader_conf(t, "par", "Exclusive", i, N, kv);
        rs[i].src = open_reader(c, conf, NULL, 0);
        pulsarc_source_conf_destroy(conf);
        rs[i].index = i;
        rs[i].max = MSGS;
        rs[i].seen = calloc(MSGS, 1);
        rs[i].total = &total;
        rs[i].total_want = MSGS;
    }
    /* Partitions 0 and 1 went to two readers; the owner of the coming partition 2
     * has none yet, and must wait for discovery instead of ending. */
    int owner = pulsarc_source_split_owner(t, 2, N);
    ck_assert(owner >= 0 && owner < N);
    ck_assert_uint_eq(pulsarc_source_split_count(rs[owner].src), 0);
    ck_assert_int_eq(pulsarc_source_is_finished(rs[owner].src), 0);
    pulsarc_msg_t *none[4];
    size_t got = 9;
    ck_assert_int_eq(pulsarc_source_fetch(rs[owner].src, none, 4, &got), PULSARC_OK);
    ck_assert_uint_eq(got, 0);
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", t);
    int code = pct_admin("POST", path, "3");
    ck_assert_msg(code == 204 || code == 200, "update partitions: HTTP %d", code);
    char part2[512];
    snprintf(part2, sizeof part2, "%s-partition-2", t);
    pulsarc_producer_t *p = producer(c, part2, 0);
    send_range(p, 0, MSGS, 0);
    run_all(rs, N);
    size_t splits = 0;
    for (int i = 0; i < N; i++) {
        splits += pulsarc_source_split_count(rs[i].src);
        ck_assert_int_eq(rs[i].count, i == owner ? MSGS : 0);
    }
    ck_assert_uint_eq(splits, 3); /* the new partition joined one reader only */
    for (int x = 0; x < MSGS; x++)
        ck_assert_int_eq(rs[owner].seen[x], 1);
    for (int i = 0; i < N; i++) {
        pulsarc_source_destroy(rs[i].src);
        free(rs[i].seen);
    }
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- Shared / Key_Shared: one subscription, N readers ---------- */

static void shared_readers(const char *type, int nkeys) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("par-shared");
    pct_create_partitioned(t, 2);
    enum { N = 3, MSGS = 600 };
    reader_t rs[N];
    atomic_int total = 0;
    for (int i = 0; i < N; i++) { /* every reader subscribed before the first message */
        memset(&rs[i], 0, sizeof rs[i]);
        pulsarc_source_conf_t *conf = reader_conf(t, "par", type, i, N, NULL);
        rs[i].src = open_reader(c, conf, NULL, 0);
        pulsarc_source_conf_destroy(conf);
        ck_assert_uint_eq(pulsarc_source_split_count(rs[i].src), 2); /* every partition */
        rs[i].index = i;
        rs[i].max = MSGS;
        rs[i].seen = calloc(MSGS, 1);
        rs[i].total = &total;
        rs[i].total_want = MSGS;
        rs[i].nkeys = nkeys;
        rs[i].keys_last = malloc((size_t)(nkeys > 0 ? nkeys : 1) * sizeof(int));
        for (int k = 0; k < nkeys; k++)
            rs[i].keys_last[k] = -1;
    }
    pulsarc_producer_t *p = producer(c, t, 0);
    send_range(p, 0, MSGS, nkeys);
    run_all(rs, N);
    for (int i = 0; i < N; i++) /* anything delivered twice would come now */
        fetch_once(&rs[i], 100, 1);
    int readers_used = 0;
    for (int x = 0; x < MSGS; x++) {
        int got = 0;
        for (int i = 0; i < N; i++)
            got += rs[i].seen[x];
        ck_assert_msg(got == 1, "%s: message %d read %d times", type, x, got);
    }
    for (int i = 0; i < N; i++) {
        readers_used += rs[i].count > 0;
        ck_assert_msg(rs[i].out_of_order == 0, "%s: reader %d saw %d keys out of order", type, i,
                      rs[i].out_of_order);
        pulsarc_source_destroy(rs[i].src);
        free(rs[i].seen);
        free(rs[i].keys_last);
    }
    ck_assert_msg(readers_used >= 2, "%s: one reader got every message", type);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}

START_TEST(test_shared_readers_each_message_once) { shared_readers("Shared", 0); }
END_TEST

START_TEST(test_key_shared_readers_each_message_once_keys_in_order) {
    shared_readers("Key_Shared", 20);
}
END_TEST

/* ---------- bad input ---------- */

static pulsarc_err_t try_open(pulsarc_client_t *c, const pulsarc_source_conf_t *conf,
                              const void *blob, size_t len, char *err, size_t errlen) {
    pulsarc_source_t *s = NULL;
    pulsarc_err_t e = pulsarc_source_new(c, conf, blob, len, &s, err, errlen);
    pulsarc_source_destroy(s);
    return e;
}

START_TEST(test_bad_reader_index_and_foreign_checkpoints) {
    char err[512];
    pulsarc_source_conf_t *bad = pulsarc_source_conf_new();
    ck_assert_int_eq(pulsarc_source_conf_set_reader(bad, 4, 4, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "reader index 4 is out of range for 4 readers"));
    ck_assert_int_eq(pulsarc_source_conf_set_reader(bad, -1, 4, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_int_eq(pulsarc_source_conf_set_reader(bad, 0, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "reader count 0"));
    pulsarc_source_conf_destroy(bad);

    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("par-bad"), *other = pct_topic("par-other");
    pct_create_partitioned(t, 4);
    pct_create_partitioned(other, 4);
    void *blobs[2];
    size_t lens[2];
    for (int i = 0; i < 2; i++) {
        pulsarc_source_conf_t *conf = reader_conf(t, "par", "Exclusive", i, 2, NULL);
        pulsarc_source_t *s = open_reader(c, conf, NULL, 0);
        ck_assert_int_eq(pulsarc_source_checkpoint(s, 1, &blobs[i], &lens[i]), PULSARC_OK);
        pulsarc_source_destroy(s);
        pulsarc_source_conf_destroy(conf);
    }
    /* Reader 0 of 2's blob into reader 0 of 3: the other reader's splits would be lost. */
    pulsarc_source_conf_t *conf3 = reader_conf(t, "par", "Exclusive", 0, 3, NULL);
    ck_assert_int_eq(try_open(c, conf3, blobs[0], lens[0], err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "reader 0 of 2") && strstr(err, "merge"), "%s", err);
    /* Merging: a reader missing, a reader twice. */
    void *merged = NULL;
    size_t mlen = 0;
    const void *one[1] = {blobs[0]};
    ck_assert_int_eq(pulsarc_source_checkpoint_merge(one, lens, 1, &merged, &mlen, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "reader 0 of 2") != NULL, "%s", err);
    const void *twice[2] = {blobs[0], blobs[0]};
    size_t twice_lens[2] = {lens[0], lens[0]};
    ck_assert_int_eq(pulsarc_source_checkpoint_merge(twice, twice_lens, 2, &merged, &mlen, err,
                                                     sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "given twice") != NULL, "%s", err);
    const void *both[2] = {blobs[1], blobs[0]};
    size_t both_lens[2] = {lens[1], lens[0]};
    ck_assert_int_eq(pulsarc_source_checkpoint_merge(both, both_lens, 2, &merged, &mlen, err,
                                                     sizeof err), PULSARC_OK);
    /* The merged blob restores into any reader, but not on another topic set. */
    ck_assert_int_eq(try_open(c, conf3, merged, mlen, err, sizeof err), PULSARC_OK);
    pulsarc_source_conf_t *elsewhere = reader_conf(other, "par", "Exclusive", 0, 1, NULL);
    ck_assert_int_eq(try_open(c, elsewhere, merged, mlen, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "another topic set") != NULL, "%s", err);
    /* A format newer than this library's. */
    unsigned char *newer = malloc(mlen);
    memcpy(newer, merged, mlen);
    newer[4] = 9;
    ck_assert_int_eq(try_open(c, conf3, newer, mlen, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "version 9") != NULL, "%s", err);
    free(newer);
    free(merged);
    pulsarc_source_conf_destroy(elsewhere);
    pulsarc_source_conf_destroy(conf3);
    free(blobs[0]);
    free(blobs[1]);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *parallel_suite(void) {
    Suite *s = suite_create("live-connector-parallel");
    TCase *tc = tcase_create("parallel");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_bad_reader_index_and_foreign_checkpoints);
    tcase_add_test(tc, test_exclusive_four_readers_restored_into_three_then_six);
    tcase_add_test(tc, test_failover_four_readers_restored_into_three_then_six);
    tcase_add_test(tc, test_added_partition_read_by_exactly_one_reader);
    tcase_add_test(tc, test_shared_readers_each_message_once);
    tcase_add_test(tc, test_key_shared_readers_each_message_once_keys_in_order);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(parallel_suite)
