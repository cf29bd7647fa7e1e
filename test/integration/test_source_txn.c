/*
 * Live-broker behaviour of a Shared source whose client has transactions
 * (lib/connector/source_txn.c): a checkpoint's acknowledgements wait in
 * its transaction until completion; a source killed between checkpoint and
 * completion and restored from either of its last two blobs emits every
 * message the restored checkpoint does not cover exactly once more, and
 * none that it covers.
 *
 * The doomed source runs in a forked child that makes its own client and
 * dies by SIGKILL, so nothing of it is closed cleanly; it hands its blobs
 * and what it emitted to the test through a pipe (no temporary files).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pulsarc/admin.h"
#include "pulsarc/source.h"
#include "testutil.h"

#define N_MSGS 40

static const char *const txn_kv[] = {"enableTransaction", "true", NULL};

static int index_of(const pulsarc_msg_t *m) {
    char b[32];
    size_t n = pulsarc_msg_len(m) < 31 ? pulsarc_msg_len(m) : 31;
    memcpy(b, pulsarc_msg_payload(m), n);
    b[n] = '\0';
    int i = -1;
    sscanf(b, "msg-%d", &i);
    return i;
}

static pulsarc_source_conf_t *shared_conf(const char *topic) {
    pulsarc_source_conf_t *c = pulsarc_source_conf_new();
    const char *kv[] = {"pulsar.consumer.subscriptionName", "s",
                        "pulsar.consumer.subscriptionType", "Shared",
                        "pulsar.source.maxFetchTime", "1500",
                        "pulsar.source.transactionTimeoutMillis", "300000", NULL};
    if (!c || pulsarc_source_conf_add_topic(c, topic))
        return NULL;
    for (size_t i = 0; kv[i]; i += 2)
        if (pulsarc_source_conf_set(c, kv[i], kv[i + 1], NULL, 0))
            return NULL;
    return c;
}

/* Fetches until want messages arrived or two fetches came back empty; marks seen[]. */
static int fetch_upto(pulsarc_source_t *src, int want, int *seen, int *order, int *norder) {
    pulsarc_msg_t *out[64];
    int got = 0;
    for (int idle = 0; idle < 2 && got < want;) {
        size_t cap = (size_t)(want - got < 64 ? want - got : 64), n = 0;
        if (pulsarc_source_fetch(src, out, cap, &n) != PULSARC_OK)
            return -1;
        idle = n ? 0 : idle + 1;
        for (size_t i = 0; i < n; i++, got++) {
            int x = index_of(out[i]);
            if (x >= 0 && x < N_MSGS)
                seen[x]++;
            if (order)
                order[(*norder)++] = x;
            pulsarc_msg_destroy(out[i]);
        }
    }
    return got;
}

/* ---------- the doomed source (child process, no Check calls) ---------- */

static int put(int fd, const void *p, size_t n) {
    const char *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int put_blob(int fd, const void *b, size_t len) {
    uint32_t l = (uint32_t)len;
    return put(fd, &l, sizeof l) || put(fd, b, len);
}

static int send_all(pulsarc_client_t *c, const char *topic) {
    pulsarc_producer_t *p = NULL;
    if (pulsarc_producer_new(c, topic, NULL, &p, NULL, 0))
        return -1;
    for (int i = 0; i < N_MSGS; i++) {
        char b[32];
        snprintf(b, sizeof b, "msg-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, b, strlen(b), PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
        pulsarc_msg_destroy(m);
        if (e)
            return -1;
    }
    pulsarc_producer_destroy(p);
    return 0;
}

/* Emits 15, checkpoint 1, 10 more, checkpoint 2, 5 more; neither completes. */
static int doomed_source(const char *topic, int fd) {
    pulsarc_client_t *c = pct_client_with(txn_kv);
    pulsarc_source_conf_t *conf = shared_conf(topic);
    pulsarc_source_t *src = NULL;
    if (!c || !conf || send_all(c, topic) || pulsarc_source_new(c, conf, NULL, 0, &src, NULL, 0))
        return 2;
    int seen[N_MSGS] = {0}, order[N_MSGS], n = 0;
    const int steps[3] = {15, 10, 5};
    for (int k = 0; k < 3; k++) {
        if (fetch_upto(src, steps[k], seen, order, &n) != steps[k])
            return 3;
        if (k == 2)
            break;
        void *blob;
        size_t len;
        if (pulsarc_source_checkpoint(src, (uint64_t)k + 1, &blob, &len) || put_blob(fd, blob, len))
            return 4;
        free(blob);
    }
    if (put(fd, order, sizeof order))
        return 5;
    kill(getpid(), SIGKILL);
    return 6;
}

typedef struct handoff {
    void *blob[2];
    size_t len[2];
    int order[N_MSGS]; /* indexes in emission order: 15 before checkpoint 1, 10 before 2, 5 after */
} handoff_t;

static void get(int fd, void *p, size_t n) {
    char *b = p;
    while (n) {
        ssize_t k = read(fd, b, n);
        ck_assert_msg(k > 0, "the doomed source died early");
        b += k;
        n -= (size_t)k;
    }
}

static void run_doomed_source(const char *topic, handoff_t *h) {
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork(); /* before this process makes any client */
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(doomed_source(topic, fds[1]));
    }
    close(fds[1]);
    for (int i = 0; i < 2; i++) {
        uint32_t l;
        get(fds[0], &l, sizeof l);
        h->len[i] = l;
        h->blob[i] = malloc(l);
        get(fds[0], h->blob[i], l);
    }
    get(fds[0], h->order, sizeof h->order);
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "source did not die as planned (exit %d)", WEXITSTATUS(status));
}

