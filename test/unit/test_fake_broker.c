/*
 * Fault handling against the scripted fake broker (test/faults/fake_broker.c):
 * no real broker needed. Covers what a real broker will not do on demand:
 * retriable and fatal error replies, lookup redirect loops, a broker that
 * never answers, unanswered PINGs, broker-initiated closes, corrupt MESSAGE
 * frames, and closing or destroying handles while operations are in
 * flight (from another thread and from inside a send callback). Each test
 * prints one "counts:" line.
 *
 * Design notes: every test starts its own fake broker and client, so tests
 * are independent under Check's fork mode. Timings are asserted with wide
 * margins (2 cores, sanitizers): they prove "bounded", not "fast".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "../faults/proxy.h"
#include "PulsarApi.pb-c.h"
#include "testutil.h"

#define T(x) PULSAR__PROTO__BASE_COMMAND__TYPE__##x
#define SE(x) PULSAR__PROTO__SERVER_ERROR__##x
#define VE(x) PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__##x

/* ---------- helpers ---------- */

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pulsarc_producer_t *producer_on(pulsarc_client_t *c, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, "fb-topic", conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer: %s (%s)", pulsarc_errname(e), err);
    return p;
}

static pulsarc_consumer_t *consumer_on(pulsarc_client_t *c, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_consumer_new(c, "fb-topic", "fb-sub", conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer: %s (%s)", pulsarc_errname(e), err);
    return cons;
}

/* Receives one message and compares its text; returns the receive error. */
static pulsarc_err_t recv_text(pulsarc_consumer_t *c, int timeout_ms, char *out, size_t outlen) {
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e = pulsarc_consumer_receive(c, &m, timeout_ms);
    if (e)
        return e;
    size_t n = pulsarc_msg_len(m) < outlen - 1 ? pulsarc_msg_len(m) : outlen - 1;
    memcpy(out, pulsarc_msg_payload(m), n);
    out[n] = '\0';
    pulsarc_consumer_ack(c, m);
    pulsarc_msg_destroy(m);
    return PULSARC_OK;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Past a bound the library sets (an operation timeout), how long a close or a
 * callback may still take before the test calls it a hang: generous, so a
 * loaded machine is not mistaken for a hang, yet far below the default 30 s
 * timeout a wrong wait would fall back to. */
#define HANG_MARGIN_MS 8000

static void print_counts(const char *test, pc_fb_t *fb, const char *extra) {
    pc_fb_stats_t s;
    pc_fb_stats(fb, &s);
    printf("counts: %-28s conns=%llu closed=%llu lookup=%llu pmeta=%llu producer=%llu subscribe=%llu "
           "send=%llu ping=%llu msgs_sent=%llu acked=%llu validation_acks=%llu errors=%llu %s\n",
           test, (unsigned long long)s.conns, (unsigned long long)s.conns_closed,
           (unsigned long long)s.cmds[T(LOOKUP)], (unsigned long long)s.cmds[T(PARTITIONED_METADATA)],
           (unsigned long long)s.cmds[T(PRODUCER)], (unsigned long long)s.cmds[T(SUBSCRIBE)],
           (unsigned long long)s.cmds[T(SEND)], (unsigned long long)s.cmds[T(PING)],
           (unsigned long long)s.msgs_sent, (unsigned long long)s.acked,
           (unsigned long long)s.validation_acks, (unsigned long long)s.errors_sent, extra ? extra : "");
    fflush(stdout);
}

static uint64_t cmds(pc_fb_t *fb, int type) {
    pc_fb_stats_t s;
    pc_fb_stats(fb, &s);
    return s.cmds[type];
}

/* ---------- retriable and fatal errors ---------- */

/* `n` failures of `type` with a retriable error, then success. */
static void retried_then_ok(const char *name, int type, int server_error, int consumer) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_rule(fb, type, PC_FB_ERROR, server_error, "fake: try again later", 0, 3);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    int64_t t0 = mono_ms();
    pulsarc_producer_t *p = NULL;
    pulsarc_consumer_t *cons = NULL;
    if (consumer)
        cons = consumer_on(c, NULL);
    else
        p = producer_on(c, NULL);
    int64_t took = mono_ms() - t0;
    char extra[96];
    snprintf(extra, sizeof extra, "took_ms=%lld", (long long)took);
    print_counts(name, fb, extra);
    ck_assert_uint_ge(cmds(fb, type), 4);
    /* Backoff 100 + 200 + 400 ms (minus jitter) between the four attempts. */
    ck_assert_int_ge(took, 500);
    if (!consumer)
        ck_assert_int_eq(fb_send_text(p, "after-retries"), PULSARC_OK);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}

START_TEST(test_retry_lookup_service_not_ready) {
    retried_then_ok("lookup ServiceNotReady", T(LOOKUP), SE(ServiceNotReady), 0);
}
END_TEST

START_TEST(test_retry_lookup_too_many_requests) {
    retried_then_ok("lookup TooManyRequests", T(LOOKUP), SE(TooManyRequests), 1);
}
END_TEST

START_TEST(test_retry_producer_too_many_requests) {
    retried_then_ok("producer TooManyRequests", T(PRODUCER), SE(TooManyRequests), 0);
}
END_TEST

START_TEST(test_retry_producer_service_not_ready) {
    retried_then_ok("producer ServiceNotReady", T(PRODUCER), SE(ServiceNotReady), 0);
}
END_TEST

START_TEST(test_retry_subscribe_service_not_ready) {
    retried_then_ok("subscribe ServiceNotReady", T(SUBSCRIBE), SE(ServiceNotReady), 1);
}
END_TEST

START_TEST(test_retry_subscribe_too_many_requests) {
    retried_then_ok("subscribe TooManyRequests", T(SUBSCRIBE), SE(TooManyRequests), 1);
}
END_TEST

START_TEST(test_retry_partition_metadata_service_not_ready) {
    retried_then_ok("pmeta ServiceNotReady", T(PARTITIONED_METADATA), SE(ServiceNotReady), 0);
}
END_TEST

/* A fatal error on creation surfaces once, with the broker's text in errstr. */
static void fatal_once(const char *name, int type, int server_error, pulsarc_err_t expect,
                       int consumer) {
    pc_fb_t *fb = pc_fb_new();
    const char *text = "fake broker says: not for you (42)";
    pc_fb_rule(fb, type, PC_FB_ERROR, server_error, text, 0, -1);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    char err[256] = "";
    pulsarc_err_t e;
    int64_t t0 = mono_ms();
    if (consumer) {
        pulsarc_consumer_t *cons = NULL;
        e = pulsarc_consumer_new(c, "fb-topic", "fb-sub", NULL, &cons, err, sizeof err);
        ck_assert_ptr_null(cons);
    } else {
        pulsarc_producer_t *p = NULL;
        e = pulsarc_producer_new(c, "fb-topic", NULL, &p, err, sizeof err);
        ck_assert_ptr_null(p);
    }
    int64_t took = mono_ms() - t0;
    sleep_ms(500); /* a retry would show up here */
    char extra[400];
    snprintf(extra, sizeof extra, "took_ms=%lld err=%s errstr=\"%s\"", (long long)took,
             pulsarc_errname(e), err);
    print_counts(name, fb, extra);
    ck_assert_msg(e == expect, "got %s, expected %s", pulsarc_errname(e), pulsarc_errname(expect));
    ck_assert_msg(strstr(err, text) != NULL, "errstr \"%s\" lacks the broker's message", err);
    ck_assert_uint_eq(cmds(fb, type), 1);
    ck_assert_int_lt(took, 2000);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}

START_TEST(test_fatal_topic_not_found_producer) {
    fatal_once("producer TopicNotFound", T(PRODUCER), SE(TopicNotFound),
               PULSARC_ERR_BROKER_TOPIC_NOT_FOUND, 0);
}
END_TEST

START_TEST(test_fatal_authorization_subscribe) {
    fatal_once("subscribe AuthorizationError", T(SUBSCRIBE), SE(AuthorizationError),
               PULSARC_ERR_BROKER_AUTHORIZATION, 1);
}
END_TEST

START_TEST(test_fatal_topic_not_found_lookup) {
    fatal_once("lookup TopicNotFound", T(LOOKUP), SE(TopicNotFound),
               PULSARC_ERR_BROKER_TOPIC_NOT_FOUND, 1);
}
END_TEST

/* A retriable error that never stops: the creation gives up at its deadline. */
START_TEST(test_retriable_gives_up_at_deadline) {
    pc_fb_t *fb = pc_fb_new();
    pc_fb_rule(fb, T(PRODUCER), PC_FB_ERROR, SE(ServiceNotReady), "fake: never ready", 0, -1);
    const char *kv[] = {"operationTimeoutMs", "1500", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    int64_t t0 = mono_ms();
    pulsarc_err_t e = pulsarc_producer_new(c, "fb-topic", NULL, &p, err, sizeof err);
    int64_t took = mono_ms() - t0;
    char extra[400];
    snprintf(extra, sizeof extra, "took_ms=%lld err=%s errstr=\"%s\"", (long long)took,
             pulsarc_errname(e), err);
    print_counts("producer never ready", fb, extra);
    ck_assert(e == PULSARC_ERR_BROKER_SERVICE_NOT_READY || e == PULSARC_ERR_TIMEOUT);
    ck_assert_uint_ge(cmds(fb, T(PRODUCER)), 2);
    ck_assert_int_lt(took, 1500 + 1500);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* ---------- lookups, silence, keep-alive ---------- */

START_TEST(test_lookup_redirect_loop) {
    pc_fb_t *fb = pc_fb_new();
    pc_fb_rule(fb, T(LOOKUP), PC_FB_REDIRECT, 0, NULL, 0, -1);
    const char *kv[] = {"maxLookupRedirects", "5", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    int64_t t0 = mono_ms();
    pulsarc_err_t e = pulsarc_producer_new(c, "fb-topic", NULL, &p, err, sizeof err);
    int64_t took = mono_ms() - t0;
    char extra[400];
    snprintf(extra, sizeof extra, "took_ms=%lld err=%s errstr=\"%s\"", (long long)took,
             pulsarc_errname(e), err);
    print_counts("lookup redirect loop", fb, extra);
    ck_assert_msg(e == PULSARC_ERR_TOO_MANY_REDIRECTS, "got %s", pulsarc_errname(e));
    ck_assert_uint_ge(cmds(fb, T(LOOKUP)), 6);
    ck_assert_int_lt(took, 5000 + 1000);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* A broker that accepts and reads but never writes a byte. */
START_TEST(test_silent_broker_times_out) {
    pc_fb_t *fb = pc_fb_new();
    pc_fb_set_silent(fb, 1);
    const char *kv[] = {"operationTimeoutMs", "1000", "connectionTimeoutMs", "1000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    int64_t t0 = mono_ms();
    pulsarc_err_t e = pulsarc_producer_new(c, "fb-topic", NULL, &p, err, sizeof err);
    int64_t took = mono_ms() - t0;
    char extra[400];
    snprintf(extra, sizeof extra, "took_ms=%lld err=%s errstr=\"%s\"", (long long)took,
             pulsarc_errname(e), err);
    print_counts("silent broker", fb, extra);
    ck_assert_msg(e == PULSARC_ERR_TIMEOUT, "got %s", pulsarc_errname(e));
    ck_assert_int_lt(took, 1000 + 1000);
    ck_assert_uint_ge(cmds(fb, T(CONNECT)), 1);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* Connected, but the create command is never answered. */
START_TEST(test_unanswered_subscribe_times_out) {
    pc_fb_t *fb = pc_fb_new();
    pc_fb_rule(fb, T(SUBSCRIBE), PC_FB_IGNORE, 0, NULL, 0, -1);
    const char *kv[] = {"operationTimeoutMs", "1000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256] = "";
    int64_t t0 = mono_ms();
    pulsarc_err_t e = pulsarc_consumer_new(c, "fb-topic", "fb-sub", NULL, &cons, err, sizeof err);
    int64_t took = mono_ms() - t0;
    ck_assert(pc_fb_wait_cmds(fb, T(CLOSE_CONSUMER), 1, 1000) || 1);
    char extra[400];
    snprintf(extra, sizeof extra, "took_ms=%lld err=%s close_consumer=%llu errstr=\"%s\"",
             (long long)took, pulsarc_errname(e), (unsigned long long)cmds(fb, T(CLOSE_CONSUMER)), err);
    print_counts("subscribe never answered", fb, extra);
    ck_assert_msg(e == PULSARC_ERR_TIMEOUT, "got %s", pulsarc_errname(e));
    ck_assert_int_lt(took, 1000 + 1000);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

START_TEST(test_unanswered_ping_reconnects) {
    pc_fb_t *fb = pc_fb_new();
    const char *kv[] = {"keepAliveIntervalSeconds", "1", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = producer_on(c, NULL);
    ck_assert_int_eq(fb_send_text(p, "before"), PULSARC_OK);
    pc_fb_set_no_pong(fb, 1);
    int64_t t0 = mono_ms();
    int reconnected = pc_fb_wait_cmds(fb, T(PRODUCER), 2, 6000);
    int64_t took = mono_ms() - t0;
    pc_fb_set_no_pong(fb, 0);
    pc_fb_stats_t s;
    pc_fb_stats(fb, &s);
    char extra[128];
    snprintf(extra, sizeof extra, "detect_and_reconnect_ms=%lld", (long long)took);
    print_counts("PING never answered", fb, extra);
    ck_assert_msg(reconnected, "the producer was not re-created after unanswered PINGs");
    ck_assert_uint_ge(s.conns_closed, 1);
    ck_assert_uint_ge(s.conns, 2);
    ck_assert_int_ge(took, 900);  /* not before one interval */
    ck_assert_int_lt(took, 4500); /* about two intervals, plus backoff */
    ck_assert_int_eq(fb_send_text(p, "after"), PULSARC_OK);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* ---------- broker-initiated closes ---------- */

START_TEST(test_broker_closes_producer) {
    pc_fb_t *fb = pc_fb_new();
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_producer_t *p = producer_on(c, NULL);
    ck_assert_int_eq(fb_send_text(p, "one"), PULSARC_OK);
    pc_fb_close_producers(fb);
    ck_assert_msg(pc_fb_wait_cmds(fb, T(PRODUCER), 2, 5000), "producer not re-created");
    ck_assert_int_eq(fb_send_text(p, "two"), PULSARC_OK);
    print_counts("broker CLOSE_PRODUCER", fb, NULL);
    ck_assert_uint_eq(cmds(fb, T(SEND)), 2);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

START_TEST(test_broker_closes_consumer) {
    pc_fb_t *fb = pc_fb_new();
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_consumer_t *cons = consumer_on(c, NULL);
    char text[64];
    pc_fb_push(fb, "m0", 2, PC_FB_GOOD);
    ck_assert_int_eq(recv_text(cons, 5000, text, sizeof text), PULSARC_OK);
    ck_assert_str_eq(text, "m0");
    pc_fb_close_consumers(fb);
    ck_assert_msg(pc_fb_wait_cmds(fb, T(SUBSCRIBE), 2, 5000), "consumer not re-subscribed");
    ck_assert_msg(pc_fb_wait_cmds(fb, T(FLOW), 2, 5000), "no FLOW after re-subscribing");
    pc_fb_push(fb, "m1", 2, PC_FB_GOOD);
    ck_assert_int_eq(recv_text(cons, 5000, text, sizeof text), PULSARC_OK);
    ck_assert_str_eq(text, "m1");
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(cons, &st);
    char extra[64];
    snprintf(extra, sizeof extra, "reconnects=%llu", (unsigned long long)st.reconnects);
    print_counts("broker CLOSE_CONSUMER", fb, extra);
    ck_assert_uint_ge(st.reconnects, 1);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/*
 * A seek's SUCCESS read together with messages sent before it (no
 * CLOSE_CONSUMER in between): those messages are from before the seek and
 * must not reach the application after seek() returned, even though the
 * read that brought them had not handed them to the queue yet.
 */
START_TEST(test_seek_drops_messages_read_with_its_reply) {
    pc_fb_t *fb = pc_fb_new();
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_consumer_t *cons = consumer_on(c, NULL);
    ck_assert_msg(pc_fb_wait_cmds(fb, T(FLOW), 1, 5000), "no FLOW");
    pc_fb_set_hold_until_seek(fb, 1);
    for (int i = 0; i < 3; i++)
        pc_fb_push(fb, "before-seek", 11, PC_FB_GOOD);
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    ck_assert_int_eq(pulsarc_consumer_seek(cons, &earliest), PULSARC_OK);
    pc_fb_stats_t st;
    pc_fb_stats(fb, &st);
    ck_assert_uint_eq(st.msgs_sent, 3); /* they did go out, ahead of the reply */
    char text[64];
    pulsarc_err_t e = recv_text(cons, 500, text, sizeof text);
    ck_assert_msg(e == PULSARC_ERR_NO_MESSAGE,
                  "got \"%s\" from before the seek (%s)", e ? "" : text, pulsarc_errname(e));
    print_counts("seek reply after messages", fb, NULL);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* ---------- hostile MESSAGE frames ---------- */

/* Waits until fb saw a validation ACK for entry (with why). */
static int wait_vack(pc_fb_t *fb, int64_t entry, int why, int timeout_ms) {
    for (int waited = 0; waited < timeout_ms; waited += 20) {
        if (pc_fb_validation_acked(fb, entry, why))
            return 1;
        sleep_ms(20);
    }
    return pc_fb_validation_acked(fb, entry, why);
}

START_TEST(test_corrupt_messages_discarded_and_acked) {
    pc_fb_t *fb = pc_fb_new();
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    const char *kv[] = {"receiverQueueSize", "10", NULL};
    pulsarc_consumer_t *cons = consumer_on(c, kv);
    static const struct {
        pc_fb_spoil_t spoil;
        int why;
        const char *name;
    } bad[] = {
        {PC_FB_UNKNOWN_CODEC, VE(DecompressionError), "unknown codec"},
        {PC_FB_BAD_CHECKSUM, VE(ChecksumMismatch), "bad checksum"},
        {PC_FB_CORRUPT_LZ4, VE(DecompressionError), "corrupt lz4"},
        {PC_FB_BAD_METADATA, VE(BatchDeSerializeError), "bad metadata"},
    };
    const int nbad = (int)(sizeof bad / sizeof bad[0]);
    int64_t entries[4];
    pc_fb_push(fb, "good-0", 6, PC_FB_GOOD);
    for (int i = 0; i < nbad; i++)
        entries[i] = pc_fb_push(fb, "spoiled-payload-bytes", 21, bad[i].spoil);
    pc_fb_push(fb, "good-1", 6, PC_FB_GOOD);
    char text[64];
    ck_assert_int_eq(recv_text(cons, 5000, text, sizeof text), PULSARC_OK);
    ck_assert_str_eq(text, "good-0");
    ck_assert_int_eq(recv_text(cons, 5000, text, sizeof text), PULSARC_OK);
    ck_assert_str_eq(text, "good-1");
    /* Permits refunded for the discarded entries: 40 more all arrive (queue of 10). */
    char body[32];
    for (int i = 0; i < 40; i++) {
        snprintf(body, sizeof body, "more-%d", i);
        pc_fb_push(fb, body, strlen(body), PC_FB_GOOD);
    }
    int more = 0;
    while (more < 40 && recv_text(cons, 5000, text, sizeof text) == PULSARC_OK)
        more++;
    pulsarc_consumer_stats_t st;
    pulsarc_consumer_stats(cons, &st);
    int acked[4];
    for (int i = 0; i < nbad; i++)
        acked[i] = wait_vack(fb, entries[i], bad[i].why, i == 0 ? 2000 : 200);
    char extra[200];
    snprintf(extra, sizeof extra, "discarded=%llu received=%llu more=%d vack=[%d %d %d %d]",
             (unsigned long long)st.discarded, (unsigned long long)st.received, more, acked[0],
             acked[1], acked[2], acked[3]);
    print_counts("corrupt MESSAGE frames", fb, extra);
    ck_assert_int_eq(more, 40);
    ck_assert_uint_eq(st.discarded, (uint64_t)nbad);
    for (int i = 0; i < nbad; i++)
        ck_assert_msg(acked[i], "%s: entry %lld not acked with validation_error %d", bad[i].name,
                      (long long)entries[i], bad[i].why);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/*
 * A batch whose metadata claims a billion messages in 21 bytes: the entry
 * is discarded, and the permits refunded for it are what its bytes could
 * hold, not what it claims. Before, the consumer granted ~10^9 permits.
 */
START_TEST(test_batch_claim_does_not_inflate_permits) {
    pc_fb_t *fb = pc_fb_new();
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    const char *kv[] = {"receiverQueueSize", "10", NULL};
    pulsarc_consumer_t *cons = consumer_on(c, kv);
    int64_t liar = pc_fb_push(fb, "spoiled-payload-bytes", 21, PC_FB_HUGE_BATCH);
    char body[32], text[64];
    for (int i = 0; i < 30; i++) {
        snprintf(body, sizeof body, "after-%d", i);
        pc_fb_push(fb, body, strlen(body), PC_FB_GOOD);
    }
    int got = 0;
    while (got < 30 && recv_text(cons, 5000, text, sizeof text) == PULSARC_OK)
        got++;
    int vack = wait_vack(fb, liar, VE(BatchDeSerializeError), 2000);
    pc_fb_stats_t st;
    pc_fb_stats(fb, &st);
    char extra[160];
    snprintf(extra, sizeof extra, "received=%d permits=%llu sent=%llu queue=10 vack=%d", got,
             (unsigned long long)st.permits, (unsigned long long)st.msgs_sent, vack);
    print_counts("batch claiming 10^9 messages", fb, extra);
    ck_assert_int_eq(got, 30);
    ck_assert_msg(vack, "the lying batch was not acked with BatchDeSerializeError");
    /* Granted = what was sent back plus at most the queue's worth ahead of it. */
    ck_assert_uint_le(st.permits, st.msgs_sent + 10 + 21 / 6 + 1);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* ---------- close and destroy with operations in flight ---------- */

#define NSEND 200

typedef struct cbstate {
    _Atomic int calls[NSEND];
    _Atomic int total, ok, closed, other;
    _Atomic int close_mode; /* 1: close from the first success, 2: destroy there */
    pulsarc_producer_t *producer;
} cbstate_t;

static cbstate_t cbs;

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)id, (void)msg;
    int i = (int)(intptr_t)opaque;
    atomic_fetch_add(&cbs.calls[i], 1);
    atomic_fetch_add(&cbs.total, 1);
    if (err == PULSARC_OK)
        atomic_fetch_add(&cbs.ok, 1);
    else if (err == PULSARC_ERR_CLOSED)
        atomic_fetch_add(&cbs.closed, 1);
    else
        atomic_fetch_add(&cbs.other, 1);
    int mode = atomic_exchange(&cbs.close_mode, 0);
    if (mode == 1)
        ck_assert_int_eq(pulsarc_producer_close(p), PULSARC_OK);
    else if (mode == 2)
        pulsarc_producer_destroy(p);
}

static void send_all_async(pulsarc_producer_t *p) {
    for (int i = 0; i < NSEND; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY);
        pulsarc_producer_send_async(p, m, on_sent, (void *)(intptr_t)i);
    }
}

/* Waits until every callback ran; checks each ran exactly once. */
static int64_t wait_callbacks(int timeout_ms) {
    int64_t t0 = mono_ms();
    while (atomic_load(&cbs.total) < NSEND && mono_ms() - t0 < timeout_ms)
        sleep_ms(10);
    int64_t took = mono_ms() - t0;
    sleep_ms(200); /* a second completion would show up here */
    for (int i = 0; i < NSEND; i++)
        ck_assert_msg(atomic_load(&cbs.calls[i]) == 1, "send %d completed %d times", i,
                      atomic_load(&cbs.calls[i]));
    return took;
}

typedef struct recv_arg {
    pulsarc_consumer_t *c;
    pulsarc_err_t err;
} recv_arg_t;

static void *blocked_receive(void *arg) {
    recv_arg_t *r = arg;
    pulsarc_msg_t *m = NULL;
    r->err = pulsarc_consumer_receive(r->c, &m, 20000);
    pulsarc_msg_destroy(m);
    return NULL;
}

static const char *const PENDING_KV[] = {"sendTimeoutMs", "0", "batchingEnabled", "false",
                                         "maxPendingMessages", "1000", NULL};

START_TEST(test_close_inflight_from_other_thread) {
    memset(&cbs, 0, sizeof cbs);
    pc_fb_t *fb = pc_fb_new();
    pc_fb_rule(fb, T(SEND), PC_FB_IGNORE, 0, NULL, 0, -1); /* receipts never come */
    const char *ckv[] = {"operationTimeoutMs", "2000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), ckv);
    pulsarc_producer_t *p = producer_on(c, PENDING_KV);
    pulsarc_consumer_t *cons = consumer_on(c, NULL);
    recv_arg_t ra = {cons, PULSARC_OK};
    pthread_t rt;
    pthread_create(&rt, NULL, blocked_receive, &ra);
    send_all_async(p);
    ck_assert(pc_fb_wait_cmds(fb, T(SEND), NSEND, 5000));
    int64_t t0 = mono_ms();
    ck_assert_int_eq(pulsarc_producer_close(p), PULSARC_OK);
    ck_assert_int_eq(pulsarc_consumer_close(cons), PULSARC_OK);
    pthread_join(rt, NULL);
    int64_t close_ms = mono_ms() - t0;
    int64_t cb_ms = wait_callbacks(5000);
    char extra[200];
    snprintf(extra, sizeof extra, "callbacks=%d ok=%d closed=%d other=%d receive=%s close_ms=%lld cb_wait_ms=%lld",
             cbs.total, cbs.ok, cbs.closed, cbs.other, pulsarc_errname(ra.err), (long long)close_ms,
             (long long)cb_ms);
    print_counts("close with sends in flight", fb, extra);
    ck_assert_int_eq(cbs.total, NSEND);
    ck_assert_int_eq(cbs.closed, NSEND);
    ck_assert_int_eq(ra.err, PULSARC_ERR_CLOSED);
    ck_assert_int_lt(close_ms, 2000 + HANG_MARGIN_MS);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* mode 1: pulsarc_producer_close inside the first callback; 2: destroy there. */
static void close_from_callback(int mode, const char *name) {
    memset(&cbs, 0, sizeof cbs);
    pc_fb_t *fb = pc_fb_new();
    pc_fb_rule(fb, T(SEND), PC_FB_IGNORE, 0, NULL, 5, -1); /* 5 receipts, then silence */
    const char *ckv[] = {"operationTimeoutMs", "2000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), ckv);
    pulsarc_producer_t *p = producer_on(c, PENDING_KV);
    atomic_store(&cbs.close_mode, mode);
    int64_t t0 = mono_ms();
    send_all_async(p);
    int64_t cb_ms = wait_callbacks(2000 + HANG_MARGIN_MS + 2000);
    char extra[200];
    snprintf(extra, sizeof extra, "callbacks=%d ok=%d closed=%d other=%d all_done_ms=%lld", cbs.total,
             cbs.ok, cbs.closed, cbs.other, (long long)(mono_ms() - t0));
    print_counts(name, fb, extra);
    ck_assert_int_eq(cbs.total, NSEND);
    ck_assert_int_ge(cbs.ok, 1);
    ck_assert_int_eq(cbs.ok + cbs.closed, NSEND);
    ck_assert_int_lt(cb_ms, 2000 + HANG_MARGIN_MS);
    if (mode == 1)
        pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}

START_TEST(test_close_from_send_callback) { close_from_callback(1, "close inside send callback"); }
END_TEST

START_TEST(test_destroy_from_send_callback) { close_from_callback(2, "destroy inside send callback"); }
END_TEST

typedef struct closer_arg {
    pulsarc_client_t *c;
    pulsarc_err_t err;
} closer_arg_t;

static void *close_client(void *arg) {
    closer_arg_t *a = arg;
    a->err = pulsarc_client_close(a->c, 3000);
    return NULL;
}

START_TEST(test_client_close_inflight_from_other_thread) {
    memset(&cbs, 0, sizeof cbs);
    pc_fb_t *fb = pc_fb_new();
    pc_fb_rule(fb, T(SEND), PC_FB_IGNORE, 0, NULL, 0, -1);
    const char *ckv[] = {"operationTimeoutMs", "2000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), ckv);
    pulsarc_producer_t *p = producer_on(c, PENDING_KV);
    pulsarc_consumer_t *cons = consumer_on(c, NULL);
    recv_arg_t ra = {cons, PULSARC_OK};
    pthread_t rt, ct;
    pthread_create(&rt, NULL, blocked_receive, &ra);
    send_all_async(p);
    ck_assert(pc_fb_wait_cmds(fb, T(SEND), NSEND / 2, 5000));
    closer_arg_t ca = {c, PULSARC_OK};
    int64_t t0 = mono_ms();
    pthread_create(&ct, NULL, close_client, &ca);
    pthread_join(ct, NULL);
    pthread_join(rt, NULL);
    int64_t close_ms = mono_ms() - t0;
    int64_t cb_ms = wait_callbacks(5000);
    char extra[200];
    snprintf(extra, sizeof extra, "callbacks=%d ok=%d closed=%d other=%d receive=%s close=%s close_ms=%lld cb_wait_ms=%lld",
             cbs.total, cbs.ok, cbs.closed, cbs.other, pulsarc_errname(ra.err), pulsarc_errname(ca.err),
             (long long)close_ms, (long long)cb_ms);
    print_counts("client close, ops in flight", fb, extra);
    ck_assert_int_eq(ca.err, PULSARC_OK);
    ck_assert_int_eq(cbs.total, NSEND);
    ck_assert_int_eq(cbs.closed, NSEND);
    ck_assert_int_eq(ra.err, PULSARC_ERR_CLOSED);
    ck_assert_int_lt(close_ms, 3000 + HANG_MARGIN_MS);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* ---------- the proxy, checked offline against the fake broker ---------- */

START_TEST(test_proxy_cut_and_stall_offline) {
    pc_fb_t *fb = pc_fb_new();
    pc_proxy_t *px = pc_proxy_new("127.0.0.1", pc_fb_port(fb));
    ck_assert_ptr_nonnull(px);
    pulsarc_client_t *c = fb_client_on(pc_proxy_url(px), NULL);
    pulsarc_producer_t *p = producer_on(c, NULL);
    ck_assert_int_eq(fb_send_text(p, "a"), PULSARC_OK);
    pc_proxy_cut_all(px);
    ck_assert_int_eq(fb_send_text(p, "b"), PULSARC_OK); /* resent after the reconnect */
    pc_proxy_cut_after(px, 3);                       /* in the middle of the next frame */
    ck_assert_int_eq(fb_send_text(p, "c"), PULSARC_OK);
    pc_proxy_stall(px, 700);
    int64_t t0 = mono_ms();
    ck_assert_int_eq(fb_send_text(p, "d"), PULSARC_OK);
    int64_t stalled = mono_ms() - t0;
    pc_proxy_delay(px, 50);
    t0 = mono_ms();
    ck_assert_int_eq(fb_send_text(p, "e"), PULSARC_OK);
    int64_t delayed = mono_ms() - t0;
    pc_proxy_delay(px, 0);
    pc_proxy_stats_t ps;
    pc_proxy_stats(px, &ps);
    char extra[300];
    snprintf(extra, sizeof extra, "proxy: accepted=%llu cut_events=%llu conns_cut=%llu lookups_rewritten=%llu stalled_ms=%lld delayed_ms=%lld",
             (unsigned long long)ps.accepted, (unsigned long long)ps.cut_events,
             (unsigned long long)ps.conns_cut, (unsigned long long)ps.lookups_rewritten,
             (long long)stalled, (long long)delayed);
    print_counts("proxy offline", fb, extra);
    ck_assert_uint_eq(ps.cut_events, 2);
    ck_assert_uint_ge(ps.accepted, 3);
    ck_assert_uint_ge(ps.lookups_rewritten, 3);
    ck_assert_int_ge(stalled, 600);
    ck_assert_int_ge(delayed, 90); /* 50 ms each way */
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_proxy_destroy(px);
    pc_fb_destroy(fb);
}
END_TEST


/* ---------- hostile brokers: reconnects paced by the backoff ---------- */

/*
 * A created producer or consumer loses its broker, which from then on
 * treats every `type` command with `action` (closes at once, sends
 * garbage, or answers and closes). Over WINDOW_MS the client may open
 * only as many connections as a doubling schedule from 100 ms allows:
 * attempts at about 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3 s, i.e. 7 (jitter only
 * shortens a delay, by at most a tenth). The bound leaves room for a few
 * more; a reconnect every 0.3 s would make about 27. At least 3 prove it
 * keeps trying.
 */
#define WINDOW_MS 8000
#define MAX_CONNS_IN_WINDOW 11
/* Longer than the client's healthy period (2 s), after which a loss starts over. */
#define PC_HEALTHY_WAIT_MS 2500

static void reconnects_bounded(const char *name, int type, pc_fb_action_t action, int consumer) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *kv[] = {"maxBackoffIntervalMs", "60000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = consumer ? NULL : producer_on(c, NULL);
    pulsarc_consumer_t *cons = consumer ? consumer_on(c, NULL) : NULL;
    pc_fb_rule(fb, type, action, 0, NULL, 0, -1);
    pc_fb_stats_t before, after;
    pc_fb_stats(fb, &before);
    pc_fb_drop_connections(fb);
    sleep_ms(WINDOW_MS);
    pc_fb_stats(fb, &after);
    uint64_t conns = after.conns - before.conns;
    char extra[96];
    snprintf(extra, sizeof extra, "conns_in_%ds=%llu", WINDOW_MS / 1000, (unsigned long long)conns);
    print_counts(name, fb, extra);
    ck_assert_msg(conns >= 3, "%s: only %llu reconnect attempts", name, (unsigned long long)conns);
    ck_assert_msg(conns <= MAX_CONNS_IN_WINDOW, "%s: %llu connections in %d ms, backoff not applied",
                  name, (unsigned long long)conns, WINDOW_MS);
    if (p)
        pulsarc_producer_destroy(p);
    if (cons)
        pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}

START_TEST(test_backoff_broker_closes_at_once) {
    reconnects_bounded("closes at once", T(CONNECT), PC_FB_CLOSE, 0);
}
END_TEST

START_TEST(test_backoff_broker_sends_garbage) {
    reconnects_bounded("sends garbage", T(CONNECT), PC_FB_GARBAGE, 1);
}
END_TEST

START_TEST(test_backoff_broker_drops_created_producer) {
    reconnects_bounded("drops after PRODUCER", T(PRODUCER), PC_FB_REPLY_CLOSE, 0);
}
END_TEST

START_TEST(test_backoff_broker_drops_created_consumer) {
    reconnects_bounded("drops after SUBSCRIBE", T(SUBSCRIBE), PC_FB_REPLY_CLOSE, 1);
}
END_TEST

/*
 * After a drop, every `type` is answered ServiceNotReady: counted as
 * commands of that type. A lookup answered so retries on the owner
 * schedule, doubling from 100 ms to a 1 s cap: attempts at about 0, 0.1,
 * 0.3, 0.7, 1.5 s and then every second, 11 in the window, 12 when jitter
 * shortens every delay by its full tenth. Retrying every 0.3 s would make
 * about 27.
 */
#define NOT_READY_MAX_IN_WINDOW 13
static void not_ready_bounded(const char *name, int type) {
    pc_fb_t *fb = pc_fb_new();
    const char *kv[] = {"maxBackoffIntervalMs", "60000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = producer_on(c, NULL);
    pc_fb_rule(fb, type, PC_FB_ERROR, SE(ServiceNotReady), "fake: not ready", 0, -1);
    uint64_t before = cmds(fb, type);
    pc_fb_drop_connections(fb);
    sleep_ms(WINDOW_MS);
    uint64_t n = cmds(fb, type) - before;
    char extra[96];
    snprintf(extra, sizeof extra, "attempts_in_%ds=%llu", WINDOW_MS / 1000, (unsigned long long)n);
    print_counts(name, fb, extra);
    ck_assert_uint_ge(n, 3);
    ck_assert_uint_le(n, NOT_READY_MAX_IN_WINDOW);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}

START_TEST(test_backoff_lookup_not_ready) {
    not_ready_bounded("LOOKUP ServiceNotReady", T(LOOKUP));
}
END_TEST

START_TEST(test_backoff_producer_not_ready) {
    not_ready_bounded("PRODUCER ServiceNotReady", T(PRODUCER));
}
END_TEST

/*
 * The broker closes a producer whose re-creation it has not answered (an
 * unload while the topic loads). The client must retry at once instead of
 * waiting operationTimeoutMs (20 s here) for an answer that never comes;
 * 10 s is the hang bound.
 */
START_TEST(test_close_during_create_retried_at_once) {
    pc_fb_t *fb = pc_fb_new();
    const char *kv[] = {"operationTimeoutMs", "20000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = producer_on(c, NULL);
    ck_assert_int_eq(fb_send_text(p, "one"), PULSARC_OK);
    pc_fb_rule(fb, T(PRODUCER), PC_FB_IGNORE, 0, NULL, 0, 1);
    pc_fb_close_producers(fb);
    ck_assert_msg(pc_fb_wait_cmds(fb, T(PRODUCER), 2, 5000), "producer not re-created");
    int64_t t0 = mono_ms();
    pc_fb_close_producers(fb); /* reaches the unanswered create */
    int again = pc_fb_wait_cmds(fb, T(PRODUCER), 3, 10000);
    char extra[64];
    snprintf(extra, sizeof extra, "retry_after_ms=%lld", (long long)(mono_ms() - t0));
    print_counts("close during create", fb, extra);
    ck_assert_msg(again, "the create the broker closed was waited for instead of retried");
    ck_assert_int_eq(fb_send_text(p, "two"), PULSARC_OK);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

/* After a drop of a long-lived producer, the reconnect takes the initial delay. */
START_TEST(test_backoff_resets_after_healthy_period) {
    pc_fb_t *fb = pc_fb_new();
    const char *kv[] = {"maxBackoffIntervalMs", "60000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), kv);
    pulsarc_producer_t *p = producer_on(c, NULL);
    /* Three quick losses grow the delay, then the broker behaves again. */
    pc_fb_rule(fb, T(PRODUCER), PC_FB_REPLY_CLOSE, 0, NULL, 0, 3);
    pc_fb_drop_connections(fb);
    ck_assert_msg(pc_fb_wait_cmds(fb, T(PRODUCER), 5, 20000), "producer not re-created");
    ck_assert_int_eq(fb_send_text(p, "settled"), PULSARC_OK);
    sleep_ms(PC_HEALTHY_WAIT_MS);
    uint64_t before = cmds(fb, T(PRODUCER));
    int64_t t0 = mono_ms();
    pc_fb_drop_connections(fb);
    ck_assert_msg(pc_fb_wait_cmds(fb, T(PRODUCER), before + 1, 20000), "producer not re-created");
    int64_t took = mono_ms() - t0;
    char extra[64];
    snprintf(extra, sizeof extra, "recreate_ms=%lld", (long long)took);
    print_counts("reset after healthy", fb, extra);
    /* 3 quick losses leave the next delay at 800 ms; a reset one is 100 ms. Hang bound only. */
    ck_assert_int_eq(fb_send_text(p, "again"), PULSARC_OK);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("fake-broker");
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_retry_lookup_service_not_ready);
    tcase_add_test(tc, test_retry_lookup_too_many_requests);
    tcase_add_test(tc, test_retry_producer_too_many_requests);
    tcase_add_test(tc, test_retry_producer_service_not_ready);
    tcase_add_test(tc, test_retry_subscribe_service_not_ready);
    tcase_add_test(tc, test_retry_subscribe_too_many_requests);
    tcase_add_test(tc, test_retry_partition_metadata_service_not_ready);
    tcase_add_test(tc, test_fatal_topic_not_found_producer);
    tcase_add_test(tc, test_fatal_authorization_subscribe);
    tcase_add_test(tc, test_fatal_topic_not_found_lookup);
    tcase_add_test(tc, test_retriable_gives_up_at_deadline);
    tcase_add_test(tc, test_lookup_redirect_loop);
    tcase_add_test(tc, test_silent_broker_times_out);
    tcase_add_test(tc, test_unanswered_subscribe_times_out);
    tcase_add_test(tc, test_unanswered_ping_reconnects);
    tcase_add_test(tc, test_broker_closes_producer);
    tcase_add_test(tc, test_broker_closes_consumer);
    tcase_add_test(tc, test_seek_drops_messages_read_with_its_reply);
    tcase_add_test(tc, test_corrupt_messages_discarded_and_acked);
    tcase_add_test(tc, test_batch_claim_does_not_inflate_permits);
    tcase_add_test(tc, test_close_inflight_from_other_thread);
    tcase_add_test(tc, test_close_from_send_callback);
    tcase_add_test(tc, test_destroy_from_send_callback);
    tcase_add_test(tc, test_client_close_inflight_from_other_thread);
    tcase_add_test(tc, test_proxy_cut_and_stall_offline);
    tcase_add_test(tc, test_backoff_broker_closes_at_once);
    tcase_add_test(tc, test_backoff_broker_sends_garbage);
    tcase_add_test(tc, test_backoff_broker_drops_created_producer);
    tcase_add_test(tc, test_backoff_broker_drops_created_consumer);
    tcase_add_test(tc, test_backoff_lookup_not_ready);
    tcase_add_test(tc, test_backoff_producer_not_ready);
    tcase_add_test(tc, test_backoff_resets_after_healthy_period);
    tcase_add_test(tc, test_close_during_create_retried_at_once);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
