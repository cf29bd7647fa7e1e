/*
 * Chunked messages under negative acknowledgement, ack timeout and the
 * dead-letter policy (reached by nacks or by ack timeouts) are never
 * half-delivered: every delivery, first or redelivered, is the whole
 * message, byte for byte; acknowledging it
 * acknowledges all its chunks (nothing comes back to a new consumer); a
 * message dead-lettered arrives whole on the dead-letter topic. The peers'
 * reports: a redelivered chunked message surfacing as its last chunk only,
 * one left unacked never redelivered by the ack timeout, or its chunks
 * left unacknowledged forever after the message was acked.
 *
 * Messages: M of CHUNKED_LEN bytes each, split into chunks of CHUNK bytes
 * (chunkMaxMessageSize), so each message is several chunks without large
 * memory; the nacked dead-letter scenario uses messages above the broker's
 * maxMessageSize (1,024,000 bytes), which the dead-letter producer must
 * chunk again.
 *
 * Printed ("chunks:" lines): deliveries, whole ones, broken ones (wrong
 * length or bytes), redeliveries, messages left after the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_util.h"

#define M 12
#define CHUNKED_LEN 47011
#define CHUNK "10000"

/* The payload of message i (len bytes): a pattern that differs per message and per offset. */
static uint8_t *payload(int i, size_t len) {
    uint8_t *b = malloc(len);
    for (size_t k = 0; k < len; k++)
        b[k] = (uint8_t)((k * 131 + (size_t)i * 7919 + (k >> 11)) & 0xff);
    return b;
}

static void produce(pulsarc_client_t *c, const char *topic, size_t len, const char *chunk) {
    const char *kv[] = {"batchingEnabled", "false", "chunkingEnabled", "true",
                        chunk ? "chunkMaxMessageSize" : NULL, chunk, NULL};
    pulsarc_producer_t *p = peer_producer(c, topic, kv);
    for (int i = 0; i < M; i++) {
        uint8_t *b = payload(i, len);
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, b, len, PULSARC_MSG_F_FREE);
        pulsarc_msg_set_property(m, "i", idx);
        pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
        pulsarc_msg_destroy(m);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_errname(e));
    }
    pulsarc_producer_destroy(p);
}

/* 1 when m is message i whole: its length and every byte. *i gets the index. */
static int whole(const pulsarc_msg_t *m, size_t len, int *i) {
    const char *is = pulsarc_msg_property(m, "i");
    *i = is ? atoi(is) : -1;
    if (*i < 0 || *i >= M || pulsarc_msg_len(m) != len)
        return 0;
    uint8_t *want = payload(*i, len);
    int same = memcmp(pulsarc_msg_payload(m), want, len) == 0;
    free(want);
    return same;
}

typedef struct tally {
    int deliveries, whole, broken, redeliveries, acked;
    int seen[M];
} tally_t;

static void print_tally(const char *scenario, const tally_t *t, int left) {
    printf("chunks: %-23s messages=%d deliveries=%d whole=%d broken=%d redeliveries=%d acked=%d "
           "left_after=%d\n",
           scenario, M, t->deliveries, t->whole, t->broken, t->redeliveries, t->acked, left);
    fflush(stdout);
}