static int64_t backlog(const char *topic) {
    pulsarc_admin_t *a = NULL;
    char err[256];
    ck_assert_msg(pulsarc_admin_new(NULL, &a, err, sizeof err) == PULSARC_OK, "%s", err);
    int64_t b = -1;
    ck_assert_msg(pulsarc_admin_subscription_backlog(a, topic, "s", &b, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    pulsarc_admin_destroy(a);
    return b;
}

/* The backlog once it equals want, or the last seen after 30 s: a commit's
 * acknowledgments (and transaction commits) reach the broker's cursor a
 * moment later, longer on a loaded machine. */
static int64_t backlog_settled(const char *topic, int64_t want) {
    int64_t b = backlog(topic);
    for (int i = 0; i < 300 && b != want; i++) {
        usleep(100 * 1000);
        b = backlog(topic);
    }
    return b;
}

/*
 * Restores from blob `which` (0: checkpoint 1, covering the first 15
 * emitted; 1: checkpoint 2, covering 25) and checks the restored source
 * emits exactly the others, once each; then its completion empties the
 * backlog.
 */
static void restore_and_check(int which) {
    const char *t = pct_topic("src-txn-kill");
    handoff_t h;
    run_doomed_source(t, &h);
    int covered = which ? 25 : 15;
    printf("[source-txn] topic %s\n", t);
    pulsarc_client_t *c = pct_client_with(txn_kv);
    pulsarc_source_conf_t *conf = shared_conf(t);
    pulsarc_source_t *src = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_source_new(c, conf, h.blob[which], h.len[which], &src, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "restore: %s (%s)", pulsarc_errname(e), err);
    int seen[N_MSGS] = {0};
    int got = fetch_upto(src, N_MSGS, seen, NULL, NULL);
    printf("[source-txn] restored from checkpoint %d: %d emitted again (want %d)\n", which + 1,
           got, N_MSGS - covered);
    for (int i = 0; i < N_MSGS; i++) {
        int before = 0;
        for (int j = 0; j < covered; j++)
            before |= h.order[j] == i;
        ck_assert_msg(seen[i] == !before, "message %d emitted %d times after the restore (%s)", i,
                      seen[i], before ? "covered by the checkpoint" : "not covered");
    }
    ck_assert_int_eq(got, N_MSGS - covered);
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 3, &blob, &len), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 3), PULSARC_OK);
    int64_t left = -1;
    for (int i = 0; i < 20 && left != 0; i++) {
        sleep(1);
        left = backlog(t);
        printf("[source-txn] backlog after %d s: %lld\n", i + 1, (long long)left);
    }
    ck_assert_int_eq(left, 0);
    free(blob);
    free(h.blob[0]);
    free(h.blob[1]);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(c);
}

