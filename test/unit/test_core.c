/*
 * Unit tests for the pure core modules: error, crc32c, url, topic, hash,
 * backoff, msgid, base64. One tcase per module. No broker, no sockets.
 */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/backoff.h"
#include "core/base64.h"
#include "core/crc32c.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/topic.h"
#include "core/url.h"
#include "pulsarc.h"
#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Deterministic test randomness (xorshift64), so failures reproduce. */
static uint64_t test_rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void) { return pct_xorshift(&test_rng); }

static void fill_random(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

#define ck_assert_contains(hay, needle)                                                    \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay),    \
                  (needle))

/* ======================================================================== */
/* error */

static const pulsarc_err_t retriable_set[] = {
    PULSARC_ERR_TIMEOUT,
    PULSARC_ERR_DISCONNECTED,
    PULSARC_ERR_CONNECT,
    PULSARC_ERR_RESOLVE,
    PULSARC_ERR_IO,
    PULSARC_ERR_BROKER_UNKNOWN,
    PULSARC_ERR_BROKER_METADATA,
    PULSARC_ERR_BROKER_PERSISTENCE,
    PULSARC_ERR_BROKER_SERVICE_NOT_READY,
    PULSARC_ERR_BROKER_TOO_MANY_REQUESTS,
    PULSARC_ERR_BROKER_CONSUMER_NOT_FOUND,
    PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND,
    PULSARC_ERR_BROKER_PRODUCER_BLOCKED_QUOTA_ERROR,
};

static int in_retriable_set(int v) {
    for (size_t i = 0; i < NELEM(retriable_set); i++)
        if ((int)retriable_set[i] == v)
            return 1;
    return 0;
}

/* Every defined value: -28..0 and 1000..1025. */
static int all_err_values(int *out) {
    int n = 0;
    for (int v = PULSARC_ERR_CRYPTO; v <= 0; v++)
        out[n++] = v;
    for (int v = PULSARC_ERR_BROKER_BASE; v <= PULSARC_ERR_BROKER_PRODUCER_FENCED; v++)
        out[n++] = v;
    return n;
}

START_TEST(error_names_and_descriptions) {
    int vals[64];
    int n = all_err_values(vals);
    ck_assert_int_eq(n, 29 + 26);
    for (int i = 0; i < n; i++) {
        pulsarc_err_t e = (pulsarc_err_t)vals[i];
        ck_assert_ptr_nonnull(pulsarc_strerror(e));
        ck_assert_int_gt((int)strlen(pulsarc_strerror(e)), 0);
        ck_assert_str_ne(pulsarc_strerror(e), "unknown error");
        ck_assert_int_gt((int)strlen(pulsarc_errname(e)), 0);
        ck_assert_str_ne(pulsarc_errname(e), "UNKNOWN");
        for (int j = 0; j < i; j++) /* names are unique */
            ck_assert_str_ne(pulsarc_errname(e), pulsarc_errname((pulsarc_err_t)vals[j]));
    }
    ck_assert_str_eq(pulsarc_errname(PULSARC_OK), "OK");
    ck_assert_str_eq(pulsarc_errname(PULSARC_ERR_TIMEOUT), "TIMEOUT");
    ck_assert_str_eq(pulsarc_errname(PULSARC_ERR_NOT_FOUND), "NOT_FOUND");
    ck_assert_str_eq(pulsarc_errname(PULSARC_ERR_BROKER_PRODUCER_FENCED),
                     "BROKER_PRODUCER_FENCED");
}
END_TEST

START_TEST(error_unknown_values) {
    const int bad[] = {-29, -1000, 1, 999, 1026, 5000, INT_MIN, INT_MAX};
    for (size_t i = 0; i < NELEM(bad); i++) {
        pulsarc_err_t e = (pulsarc_err_t)bad[i];
        ck_assert_str_eq(pulsarc_strerror(e), "unknown error");
        ck_assert_str_eq(pulsarc_errname(e), "UNKNOWN");
        ck_assert_int_eq(pulsarc_err_is_retriable(e), 0);
    }
}
END_TEST

START_TEST(error_retriable_classification) {
    int vals[64];
    int n = all_err_values(vals);
    for (int i = 0; i < n; i++)
        ck_assert_msg(pulsarc_err_is_retriable((pulsarc_err_t)vals[i]) ==
                          in_retriable_set(vals[i]),
                      "wrong classification for %s", pulsarc_errname((pulsarc_err_t)vals[i]));
    ck_assert(!pulsarc_err_is_retriable(PULSARC_OK));
    ck_assert(!pulsarc_err_is_retriable(PULSARC_ERR_BROKER_AUTHORIZATION));
    ck_assert(!pulsarc_err_is_retriable(PULSARC_ERR_BROKER_PRODUCER_FENCED));
    ck_assert(!pulsarc_err_is_retriable(PULSARC_ERR_BROKER_TOPIC_TERMINATED));
    ck_assert(pulsarc_err_is_retriable(PULSARC_ERR_BROKER_SERVICE_NOT_READY));
}
END_TEST

START_TEST(error_seterr) {
    char buf[16];
    ck_assert_int_eq(pc_seterr(NULL, 0, PULSARC_ERR_TIMEOUT, "x %d", 1), PULSARC_ERR_TIMEOUT);
    ck_assert_int_eq(pc_seterr(NULL, 100, PULSARC_ERR_IO, "x"), PULSARC_ERR_IO);
    memset(buf, 'z', sizeof buf);
    ck_assert_int_eq(pc_seterr(buf, 0, PULSARC_ERR_IO, "x"), PULSARC_ERR_IO);
    ck_assert_int_eq(buf[0], 'z'); /* errlen 0: untouched */
    ck_assert_int_eq(pc_seterr(buf, sizeof buf, PULSARC_ERR_BAD_URL, "bad %s %d", "url", 7),
                     PULSARC_ERR_BAD_URL);
    ck_assert_str_eq(buf, "bad url 7");
    pc_seterr(buf, 5, PULSARC_ERR_IO, "%s", "truncated text");
    ck_assert_str_eq(buf, "trun");
}
END_TEST

