/*
 * A broker that sends bytes the protocol's definitions allow but no client
 * can unpack naively: a SEND_RECEIPT whose message id nests 100,000 levels
 * deep (first_chunk_message_id inside first_chunk_message_id). Before the
 * receive path was bounded, protobuf-c's recursive unpack overflowed the
 * io thread's stack on it (SIGSEGV). Now the client must refuse the frame
 * with an error naming the command and the limit, drop that connection,
 * reconnect as for any broken connection, resend, and the send succeeds.
 * Also a partition count past the client's limit (each partition would
 * become a producer or consumer): refused with a clear error. And a
 * CONNECTED claiming a 2 GiB frame limit: capped at 128 MiB.
 *
 * Design notes: the scripted fake broker (test/faults/fake_broker.c)
 * writes the nested receipt by hand (PC_FB_DEEP). The client's one line
 * about the refused frame goes to stderr, which the test reads back by
 * pointing fd 2 at a temporary file for the test's duration.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "PulsarApi.pb-c.h"
#include "stderr_capture.h"
#include "testutil.h"

#define T(x) PULSAR__PROTO__BASE_COMMAND__TYPE__##x

/* The fault-test client with a longer operation timeout: a reconnect and resend fit in it. */
static pulsarc_client_t *client_on(const char *url) {
    const char *const longer[] = {"operationTimeoutMs", "10000", NULL};
    return fb_client_on(url, longer);
}

START_TEST(test_deeply_nested_receipt_reconnects_and_send_succeeds) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_rule(fb, T(SEND), PC_FB_DEEP, 100000, NULL, 0, 1); /* the first SEND only */
    captured_t cap;
    capture_stderr(&cap);
    pulsarc_client_t *c = client_on(pc_fb_url(fb));
    pulsarc_conf_t *pconf = pct_conf(NULL);
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, "fb-topic", pconf, &p, err, sizeof err);
    pulsarc_conf_destroy(pconf);
    pulsarc_err_t sent = e ? e : fb_send_text(p, "after the deep receipt");
    pulsarc_err_t sent2 = e ? e : fb_send_text(p, "and the next one");
    if (p)
        pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    char *log = release_stderr(&cap);
    printf("client stderr:\n%s", log);
    pc_fb_stats_t s;
    pc_fb_stats(fb, &s);
    printf("counts: conns=%llu sends=%llu send_cmds=%llu producer=%llu\n", (unsigned long long)s.conns,
           (unsigned long long)s.sends, (unsigned long long)s.cmds[T(SEND)],
           (unsigned long long)s.cmds[T(PRODUCER)]);
    ck_assert_msg(e == PULSARC_OK, "producer: %s (%s)", pulsarc_errname(e), err);
    ck_assert_msg(sent == PULSARC_OK, "send: %s", pulsarc_errname(sent));
    ck_assert_msg(sent2 == PULSARC_OK, "second send: %s", pulsarc_errname(sent2));
    ck_assert_msg(strstr(log, "bad frame: SEND_RECEIPT command of ") != NULL, "no clear error logged");
    ck_assert_msg(strstr(log, "first_chunk_message_id nests messages deeper than the limit of 16") != NULL,
                  "error does not name the limit");
    ck_assert_uint_ge(s.conns, 2);           /* reconnected */
    ck_assert_uint_ge(s.cmds[T(PRODUCER)], 2); /* producer re-created on the new connection */
    ck_assert_uint_ge(s.cmds[T(SEND)], 3);   /* the refused one resent, plus the second */
    free(log);
    pc_fb_destroy(fb);
}
END_TEST

/* Partition counts: the limit is answered as is, one more is a protocol error that says so. */
START_TEST(test_absurd_partition_count_refused) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pulsarc_client_t *c = client_on(pc_fb_url(fb));
    char err[256] = "";
    int n = -1;
    pc_fb_set_partitions(fb, 100000);
    ck_assert_msg(pulsarc_client_partitions(c, "fb-topic", &n, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(n, 100000);
    uint32_t absurd[] = {100001, 0x80000000u, 0xffffffffu};
    for (size_t i = 0; i < 3; i++) {
        pc_fb_set_partitions(fb, absurd[i]);
        err[0] = '\0';
        pulsarc_err_t e = pulsarc_client_partitions(c, "fb-topic", &n, err, sizeof err);
        printf("%u partitions: %s: %s\n", absurd[i], pulsarc_errname(e), err);
        ck_assert_int_eq(e, PULSARC_ERR_PROTOCOL);
        ck_assert_msg(strstr(err, "more than the limit of 100000") != NULL, "%s", err);
    }
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/*
 * CONNECTED claiming a 2 GiB max message size: the client takes at most
 * 128 MiB (its receive buffer grows to the limit), so a message just over
 * that is refused locally, and one under the broker's old 5 MiB still goes.
 */
START_TEST(test_connected_max_message_size_capped) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_set_max_message_size(fb, INT32_MAX);
    pulsarc_client_t *c = client_on(pc_fb_url(fb));
    pulsarc_conf_t *pconf = pct_conf(NULL);
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, "fb-topic", pconf, &p, err, sizeof err);
    pulsarc_conf_destroy(pconf);
    ck_assert_msg(e == PULSARC_OK, "producer: %s (%s)", pulsarc_errname(e), err);
    size_t big = ((size_t)128 << 20) + 1;
    char *payload = calloc(1, big);
    ck_assert_ptr_nonnull(payload);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, payload, big, 0);
    e = pulsarc_producer_send(p, m, NULL);
    pulsarc_msg_destroy(m);
    free(payload);
    printf("128 MiB + 1 with a broker claiming INT32_MAX: %s\n", pulsarc_errname(e));
    ck_assert_int_eq(e, PULSARC_ERR_MSG_TOO_BIG);
    ck_assert_int_eq(fb_send_text(p, "small"), PULSARC_OK);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("hostile_broker");
    TCase *tc = tcase_create("bytes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_deeply_nested_receipt_reconnects_and_send_succeeds);
    tcase_add_test(tc, test_absurd_partition_count_refused);
    tcase_add_test(tc, test_connected_max_message_size_capped);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
