/*
 * Helpers shared by test_tls*.c and test_auth*.c (static, header-only: each
 * test program is one .c file). The secrets come from the broker harness:
 * test/broker/gen-secrets.sh writes them to $PULSARC_TEST_SECRETS on every
 * broker start; tokens are minted with $PULSARC_TEST_MINT_TOKEN.
 */
#ifndef PC_TEST_TLS_AUTH_COMMON_H
#define PC_TEST_TLS_AUTH_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

/* The broker's TLS service URL ($PULSAR_SERVICE_URL_TLS, from the harness). */
static __attribute__((unused)) const char *tls_url(void) {
    const char *u = getenv("PULSAR_SERVICE_URL_TLS");
    return u && *u ? u : "pulsar+ssl://localhost:6651";
}

/* scheme://host:<the TLS port>, e.g. the TLS listener through another name. */
static __attribute__((unused)) const char *tls_port_url(const char *scheme, const char *host) {
    static char bufs[4][256];
    static int n;
    char *b = bufs[n++ % 4];
    const char *port = strrchr(tls_url(), ':');
    snprintf(b, 256, "%s://%s%s", scheme, host, port ? port : ":6651");
    return b;
}

/* Path of a file made by gen-secrets.sh. Static buffer per call slot. */
static const char *secret_path(const char *name) {
    static char bufs[8][512];
    static int n;
    char *b = bufs[n++ % 8];
    const char *dir = getenv("PULSARC_TEST_SECRETS");
    ck_assert_msg(dir && *dir, "PULSARC_TEST_SECRETS is not set: run under test/broker/run-with-broker.sh");
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

/* The contents of a secrets file, without the trailing newline (malloc'd). */
static __attribute__((unused)) char *secret_text(const char *name) {
    FILE *f = fopen(secret_path(name), "r");
    ck_assert_msg(f != NULL, "cannot open %s", secret_path(name));
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    return strdup(buf);
}

/* A JWT for sub signed with secret.key, expiring exp_in_s from now (0: never). */
static __attribute__((unused)) char *mint_token(const char *sub, long exp_in_s) {
    const char *mint = getenv("PULSARC_TEST_MINT_TOKEN");
    ck_assert_msg(mint && *mint, "PULSARC_TEST_MINT_TOKEN is not set");
    char cmd[1024], exp[32] = "";
    if (exp_in_s)
        snprintf(exp, sizeof exp, "%ld", (long)time(NULL) + exp_in_s);
    snprintf(cmd, sizeof cmd, "bash '%s' '%s' '%s' %s", mint, secret_path("secret.key"), sub, exp);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    char buf[4096] = "";
    ck_assert(fgets(buf, sizeof buf, p) != NULL);
    ck_assert_int_eq(pclose(p), 0);
    buf[strcspn(buf, "\r\n")] = '\0';
    return strdup(buf);
}

/* A client for url with NULL-terminated key, value pairs; NULL + err on failure. */
static pulsarc_client_t *try_client(const char *url, const char *const *kv, pulsarc_err_t *rc,
                                    char *err, size_t errlen) {
    pulsarc_conf_t *conf = pct_conf(kv);
    ck_assert(pulsarc_conf_set(conf, "serviceUrl", url, err, errlen) == PULSARC_OK);
    pulsarc_client_t *c = NULL;
    *rc = pulsarc_client_new(conf, &c, err, errlen);
    pulsarc_conf_destroy(conf);
    return c;
}

static pulsarc_client_t *must_client(const char *url, const char *const *kv) {
    char err[512];
    pulsarc_err_t rc;
    pulsarc_client_t *c = try_client(url, kv, &rc, err, sizeof err);
    ck_assert_msg(rc == PULSARC_OK && c, "client for %s: %s", url, err);
    return c;
}

/* Asks for partition metadata: one connection, one request. */
static pulsarc_err_t probe(pulsarc_client_t *c, char *err, size_t errlen) {
    int n = -1;
    err[0] = '\0';
    return pulsarc_client_partitions(c, pct_topic("probe"), &n, err, errlen);
}

/* Produces n messages (message i is payload_len bytes of pattern i) and consumes them back. */
static void roundtrip(pulsarc_client_t *c, int n, size_t payload_len) {
    char err[512];
    const char *topic = pct_topic("tlsauth");
    pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, topic, "sub", cc, &cons, err, sizeof err) == PULSARC_OK,
                  "subscribe: %s", err);
    pulsarc_conf_destroy(cc);
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK,
                  "producer: %s", err);
    char *payload = malloc(payload_len + 1);
    for (int i = 0; i < n; i++) {
        memset(payload, 'a' + i % 26, payload_len);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, payload, payload_len, PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_strerror(e));
        pulsarc_msg_destroy(m);
    }
    for (int i = 0; i < n; i++) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, 10000);
        ck_assert_msg(e == PULSARC_OK, "receive %d: %s", i, pulsarc_strerror(e));
        ck_assert_uint_eq(pulsarc_msg_len(m), payload_len);
        memset(payload, 'a' + i % 26, payload_len);
        ck_assert(memcmp(pulsarc_msg_payload(m), payload, payload_len) == 0);
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    free(payload);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
}
#endif