START_TEST(error_from_server) {
    for (int i = 0; i <= 25; i++)
        ck_assert_int_eq(pc_err_from_server(i), PULSARC_ERR_BROKER_BASE + i);
    ck_assert_int_eq(pc_err_from_server(25), PULSARC_ERR_BROKER_PRODUCER_FENCED);
    ck_assert_int_eq(pc_err_from_server(-1), PULSARC_ERR_BROKER_UNKNOWN);
    ck_assert_int_eq(pc_err_from_server(26), PULSARC_ERR_BROKER_UNKNOWN);
    ck_assert_int_eq(pc_err_from_server(1000), PULSARC_ERR_BROKER_UNKNOWN);
}
END_TEST

START_TEST(error_version) {
    ck_assert_str_eq(pulsarc_version(), PULSARC_VERSION_STR);
    ck_assert_int_gt((int)strlen(pulsarc_version()), 0);
}
END_TEST

/* ======================================================================== */
/* crc32c */

static void check_crc_vector(const void *p, size_t n, uint32_t want) {
    ck_assert_uint_eq(pc_crc32c(0, p, n), want);
    ck_assert_uint_eq(pc_crc32c_sw(0, p, n), want);
}

START_TEST(crc32c_vectors) {
    uint8_t b[32];
    check_crc_vector("123456789", 9, 0xE3069283u);
    check_crc_vector("", 0, 0);
    memset(b, 0, sizeof b);
    check_crc_vector(b, 32, 0x8A9136AAu);
    memset(b, 0xff, sizeof b);
    check_crc_vector(b, 32, 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    check_crc_vector(b, 32, 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(31 - i);
    check_crc_vector(b, 32, 0x113FDB5Cu);
    /* An empty update leaves any running value unchanged. */
    ck_assert_uint_eq(pc_crc32c(0x12345678u, NULL, 0), 0x12345678u);
    ck_assert_uint_eq(pc_crc32c_sw(0x12345678u, NULL, 0), 0x12345678u);
}
END_TEST

START_TEST(crc32c_incremental) {
    uint8_t buf[1000];
    fill_random(buf, sizeof buf);
    uint32_t whole = pc_crc32c_sw(0, buf, sizeof buf);
    ck_assert_uint_eq(pc_crc32c(0, buf, sizeof buf), whole);
    for (size_t cut = 0; cut <= sizeof buf; cut++) {
        uint32_t a = pc_crc32c(pc_crc32c(0, buf, cut), buf + cut, sizeof buf - cut);
        uint32_t b = pc_crc32c_sw(pc_crc32c_sw(0, buf, cut), buf + cut, sizeof buf - cut);
        ck_assert_uint_eq(a, whole);
        ck_assert_uint_eq(b, whole);
    }
}
END_TEST

START_TEST(crc32c_hw_matches_sw) {
    static uint8_t big[1 << 20];
    uint8_t buf[300 + 8];
    if (!pc_crc32c_hw_active())
        fprintf(stderr, "crc32c: SSE4.2 not active, comparing the software path with itself\n");
    for (size_t len = 0; len <= 300; len++) {
        size_t off = (size_t)(rnd() % 8);
        fill_random(buf + off, len);
        uint32_t seed = (uint32_t)rnd();
        ck_assert_uint_eq(pc_crc32c(seed, buf + off, len), pc_crc32c_sw(seed, buf + off, len));
    }
    fill_random(big, sizeof big);
    ck_assert_uint_eq(pc_crc32c(0, big + 3, sizeof big - 3), pc_crc32c_sw(0, big + 3, sizeof big - 3));
    /* Lengths around the three-stream block sizes (3 x 256 and 3 x 4096 bytes). */
    static const size_t edges[] = {767, 768, 769, 775, 776, 1536, 1543, 12287, 12288, 12289,
                                   12288 + 768, 12288 + 775, 2 * 12288 + 2 * 768 + 13, 100000};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (size_t off = 0; off < 9; off += 4) {
            uint32_t seed = (uint32_t)rnd();
            ck_assert_uint_eq(pc_crc32c(seed, big + off, edges[i]), pc_crc32c_sw(seed, big + off, edges[i]));
        }
}
END_TEST

static void *crc_thread(void *arg) {
    (void)arg;
    uintptr_t ok = pc_crc32c(0, "123456789", 9) == 0xE3069283u &&
                   pc_crc32c_sw(0, "123456789", 9) == 0xE3069283u;
    return (void *)ok;
}

/* First use from many threads at once: the one-time set-up must hold. */
START_TEST(crc32c_concurrent_first_use) {
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, crc_thread, NULL), 0);
    for (int i = 0; i < 8; i++) {
        void *res;
        ck_assert_int_eq(pthread_join(th[i], &res), 0);
        ck_assert_ptr_eq(res, (void *)1);
    }
}
END_TEST

/* ======================================================================== */
/* url */

static pc_service_url_t url_ok(const char *s) {
    pc_service_url_t u;
    char err[256] = "";
    pulsarc_err_t rc = pc_service_url_parse(s, &u, err, sizeof err);
    ck_assert_msg(rc == PULSARC_OK, "'%s' rejected: %s", s, err);
    return u;
}

