/*
 * Start positions, seek and has-message-available on a batched topic: the
 * peers' reports of readers that skip or repeat the first message, deliver
 * half a batch, or answer has-message-available wrongly at the edges
 * (inclusive start on the last message, a start inside a batch, the end of
 * the topic).
 *
 * The topic holds N messages "m0".."m<N-1>" in batches of BATCH (the ids of
 * each are kept from the send callbacks, so the test knows which carry a
 * batch index). For each start position × inclusive or not, a reader
 * answers has-message-available before reading, then reads to the end;
 * asserted: the first message (exact, by the reader's documented meaning:
 * inclusive reads the start message first, otherwise the one after it),
 * every later message in order with no gap or repeat, and
 * has-message-available 0 at the end. Printed: one "seek:" line per case.
 *
 * After compaction (triggered through the admin API and awaited), a reader
 * with readCompacted sees the latest value of each key up to the
 * compaction horizon, then everything after it: started at earliest, at a
 * message compacted away, or at a surviving one (inclusive or not), it
 * reads exactly the expected sequence, and has-message-available says 1
 * before and 0 after; the same reader seeking to those positions and to
 * latest reads the same sequences.
 *
 * Reader seek moves an existing reader back into the middle of a batch:
 * asserted that what follows is contiguous to the end (nothing lost, no
 * message twice) and starts at the seek target or the one after it (the
 * line prints which), and that has-message-available turns 1 again. The
 * seek matrix does the same for readers created inclusive or not, seeking
 * to earliest, into and to the edges of batches, and to latest.
 *
 * Seek, last-message-id and has-message-available made while the consumer
 * is disconnected (right after a seek, or with its connection cut through
 * a proxy) wait for the reconnect within operationTimeoutMs; close ends a
 * waiting call with CLOSED.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_util.h"

#define N 40
#define BATCH 5

typedef struct topic_ids {
    pulsarc_msgid_t id[N];
    _Atomic int done;
} topic_ids_t;

typedef struct id_ctx {
    topic_ids_t *t;
    int i;
} id_ctx_t;

static void on_id(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                  pulsarc_msg_t *msg, void *opaque) {
    (void)p;
    (void)msg;
    id_ctx_t *c = opaque;
    if (!err && id)
        c->t->id[c->i] = *id;
    atomic_fetch_add(&c->t->done, err ? 1000 : 1);
}

/* Fills a new topic with N messages in batches of BATCH; ids into *t. */
static const char *fill(pulsarc_client_t *c, topic_ids_t *t) {
    const char *topic = pct_topic("peer-seek");
    const char *kv[] = {"batchingEnabled", "true", "batchingMaxMessages", "5",
                        "batchingMaxPublishDelayMicros", "1000000", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    static id_ctx_t ctx[N];
    memset(t, 0, sizeof *t);
    for (int i = 0; i < N; i++) {
        char body[16];
        int len = snprintf(body, sizeof body, "m%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, (size_t)len, PULSARC_MSG_F_COPY);
        ctx[i].t = t;
        ctx[i].i = i;
        pulsarc_producer_send_async(p, m, on_id, &ctx[i]);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, PEER_HANG_MS), PULSARC_OK);
    int64_t end = peer_now_ms() + PEER_HANG_MS; /* callbacks run on their own thread */
    while (atomic_load(&t->done) < N && peer_now_ms() < end)
        peer_sleep_ms(5);
    int done = atomic_load(&t->done);
    ck_assert_msg(done == N, "fill: %d callbacks (1000 per failure) for %d sends", done, N);
    pulsarc_producer_destroy(p);
    /* One producer: stored in the order sent. */
    for (int i = 1; i < N; i++) {
        char a[64], b[64];
        pulsarc_msgid_format(&t->id[i - 1], a, sizeof a);
        pulsarc_msgid_format(&t->id[i], b, sizeof b);
        ck_assert_msg(pulsarc_msgid_compare(&t->id[i - 1], &t->id[i]) < 0,
                      "m%d stored at %s, before m%d at %s", i, b, i - 1, a);
    }
    /* The batching is what the cases rely on: message i is batch index i % BATCH. */
    for (int i = 0; i < N; i++)
        ck_assert_msg(t->id[i].batch_index == i % BATCH,
                      "m%d stored with batch index %d, expected %d", i, t->id[i].batch_index,
                      i % BATCH);
    return topic;
}

static int index_of(const pulsarc_msg_t *m) {
    return peer_payload_index(m);
}

/*
 * Reads from r until 2 s pass with nothing: the first index read (-1: none),
 * and whether the rest followed one by one up to the end.
 */
static int read_rest(pulsarc_reader_t *r, int *first, int *count) {
    int prev = -1, contiguous = 1;
    char order[512] = "";
    *first = -1;
    *count = 0;
    pulsarc_msg_t *m = NULL;
    while (pulsarc_reader_read(r, &m, 2000) == PULSARC_OK) {
        int i = index_of(m);
        if (*first < 0)
            *first = i;
        else if (i != prev + 1)
            contiguous = 0;
        prev = i;
        (*count)++;
        size_t used = strlen(order);
        snprintf(order + used, sizeof order - used, " %d", i);
        pulsarc_msg_destroy(m);
    }
    if (!contiguous)
        printf("seek: out of order, read:%s\n", order);
    return contiguous && (prev == N - 1 || *count == 0);
}

/* Has-message-available, asserted to succeed: right after a seek it waits for
 * the reconnect the seek forces rather than failing. */
static int has_available(pulsarc_reader_t *r) {
    int a = -1;
    pulsarc_err_t e = pulsarc_reader_has_message_available(r, &a);
    ck_assert_msg(e == PULSARC_OK, "has_message_available: %s", pulsarc_errname(e));
    return a;
}

/* One reader case: start, inclusive; expected first index (-1: nothing) and availability. */
static int reader_case(pulsarc_client_t *c, const char *topic, const char *name,
                       pulsarc_msgid_t start, int inclusive, int want_first) {
    pulsarc_reader_t *r = NULL;
    char err[256];
    ck_assert_msg(pulsarc_reader_new(c, topic, &start, inclusive, NULL, &r, err, sizeof err) ==
                      PULSARC_OK,
                  "%s: reader: %s", name, err);
    int avail = has_available(r), first, count;
    int contiguous = read_rest(r, &first, &count);
    int avail_end = has_available(r);
    pulsarc_reader_destroy(r);
    int want_avail = want_first >= 0;
    printf("seek: %-28s inclusive=%d available=%d first=%d (want %d) read=%d contiguous=%d "
           "available_at_end=%d\n",
           name, inclusive, avail, first, want_first, count, contiguous, avail_end);
    fflush(stdout);
    int ok = avail == want_avail && first == want_first && contiguous && avail_end == 0;
    return ok;
}

START_TEST(test_reader_start_positions) {
    pulsarc_client_t *c = peer_client(NULL, NULL);
    topic_ids_t t;
    const char *topic = fill(c, &t);
    struct {
        const char *name;
        pulsarc_msgid_t start;
        int inclusive, want;
    } cases[] = {
        {"earliest", pulsarc_msgid_earliest(), 0, 0},
        {"earliest", pulsarc_msgid_earliest(), 1, 0},
        {"latest", pulsarc_msgid_latest(), 0, -1},
        {"latest", pulsarc_msgid_latest(), 1, N - 1},
        {"first of a batch (m10)", t.id[10], 0, 11},
        {"first of a batch (m10)", t.id[10], 1, 10},
        {"inside a batch (m17)", t.id[17], 0, 18},
        {"inside a batch (m17)", t.id[17], 1, 17},
        {"last of a batch (m24)", t.id[24], 0, 25},
        {"last of a batch (m24)", t.id[24], 1, 24},
        {"last message (m39)", t.id[N - 1], 0, -1},
        {"last message (m39)", t.id[N - 1], 1, N - 1},
    };
    int failed = 0;
    char names[512] = "";
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (!reader_case(c, topic, cases[k].name, cases[k].start, cases[k].inclusive,
                         cases[k].want)) {
            failed++;
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, " [%s inclusive=%d]", cases[k].name,
                     cases[k].inclusive);
        }
    }
    pulsarc_client_destroy(c);
    ck_assert_msg(failed == 0, "%d start positions wrong:%s", failed, names);
}
END_TEST