/* Messages a new consumer on topic/sub still receives (1.5 s of quiet ends it). */
static int left_on(pulsarc_client_t *c, const char *topic, const char *sub) {
    const char *kv[] = {"subscriptionType", "Shared", NULL};
    pulsarc_consumer_t *cons = peer_consumer(c, topic, sub, kv);
    int n = 0;
    pulsarc_msg_t *m = NULL;
    while (pulsarc_consumer_receive(cons, &m, 1500) == PULSARC_OK) {
        n++;
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(cons);
    return n;
}

/*
 * Receives until every message was acked: the first delivery of each is
 * nacked (nack) or left unacked (ack timeout), the next one acked.
 */
static void redeliver_scenario(const char *scenario, const char *const *kv, int nack, size_t len,
                               const char *chunk) {
    pulsarc_client_t *c = peer_client(NULL, NULL);
    const char *topic = pct_topic(nack ? "peer-chunks-nack" : "peer-chunks-acktimeout");
    pulsarc_consumer_t *cons = peer_consumer(c, topic, "sub", kv);
    produce(c, topic, len, chunk);
    tally_t t = {0};
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (t.acked < M && peer_now_ms() < end) {
        pulsarc_msg_t *m = NULL;
        if (pulsarc_consumer_receive(cons, &m, 1000) != PULSARC_OK)
            continue;
        int i;
        t.deliveries++;
        if (!whole(m, len, &i)) {
            t.broken++;
            pulsarc_msg_destroy(m);
            continue;
        }
        t.whole++;
        if (t.seen[i]++) {
            t.redeliveries++;
            pulsarc_consumer_ack(cons, m);
            t.acked++;
        } else if (nack) {
            pulsarc_consumer_nack(cons, m);
        }
        pulsarc_msg_destroy(m);
    }
    peer_sleep_ms(500); /* grouped acks out */
    pulsarc_consumer_destroy(cons);
    int left = left_on(c, topic, "sub");
    print_tally(scenario, &t, left);
    ck_assert_msg(t.broken == 0, "%s: %d deliveries were not the whole message", scenario,
                  t.broken);
    ck_assert_msg(t.acked == M, "%s: %d of %d messages acked on their redelivery", scenario,
                  t.acked, M);
    ck_assert_msg(left == 0, "%s: %d messages came back after all were acked", scenario, left);
    pulsarc_client_destroy(c);
}

START_TEST(test_chunked_under_nack) {
    const char *kv[] = {"subscriptionType", "Shared", "subscriptionInitialPosition", "Earliest",
                        "negativeAckRedeliveryDelayMicros", "100000", NULL};
    redeliver_scenario("nack", kv, 1, CHUNKED_LEN, CHUNK);
}
END_TEST

static const char *const ack_timeout_kv[] = {
    "subscriptionType", "Shared", "subscriptionInitialPosition", "Earliest",
    "ackTimeoutMillis", "1000", "tickDurationMillis", "100", NULL};

/* Left unacked, each comes back whole (all its chunks redelivered, not the last alone). */
START_TEST(test_chunked_under_ack_timeout) {
    redeliver_scenario("ack timeout", ack_timeout_kv, 0, CHUNKED_LEN, CHUNK);
}
END_TEST

/* The same with unchunked messages: what the scenario above is measured against. */
START_TEST(test_unchunked_under_ack_timeout) {
    redeliver_scenario("ack timeout (unchunked)", ack_timeout_kv, 0, 1000, NULL);
}
END_TEST

/*
 * Redelivered past the limit (nacked, or left to the ack timeout): each
 * lands whole on the dead-letter topic, once, and nothing is left on the
 * topic.
 */
static void dead_letter_scenario(const char *name, const char *const *kv, int nack, size_t len,
                                 const char *chunk) {
    pulsarc_client_t *c = peer_client(NULL, NULL);
    char topic[256], dlq[512], source[64], letters[64];
    snprintf(topic, sizeof topic, "%s", pct_topic("peer-chunks-dlq"));
    snprintf(dlq, sizeof dlq, "persistent://public/default/%s-sub-DLQ", topic);
    const char *wkv[] = {"subscriptionType", "Shared", "subscriptionInitialPosition", "Earliest",
                         NULL};
    pulsarc_consumer_t *watch = peer_consumer(c, dlq, "watch", wkv);
    pulsarc_consumer_t *cons = peer_consumer(c, topic, "sub", kv);
    produce(c, topic, len, chunk);
    tally_t t = {0}, d = {0};
    /* Never ack: nack every delivery (or let it time out) until the topic goes quiet. */
    pulsarc_msg_t *m = NULL;
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (peer_now_ms() < end && pulsarc_consumer_receive(cons, &m, 3000) == PULSARC_OK) {
        int i;
        t.deliveries++;
        if (whole(m, len, &i)) {
            t.whole++;
            if (t.seen[i]++)
                t.redeliveries++;
        } else {
            t.broken++;
        }
        if (nack)
            pulsarc_consumer_nack(cons, m);
        pulsarc_msg_destroy(m);
    }
    end = peer_now_ms() + PEER_HANG_MS;
    while (d.acked < M && peer_now_ms() < end) {
        if (pulsarc_consumer_receive(watch, &m, 1000) != PULSARC_OK)
            continue;
        int i;
        d.deliveries++;
        if (whole(m, len, &i) && !d.seen[i]++) {
            d.whole++;
            d.acked++;
        } else {
            d.broken++;
        }
        pulsarc_consumer_ack(watch, m);
        pulsarc_msg_destroy(m);
    }
    peer_sleep_ms(500);
    pulsarc_consumer_destroy(cons);
    int left = left_on(c, topic, "sub");
    snprintf(source, sizeof source, "%s source", name);
    snprintf(letters, sizeof letters, "%s letters", name);
    print_tally(source, &t, left);
    print_tally(letters, &d, -1);
    ck_assert_msg(t.broken == 0, "%s: %d deliveries on the topic not whole", name, t.broken);
    ck_assert_msg(t.redeliveries == M, "%s: %d of %d messages redelivered before the letter", name,
                  t.redeliveries, M);
    ck_assert_msg(d.broken == 0, "%s: %d letters not whole or twice", name, d.broken);
    ck_assert_msg(d.whole == M, "%s: %d of %d messages dead-lettered whole", name, d.whole, M);
    ck_assert_msg(left == 0, "%s: %d messages still on the topic", name, left);
    pulsarc_consumer_destroy(watch);
    pulsarc_client_destroy(c);
}

/* Above the broker's maxMessageSize: chunked again by the dead-letter producer. */
START_TEST(test_chunked_to_dead_letter) {
    const char *kv[] = {"subscriptionType", "Shared", "subscriptionInitialPosition", "Earliest",
                        "deadLetterPolicy.maxRedeliverCount", "1",
                        "negativeAckRedeliveryDelayMicros", "100000", NULL};
    dead_letter_scenario("dlq", kv, 1, 1300000, NULL);
}
END_TEST

START_TEST(test_chunked_ack_timeout_to_dead_letter) {
    const char *kv[] = {"subscriptionType", "Shared", "subscriptionInitialPosition", "Earliest",
                        "deadLetterPolicy.maxRedeliverCount", "1", "ackTimeoutMillis", "1000",
                        "tickDurationMillis", "100", NULL};
    dead_letter_scenario("dlq ack timeout", kv, 0, CHUNKED_LEN, CHUNK);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-peer-chunks");
    TCase *t = tcase_create("chunks");
    tcase_set_timeout(t, 240);
    tcase_add_test(t, test_chunked_under_nack);
    tcase_add_test(t, test_unchunked_under_ack_timeout);
    tcase_add_test(t, test_chunked_under_ack_timeout);
    tcase_add_test(t, test_chunked_to_dead_letter);
    tcase_add_test(t, test_chunked_ack_timeout_to_dead_letter);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