START_TEST(url_single_and_default_ports) {
    pc_service_url_t u = url_ok("pulsar://localhost:6650");
    ck_assert_int_eq(u.nhosts, 1);
    ck_assert_str_eq(u.hosts[0].host, "localhost");
    ck_assert_uint_eq(u.hosts[0].port, 6650);
    ck_assert(!u.tls && !u.http);
    u = url_ok("pulsar://broker.example.com");
    ck_assert_uint_eq(u.hosts[0].port, 6650);
    u = url_ok("pulsar+ssl://h");
    ck_assert(u.tls && !u.http);
    ck_assert_uint_eq(u.hosts[0].port, 6651);
    u = url_ok("http://h");
    ck_assert(!u.tls && u.http);
    ck_assert_uint_eq(u.hosts[0].port, 80);
    u = url_ok("https://h");
    ck_assert(u.tls && u.http);
    ck_assert_uint_eq(u.hosts[0].port, 443);
    u = url_ok("PULSAR+SSL://h:1"); /* schemes are case-insensitive */
    ck_assert(u.tls);
    ck_assert_uint_eq(u.hosts[0].port, 1);
    u = url_ok("pulsar://127.0.0.1:65535");
    ck_assert_str_eq(u.hosts[0].host, "127.0.0.1");
    ck_assert_uint_eq(u.hosts[0].port, 65535);
}
END_TEST

START_TEST(url_multi_host_ipv6_slash) {
    pc_service_url_t u = url_ok("pulsar://h1:1,h2,h3:3/");
    ck_assert_int_eq(u.nhosts, 3);
    ck_assert_str_eq(u.hosts[1].host, "h2");
    ck_assert_uint_eq(u.hosts[0].port, 1);
    ck_assert_uint_eq(u.hosts[1].port, 6650);
    ck_assert_uint_eq(u.hosts[2].port, 3);
    u = url_ok("pulsar+ssl://[::1]:7000,[fe80::1:2],10.0.0.1");
    ck_assert_int_eq(u.nhosts, 3);
    ck_assert_str_eq(u.hosts[0].host, "::1");
    ck_assert_uint_eq(u.hosts[0].port, 7000);
    ck_assert_str_eq(u.hosts[1].host, "fe80::1:2");
    ck_assert_uint_eq(u.hosts[1].port, 6651);
    ck_assert_str_eq(u.hosts[2].host, "10.0.0.1");
    u = url_ok("pulsar://[::ffff:1.2.3.4]/");
    ck_assert_str_eq(u.hosts[0].host, "::ffff:1.2.3.4");
    u = url_ok("pulsar://h:6650/");
    ck_assert_int_eq(u.nhosts, 1);
    u = url_ok("pulsar://a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p"); /* exactly 16 */
    ck_assert_int_eq(u.nhosts, PC_URL_MAX_HOSTS);
    ck_assert_str_eq(u.hosts[15].host, "p");
}
END_TEST

typedef struct url_bad_case {
    const char *url;
    const char *reason;
} url_bad_case_t;