START_TEST(test_reader_seek_into_batch) {
    pulsarc_client_t *c = peer_client(NULL, NULL);
    topic_ids_t t;
    const char *topic = fill(c, &t);
    pulsarc_msgid_t start = pulsarc_msgid_earliest();
    pulsarc_reader_t *r = NULL;
    char err[256];
    ck_assert_msg(pulsarc_reader_new(c, topic, &start, 0, NULL, &r, err, sizeof err) == PULSARC_OK,
                  "reader: %s", err);
    int first, count;
    int contiguous = read_rest(r, &first, &count);
    ck_assert_msg(contiguous && first == 0 && count == N, "initial read: first=%d read=%d", first,
                  count);
    ck_assert_int_eq(has_available(r), 0);
    const int targets[] = {22, 30, 3};
    for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
        int target = targets[k];
        pulsarc_err_t e = pulsarc_reader_seek(r, &t.id[target]);
        ck_assert_msg(e == PULSARC_OK, "seek m%d: %s", target, pulsarc_errname(e));
        int avail = has_available(r);
        contiguous = read_rest(r, &first, &count);
        int avail_end = has_available(r);
        printf("seek: reader seek to m%-2d (batch index %d) available=%d first=%d read=%d "
               "contiguous=%d available_at_end=%d\n",
               target, t.id[target].batch_index, avail, first, count, contiguous, avail_end);
        fflush(stdout);
        ck_assert_msg(avail == 1, "seek m%d: has_message_available %d", target, avail);
        ck_assert_msg(first == target || first == target + 1,
                      "seek m%d: first message read m%d", target, first);
        ck_assert_msg(contiguous, "seek m%d: messages after it not contiguous to the end",
                      target);
        ck_assert_int_eq(avail_end, 0);
    }
    pulsarc_reader_destroy(r);
    pulsarc_client_destroy(c);
}
END_TEST

