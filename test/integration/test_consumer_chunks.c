/*
 * Live-broker reassembly of chunked messages: messages several times the
 * broker's maxMessageSize (1,024,000 bytes here), sent in chunks, come out
 * of the consumer whole and byte-exact, compressed or not, interleaved
 * with small messages; acking one acks all its chunks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static uint8_t *pattern(size_t len, unsigned seed) {
    uint8_t *b = malloc(len);
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 9)) & 0xff); /* compressible, not trivial */
    return b;
}

static pulsarc_producer_t *chunking_producer(pulsarc_client_t *c, const char *topic, const char *codec) {
    const char *kv[] = {"batchingEnabled", "false", "chunkingEnabled", "true", "compressionType", codec, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return p;
}

static void send_bytes(pulsarc_producer_t *p, const uint8_t *data, size_t len, const char *tag) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, data, len, PULSARC_MSG_F_COPY);
    pulsarc_msg_set_property(m, "tag", tag);
    pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
    ck_assert_msg(e == PULSARC_OK, "send %s (%zu bytes): %s", tag, len, pulsarc_strerror(e));
    pulsarc_msg_destroy(m);
}

static pulsarc_consumer_t *consumer(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "chunks", conf, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return cons;
}

static void expect(pulsarc_consumer_t *cons, const uint8_t *data, size_t len, const char *tag) {
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 20000), PULSARC_OK);
    ck_assert_str_eq(pulsarc_msg_property(m, "tag"), tag);
    ck_assert_uint_eq(pulsarc_msg_len(m), len);
    ck_assert_msg(memcmp(pulsarc_msg_payload(m), data, len) == 0, "%s: payload differs", tag);
    ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
    pulsarc_msg_destroy(m);
}

static void round_trip(const char *codec) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("chunks");
    pulsarc_consumer_t *cons = consumer(c, topic);
    pulsarc_producer_t *p = chunking_producer(c, topic, codec);
    size_t big = 3 * 1024 * 1024 + 12345;
    uint8_t *a = pattern(big, 1), *b = pattern(1000, 2), *d = pattern(2 * 1024 * 1024, 3);
    send_bytes(p, a, big, "big-a");
    send_bytes(p, b, 1000, "small");
    send_bytes(p, d, 2 * 1024 * 1024, "big-d");
    expect(cons, a, big, "big-a");
    expect(cons, b, 1000, "small");
    expect(cons, d, 2 * 1024 * 1024, "big-d");
    usleep(300000); /* grouped acks out */
    pulsarc_consumer_destroy(cons);
    cons = consumer(c, topic); /* every chunk was acked: nothing comes back */
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 1500), PULSARC_ERR_NO_MESSAGE);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    free(a);
    free(b);
    free(d);
}

START_TEST(test_chunked_uncompressed) { round_trip("NONE"); }
END_TEST

START_TEST(test_chunked_lz4) { round_trip("LZ4"); }
END_TEST

START_TEST(test_chunked_zlib) { round_trip("ZLIB"); }
END_TEST

static Suite *chunks_suite(void) {
    Suite *s = suite_create("live-consumer-chunks");
    TCase *tc = tcase_create("chunks");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_chunked_uncompressed);
    tcase_add_test(tc, test_chunked_lz4);
    tcase_add_test(tc, test_chunked_zlib);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(chunks_suite)
