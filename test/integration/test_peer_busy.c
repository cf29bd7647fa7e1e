/*
 * ProducerBusy and ConsumerBusy after a reconnect. The client's connection
 * dies on its side while the broker has not noticed yet (the fault proxy
 * resets the client side and holds the broker side open for a few
 * seconds): the client reconnects at once and asks for its named producer
 * or its Exclusive subscription again, and the broker, still holding the
 * old ones, answers ProducerBusy / ConsumerBusy until it drops the old
 * connection. That answer must be retried, never surfaced as fatal: the
 * application's sends all succeed, its receives all arrive.
 *
 * Printed ("busy:" lines): messages sent, acknowledged, stored, received,
 * and the broker's count of producers / consumers seen right after the
 * cut (1: it still held the old one, so the scenario did exercise the
 * busy answer) and at the end.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_util.h"

#define HOLD_MS 5000 /* the broker side of the dead connection stays open this long */

/* The broker's view: publishers on topic, and consumers of subscription sub (NULL: none). */
static void broker_view(const char *topic, const char *sub, int *publishers, int *consumers) {
    pulsarc_admin_t *a = NULL;
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"webServiceUrl", pct_admin_url(), NULL});
    char err[256];
    ck_assert_msg(pulsarc_admin_new(conf, &a, err, sizeof err) == PULSARC_OK, "admin: %s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_admin_topic_stats_t *st = NULL;
    *publishers = *consumers = -1;
    if (pulsarc_admin_topic_stats(a, topic, &st, err, sizeof err) == PULSARC_OK) {
        *publishers = st->publishers;
        for (size_t i = 0; sub && i < st->nsubs; i++)
            if (strcmp(st->subs[i].name, sub) == 0)
                *consumers = st->subs[i].consumers;
        pulsarc_admin_topic_stats_free(st);
    }
    pulsarc_admin_destroy(a);
}

static void send_sync(pulsarc_producer_t *p, const char *body) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
    pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
    pulsarc_msg_destroy(m);
    ck_assert_msg(e == PULSARC_OK, "send %s: %s", body, pulsarc_errname(e));
}