/* Killed after checkpoint 2: epochs 1 and 2 are committed by the restore; the last 5 come again. */
START_TEST(test_killed_restore_from_last_checkpoint) { restore_and_check(1); }
END_TEST

/* Checkpoint 2 never completed, so the application restores from 1: epoch 2's
 * acks are aborted and its 10 messages come again with the last 5. */
START_TEST(test_killed_restore_from_older_checkpoint) { restore_and_check(0); }
END_TEST

/* Nothing is acknowledged until completion commits; the blob names the transactions. */
START_TEST(test_acks_wait_for_completion) {
    pulsarc_client_t *c = pct_client_with(txn_kv);
    const char *t = pct_topic("src-txn-commit");
    ck_assert_int_eq(send_all(c, t), 0);
    pulsarc_source_conf_t *conf = shared_conf(t);
    pulsarc_source_t *src = NULL;
    char err[512];
    ck_assert_msg(pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    int seen[N_MSGS] = {0};
    ck_assert_int_eq(fetch_upto(src, 12, seen, NULL, NULL), 12);
    void *b1, *b2;
    size_t l1, l2;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &b1, &l1), PULSARC_OK);
    ck_assert_int_eq(fetch_upto(src, 8, seen, NULL, NULL), 8);
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 2, &b2, &l2), PULSARC_OK);
    ck_assert_uint_gt(l2, l1); /* blob 2 names epoch 1's transaction as well */
    sleep(1);
    ck_assert_int_eq(backlog(t), N_MSGS); /* acks inside open transactions */
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 1), PULSARC_OK);
    ck_assert_int_eq(backlog_settled(t, N_MSGS - 12), N_MSGS - 12);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 2), PULSARC_OK);
    ck_assert_int_eq(backlog_settled(t, N_MSGS - 20), N_MSGS - 20);
    /* A blob with transactions cannot be restored without them. */
    pulsarc_client_t *plain = pct_client();
    pulsarc_source_t *other = NULL;
    ck_assert_int_eq(pulsarc_source_new(plain, conf, b2, l2, &other, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "enableTransaction"));
    ck_assert_ptr_null(other);
    free(b1);
    free(b2);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(plain);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * A message emitted twice (the broker redelivers everything unacknowledged
 * when the topic is unloaded) is acknowledged once: the checkpoint still
 * succeeds and its completion empties the backlog.
 */
START_TEST(test_redelivered_copies_acked_once) {
    pulsarc_client_t *c = pct_client_with(txn_kv);
    const char *t = pct_topic("src-txn-dup");
    ck_assert_int_eq(send_all(c, t), 0);
    pulsarc_source_conf_t *conf = shared_conf(t);
    pulsarc_source_t *src = NULL;
    char err[512];
    ck_assert_msg(pulsarc_source_new(c, conf, NULL, 0, &src, err, sizeof err) == PULSARC_OK, "%s",
                  err);
    int seen[N_MSGS] = {0};
    ck_assert_int_eq(fetch_upto(src, N_MSGS, seen, NULL, NULL), N_MSGS);
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/unload", t);
    int code = pct_admin("PUT", path, NULL);
    ck_assert_msg(code == 204 || code == 200, "unload: HTTP %d", code);
    int again = fetch_upto(src, N_MSGS, seen, NULL, NULL);
    printf("[source-txn] emitted again after the unload: %d\n", again);
    ck_assert_int_gt(again, 0); /* the test needs duplicates to mean anything */
    void *blob;
    size_t len;
    ck_assert_int_eq(pulsarc_source_checkpoint(src, 1, &blob, &len), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_checkpoint_complete(src, 1), PULSARC_OK);
    int64_t left = -1;
    for (int i = 0; i < 10 && left != 0; i++) {
        sleep(1);
        left = backlog(t);
    }
    ck_assert_int_eq(left, 0);
    free(blob);
    pulsarc_source_destroy(src);
    pulsarc_source_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *source_txn_suite(void) {
    Suite *s = suite_create("live-source-txn");
    TCase *tc = tcase_create("source-txn");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_acks_wait_for_completion);
    tcase_add_test(tc, test_killed_restore_from_last_checkpoint);
    tcase_add_test(tc, test_killed_restore_from_older_checkpoint);
    tcase_add_test(tc, test_redelivered_copies_acked_once);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(source_txn_suite)