static const url_bad_case_t url_bad[] = {
    {"", "service URL is empty"},
    {"foo://x", "unknown scheme 'foo' in service URL 'foo://x' (expected pulsar, pulsar+ssl, "
                "http or https)"},
    {"pulsar2://x", "unknown scheme 'pulsar2'"},
    {"localhost:6650", "missing scheme in service URL 'localhost:6650'"},
    {"://h", "missing scheme"},
    {"pulsar://h:99999", "port '99999' out of range in service URL 'pulsar://h:99999'"},
    {"pulsar://h:0", "port '0' out of range"},
    {"pulsar://h:123456789012345678901234567890", "out of range"},
    {"pulsar://h:", "empty port in service URL 'pulsar://h:'"},
    {"pulsar://h:66a", "invalid port '66a'"},
    {"pulsar://h:+1", "invalid port '+1'"},
    {"pulsar://h:-1", "invalid port '-1'"},
    {"pulsar://", "empty host in service URL 'pulsar://'"},
    {"pulsar:///", "empty host"},
    {"pulsar://:6650", "empty host"},
    {"pulsar://h1,,h2", "empty host"},
    {"pulsar://h1,", "empty host"},
    {"pulsar://[]:6650", "empty host"},
    {"pulsar://[::1", "unterminated '[' in service URL 'pulsar://[::1'"},
    {"pulsar://[::1]x", "unexpected 'x' after ']'"},
    {"pulsar://[zz::1]", "invalid IPv6 address 'zz::1'"},
    {"pulsar://[1.2.3.4]", "invalid IPv6 address '1.2.3.4'"},
    {"pulsar://::1:6650", "must be written in brackets"},
    {"pulsar://h/path", "path '/path' not allowed"},
    {"pulsar://h:6650//", "path '//' not allowed"},
    {"pulsar://a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "too many hosts (max 16)"},
    {"pulsar://user@h", "invalid character '@' in host 'user@h'"},
    {"pulsar://h h", "invalid character ' ' in host"},
    {"pulsar://h\t", "invalid byte 0x09 in host"},
};

START_TEST(url_rejections) {
    const url_bad_case_t *c = &url_bad[_i];
    pc_service_url_t u;
    char err[512] = "";
    ck_assert_int_eq(pc_service_url_parse(c->url, &u, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_contains(err, c->reason);
    ck_assert_int_eq(u.nhosts, 0); /* no half-filled result */
    /* A NULL errstr must be fine too. */
    ck_assert_int_eq(pc_service_url_parse(c->url, &u, NULL, 0), PULSARC_ERR_BAD_URL);
}
END_TEST

START_TEST(url_long_host_and_null) {
    char url[400], err[512] = "";
    pc_service_url_t u;
    strcpy(url, "pulsar://");
    memset(url + 9, 'a', 300);
    url[309] = '\0';
    ck_assert_int_eq(pc_service_url_parse(url, &u, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_contains(err, "host name too long");
    url[9 + 255] = '\0'; /* 255 bytes is the limit and fits */
    ck_assert_int_eq(pc_service_url_parse(url, &u, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq((int)strlen(u.hosts[0].host), 255);
    ck_assert_int_eq(pc_service_url_parse(NULL, &u, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_contains(err, "NULL");
    ck_assert_int_eq(pc_service_url_parse("pulsar://h", NULL, NULL, 0), PULSARC_ERR_INVALID_ARG);
}
END_TEST

START_TEST(url_hostport) {
    pc_hostport_t hp;
    char err[256] = "";
    ck_assert_int_eq(pc_hostport_parse("broker-1.example.com:6651", 0, &hp, err, sizeof err),
                     PULSARC_OK);
    ck_assert_str_eq(hp.host, "broker-1.example.com");
    ck_assert_uint_eq(hp.port, 6651);
    ck_assert_int_eq(pc_hostport_parse("[2001:db8::7]:6650", 0, &hp, err, sizeof err),
                     PULSARC_OK);
    ck_assert_str_eq(hp.host, "2001:db8::7");
    ck_assert_int_eq(pc_hostport_parse("h", 6650, &hp, err, sizeof err), PULSARC_OK);
    ck_assert_uint_eq(hp.port, 6650);
    ck_assert_int_eq(pc_hostport_parse("h", 0, &hp, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_str_eq(err, "missing port in address 'h'");
    ck_assert_int_eq(pc_hostport_parse("h:70000", 0, &hp, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_str_eq(err, "port '70000' out of range in address 'h:70000'");
    ck_assert_int_eq(pc_hostport_parse("", 1, &hp, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_contains(err, "empty host");
    ck_assert_int_eq(pc_hostport_parse("a,b:1", 1, &hp, err, sizeof err), PULSARC_ERR_BAD_URL);
    ck_assert_contains(err, "invalid character ','");
    ck_assert_int_eq(pc_hostport_parse(NULL, 1, &hp, err, sizeof err), PULSARC_ERR_INVALID_ARG);
}
END_TEST

/* ======================================================================== */
/* topic */

static pc_topic_t topic_ok(const char *name, const char *tenant, const char *ns) {
    pc_topic_t t;
    char err[256] = "";
    pulsarc_err_t rc = pc_topic_parse(name, tenant, ns, &t, err, sizeof err);
    ck_assert_msg(rc == PULSARC_OK, "'%s' rejected: %s", name, err);
    return t;
}

START_TEST(topic_short_forms) {
    pc_topic_t t = topic_ok("my-topic", NULL, NULL);
    ck_assert_int_eq(t.persistent, 1);
    ck_assert_str_eq(t.tenant, "public");
    ck_assert_str_eq(t.ns, "default");
    ck_assert_str_eq(t.local, "my-topic");
    ck_assert_int_eq(t.partition, -1);
    ck_assert_str_eq(t.full, "persistent://public/default/my-topic");
    ck_assert_str_eq(t.base, t.full);
    t = topic_ok("x", "acme", "prod");
    ck_assert_str_eq(t.full, "persistent://acme/prod/x");
    t = topic_ok("te.n_a=n:t-1/NS.2/local name!", NULL, NULL);
    ck_assert_str_eq(t.tenant, "te.n_a=n:t-1");
    ck_assert_str_eq(t.ns, "NS.2");
    ck_assert_str_eq(t.local, "local name!");
    ck_assert_str_eq(t.full, "persistent://te.n_a=n:t-1/NS.2/local name!");
}
END_TEST

START_TEST(topic_full_forms) {
    pc_topic_t t = topic_ok("persistent://t/ns/x", "ignored", "ignored");
    ck_assert_int_eq(t.persistent, 1);
    ck_assert_str_eq(t.tenant, "t");
    ck_assert_str_eq(t.ns, "ns");
    ck_assert_str_eq(t.full, "persistent://t/ns/x");
    t = topic_ok("non-persistent://t/ns/x", NULL, NULL);
    ck_assert_int_eq(t.persistent, 0);
    ck_assert_str_eq(t.full, "non-persistent://t/ns/x");
    ck_assert_str_eq(t.base, "non-persistent://t/ns/x");
}
END_TEST

START_TEST(topic_partition_suffix) {
    pc_topic_t t = topic_ok("persistent://t/ns/x-partition-3", NULL, NULL);
    ck_assert_int_eq(t.partition, 3);
    ck_assert_str_eq(t.local, "x-partition-3");
    ck_assert_str_eq(t.full, "persistent://t/ns/x-partition-3");
    ck_assert_str_eq(t.base, "persistent://t/ns/x");
    t = topic_ok("x-partition-0", NULL, NULL);
    ck_assert_int_eq(t.partition, 0);
    ck_assert_str_eq(t.base, "persistent://public/default/x");
    t = topic_ok("a-partition-1-partition-22", NULL, NULL); /* the last suffix counts */
    ck_assert_int_eq(t.partition, 22);
    ck_assert_str_eq(t.base, "persistent://public/default/a-partition-1");
    t = topic_ok("x-partition-2147483647", NULL, NULL);
    ck_assert_int_eq(t.partition, INT_MAX);
    const char *plain[] = {"foo-partition-x", "foo-partition-", "foo-partition--1",
                           "foo-partition-+1", "foo-partition-1a", "foo-partition- 1",
                           "foo-partition-1-x"};
    for (size_t i = 0; i < NELEM(plain); i++) {
        t = topic_ok(plain[i], NULL, NULL);
        ck_assert_int_eq(t.partition, -1);
        ck_assert_str_eq(t.local, plain[i]);
        ck_assert_str_eq(t.base, t.full);
    }
}
END_TEST

START_TEST(topic_partition_names) {
    char buf[PC_TOPIC_MAX];
    pc_topic_t t = topic_ok("persistent://t/ns/x", NULL, NULL);
    ck_assert_int_eq(pc_topic_partition_name(&t, 5, buf, sizeof buf), PULSARC_OK);
    ck_assert_str_eq(buf, "persistent://t/ns/x-partition-5");
    t = topic_ok("non-persistent://t/ns/y-partition-7", NULL, NULL);
    ck_assert_int_eq(pc_topic_partition_name(&t, 0, buf, sizeof buf), PULSARC_OK);
    ck_assert_str_eq(buf, "non-persistent://t/ns/y-partition-0");
    /* A generated name parses back to the same partition. */
    pc_topic_t back = topic_ok(buf, NULL, NULL);
    ck_assert_int_eq(back.partition, 0);
    ck_assert_str_eq(back.base, t.base);
    size_t need = strlen("non-persistent://t/ns/y-partition-0") + 1;
    ck_assert_int_eq(pc_topic_partition_name(&t, 0, buf, need), PULSARC_OK);
    ck_assert_int_eq(pc_topic_partition_name(&t, 0, buf, need - 1), PULSARC_ERR_INVALID_ARG);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(pc_topic_partition_name(&t, -1, buf, sizeof buf), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_topic_partition_name(NULL, 0, buf, sizeof buf), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_topic_partition_name(&t, 0, NULL, 10), PULSARC_ERR_INVALID_ARG);
}
END_TEST

typedef struct topic_bad_case {
    const char *name;
    const char *def_tenant;
    const char *reason;
} topic_bad_case_t;

static const topic_bad_case_t topic_bad[] = {
    {"", NULL, "topic name is empty"},
    {"a/b", NULL, "expected 'local', 'tenant/namespace/local'"},
    {"a/b/c/d", NULL, "expected 'local', 'tenant/namespace/local'"},
    {"persistent://t/ns/a/b", NULL, "too many '/'-separated parts"},
    {"persistent://t/c/ns/x", NULL, "legacy tenant/cluster/namespace/local"},
    {"persistent://t/ns", NULL, "expected tenant/namespace/local after the scheme"},
    {"persistent://", NULL, "expected tenant/namespace/local after the scheme"},
    {"persistent://t/ns/", NULL, "empty local name"},
    {"persistent:///ns/x", NULL, "empty tenant"},
    {"persistent://t//x", NULL, "empty namespace"},
    {"//x", NULL, "empty tenant"},
    {"t//x", NULL, "empty namespace"},
    {"t/ns/", NULL, "empty local name"},
    {"foo://t/ns/x", NULL, "unknown domain 'foo' (expected persistent or non-persistent)"},
    {"Persistent://t/ns/x", NULL, "unknown domain 'Persistent'"},
    {"://t/ns/x", NULL, "unknown domain ''"},
    {"t!/ns/x", NULL, "character '!' not allowed in tenant 't!'"},
    {"t/n s/x", NULL, "character ' ' not allowed in namespace 'n s'"},
    {"persistent://t/n@s/x", NULL, "character '@' not allowed in namespace"},
    {"x", "bad!", "character '!' not allowed in tenant 'bad!'"},
    {"x", "", "empty tenant"},
    {"x-partition-07", NULL, "partition index '07' has a leading zero"},
    {"x-partition-2147483648", NULL, "partition index '2147483648' out of range"},
    {"x-partition-99999999999999999999999", NULL, "out of range"},
    {"-partition-3", NULL, "empty local name before the partition suffix"},
    {"persistent://t/ns/-partition-0", NULL, "empty local name before the partition suffix"},
};

START_TEST(topic_rejections) {
    const topic_bad_case_t *c = &topic_bad[_i];
    pc_topic_t t;
    char err[512] = "";
    ck_assert_int_eq(pc_topic_parse(c->name, c->def_tenant, NULL, &t, err, sizeof err),
                     PULSARC_ERR_BAD_TOPIC);
    ck_assert_contains(err, c->reason);
    ck_assert_contains(err, c->name); /* the message quotes the input */
    ck_assert_int_eq(pc_topic_parse(c->name, c->def_tenant, NULL, &t, NULL, 0),
                     PULSARC_ERR_BAD_TOPIC);
}
END_TEST

START_TEST(topic_lengths_and_null) {
    char name[1200], err[2048] = "";
    pc_topic_t t;
    memset(name, 'a', 300); /* tenant of 300 bytes */
    strcpy(name + 300, "/ns/x");
    ck_assert_int_eq(pc_topic_parse(name, NULL, NULL, &t, err, sizeof err), PULSARC_ERR_BAD_TOPIC);
    ck_assert_contains(err, "tenant longer than 255 bytes");
    memset(name, 'b', 1100); /* local of 1100 bytes */
    name[1100] = '\0';
    ck_assert_int_eq(pc_topic_parse(name, NULL, NULL, &t, err, sizeof err), PULSARC_ERR_BAD_TOPIC);
    ck_assert_contains(err, "local name longer than 1023 bytes");
    name[1000] = '\0'; /* fits as a local name, not in the full name */
    ck_assert_int_eq(pc_topic_parse(name, NULL, NULL, &t, err, sizeof err), PULSARC_ERR_BAD_TOPIC);
    ck_assert_contains(err, "full name longer than 1023 bytes");
    name[990] = '\0'; /* 990 + strlen("persistent://public/default/") = 1018 */
    ck_assert_int_eq(pc_topic_parse(name, NULL, NULL, &t, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(pc_topic_parse(NULL, NULL, NULL, &t, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_topic_parse("x", NULL, NULL, NULL, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
}
END_TEST

/* ======================================================================== */
/* hash */

static int32_t murmur_str(const char *s) {
    return pc_hash_murmur3(s, strlen(s));
}

static int32_t java_str(const char *s) {
    return pc_hash_java_string(s, strlen(s));
}

START_TEST(hash_murmur3) {
    ck_assert_int_eq(murmur_str("k1"), 2110152746);
    ck_assert_int_eq(murmur_str("k2"), 1479966664);
    ck_assert_int_eq(murmur_str("key1"), 462881061);
    ck_assert_int_eq(murmur_str("key2"), 1936800180);
    ck_assert_int_eq(murmur_str("key01"), 39696932);
    ck_assert_int_eq(murmur_str("key02"), 751761803);
    ck_assert_uint_eq(pc_murmur3_32("k1", 2, 0), 4257636394u);
    ck_assert_uint_eq(pc_murmur3_32("key1", 4, 0), 2610364709u);
    ck_assert_uint_eq(pc_murmur3_32("key01", 5, 0), 2187180580u);
    /* Well-known MurmurHash3_x86_32 vectors: empty input, seeds, a 3-byte tail. */
    ck_assert_uint_eq(pc_murmur3_32("", 0, 0), 0);
    ck_assert_uint_eq(pc_murmur3_32("", 0, 1), 0x514E28B7u);
    ck_assert_uint_eq(pc_murmur3_32("", 0, 0xffffffffu), 0x81F16F39u);
    ck_assert_uint_eq(pc_murmur3_32("abc", 3, 0), 0xB3DD93FAu);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    ck_assert_uint_eq(pc_murmur3_32(fox, strlen(fox), 0), 0x2E4FF723u);
    ck_assert_int_ge(murmur_str("abc"), 0);
}
END_TEST

START_TEST(hash_java_string) {
    ck_assert_int_eq(java_str("keykeykeykeykey1"), 434058482);
    ck_assert_int_eq(java_str("keykeykey2"), 42978643); /* raw 2190462291, masked */
    ck_assert_int_eq(java_str(""), 0);
    ck_assert_int_eq(java_str("a"), 97);
    /* Non-ASCII, from Java's definition over UTF-16 code units:
     * "é" = U+00E9 -> 233.
     * "😀" = U+1F600 = D83D DE00 -> 0xD83D*31 + 0xDE00 = 1716067 + 56832. */
    ck_assert_int_eq(java_str("\xC3\xA9"), 233);
    ck_assert_int_eq(java_str("\xF0\x9F\x98\x80"), 1772899);
    ck_assert_int_eq(java_str("a\xF0\x9F\x98\x80" "b"), 57849694);
    ck_assert_int_eq(java_str("h\xC3\xA9llo"), 103094734);
    ck_assert_int_eq(java_str("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"), 25921943); /* 日本語 */
}
END_TEST

/* Ill-formed UTF-8: one U+FFFD per maximal ill-formed subsequence. */
START_TEST(hash_java_string_invalid_utf8) {
    ck_assert_int_eq(java_str("\xFF"), 65533);
    ck_assert_int_eq(java_str("\xC3"), 65533);            /* truncated 2-byte */
    ck_assert_int_eq(java_str("\xF0\x9F\x98"), 65533);    /* truncated 4-byte: one FFFD */
    ck_assert_int_eq(java_str("a\xE2\x82"), 68540);       /* 'a', FFFD */
    ck_assert_int_eq(java_str("\xE2\x82("), 2031563);     /* FFFD, '(' */
    ck_assert_int_eq(java_str("\xE0\x80\x80"), 65074269); /* overlong: 3x FFFD */
    ck_assert_int_eq(java_str("\xED\xA0\x80"), 65074269); /* encoded surrogate */
    ck_assert_int_eq(java_str("\xF4\x90\x80\x80"), 2017367872); /* > U+10FFFF: 4x FFFD */
    /* Embedded NUL counts: len, not strlen, decides. */
    ck_assert_int_eq(pc_hash_java_string("a\0b", 3), (97 * 31 + 0) * 31 + 98);
}
END_TEST

/* ======================================================================== */
/* backoff */

START_TEST(backoff_sequence_and_cap) {
    pc_backoff_t b;
    pc_backoff_init(&b, 100, 60000);
    int64_t nominal = 100;
    for (int i = 0; i < 20; i++) {
        int64_t d = pc_backoff_next(&b);
        ck_assert_int_le(d, nominal);
        ck_assert_int_ge(d, nominal - nominal / 10);
        ck_assert_int_ge(d, 100);
        if (i == 0)
            ck_assert_int_eq(d, 100); /* jitter never goes below initial */
        nominal = nominal * 2 > 60000 ? 60000 : nominal * 2;
    }
    ck_assert_int_eq(b.next_ms, 60000);
}
END_TEST

START_TEST(backoff_jitter_bounds) {
    pc_backoff_t b;
    int64_t lo = INT64_MAX, hi = 0;
    pc_backoff_init(&b, 1000, 1000);
    for (int i = 0; i < 1000; i++) {
        int64_t d = pc_backoff_next(&b);
        ck_assert_int_ge(d, 1000); /* initial is a floor */
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    ck_assert_int_eq(lo, 1000);
    ck_assert_int_eq(hi, 1000);
    pc_backoff_init(&b, 100, 10000);
    for (int i = 0; i < 7; i++)
        pc_backoff_next(&b); /* reach the 10000 cap */
    lo = INT64_MAX;
    for (int i = 0; i < 1000; i++) {
        int64_t d = pc_backoff_next(&b);
        ck_assert_int_ge(d, 9000);
        ck_assert_int_le(d, 10000);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    ck_assert_int_lt(lo, 9500); /* the jitter really spreads the delays */
    ck_assert_int_gt(hi, 9500);
}
END_TEST

START_TEST(backoff_reset_and_edges) {
    pc_backoff_t b;
    pc_backoff_init(&b, 100, 60000);
    for (int i = 0; i < 5; i++)
        pc_backoff_next(&b);
    pc_backoff_reset(&b);
    ck_assert_int_eq(pc_backoff_next(&b), 100);
    int64_t d = pc_backoff_next(&b);
    ck_assert(d >= 180 && d <= 200);
    pc_backoff_init(&b, 500, 100); /* max below initial: initial wins */
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(pc_backoff_next(&b), 500);
    pc_backoff_init(&b, 0, 0); /* nonsense inputs still give a positive delay */
    ck_assert_int_ge(pc_backoff_next(&b), 1);
    pc_backoff_init(&b, 1, INT64_MAX); /* doubling never overflows */
    int64_t prev = 0;
    for (int i = 0; i < 100; i++) {
        d = pc_backoff_next(&b);
        ck_assert_int_gt(d, 0);
        ck_assert_int_ge(b.next_ms, prev);
        prev = b.next_ms;
    }
    ck_assert_int_eq(b.next_ms, INT64_MAX);
}
END_TEST

/* ======================================================================== */
/* msgid */

static pulsarc_msgid_t mkid(int64_t l, int64_t e, int32_t p, int32_t bi) {
    pulsarc_msgid_t id = {l, e, p, bi, 0};
    return id;
}

static void check_format(pulsarc_msgid_t id, const char *want) {
    char buf[64];
    ck_assert_int_eq(pulsarc_msgid_format(&id, buf, sizeof buf), PULSARC_OK);
    ck_assert_str_eq(buf, want);
}

START_TEST(msgid_constants_and_format) {
    pulsarc_msgid_t e = pulsarc_msgid_earliest(), l = pulsarc_msgid_latest();
    ck_assert(e.ledger_id == -1 && e.entry_id == -1 && e.partition == -1 && e.batch_index == -1);
    ck_assert(l.ledger_id == INT64_MAX && l.entry_id == INT64_MAX && l.partition == -1 &&
              l.batch_index == -1);
    check_format(e, "-1:-1:-1");
    check_format(l, "9223372036854775807:9223372036854775807:-1");
    check_format(mkid(12, 3, -1, -1), "12:3:-1");
    check_format(mkid(12, 3, 2, 0), "12:3:2:0");
    check_format(mkid(12, 3, 2, 7), "12:3:2:7");
    check_format(mkid(INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX),
                 "-9223372036854775808:9223372036854775807:-2147483648:2147483647");
}
END_TEST

START_TEST(msgid_format_small_buffer) {
    char buf[80];
    pulsarc_msgid_t id = mkid(12, 3, 2, 7); /* "12:3:2:7" needs 9 bytes */
    ck_assert_int_eq(pulsarc_msgid_format(&id, buf, 9), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msgid_format(&id, buf, 8), PULSARC_ERR_INVALID_ARG);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(pulsarc_msgid_format(&id, buf, 0), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_format(NULL, buf, 64), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_format(&id, NULL, 64), PULSARC_ERR_INVALID_ARG);
    /* The one text that does not fit in 64: both int64 at INT64_MIN plus a
     * batch index. Real ledger and entry ids are never below -1. */
    id = mkid(INT64_MIN, INT64_MIN, INT32_MIN, INT32_MAX);
    ck_assert_int_eq(pulsarc_msgid_format(&id, buf, 64), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_format(&id, buf, 65), PULSARC_OK);
}
END_TEST

static pulsarc_msgid_t parse_ok(const char *s) {
    pulsarc_msgid_t id;
    ck_assert_msg(pulsarc_msgid_parse(s, &id) == PULSARC_OK, "'%s' rejected", s);
    return id;
}

START_TEST(msgid_parse_and_round_trip) {
    pulsarc_msgid_t id = parse_ok("1:2");
    ck_assert(id.ledger_id == 1 && id.entry_id == 2 && id.partition == -1 &&
              id.batch_index == -1 && id.batch_size == 0);
    id = parse_ok("1:2:3");
    ck_assert(id.partition == 3 && id.batch_index == -1);
    id = parse_ok("1:2:3:4");
    ck_assert(id.partition == 3 && id.batch_index == 4);
    id = parse_ok("-9223372036854775808:9223372036854775807:-2147483648:2147483647");
    ck_assert(id.ledger_id == INT64_MIN && id.entry_id == INT64_MAX);
    ck_assert(id.partition == INT32_MIN && id.batch_index == INT32_MAX);
    pulsarc_msgid_t samples[] = {pulsarc_msgid_earliest(), pulsarc_msgid_latest(),
                                 mkid(0, 0, 0, 0), mkid(7, 8, -1, 3), mkid(123456789, 1, 4, -1)};
    for (size_t i = 0; i < NELEM(samples); i++) {
        char buf[64];
        ck_assert_int_eq(pulsarc_msgid_format(&samples[i], buf, sizeof buf), PULSARC_OK);
        id = parse_ok(buf);
        ck_assert_int_eq(pulsarc_msgid_compare(&id, &samples[i]), 0);
        ck_assert_int_eq(id.partition, samples[i].partition);
    }
}
END_TEST

static const char *const msgid_bad[] = {
    "", "1", "1:", ":1", "1::2", "1:2:", "1:2:3:", "1:2:3:4:5", "a:2", "1:2x", " 1:2", "1:2 ",
    "+1:2", "1:-", "-:1", "--1:2", "1:2:0x10", "1.5:2", "9223372036854775808:0",
    "-9223372036854775809:0", "99999999999999999999:0", "1:2:2147483648",
    "1:2:3:-2147483649", "1:2:3:4\n",
};

START_TEST(msgid_parse_rejections) {
    pulsarc_msgid_t id = mkid(42, 42, 42, 42);
    ck_assert_msg(pulsarc_msgid_parse(msgid_bad[_i], &id) == PULSARC_ERR_INVALID_ARG,
                  "'%s' accepted", msgid_bad[_i]);
    ck_assert_int_eq(id.ledger_id, 42); /* output untouched on failure */
    ck_assert_int_eq(pulsarc_msgid_parse(NULL, &id), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_parse("1:2", NULL), PULSARC_ERR_INVALID_ARG);
}
END_TEST

START_TEST(msgid_compare_order) {
    /* Ascending; batch index in plain numeric order, -1 first. */
    pulsarc_msgid_t order[] = {pulsarc_msgid_earliest(), mkid(0, 0, -1, -1), mkid(0, 0, 5, 0),
                               mkid(0, 0, -1, 1), mkid(0, 1, 0, -1), mkid(1, 0, 3, -1),
                               mkid(1, INT64_MAX, -1, -1), pulsarc_msgid_latest()};
    size_t n = NELEM(order);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = pulsarc_msgid_compare(&order[i], &order[j]);
            int want = (i > j) - (i < j);
            ck_assert_msg((c > 0) - (c < 0) == want, "compare(%zu, %zu) = %d", i, j, c);
        }
    pulsarc_msgid_t a = mkid(5, 5, 0, 2), b = mkid(5, 5, 9, 2);
    ck_assert_int_eq(pulsarc_msgid_compare(&a, &b), 0); /* partition ignored */
}
END_TEST

/* ======================================================================== */
/* base64 */

/* Decodes a C string with the given decoder, NUL-terminating the result. */
static long decode_str(long (*dec)(const char *, size_t, uint8_t *), const char *in,
                       uint8_t *out) {
    long n = dec(in, strlen(in), out);
    if (n >= 0)
        out[n] = 0;
    return n;
}

START_TEST(base64_strict_round_trip_and_rejections) {
    uint8_t out[64];
    char enc[64];
    pc_base64_encode("hello", 5, enc);
    ck_assert_str_eq(enc, "aGVsbG8=");
    ck_assert_int_eq(decode_str(pc_base64_decode, enc, out), 5);
    ck_assert_str_eq((char *)out, "hello");
    ck_assert_int_eq(decode_str(pc_base64_decode, "+/+/", out), 3);
    ck_assert_int_eq(out[0], 0xfb);
    ck_assert_int_eq(out[1], 0xff);
    ck_assert_int_eq(out[2], 0xbf);
    /* the strict form keeps refusing what the lenient one takes */
    ck_assert_int_eq(decode_str(pc_base64_decode, "aGVsbG8", out), -1);
    ck_assert_int_eq(decode_str(pc_base64_decode, "-_-_", out), -1);
    ck_assert_int_eq(decode_str(pc_base64_decode, "aGU=bG8=", out), -1);
    ck_assert_int_eq(decode_str(pc_base64_decode, "aGVs*G8=", out), -1);
}
END_TEST

START_TEST(base64_lenient_url_safe_and_unpadded) {
    uint8_t out[64];
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGVsbG8=", out), 5);
    ck_assert_str_eq((char *)out, "hello");
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGVsbG8", out), 5);
    ck_assert_str_eq((char *)out, "hello");
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGVsbA", out), 4);
    ck_assert_str_eq((char *)out, "hell");
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "-_+/", out), 3);
    ck_assert_int_eq(out[0], 0xfb);
    ck_assert_int_eq(out[1], 0xff);
    ck_assert_int_eq(out[2], 0xbf);
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "", out), 0);
}
END_TEST

START_TEST(base64_lenient_rejections) {
    uint8_t out[64];
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGVs*G8", out), -1);
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGVs bG8", out), -1);
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGVsbG8=x", out), -1);
    ck_assert_int_eq(decode_str(pc_base64_decode_lenient, "aGU=bG8=", out), -1);
    /* the length bounds the read: a '*' past it is not seen */
    ck_assert_int_eq(pc_base64_decode_lenient("aGVs*", 4, out), 3);
}
END_TEST

/* ======================================================================== */

static TCase *tc(const char *name) {
    TCase *t = tcase_create(name);
    tcase_set_timeout(t, 60); /* valgrind is slow on the 1 MiB CRC */
    return t;
}

static Suite *core_suite(void) {
    Suite *s = suite_create("core");
    TCase *t = tc("error");
    tcase_add_test(t, error_names_and_descriptions);
    tcase_add_test(t, error_unknown_values);
    tcase_add_test(t, error_retriable_classification);
    tcase_add_test(t, error_seterr);
    tcase_add_test(t, error_from_server);
    tcase_add_test(t, error_version);
    suite_add_tcase(s, t);

    t = tc("crc32c");
    tcase_add_test(t, crc32c_vectors);
    tcase_add_test(t, crc32c_incremental);
    tcase_add_test(t, crc32c_hw_matches_sw);
    tcase_add_test(t, crc32c_concurrent_first_use);
    suite_add_tcase(s, t);

    t = tc("url");
    tcase_add_test(t, url_single_and_default_ports);
    tcase_add_test(t, url_multi_host_ipv6_slash);
    tcase_add_loop_test(t, url_rejections, 0, (int)NELEM(url_bad));
    tcase_add_test(t, url_long_host_and_null);
    tcase_add_test(t, url_hostport);
    suite_add_tcase(s, t);

    t = tc("topic");
    tcase_add_test(t, topic_short_forms);
    tcase_add_test(t, topic_full_forms);
    tcase_add_test(t, topic_partition_suffix);
    tcase_add_test(t, topic_partition_names);
    tcase_add_loop_test(t, topic_rejections, 0, (int)NELEM(topic_bad));
    tcase_add_test(t, topic_lengths_and_null);
    suite_add_tcase(s, t);

    t = tc("hash");
    tcase_add_test(t, hash_murmur3);
    tcase_add_test(t, hash_java_string);
    tcase_add_test(t, hash_java_string_invalid_utf8);
    suite_add_tcase(s, t);

    t = tc("backoff");
    tcase_add_test(t, backoff_sequence_and_cap);
    tcase_add_test(t, backoff_jitter_bounds);
    tcase_add_test(t, backoff_reset_and_edges);
    suite_add_tcase(s, t);

    t = tc("msgid");
    tcase_add_test(t, msgid_constants_and_format);
    tcase_add_test(t, msgid_format_small_buffer);
    tcase_add_test(t, msgid_parse_and_round_trip);
    tcase_add_loop_test(t, msgid_parse_rejections, 0, (int)NELEM(msgid_bad));
    tcase_add_test(t, msgid_compare_order);
    suite_add_tcase(s, t);

    t = tc("base64");
    tcase_add_test(t, base64_strict_round_trip_and_rejections);
    tcase_add_test(t, base64_lenient_url_safe_and_unpadded);
    tcase_add_test(t, base64_lenient_rejections);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(core_suite)