static void producer_busy(const char *scenario, int alive) {
    enum { N = 200 };
    const char *topic = pct_topic("peer-busy-producer");
    pc_proxy_t *px = peer_proxy();
    const char *ckv[] = {"operationTimeoutMs", "5000", NULL};
    pulsarc_client_t *c = peer_client(pc_proxy_url(px), ckv);
    const char *kv[] = {"producerName", "busy-writer", "sendTimeoutMs", "0",
                        "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    peer_ledger_t *l = peer_ledger_new();
    peer_send_ctx_t *ctx = calloc(N, sizeof *ctx);
    for (int i = 0; i < N / 2; i++)
        peer_send(p, ctx, l, i);
    ck_assert_int_eq(pulsarc_producer_flush(p, PEER_HANG_MS), PULSARC_OK);
    pc_proxy_orphan_all(px, HOLD_MS, alive);
    int pubs_cut, cons_cut;
    broker_view(topic, NULL, &pubs_cut, &cons_cut);
    for (int i = N / 2; i < N; i++)
        peer_send(p, ctx, l, i);
    pulsarc_err_t fe = pulsarc_producer_flush(p, PEER_HANG_MS);
    int seen = peer_ledger_wait(l, N);
    pc_proxy_stats_t ps;
    pc_proxy_stats(px, &ps);
    int pubs_end;
    broker_view(topic, NULL, &pubs_end, &cons_cut);
    pulsarc_producer_destroy(p);
    peer_ledger_seal(l);
    pulsarc_client_t *direct = peer_client(NULL, NULL);
    int stored = peer_count_stored(direct, topic);
    peer_ledger_print(scenario, l, N);
    printf("busy: %s sent=%d acked=%d stored=%d publishers_after_cut=%d publishers_end=%d "
           "proxy_connections=%llu flush=%s\n",
           scenario, N, atomic_load(&l->ok), stored, pubs_cut, pubs_end, (unsigned long long)ps.accepted,
           pulsarc_errname(fe));
    ck_assert_msg(seen == N, "%s: %d of %d callbacks", scenario, seen, N);
    peer_ledger_check(scenario, l, N);
    ck_assert_msg(atomic_load(&l->ok) == N, "%s: %d of %d sends failed (last %s)", scenario,
                  N - atomic_load(&l->ok),
                  N, pulsarc_errname((pulsarc_err_t)atomic_load(&l->last_other)));
    ck_assert_int_ge(stored, N);
    pulsarc_client_destroy(direct);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
    free(ctx);
    free(l);
}

static void consumer_busy(const char *scenario, int alive) {
    enum { N = 200 };
    const char *topic = pct_topic("peer-busy-consumer");
    pc_proxy_t *px = peer_proxy();
    const char *ckv[] = {"operationTimeoutMs", "5000", NULL};
    pulsarc_client_t *c = peer_client(pc_proxy_url(px), ckv);
    const char *kv[] = {"subscriptionType", "Exclusive", "subscriptionInitialPosition", "Earliest",
                        NULL};
    pulsarc_consumer_t *cons = peer_consumer(c, topic, "busy-sub", kv);
    pulsarc_client_t *direct = peer_client(NULL, NULL);
    pulsarc_producer_t *p = peer_producer(direct, topic, NULL);
    char body[32];
    for (int i = 0; i < N / 2; i++) {
        snprintf(body, sizeof body, "m%d", i);
        send_sync(p, body);
    }
    int *seen = calloc(N, sizeof *seen);
    int got = 0, received = 0;
    pulsarc_err_t last = PULSARC_OK;
    while (got < N / 2) {
        pulsarc_msg_t *m = NULL;
        last = pulsarc_consumer_receive(cons, &m, PEER_HANG_MS);
        ck_assert_msg(last == PULSARC_OK, "receive before the cut: %s", pulsarc_errname(last));
        int i = peer_payload_index(m);
        received++;
        if (i >= 0 && i < N && !seen[i]++)
            got++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    pc_proxy_orphan_all(px, HOLD_MS, alive);
    int pubs, cons_cut, cons_end;
    broker_view(topic, "busy-sub", &pubs, &cons_cut);
    for (int i = N / 2; i < N; i++) {
        snprintf(body, sizeof body, "m%d", i);
        send_sync(p, body);
    }
    while (got < N) {
        pulsarc_msg_t *m = NULL;
        last = pulsarc_consumer_receive(cons, &m, PEER_HANG_MS);
        if (last != PULSARC_OK)
            break;
        int i = peer_payload_index(m);
        received++;
        if (i >= 0 && i < N && !seen[i]++)
            got++;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_stats_t cs;
    pulsarc_consumer_stats(cons, &cs);
    broker_view(topic, "busy-sub", &pubs, &cons_end);
    printf("busy: %s sent=%d unique=%d deliveries=%d reconnects=%llu "
           "consumers_after_cut=%d consumers_end=%d last=%s\n",
           scenario, N, got, received, (unsigned long long)cs.reconnects, cons_cut, cons_end,
           pulsarc_errname(last));
    ck_assert_msg(got == N, "%s: %d of %d messages arrived, receive said %s", scenario, got, N,
                  pulsarc_errname(last));
    ck_assert_int_eq(pulsarc_consumer_is_connected(cons), 1);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(direct);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
    free(seen);
}

/* The broker's side of the dead connection is silent: it waits for it or
 * finds it dead by its own liveness check. */
START_TEST(test_producer_after_silent_cut) { producer_busy("producer silent", 0); }
END_TEST
START_TEST(test_consumer_after_silent_cut) { consumer_busy("consumer silent", 0); }
END_TEST

/* The old connection still answers the broker's PINGs: the broker refuses the
 * newcomer with ProducerBusy / ConsumerBusy until the old one closes. */
START_TEST(test_producer_busy_is_retried) { producer_busy("producer busy", 1); }
END_TEST
START_TEST(test_consumer_busy_is_retried) { consumer_busy("consumer busy", 1); }
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-busy");
    TCase *t = tcase_create("busy");
    tcase_set_timeout(t, 180);
    tcase_add_test(t, test_producer_after_silent_cut);
    tcase_add_test(t, test_consumer_after_silent_cut);
    tcase_add_test(t, test_producer_busy_is_retried);
    tcase_add_test(t, test_consumer_busy_is_retried);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