/*
 * The seek matrix: a reader created inclusive or not reads the whole topic,
 * then seeks to the earliest position, to the first message of a batch,
 * into the middle of a batch, to the last message and to the latest
 * position. Asserted for each: has-message-available (1, except at
 * latest), the first message read (the target, or the one after it: the
 * line prints which), everything after it contiguous to the end, and
 * has-message-available 0 once read.
 */
START_TEST(test_reader_seek_matrix) {
    pulsarc_client_t *c = peer_client(NULL, NULL);
    topic_ids_t t;
    const char *topic = fill(c, &t);
    struct {
        const char *name;
        pulsarc_msgid_t id;
        int want; /* the target's index; -1: nothing to read */
    } targets[] = {
        {"earliest", pulsarc_msgid_earliest(), 0},
        {"first of a batch (m10)", t.id[10], 10},
        {"inside a batch (m17)", t.id[17], 17},
        {"last message (m39)", t.id[N - 1], N - 1},
        {"latest", pulsarc_msgid_latest(), -1},
    };
    int failed = 0;
    for (int inclusive = 0; inclusive <= 1; inclusive++) {
        pulsarc_msgid_t start = pulsarc_msgid_earliest();
        pulsarc_reader_t *r = NULL;
        char err[256];
        ck_assert_msg(pulsarc_reader_new(c, topic, &start, inclusive, NULL, &r, err, sizeof err) ==
                          PULSARC_OK,
                      "reader: %s", err);
        int first, count;
        ck_assert(read_rest(r, &first, &count) && count == N);
        for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
            pulsarc_err_t e = pulsarc_reader_seek(r, &targets[k].id);
            ck_assert_msg(e == PULSARC_OK, "seek %s: %s", targets[k].name, pulsarc_errname(e));
            int avail = has_available(r);
            int contiguous = read_rest(r, &first, &count);
            int avail_end = has_available(r);
            int want = targets[k].want;
            int ok = want < 0 ? avail == 0 && count == 0
                              : avail == 1 && (first == want || (want > 0 && first == want + 1)) &&
                                    contiguous;
            ok = ok && avail_end == 0;
            printf("seek: matrix seek to %-24s reader_inclusive=%d available=%d first=%d "
                   "(target %d) read=%d contiguous=%d available_at_end=%d%s\n",
                   targets[k].name, inclusive, avail, first, want, count, contiguous, avail_end,
                   ok ? "" : " WRONG");
            fflush(stdout);
            failed += !ok;
        }
        pulsarc_reader_destroy(r);
    }
    pulsarc_client_destroy(c);
    ck_assert_msg(failed == 0, "%d seek matrix cases wrong", failed);
}
END_TEST

