/*
 * Close and destroy never hang and never call back after they return, with
 * every kind of operation in flight: asynchronous sends, blocked receives,
 * acknowledgements and negative acknowledgements, seeks, lookups, message
 * listener deliveries and transaction commits. Built for the ASan and TSan
 * runs as much as for the default one: a use after free or a race in the
 * close path shows there.
 *
 * One round: a client with transactions on, one producer, four consumers
 * on one topic (receive-and-ack, listener, seek loop, transactional ack);
 * a thread per blocking operation loops until its call fails because the
 * client closed. The main thread lets it all run, stops issuing new
 * asynchronous sends, and closes the client while thousands of them are
 * still waiting for receipts. Rounds differ by how long traffic runs
 * before the close, so the close lands in different states.
 *
 * Asserted per round: client close returns within the hang bound; every
 * worker thread returns within the hang bound after it; every send called
 * back exactly once and none, nor any listener delivery, after close
 * returned. Printed: per-round counts ("close:" lines).
 *
 * A second scenario destroys the client straight away (no close first)
 * with the same asynchronous traffic in flight and no thread inside a
 * blocking call (destroy frees the handles, so nobody may still hold them).
 *
 * Threads: workers use the handles until the client is closed; the main
 * thread destroys the handles only after every worker returned.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_util.h"

#define ROUNDS 6
#define SENDS_MAX 20000
#define BURST 2000

typedef struct round {
    pulsarc_client_t *c;
    pulsarc_producer_t *p;
    pulsarc_consumer_t *recv, *listen, *seek, *txc;
    const char *topic;
    peer_ledger_t *ledger;
    peer_send_ctx_t *ctx;
    _Atomic int stop_sending, sends;
    _Atomic int closing, sealed;
    _Atomic long received, acked, nacked, listened, listened_late, seeks, lookups, commits,
        txn_errors;
    _Atomic int workers_done;
} round_t;

/* ---------- workers ---------- */

static void *sender(void *arg) {
    round_t *r = arg;
    while (!atomic_load(&r->stop_sending) && atomic_load(&r->sends) < SENDS_MAX) {
        int i = atomic_load(&r->sends);
        pulsarc_err_t e = peer_send(r->p, r->ctx, r->ledger, i);
        atomic_fetch_add(&r->sends, 1); /* called back whatever the result */
        if (e == PULSARC_ERR_QUEUE_FULL || i % 10 == 9)
            peer_sleep_ms(1); /* paced: at most about 10,000 a second */
        else if (e != PULSARC_OK)
            break;
    }
    return NULL;
}

static void *receiver(void *arg) {
    round_t *r = arg;
    for (;;) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(r->recv, &m, 200);
        if (e == PULSARC_ERR_NO_MESSAGE) {
            if (atomic_load(&r->closing))
                break; /* a closed consumer may also just have nothing */
            continue;
        }
        if (e != PULSARC_OK)
            break;
        long n = atomic_fetch_add(&r->received, 1);
        if (n % 10 == 3) {
            pulsarc_consumer_nack(r->recv, m);
            atomic_fetch_add(&r->nacked, 1);
        } else {
            pulsarc_consumer_ack(r->recv, m);
            atomic_fetch_add(&r->acked, 1);
        }
        pulsarc_msg_destroy(m);
    }
    atomic_fetch_add(&r->workers_done, 1);
    return NULL;
}

static void *seeker(void *arg) {
    round_t *r = arg;
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    for (;;) {
        pulsarc_err_t e = pulsarc_consumer_seek(r->seek, &earliest);
        if (e == PULSARC_ERR_DISCONNECTED && !atomic_load(&r->closing)) {
            peer_sleep_ms(10); /* refused while reconnecting from the last seek */
            continue;
        }
        if (e != PULSARC_OK)
            break;
        atomic_fetch_add(&r->seeks, 1);
        pulsarc_msg_t *m = NULL;
        e = pulsarc_consumer_receive(r->seek, &m, 50);
        if (e == PULSARC_OK)
            pulsarc_msg_destroy(m);
        else if (e != PULSARC_ERR_NO_MESSAGE)
            break;
        if (atomic_load(&r->closing))
            break;
    }
    atomic_fetch_add(&r->workers_done, 1);
    return NULL;
}

static void *looker(void *arg) {
    round_t *r = arg;
    for (;;) {
        int parts = -1;
        if (pulsarc_client_partitions(r->c, r->topic, &parts, NULL, 0) != PULSARC_OK)
            break;
        atomic_fetch_add(&r->lookups, 1);
        if (atomic_load(&r->closing))
            break;
    }
    atomic_fetch_add(&r->workers_done, 1);
    return NULL;
}

