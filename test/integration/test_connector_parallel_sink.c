/*
 * Live-broker behaviour of parallel sink writers (include/pulsarc/sink.h,
 * pulsarc_sink_builder_set_writer): four EXACTLY_ONCE writers, each with its
 * own producers and one transaction per checkpoint, crash between a
 * checkpoint (pre-commit) and its completion (commit); their merged states
 * restore into two writers, which settle every transaction exactly once:
 * each record of the checkpoints appears once, nothing written after the
 * checkpoint appears. A writer's own state restored into another writer
 * count is refused with an error naming the problem. The crash is real: the
 * writers run in a child process that kills itself with SIGKILL.
 *
 * Threads: the test thread drives every writer in turn (a sink is driven
 * by one thread at a time).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pulsarc/admin.h"
#include "pulsarc/sink.h"
#include "testutil.h"

#define WRITERS 4
#define PER_EPOCH 50
/* Record numbers: writer w, epoch e (1..3), j: e * 10000 + w * 1000 + j. */
#define RECORD(e, w, j) ((e) * 10000 + (w) * 1000 + (j))
#define MAX_RECORD 40000

static pulsarc_err_t ser(void *opaque, const void *element, pulsarc_msg_t *m) {
    (void)opaque;
    const char *text = element;
    return pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY);
}