/* ---------- requests while the consumer reconnects ---------- */

/* Waits (bounded) until the consumer has noticed its connection is gone. */
static void wait_disconnected(pulsarc_consumer_t *cons) {
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (pulsarc_consumer_is_connected(cons) && peer_now_ms() < end)
        peer_sleep_ms(10);
    ck_assert_msg(!pulsarc_consumer_is_connected(cons), "consumer still connected after the cut");
}

/* Cuts the consumer's connection and keeps the new one from answering for stall_ms. */
static void knock_out(pc_proxy_t *px, pulsarc_consumer_t *cons, int stall_ms) {
    pc_proxy_stall(px, stall_ms);
    pc_proxy_cut_all(px);
    wait_disconnected(cons);
}

typedef struct pending_call {
    pulsarc_consumer_t *cons;
    pulsarc_err_t err;
    pulsarc_msgid_t last;
} pending_call_t;

/* Always a broker request (has-message-available may answer from the local queue). */
static void *call_last_id(void *arg) {
    pending_call_t *p = arg;
    p->err = pulsarc_consumer_last_message_id(p->cons, &p->last);
    return NULL;
}

/*
 * Has-message-available, the last message id and seek made while the
 * consumer is disconnected (its connection cut through a proxy, the new
 * one held back) wait for the reconnect and then answer; made with a
 * shorter operationTimeoutMs than the outage, they fail with TIMEOUT; made
 * and then overtaken by close, they end with CLOSED. Printed: how long
 * each call took.
 */
START_TEST(test_requests_wait_for_reconnect) {
    pulsarc_client_t *direct = peer_client(NULL, NULL);
    topic_ids_t t;
    const char *topic = fill(direct, &t);
    pulsarc_client_destroy(direct);
    pc_proxy_t *px = peer_proxy();
    const char *ckv[] = {"operationTimeoutMs", "4000", NULL};
    pulsarc_client_t *c = peer_client(pc_proxy_url(px), ckv);
    const char *kv[] = {"subscriptionType", "Exclusive", "subscriptionInitialPosition",
                        "Earliest", NULL};
    pulsarc_consumer_t *cons = peer_consumer(c, topic, "waiter", kv);
    /* Everything read and acked: has-message-available must ask the broker. */
    for (int i = 0; i < N; i++) {
        pulsarc_msg_t *got = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &got, PEER_HANG_MS), PULSARC_OK);
        if (i == N - 1)
            ck_assert_int_eq(pulsarc_consumer_ack_cumulative(cons, got), PULSARC_OK);
        pulsarc_msg_destroy(got);
    }

    /* An outage shorter than the operation timeout: each call waits it out. */
    knock_out(px, cons, 1500);
    int64_t t0 = peer_now_ms();
    int avail = -1;
    pulsarc_err_t e = pulsarc_consumer_has_message_available(cons, &avail);
    int64_t avail_ms = peer_now_ms() - t0;
    ck_assert_msg(e == PULSARC_OK && avail == 0, "has_message_available while reconnecting: %s, %d",
                  pulsarc_errname(e), avail);
    knock_out(px, cons, 1500);
    pulsarc_msgid_t last;
    t0 = peer_now_ms();
    e = pulsarc_consumer_last_message_id(cons, &last);
    int64_t last_ms = peer_now_ms() - t0;
    ck_assert_msg(e == PULSARC_OK, "get_last_message_id while reconnecting: %s", pulsarc_errname(e));
    ck_assert_msg(last.ledger_id == t.id[N - 1].ledger_id && last.entry_id == t.id[N - 1].entry_id,
                  "last message id is not m%d's entry", N - 1);
    knock_out(px, cons, 1500);
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    t0 = peer_now_ms();
    e = pulsarc_consumer_seek(cons, &earliest);
    int64_t seek_ms = peer_now_ms() - t0;
    ck_assert_msg(e == PULSARC_OK, "seek while reconnecting: %s", pulsarc_errname(e));
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, PEER_HANG_MS), PULSARC_OK);
    int first = index_of(m);
    pulsarc_msg_destroy(m);
    ck_assert_msg(first == 0, "first message after the seek: m%d", first);

    /* An outage longer than the operation timeout: the wait is bounded. */
    knock_out(px, cons, 10000);
    t0 = peer_now_ms();
    pulsarc_err_t timed_out = pulsarc_consumer_last_message_id(cons, &last);
    int64_t timeout_ms = peer_now_ms() - t0;
    ck_assert_msg(timed_out == PULSARC_ERR_TIMEOUT, "get_last_message_id through a long outage: %s",
                  pulsarc_errname(timed_out));

    /* Close while a call waits: the call ends with CLOSED, not with the timeout. */
    pending_call_t call = {.cons = cons, .err = PULSARC_OK};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, call_last_id, &call), 0);
    peer_sleep_ms(300); /* usually parked by now; a call that arrives after close fails alike */
    t0 = peer_now_ms();
    pulsarc_consumer_close(cons);
    pthread_join(th, NULL);
    int64_t close_ms = peer_now_ms() - t0;
    printf("seek: requests while reconnecting: has_available_ms=%lld last_id_ms=%lld "
           "seek_ms=%lld (outage 1500) timeout_after_ms=%lld (operationTimeoutMs 4000) "
           "closed_call=%s returned_after_close_ms=%lld\n",
           (long long)avail_ms, (long long)last_ms, (long long)seek_ms, (long long)timeout_ms,
           pulsarc_errname(call.err), (long long)close_ms);
    fflush(stdout);
    ck_assert_msg(call.err == PULSARC_ERR_CLOSED, "call waiting at close: %s",
                  pulsarc_errname(call.err));
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
}
END_TEST

