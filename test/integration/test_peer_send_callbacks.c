/*
 * A send callback runs exactly once for every message, whatever ends the
 * send: the broker's receipt, the send timeout, the producer being closed
 * with sends pending, or the producer being fenced by an
 * ExclusiveWithFencing producer taking the topic over. A callback that
 * never comes leaks the application's state and hangs its flush; one that
 * comes twice frees it twice. Both are among the peers' most reported bugs.
 *
 * Each scenario prints one "callbacks:" line (sends, calls, outcomes,
 * indices never called back or called back twice, calls after close
 * returned) and asserts the counts: every index exactly once, nothing
 * after close returned, and where the broker's log can tell, as many
 * stored messages as success callbacks.
 *
 * Design notes
 *  - Timeouts and pending-at-close need sends that cannot complete: the
 *    producer talks through the fault proxy, which is stalled (forwards
 *    nothing) while they are queued. After the stall the broker may still
 *    store and acknowledge a message that already timed out; its late
 *    receipt must not call back a second time, so the ledger is read
 *    again after the proxy flows and a fresh send went through.
 *  - Fencing: producer A sends a burst, and producer B (ExclusiveWithFencing)
 *    is created while A's sends are in flight. A's successes must equal
 *    the messages stored by A (read back with a reader): a success
 *    callback for a message the broker refused, or a failure for one it
 *    stored, is the bug too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_util.h"

/* ---------- success ---------- */