/* Transactions: receive one message, ack it and send one inside a txn, commit. */
static void *transactor(void *arg) {
    round_t *r = arg;
    for (;;) {
        pulsarc_txn_t *txn = NULL;
        if (pulsarc_txn_new(r->c, 30000, &txn, NULL, 0) != PULSARC_OK)
            break;
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(r->txc, &m, 100);
        if (e == PULSARC_OK) {
            pulsarc_msgid_t id = pulsarc_msg_id(m);
            pulsarc_consumer_ack_id_txn(r->txc, txn, &id);
            pulsarc_msg_destroy(m);
        }
        pulsarc_msg_t *out = pulsarc_msg_new();
        pulsarc_msg_set_payload(out, "txn", 3, PULSARC_MSG_F_COPY);
        pulsarc_producer_send_txn(r->p, txn, out, NULL);
        pulsarc_msg_destroy(out);
        e = pulsarc_txn_commit(txn, NULL, 0);
        pulsarc_txn_destroy(txn);
        if (e == PULSARC_OK)
            atomic_fetch_add(&r->commits, 1);
        else
            atomic_fetch_add(&r->txn_errors, 1);
        if (atomic_load(&r->closing))
            break;
    }
    atomic_fetch_add(&r->workers_done, 1);
    return NULL;
}

static void on_listen(pulsarc_consumer_t *c, pulsarc_msg_t *m, void *opaque) {
    round_t *r = opaque;
    if (atomic_load(&r->sealed))
        atomic_fetch_add(&r->listened_late, 1);
    atomic_fetch_add(&r->listened, 1);
    pulsarc_consumer_ack(c, m);
    pulsarc_msg_destroy(m);
}

/* ---------- set-up ---------- */

static pulsarc_consumer_t *sub(round_t *r, const char *name, const char *type, int listener) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "subscriptionType", type,
                        "negativeAckRedeliveryDelayMicros", "100000", "receiverQueueSize", "200",
                        NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    if (listener)
        pulsarc_conf_set_message_listener(conf, on_listen, r);
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(r->c, r->topic, name, conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "subscribe %s: %s", name, err);
    return cons;
}

static void round_open(round_t *r, const char *topic) {
    memset(r, 0, sizeof *r);
    r->topic = topic;
    const char *ckv[] = {"enableTransaction", "true", "operationTimeoutMs", "10000", NULL};
    r->c = peer_client(NULL, ckv);
    const char *pkv[] = {"sendTimeoutMs", "0", "batchingEnabled", "true",
                         "maxPendingMessages", "5000", NULL};
    r->p = peer_producer(r->c, topic, pkv);
    r->recv = sub(r, "recv", "Shared", 0);
    r->listen = sub(r, "listen", "Shared", 1);
    r->seek = sub(r, "seek", "Exclusive", 0);
    r->txc = sub(r, "txn", "Exclusive", 0);
    r->ledger = peer_ledger_new();
    r->ctx = calloc(SENDS_MAX, sizeof *r->ctx);
}

static void round_free(round_t *r) {
    free(r->ledger);
    free(r->ctx);
}

/* Waits (bounded) until n workers returned; the count seen. */
static int wait_workers(round_t *r, int n) {
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (atomic_load(&r->workers_done) < n && peer_now_ms() < end)
        peer_sleep_ms(10);
    return atomic_load(&r->workers_done);
}

static void print_round(const char *what, int k, round_t *r, int64_t close_ms, int at_close) {
    int missing, twice;
    peer_ledger_not_once(r->ledger, atomic_load(&r->sends), &missing, &twice);
    printf("close: %s round=%d sends=%d callbacks_at_close=%d callbacks=%d ok=%d closed=%d "
           "other=%d (last %s) missing=%d twice=%d late=%d received=%ld acked=%ld nacked=%ld "
           "listened=%ld listened_late=%ld seeks=%ld lookups=%ld commits=%ld txn_errors=%ld "
           "close_ms=%lld\n",
           what, k, atomic_load(&r->sends), at_close, atomic_load(&r->ledger->total),
           atomic_load(&r->ledger->ok), atomic_load(&r->ledger->closed),
           atomic_load(&r->ledger->other),
           pulsarc_errname((pulsarc_err_t)atomic_load(&r->ledger->last_other)), missing, twice, atomic_load(&r->ledger->after_seal),
           atomic_load(&r->received), atomic_load(&r->acked), atomic_load(&r->nacked),
           atomic_load(&r->listened), atomic_load(&r->listened_late), atomic_load(&r->seeks),
           atomic_load(&r->lookups), atomic_load(&r->commits), atomic_load(&r->txn_errors),
           (long long)close_ms);
    fflush(stdout);
}