/*
 * A durable consumer seeks back to the earliest position again and again,
 * each time right after receiving: every seek succeeds and the first
 * message after it is m0 again. Each seek makes the broker disconnect the
 * consumer to reset its cursor, so the next seek meets a reconnecting
 * consumer. Printed: how long each seek took.
 */
START_TEST(test_consumer_seek_repeated) {
    enum { SEEKS = 5 };
    pulsarc_client_t *c = peer_client(NULL, NULL);
    topic_ids_t t;
    const char *topic = fill(c, &t);
    const char *kv[] = {"subscriptionType", "Exclusive", "subscriptionInitialPosition",
                        "Earliest", NULL};
    pulsarc_consumer_t *cons = peer_consumer(c, topic, "seeker", kv);
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    int first_ok = 0;
    char took[256] = "";
    for (int k = 0; k < SEEKS; k++) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, PEER_HANG_MS);
        ck_assert_msg(e == PULSARC_OK, "seek %d: receive %s", k, pulsarc_errname(e));
        int i = index_of(m);
        pulsarc_msg_destroy(m);
        if (i == 0)
            first_ok++;
        int64_t t0 = peer_now_ms();
        e = pulsarc_consumer_seek(cons, &earliest);
        size_t used = strlen(took);
        snprintf(took + used, sizeof took - used, "%s%lld", k ? " " : "",
                 (long long)(peer_now_ms() - t0));
        ck_assert_msg(e == PULSARC_OK, "seek %d: %s", k, pulsarc_errname(e));
    }
    /* Back to back: each seek meets the consumer still reconnecting from the
     * last, and waits for it (bounded by operationTimeoutMs) instead of
     * being refused. */
    char took2[256] = "";
    for (int k = 0; k < SEEKS; k++) {
        int64_t t0 = peer_now_ms();
        pulsarc_err_t e = pulsarc_consumer_seek(cons, &earliest);
        size_t used = strlen(took2);
        snprintf(took2 + used, sizeof took2 - used, "%s%lld", k ? " " : "",
                 (long long)(peer_now_ms() - t0));
        ck_assert_msg(e == PULSARC_OK, "back-to-back seek %d: %s", k, pulsarc_errname(e));
    }
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, PEER_HANG_MS), PULSARC_OK);
    if (index_of(m) == 0)
        first_ok++;
    pulsarc_msg_destroy(m);
    printf("seek: consumer seek earliest x%d first_is_m0=%d of %d seek_ms=[%s] "
           "back_to_back_ms=[%s]\n",
           SEEKS, first_ok, SEEKS + 1, took, took2);
    ck_assert_int_eq(first_ok, SEEKS + 1);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- after compaction ---------- */