START_TEST(test_cb_once_on_success) {
    enum { N = 5000 };
    const char *topic = pct_topic("peer-cb-ok");
    pulsarc_client_t *c = peer_client(NULL, NULL);
    const char *kv[] = {"batchingEnabled", "true", "maxPendingMessages", "1000",
                        "blockIfQueueFull", "true", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    peer_ledger_t *l = peer_ledger_new();
    peer_send_ctx_t *ctx = calloc(N, sizeof *ctx);
    for (int i = 0; i < N; i++)
        peer_send(p, ctx, l, i);
    ck_assert_int_eq(pulsarc_producer_flush(p, PEER_HANG_MS), PULSARC_OK);
    peer_ledger_wait(l, N);
    peer_sleep_ms(300); /* room for a stray second call */
    pulsarc_producer_destroy(p);
    peer_ledger_seal(l);
    int stored = peer_count_stored(c, topic);
    peer_ledger_print("success", l, N);
    printf("stored: success %d\n", stored);
    peer_ledger_check("success", l, N);
    ck_assert_int_eq(atomic_load(&l->ok), N);
    ck_assert_int_eq(stored, N);
    pulsarc_client_destroy(c);
    free(ctx);
    free(l);
}
END_TEST

/* ---------- send timeout ---------- */

START_TEST(test_cb_once_on_send_timeout) {
    enum { N = 300 };
    const char *topic = pct_topic("peer-cb-timeout");
    pc_proxy_t *px = peer_proxy();
    const char *ckv[] = {"operationTimeoutMs", "5000", "keepAliveIntervalSeconds", "30", NULL};
    pulsarc_client_t *c = peer_client(pc_proxy_url(px), ckv);
    const char *kv[] = {"sendTimeoutMs", "1000", "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    peer_ledger_t *l = peer_ledger_new();
    peer_send_ctx_t *ctx = calloc(N + 1, sizeof *ctx);
    /* Nothing passes for 4 s: every send queued now outlives its 1 s timeout. */
    pc_proxy_stall(px, 4000);
    for (int i = 0; i < N; i++)
        peer_send(p, ctx, l, i);
    int seen = peer_ledger_wait(l, N);
    ck_assert_msg(seen >= N, "send timeout: %d of %d callbacks within the hang bound", seen, N);
    /* The proxy flows again; a fresh send proves the producer works, and the
     * broker's receipts for timed-out messages (if it stored them) have
     * arrived by the time this one's has. */
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "after", 5, PULSARC_MSG_F_COPY);
    pulsarc_err_t e = PULSARC_ERR_TIMEOUT;
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (e != PULSARC_OK && peer_now_ms() < end) {
        e = pulsarc_producer_send(p, m, NULL);
        if (e != PULSARC_OK)
            peer_sleep_ms(200);
    }
    pulsarc_msg_destroy(m);
    ck_assert_msg(e == PULSARC_OK, "send after the stall: %s", pulsarc_errname(e));
    peer_sleep_ms(1000);
    pulsarc_producer_destroy(p);
    peer_ledger_seal(l);
    peer_ledger_print("send timeout", l, N);
    peer_ledger_check("send timeout", l, N);
    ck_assert_msg(atomic_load(&l->timeout) > 0, "no send timed out: the stall did not hold them");
    ck_assert_int_eq(atomic_load(&l->other), 0);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
    free(ctx);
    free(l);
}
END_TEST

/* ---------- close with sends pending ---------- */

/* Queues N sends behind a stalled proxy, closes (or destroys) the producer. */
static void close_with_pending(const char *scenario, int destroy_only) {
    enum { N = 2000 };
    const char *topic = pct_topic("peer-cb-close");
    pc_proxy_t *px = peer_proxy();
    const char *ckv[] = {"operationTimeoutMs", "3000", NULL};
    pulsarc_client_t *c = peer_client(pc_proxy_url(px), ckv);
    const char *kv[] = {"sendTimeoutMs", "0", "batchingEnabled", "true",
                        "maxPendingMessages", "3000", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    peer_ledger_t *l = peer_ledger_new();
    peer_send_ctx_t *ctx = calloc(N, sizeof *ctx);
    pc_proxy_stall(px, 8000);
    for (int i = 0; i < N; i++)
        peer_send(p, ctx, l, i);
    int before = atomic_load(&l->total);
    int64_t t0 = peer_now_ms();
    if (!destroy_only)
        pulsarc_producer_close(p);
    int at_close = atomic_load(&l->total);
    pulsarc_producer_destroy(p);
    int64_t took = peer_now_ms() - t0;
    int at_destroy = atomic_load(&l->total);
    peer_ledger_seal(l);
    peer_sleep_ms(8000 - (int)(took < 8000 ? took : 8000) + 1000); /* past the stall */
    printf("close: %s callbacks before=%d at_close_return=%d at_destroy_return=%d took_ms=%lld\n",
           scenario, before, destroy_only ? -1 : at_close, at_destroy, (long long)took);
    peer_ledger_print(scenario, l, N);
    ck_assert_msg(took < PEER_HANG_MS, "%s: close hung (%lld ms)", scenario, (long long)took);
    if (!destroy_only)
        ck_assert_msg(at_close == N, "%s: %d of %d callbacks when close returned", scenario,
                      at_close, N);
    peer_ledger_check(scenario, l, N);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
    free(ctx);
    free(l);
}

START_TEST(test_cb_once_on_close) { close_with_pending("close pending", 0); }
END_TEST

START_TEST(test_cb_once_on_destroy) { close_with_pending("destroy pending", 1); }
END_TEST

/* Closing the whole client with sends pending on a live connection. */
START_TEST(test_cb_once_on_client_close) {
    enum { N = 5000 };
    const char *topic = pct_topic("peer-cb-client-close");
    pulsarc_client_t *c = peer_client(NULL, NULL);
    const char *kv[] = {"sendTimeoutMs", "0", "batchingEnabled", "true",
                        "maxPendingMessages", "10000", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    peer_ledger_t *l = peer_ledger_new();
    peer_send_ctx_t *ctx = calloc(N, sizeof *ctx);
    for (int i = 0; i < N; i++)
        peer_send(p, ctx, l, i);
    int before = atomic_load(&l->total);
    pulsarc_client_close(c, 10000);
    int at_close = atomic_load(&l->total);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    peer_ledger_seal(l);
    peer_sleep_ms(500);
    printf("close: client close callbacks before=%d at_close_return=%d\n", before, at_close);
    peer_ledger_print("client close", l, N);
    ck_assert_msg(at_close == N, "client close: %d of %d callbacks when it returned", at_close, N);
    peer_ledger_check("client close", l, N);
    /* What the broker stored matches the successes reported. */
    pulsarc_client_t *c2 = peer_client(NULL, NULL);
    int stored = peer_count_stored(c2, topic);
    printf("stored: client close %d ok=%d\n", stored, atomic_load(&l->ok));
    ck_assert_int_ge(stored, atomic_load(&l->ok));
    /* A send reported failed that the broker stored is resent by the
     * application: a duplicate. Receipts for what was already written come
     * before the broker's answer to the close, so they can be honoured. */
    int ok = atomic_load(&l->ok);
    ck_assert_msg(stored == ok, "client close: %d stored, %d reported sent", stored, ok);
    pulsarc_client_destroy(c2);
    free(ctx);
    free(l);
}
END_TEST

/* ---------- fencing ---------- */

START_TEST(test_cb_once_on_fencing) {
    enum { N = 5000 };
    const char *topic = pct_topic("peer-cb-fence");
    pulsarc_client_t *ca = peer_client(NULL, NULL), *cb = peer_client(NULL, NULL);
    const char *kva[] = {"accessMode", "ExclusiveWithFencing", "producerName", "fenced-a",
                         "sendTimeoutMs", "0", "batchingEnabled", "true",
                         "batchingMaxMessages", "50", "maxPendingMessages", "10000", NULL};
    const char *kvb[] = {"accessMode", "ExclusiveWithFencing", "producerName", "fencer-b", NULL};
    pulsarc_producer_t *a = peer_producer(ca, topic, kva);
    peer_ledger_t *l = peer_ledger_new();
    peer_send_ctx_t *ctx = calloc(N, sizeof *ctx);
    int half = N / 2, queued = 0;
    for (; queued < half; queued++)
        peer_send(a, ctx, l, queued);
    /* B takes the topic over while A's first half is in flight. */
    pulsarc_producer_t *b = peer_producer(cb, topic, kvb);
    for (; queued < N; queued++)
        peer_send(a, ctx, l, queued);
    int seen = peer_ledger_wait(l, N);
    int64_t t0 = peer_now_ms();
    pulsarc_producer_close(a);
    pulsarc_producer_destroy(a);
    int64_t took = peer_now_ms() - t0;
    peer_ledger_seal(l);
    peer_sleep_ms(500);
    /* One message from B, then count what each producer stored. */
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "b", 1, PULSARC_MSG_F_COPY);
    ck_assert_int_eq(pulsarc_producer_send(b, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
    pulsarc_msgid_t start = pulsarc_msgid_earliest();
    pulsarc_reader_t *r = NULL;
    char err[256];
    ck_assert_msg(pulsarc_reader_new(cb, topic, &start, 0, NULL, &r, err, sizeof err) == PULSARC_OK,
                  "reader: %s", err);
    int from_a = 0, from_b = 0;
    pulsarc_msg_t *got = NULL;
    while (pulsarc_reader_read(r, &got, 3000) == PULSARC_OK) {
        const char *who = pulsarc_msg_producer_name(got);
        if (who && strcmp(who, "fenced-a") == 0)
            from_a++;
        else
            from_b++;
        pulsarc_msg_destroy(got);
    }
    pulsarc_reader_destroy(r);
    peer_ledger_print("fencing", l, N);
    printf("stored: fencing from_a=%d from_b=%d a_close_ms=%lld\n", from_a, from_b,
           (long long)took);
    ck_assert_msg(seen >= N, "fencing: %d of %d callbacks within the hang bound", seen, N);
    peer_ledger_check("fencing", l, N);
    ck_assert_msg(atomic_load(&l->ok) < N, "fencing: every send of the fenced producer succeeded");
    ck_assert_int_eq(from_a, atomic_load(&l->ok));
    ck_assert_int_eq(from_b, 1);
    pulsarc_producer_destroy(b);
    pulsarc_client_destroy(ca);
    pulsarc_client_destroy(cb);
    free(ctx);
    free(l);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-send-callbacks");
    TCase *t = tcase_create("once");
    tcase_set_timeout(t, 180);
    tcase_add_test(t, test_cb_once_on_success);
    tcase_add_test(t, test_cb_once_on_send_timeout);
    tcase_add_test(t, test_cb_once_on_close);
    tcase_add_test(t, test_cb_once_on_destroy);
    tcase_add_test(t, test_cb_once_on_client_close);
    tcase_add_test(t, test_cb_once_on_fencing);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