/* ---------- scenarios ---------- */

static void close_round(int k, int run_ms) {
    round_t r;
    round_open(&r, pct_topic("peer-close-inflight"));
    enum { WORKERS = 4 };
    pthread_t send_t, w[WORKERS];
    void *(*fn[WORKERS])(void *) = {receiver, seeker, looker, transactor};
    pthread_create(&send_t, NULL, sender, &r);
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&w[i], NULL, fn[i], &r);
    peer_sleep_ms(run_ms);
    atomic_store(&r.stop_sending, 1);
    pthread_join(send_t, NULL);
    /* A burst right before the close: these are surely still in flight. */
    for (int i = 0; i < BURST && atomic_load(&r.sends) < SENDS_MAX; i++)
        peer_send(r.p, r.ctx, r.ledger, atomic_fetch_add(&r.sends, 1));
    atomic_store(&r.closing, 1);
    int64_t t0 = peer_now_ms();
    pulsarc_client_close(r.c, 10000);
    int64_t close_ms = peer_now_ms() - t0;
    int at_close = atomic_load(&r.ledger->total);
    peer_ledger_seal(r.ledger);
    atomic_store(&r.sealed, 1);
    int done = wait_workers(&r, WORKERS);
    ck_assert_msg(done == WORKERS, "round %d: %d of %d workers still blocked %d ms after close",
                  k, WORKERS - done, WORKERS, PEER_HANG_MS);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    pulsarc_consumer_destroy(r.recv);
    pulsarc_consumer_destroy(r.listen);
    pulsarc_consumer_destroy(r.seek);
    pulsarc_consumer_destroy(r.txc);
    pulsarc_producer_destroy(r.p);
    pulsarc_client_destroy(r.c);
    peer_sleep_ms(200);
    print_round("client close", k, &r, close_ms, at_close);
    ck_assert_msg(close_ms < PEER_HANG_MS, "round %d: client close took %lld ms", k,
                  (long long)close_ms);
    peer_ledger_check("client close", r.ledger, atomic_load(&r.sends));
    ck_assert_msg(at_close == atomic_load(&r.sends), "round %d: %d of %d callbacks at close", k,
                  at_close, atomic_load(&r.sends));
    ck_assert_msg(atomic_load(&r.listened_late) == 0, "round %d: %ld listener calls after close",
                  k, atomic_load(&r.listened_late));
    ck_assert_msg(atomic_load(&r.sends) > 0, "round %d: nothing was sent", k);
    round_free(&r);
}

START_TEST(test_client_close_with_everything_in_flight) {
    static const int run_ms[ROUNDS] = {20, 100, 300, 600, 1000, 1500};
    close_round(_i, run_ms[_i]);
}
END_TEST

/* Destroy without close, with sends, listener deliveries and acks in flight. */
START_TEST(test_client_destroy_with_async_in_flight) {
    round_t r;
    round_open(&r, pct_topic("peer-destroy-inflight"));
    /* Traffic for the listener first, then a burst left in flight. */
    for (int i = 0; i < 2000; i++)
        peer_send(r.p, r.ctx, r.ledger, atomic_fetch_add(&r.sends, 1));
    pulsarc_producer_flush(r.p, PEER_HANG_MS);
    for (int i = 0; i < 3000; i++)
        peer_send(r.p, r.ctx, r.ledger, atomic_fetch_add(&r.sends, 1));
    int64_t t0 = peer_now_ms();
    pulsarc_client_destroy(r.c);
    int64_t took = peer_now_ms() - t0;
    int at_destroy = atomic_load(&r.ledger->total);
    peer_ledger_seal(r.ledger);
    atomic_store(&r.sealed, 1);
    peer_sleep_ms(500);
    print_round("client destroy", 0, &r, took, at_destroy);
    ck_assert_msg(took < PEER_HANG_MS, "client destroy took %lld ms", (long long)took);
    peer_ledger_check("client destroy", r.ledger, atomic_load(&r.sends));
    ck_assert_int_eq(atomic_load(&r.listened_late), 0);
    round_free(&r);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-close-inflight");
    TCase *t = tcase_create("close");
    tcase_set_timeout(t, 240);
    tcase_add_loop_test(t, test_client_close_with_everything_in_flight, 0, ROUNDS);
    tcase_add_test(t, test_client_destroy_with_async_in_flight);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