#define KEYS 5
#define BEFORE 20 /* messages before compaction: m0..m19, key k<i % KEYS> */
#define AFTER 2   /* after it: m20, m21 */

/* Compacts topic through the admin API and waits (bounded) for the result. */
static void compact(const char *topic) {
    char path[1024], body[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/compaction", topic);
    int code = pct_admin("PUT", path, NULL);
    ck_assert_msg(code == 204 || code == 200, "compaction of %s: HTTP %d", topic, code);
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (peer_now_ms() < end) {
        if (peer_admin_get(path, body, sizeof body) == 200 && strstr(body, "SUCCESS"))
            return;
        ck_assert_msg(!strstr(body, "ERROR"), "compaction of %s: %s", topic, body);
        peer_sleep_ms(200);
    }
    ck_abort_msg("compaction of %s did not finish: %s", topic, body);
}

/* Unbatched keyed messages m<from>..m<to-1>; their ids into ids. */
static void send_keyed(pulsarc_producer_t *p, int from, int to, pulsarc_msgid_t *ids) {
    for (int i = from; i < to; i++) {
        char body[16], key[16];
        int len = snprintf(body, sizeof body, "m%d", i);
        snprintf(key, sizeof key, "k%d", i % KEYS);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, body, (size_t)len, PULSARC_MSG_F_COPY);
        pulsarc_msg_set_key(m, key);
        pulsarc_err_t e = pulsarc_producer_send(p, m, &ids[i]);
        pulsarc_msg_destroy(m);
        ck_assert_msg(e == PULSARC_OK, "send m%d: %s", i, pulsarc_errname(e));
    }
}