static pulsarc_sink_builder_t *writer_builder_timeout(const char *topic, int index, int count,
                                                      const char *txn_timeout_ms) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    const char *topics[] = {topic};
    char err[256];
    ck_assert_int_eq(pulsarc_sink_builder_set_topics(b, topics, 1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_service_url(b, pct_service_url()), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_admin_url(b, pct_admin_url()), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_serializer(b, ser, NULL), PULSARC_OK);
    const char *kv[] = {"pulsar.sink.deliveryGuarantee", "exactly-once",
                        "pulsar.sink.transactionTimeoutMillis", txn_timeout_ms, NULL};
    for (size_t i = 0; kv[i]; i += 2)
        ck_assert_msg(pulsarc_sink_builder_set_config(b, kv[i], kv[i + 1], err, sizeof err) ==
                          PULSARC_OK, "%s", err);
    ck_assert_msg(pulsarc_sink_builder_set_writer(b, index, count, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    return b;
}

static pulsarc_sink_builder_t *writer_builder(const char *topic, int index, int count) {
    return writer_builder_timeout(topic, index, count, "120000");
}

static pulsarc_sink_t *open_writer(const char *topic, int index, int count, const void *blob,
                                   size_t len) {
    pulsarc_sink_builder_t *b = writer_builder(topic, index, count);
    pulsarc_sink_t *s = NULL;
    char err[512];
    ck_assert_msg(pulsarc_sink_builder_build(b, blob, len, &s, err, sizeof err) == PULSARC_OK,
                  "writer %d of %d: %s", index, count, err);
    pulsarc_sink_builder_destroy(b);
    return s;
}

static void write_epoch(pulsarc_sink_t *s, int epoch, int w) {
    char err[256], text[32];
    for (int j = 0; j < PER_EPOCH; j++) {
        snprintf(text, sizeof text, "r%d", RECORD(epoch, w, j));
        ck_assert_msg(pulsarc_sink_write(s, text, 0, err, sizeof err) == PULSARC_OK, "%s", err);
    }
}

static void *checkpoint(pulsarc_sink_t *s, uint64_t id, size_t *len) {
    void *blob = NULL;
    char err[256];
    ck_assert_msg(pulsarc_sink_checkpoint(s, id, 30000, &blob, len, err, sizeof err) ==
                      PULSARC_OK, "checkpoint %llu: %s", (unsigned long long)id, err);
    return blob;
}

static void complete(pulsarc_sink_t *s, uint64_t id) {
    char err[256];
    ck_assert_msg(pulsarc_sink_checkpoint_complete(s, id, err, sizeof err) == PULSARC_OK,
                  "complete %llu: %s", (unsigned long long)id, err);
}

static pulsarc_consumer_t *committed_reader(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "check", conf, &cons, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

/* Counts each record number received until quiet_ms pass without a message. */
static size_t count_records(pulsarc_consumer_t *cons, unsigned char *seen, int quiet_ms) {
    pulsarc_msg_t *m;
    size_t n = 0;
    while (pulsarc_consumer_receive(cons, &m, quiet_ms) == PULSARC_OK) {
        char b[32];
        size_t l = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
        memcpy(b, pulsarc_msg_payload(m), l);
        b[l] = '\0';
        int k = -1;
        sscanf(b, "r%d", &k);
        ck_assert_msg(k >= 0 && k < MAX_RECORD, "unexpected payload %s", b);
        seen[k]++;
        n++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    return n;
}

/*
 * The four writers' run, in a child process killed with SIGKILL right after
 * epoch 3's writes (no close, no abort: a real crash). Their epoch-2 states
 * come back through fd.
 */
static void crashing_writers(const char *t, int fd) {
    pulsarc_sink_t *w[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        w[i] = open_writer(t, i, WRITERS, NULL, 0);
    for (int i = 0; i < WRITERS; i++) { /* epoch 1: checkpointed and committed */
        write_epoch(w[i], 1, i);
        size_t len;
        free(checkpoint(w[i], 1, &len));
        complete(w[i], 1);
    }
    for (int i = 0; i < WRITERS; i++) { /* epoch 2: checkpointed (pre-commit) */
        write_epoch(w[i], 2, i);
        size_t len;
        void *blob = checkpoint(w[i], 2, &len);
        uint32_t l32 = (uint32_t)len;
        ck_assert(write(fd, &l32, 4) == 4 && write(fd, blob, len) == (ssize_t)len);
        free(blob);
    }
    complete(w[0], 2); /* writer 0 alone commits before the crash */
    for (int i = 0; i < WRITERS; i++) /* epoch 3: after the checkpoint, lost */
        write_epoch(w[i], 3, i);
    for (int i = 0; i < WRITERS; i++)
        ck_assert_int_eq(pulsarc_sink_flush(w[i], 30000, NULL, 0), PULSARC_OK);
    raise(SIGKILL);
}

static int read_full(int fd, void *buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

START_TEST(test_four_writers_crash_before_commit_restored_into_two) {
    const char *t = pct_topic("par-sink");
    pct_create_partitioned(t, 4);
    void *blobs[WRITERS];
    size_t lens[WRITERS];
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork(); /* before any client exists in this process */
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        crashing_writers(t, fds[1]);
    }
    close(fds[1]);
    for (int i = 0; i < WRITERS; i++) {
        uint32_t l32 = 0;
        ck_assert_msg(read_full(fds[0], &l32, 4) == 0 && l32 < 1u << 20,
                      "the writers' process died before checkpoint 2 (writer %d)", i);
        lens[i] = l32;
        blobs[i] = malloc(l32);
        ck_assert_int_eq(read_full(fds[0], blobs[i], l32), 0);
    }
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the writers' process should have been killed, status %d", status);
    /* A writer's own state does not restore into another writer count. */
    pulsarc_sink_builder_t *b = writer_builder(t, 1, 2);
    pulsarc_sink_t *bad = NULL;
    char err[512];
    ck_assert_int_eq(pulsarc_sink_builder_build(b, blobs[1], lens[1], &bad, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "writer 1 of 4") && strstr(err, "merge"), "%s", err);
    pulsarc_sink_builder_destroy(b);
    /* Restore into two writers from the merged states. */
    void *merged = NULL;
    size_t mlen = 0;
    ck_assert_msg(pulsarc_sink_state_merge((const void *const *)blobs, lens, WRITERS, &merged,
                                           &mlen, err, sizeof err) == PULSARC_OK, "%s", err);
    uint64_t committed = 0, aborted = 0, found = 0;
    for (int i = 0; i < 2; i++) {
        pulsarc_sink_t *r = open_writer(t, i, 2, merged, mlen);
        pulsarc_sink_stats_t st;
        ck_assert_int_eq(pulsarc_sink_stats(r, &st), PULSARC_OK);
        committed += st.txn_committed;
        aborted += st.txn_aborted;
        found += st.txn_found_committed;
        ck_assert_msg(pulsarc_sink_close(r, err, sizeof err) == PULSARC_OK, "%s", err);
        pulsarc_sink_destroy(r);
    }
    pulsarc_client_t *c = pct_client();
    pulsarc_consumer_t *cons = committed_reader(c, t);
    fprintf(stderr, "[parallel-sink] restored into 2 writers: %llu committed, %llu aborted, "
            "%llu found committed\n", (unsigned long long)committed, (unsigned long long)aborted,
            (unsigned long long)found);
    /* writer 0's was committed before the crash: the coordinator forgot it, the check found it committed */
    ck_assert_uint_eq(committed, WRITERS - 1);
    ck_assert_uint_eq(found, 1);
    /* each blob names two to abort: epoch 3's (holding the lost writes) and epoch 4's (reserved) */
    ck_assert_uint_eq(aborted, 2 * WRITERS);
    unsigned char *seen = calloc(MAX_RECORD, 1);
    size_t n = count_records(cons, seen, 4000);
    ck_assert_uint_eq(n, 2 * WRITERS * PER_EPOCH);
    for (int e = 1; e <= 3; e++)
        for (int i = 0; i < WRITERS; i++)
            for (int j = 0; j < PER_EPOCH; j++)
                ck_assert_msg(seen[RECORD(e, i, j)] == (e < 3),
                              "record of epoch %d, writer %d, #%d seen %d times", e, i, j,
                              seen[RECORD(e, i, j)]);
    free(seen);
    free(merged);
    for (int i = 0; i < WRITERS; i++)
        free(blobs[i]);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* The first "commit" transaction a sink state names (the documented little-endian layout). */
static void first_commit_txn(const uint8_t *b, size_t len, uint64_t *most, uint64_t *least) {
    ck_assert_uint_ge(len, 20 + 25 + 4);
    uint64_t v[2] = {0, 0};
    for (int f = 0; f < 2; f++)
        for (int i = 7; i >= 0; i--)
            v[f] = v[f] << 8 | b[20 + 8 + 8 * f + i];
    ck_assert_int_eq(b[20 + 24], 1); /* fate: commit */
    *most = v[0];
    *least = v[1];
}

/*
 * A checkpointed transaction outlives its timeout before the restore: the
 * coordinator aborts and forgets it. The restore must not take it as
 * committed: it fails naming the abort.
 */
START_TEST(test_forgotten_aborted_transaction_is_reported) {
    const char *t = pct_topic("par-sink-lost");
    pct_create_partitioned(t, 2);
    pulsarc_sink_builder_t *b = writer_builder_timeout(t, 0, 1, "2000");
    pulsarc_sink_t *w = NULL;
    char err[512];
    ck_assert_msg(pulsarc_sink_builder_build(b, NULL, 0, &w, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    write_epoch(w, 1, 0);
    size_t len;
    uint8_t *blob = checkpoint(w, 1, &len);
    pulsarc_sink_destroy(w); /* a crash before completion: the transaction stays open */
    uint64_t most, least;
    first_commit_txn(blob, len, &most, &least);
    pulsarc_admin_t *a = NULL;
    ck_assert_msg(pulsarc_admin_new(NULL, &a, err, sizeof err) == PULSARC_OK, "%s", err);
    /* The sink routes a short run to one partition (batch boundaries); the other
     * may never have been created: ask both, a missing one knows nothing. */
    int aborted = 0;
    for (int i = 0; i < 600 && !aborted; i++) { /* the coordinator's timeout (hang bound 60 s) */
        for (int p = 0; p < 2 && !aborted; p++) {
            char part[512];
            int ongoing = 0;
            snprintf(part, sizeof part, "%s-partition-%d", t, p);
            pulsarc_err_t e = pulsarc_admin_txn_in_buffer(a, part, most, least, &aborted,
                                                          &ongoing, err, sizeof err);
            ck_assert_msg(e == PULSARC_OK || e == PULSARC_ERR_NOT_FOUND, "%s", err);
        }
        if (!aborted)
            usleep(100 * 1000);
    }
    ck_assert_msg(aborted, "the transaction did not time out");
    pulsarc_admin_destroy(a);
    pulsarc_sink_t *r = NULL;
    pulsarc_err_t e = pulsarc_sink_builder_build(b, blob, len, &r, err, sizeof err);
    fprintf(stderr, "[parallel-sink] restore of a timed-out transaction: %s: %s\n",
            pulsarc_errname(e), err);
    ck_assert_int_ne(e, PULSARC_OK);
    ck_assert_msg(strstr(err, "abort") != NULL, "%s", err);
    pulsarc_sink_builder_destroy(b);
    free(blob);
}
END_TEST

START_TEST(test_writer_index_out_of_range) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    char err[256];
    ck_assert_int_eq(pulsarc_sink_builder_set_writer(b, 2, 2, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "writer index 2 is out of range for 2 writers") != NULL, "%s", err);
    ck_assert_int_eq(pulsarc_sink_builder_set_writer(b, 0, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "writer count 0") != NULL, "%s", err);
    pulsarc_sink_builder_destroy(b);
}
END_TEST

static Suite *parallel_sink_suite(void) {
    Suite *s = suite_create("live-connector-parallel-sink");
    TCase *tc = tcase_create("parallel-sink");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_writer_index_out_of_range);
    tcase_add_test(tc, test_four_writers_crash_before_commit_restored_into_two);
    tcase_add_test(tc, test_forgotten_aborted_transaction_is_reported);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(parallel_sink_suite)