/* Reads everything from a compacted-view reader at start; the indices read into got. */
static int read_compacted(pulsarc_client_t *c, const char *topic, pulsarc_msgid_t start,
                          int inclusive, int *got, int cap, int *avail) {
    const char *kv[] = {"readCompacted", "true", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_reader_t *r = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_reader_new(c, topic, &start, inclusive, conf, &r, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "compacted reader: %s", err);
    *avail = has_available(r);
    int n = 0;
    pulsarc_msg_t *m = NULL;
    while (pulsarc_reader_read(r, &m, 2000) == PULSARC_OK) {
        if (n < cap)
            got[n] = index_of(m);
        n++;
        pulsarc_msg_destroy(m);
    }
    ck_assert_int_eq(has_available(r), 0);
    pulsarc_reader_destroy(r);
    return n;
}

/*
 * One readCompacted reader reads the compacted view, then seeks to the
 * earliest position, to a message compacted away, to a survivor, past the
 * horizon and to the latest position; after each: has-message-available
 * and the sequence read (from the target, or the one after it when the
 * target survives). Returns how many cases were wrong.
 */
static int seek_compacted(pulsarc_client_t *c, const char *topic, const pulsarc_msgid_t *ids,
                          const int *view, int nview) {
    const char *kv[] = {"readCompacted", "true", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_reader_t *r = NULL;
    char err[256];
    pulsarc_msgid_t start = pulsarc_msgid_earliest();
    pulsarc_err_t e = pulsarc_reader_new(c, topic, &start, 0, conf, &r, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "compacted reader: %s", err);
    struct {
        const char *name;
        pulsarc_msgid_t id;
        int from; /* expected: view[from..], or view[from + 1..]; nview: nothing */
    } cases[] = {
        {"earliest", pulsarc_msgid_earliest(), 0},
        {"compacted away (m3)", ids[3], 0},
        {"survivor (m17)", ids[17], 2},
        {"after the horizon (m20)", ids[20], 5},
        {"latest", pulsarc_msgid_latest(), nview},
    };
    int failed = 0;
    pulsarc_msg_t *m = NULL;
    while (pulsarc_reader_read(r, &m, 2000) == PULSARC_OK)
        pulsarc_msg_destroy(m);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        e = pulsarc_reader_seek(r, &cases[k].id);
        ck_assert_msg(e == PULSARC_OK, "compacted seek %s: %s", cases[k].name, pulsarc_errname(e));
        int avail = has_available(r), got[64], n = 0;
        while (pulsarc_reader_read(r, &m, 2000) == PULSARC_OK) {
            if (n < 64)
                got[n] = index_of(m);
            n++;
            pulsarc_msg_destroy(m);
        }
        int avail_end = has_available(r);
        int from = cases[k].from;
        if (n && from < nview - 1 && got[0] == view[from + 1])
            from++; /* started after the target */
        int same = n == nview - from;
        for (int i = 0; same && i < n; i++)
            same = got[i] == view[from + i];
        int ok = same && avail == (cases[k].from < nview) && avail_end == 0;
        printf("seek: compacted seek to %-24s available=%d read=%d first=%d (target %d) "
               "sequence_ok=%d available_at_end=%d%s\n",
               cases[k].name, avail, n, n ? got[0] : -1,
               cases[k].from < nview ? view[cases[k].from] : -1, same, avail_end,
               ok ? "" : " WRONG");
        fflush(stdout);
        failed += !ok;
    }
    pulsarc_reader_destroy(r);
    return failed;
}

START_TEST(test_reader_after_compaction) {
    pulsarc_client_t *c = peer_client(NULL, NULL);
    const char *topic = pct_topic("peer-seek-compacted");
    const char *pkv[] = {"batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, pkv);
    pulsarc_msgid_t ids[BEFORE + AFTER];
    send_keyed(p, 0, BEFORE, ids);
    compact(topic);
    send_keyed(p, BEFORE, BEFORE + AFTER, ids);
    pulsarc_producer_destroy(p);
    /* The compacted view: the last value of each key (m15..m19), then m20, m21. */
    const int view[] = {15, 16, 17, 18, 19, 20, 21};
    const int nview = (int)(sizeof view / sizeof view[0]);
    struct {
        const char *name;
        pulsarc_msgid_t start;
        int inclusive, from; /* expected: view[from..] */
    } cases[] = {
        {"earliest", pulsarc_msgid_earliest(), 0, 0},
        {"compacted away (m3)", ids[3], 0, 0},
        {"compacted away (m3)", ids[3], 1, 0},
        {"survivor (m17)", ids[17], 0, 3},
        {"survivor (m17)", ids[17], 1, 2},
        {"after the horizon (m20)", ids[20], 0, 6},
        {"after the horizon (m20)", ids[20], 1, 5},
    };
    int failed = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int got[64], avail;
        int n = read_compacted(c, topic, cases[k].start, cases[k].inclusive, got, 64, &avail);
        int want_n = nview - cases[k].from, same = n == want_n;
        for (int i = 0; same && i < n; i++)
            same = got[i] == view[cases[k].from + i];
        printf("seek: compacted %-24s inclusive=%d available=%d read=%d (want %d) first=%d "
               "(want %d) sequence_ok=%d\n",
               cases[k].name, cases[k].inclusive, avail, n, want_n, n ? got[0] : -1,
               view[cases[k].from], same);
        fflush(stdout);
        failed += !same || avail != 1;
    }
    failed += seek_compacted(c, topic, ids, view, nview);
    pulsarc_client_destroy(c);
    ck_assert_msg(failed == 0, "%d compacted-view cases wrong", failed);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-seek");
    TCase *t = tcase_create("seek");
    tcase_set_timeout(t, 180);
    tcase_add_test(t, test_reader_start_positions);
    tcase_add_test(t, test_reader_seek_into_batch);
    tcase_add_test(t, test_reader_seek_matrix);
    tcase_add_test(t, test_requests_wait_for_reconnect);
    tcase_add_test(t, test_consumer_seek_repeated);
    tcase_add_test(t, test_reader_after_compaction);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
