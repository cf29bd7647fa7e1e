/*
 * Token authentication against the live broker (authenticationEnabled,
 * HS256 tokens signed by the harness's secret key; clients without
 * credentials still get in as "anonymous", so other tests are unaffected):
 * a valid token works from every source (token:, file:, env:, JSON, the
 * supplier callback), over TLS too; a wrongly signed, a malformed and an
 * expired token are refused with the broker's authentication error; the
 * broker's AUTH_CHALLENGE is answered with a fresh token without
 * reconnecting; no token ever shows up in an error string or on stderr;
 * the generated secrets are not readable by other users.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tls_auth_common.h"

#define URL pct_service_url()

static void expect_ok(const char *const *kv) {
    pulsarc_client_t *c = must_client(URL, kv);
    roundtrip(c, 5, 64);
    pulsarc_client_destroy(c);
}

START_TEST(test_valid_token_from_every_source) {
    char *tok = secret_text("client.jwt");
    char param[4200], file[600], json[4200];
    snprintf(param, sizeof param, "token:%s", tok);
    snprintf(file, sizeof file, "file://%s", secret_path("client.jwt"));
    snprintf(json, sizeof json, "{\"token\": \"%s\"}", tok);
    setenv("PULSARC_TEST_TOKEN_VAR", tok, 1);
    expect_ok((const char *const[]){"authPlugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken",
                                    "authParams", param, NULL});
    expect_ok((const char *const[]){"authPlugin", "token", "authParams", file, NULL});
    expect_ok((const char *const[]){"authPlugin", "token", "authParams", "env:PULSARC_TEST_TOKEN_VAR", NULL});
    expect_ok((const char *const[]){"authPlugin", "token", "authParams", json, NULL});
    free(tok);
}
END_TEST

START_TEST(test_token_over_tls) {
    char param[4200];
    char *tok = secret_text("client.jwt");
    snprintf(param, sizeof param, "token:%s", tok);
    pulsarc_client_t *c = must_client(tls_url(), (const char *const[]){
        "tlsTrustCertsFilePath", secret_path("ca.pem"), "authPlugin", "token", "authParams", param, NULL});
    roundtrip(c, 5, 64);
    pulsarc_client_destroy(c);
    free(tok);
}
END_TEST

/* The broker's verdict on a token, as seen through one request. */
static pulsarc_err_t try_token(const char *token, char *err, size_t errlen) {
    char param[4200];
    snprintf(param, sizeof param, "token:%s", token);
    pulsarc_client_t *c = must_client(URL, (const char *const[]){"authPlugin", "token", "authParams", param, NULL});
    pulsarc_err_t e = probe(c, err, errlen);
    pulsarc_client_destroy(c);
    return e;
}

static void expect_refused(const char *secret_file_or_null, const char *literal) {
    char *tok = secret_file_or_null ? secret_text(secret_file_or_null) : strdup(literal);
    char err[512];
    pulsarc_err_t e = try_token(tok, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_BROKER_AUTHENTICATION, "expected an authentication error, got %s: %s",
                  pulsarc_errname(e), err);
    ck_assert(!pulsarc_err_is_retriable(e));
    free(tok);
}

START_TEST(test_invalid_token_refused) {
    expect_refused("wrong-key.jwt", NULL);
    expect_refused(NULL, "not-a-jwt-at-all");
}
END_TEST

START_TEST(test_expired_token_refused) { expect_refused("expired.jwt", NULL); }
END_TEST

START_TEST(test_unusable_token_source_fails_client_creation) {
    char err[512];
    pulsarc_err_t rc;
    pulsarc_client_t *c = try_client(URL, (const char *const[]){"authPlugin", "token", "authParams",
                                     "file:///nonexistent/token.jwt", NULL}, &rc, err, sizeof err);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(rc, PULSARC_ERR_AUTH);
    ck_assert_msg(strstr(err, "/nonexistent/token.jwt"), "%s", err);
    unsetenv("PULSARC_TEST_NO_SUCH_VAR");
    c = try_client(URL, (const char *const[]){"authPlugin", "token", "authParams", "env:PULSARC_TEST_NO_SUCH_VAR", NULL},
                   &rc, err, sizeof err);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(rc, PULSARC_ERR_AUTH);
    c = try_client(URL, (const char *const[]){"authPlugin", "Kerberos", NULL}, &rc, err, sizeof err);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(rc, PULSARC_ERR_BAD_CONFIG);
}
END_TEST

/* ---- supplier and refresh ---- */

typedef struct supplier {
    pthread_mutex_t lock;
    int calls;
    long first_exp_s; /* lifetime of the first token (0: never expires) */
    long later_exp_s; /* of every later one; negative: already expired */
    time_t later_from; /* if set: "later" means after this time, not after call 1
                          (a client opens two connections: lookup and producer) */
    int fail;
} supplier_t;

static pulsarc_err_t supply(void *opaque, char *buf, size_t *len) {
    supplier_t *s = opaque;
    pthread_mutex_lock(&s->lock);
    int call = ++s->calls;
    pthread_mutex_unlock(&s->lock);
    if (s->fail)
        return PULSARC_ERR_STATE;
    int first = s->later_from ? time(NULL) < s->later_from : call == 1;
    char *tok = mint_token("pulsarc-client", first ? s->first_exp_s : s->later_exp_s);
    size_t n = strlen(tok);
    ck_assert(n <= *len);
    memcpy(buf, tok, n);
    *len = n;
    free(tok);
    return PULSARC_OK;
}

static pulsarc_client_t *supplier_client(supplier_t *s, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    char err[512];
    ck_assert(pulsarc_conf_set(conf, "serviceUrl", URL, err, sizeof err) == PULSARC_OK);
    ck_assert_int_eq(pulsarc_conf_set_token_supplier(conf, supply, s), PULSARC_OK);
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return c;
}

START_TEST(test_supplier_token) {
    supplier_t s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pulsarc_client_t *c = supplier_client(&s, NULL);
    roundtrip(c, 5, 64);
    pulsarc_client_destroy(c);
    ck_assert_int_ge(s.calls, 1);
}
END_TEST

START_TEST(test_supplier_failure_is_auth_error) {
    supplier_t s = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail = 1};
    pulsarc_client_t *c = supplier_client(&s, NULL);
    char err[512];
    pulsarc_err_t e = probe(c, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_AUTH, "got %s: %s", pulsarc_errname(e), err);
    pulsarc_client_destroy(c);
}
END_TEST

static size_t collect(void *p, size_t sz, size_t n, void *u) {
    strncat((char *)u, p, (sz * n < 16000 - strlen(u)) ? sz * n : 16000 - strlen(u) - 1);
    return sz * n;
}

/* "connectedSince" of the topic's only publisher: changes if it reconnected. */
static void publisher_since(const char *topic, char *out, size_t len) {
    char url[1024], *body = calloc(1, 16001);
    snprintf(url, sizeof url, "%s/admin/v2/persistent/public/default/%s/stats", pct_admin_url(), topic);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    /* On a cluster the stats come from the owner: a redirect to follow. */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    curl_easy_cleanup(h);
    const char *p = strstr(body, "\"connectedSince\":\"");
    ck_assert_msg(p != NULL, "no publisher in %s", body);
    p += strlen("\"connectedSince\":\"");
    snprintf(out, len, "%.*s", (int)strcspn(p, "\""), p);
    free(body);
}

static int supplier_calls(supplier_t *s) {
    pthread_mutex_lock(&s->lock);
    int n = s->calls;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Waits up to 60 s for the supplier's call count to exceed `than`: the
 * broker challenges on its own refresh timer, later on a loaded machine. */
static int wait_calls_above(supplier_t *s, int than) {
    for (int i = 0; i < 600 && supplier_calls(s) <= than; i++)
        usleep(100 * 1000);
    return supplier_calls(s);
}

/* Connected producers of topic, from the broker's stats. */
static int publishers(const char *topic) {
    pulsarc_admin_t *a = NULL;
    pulsarc_admin_topic_stats_t *st = NULL;
    char err[512];
    ck_assert_msg(pulsarc_admin_new(NULL, &a, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_msg(pulsarc_admin_topic_stats(a, topic, &st, err, sizeof err) == PULSARC_OK, "%s", err);
    int n = st->publishers;
    pulsarc_admin_topic_stats_free(st);
    pulsarc_admin_destroy(a);
    return n;
}

static pulsarc_err_t send_one(pulsarc_producer_t *p) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY);
    pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
    pulsarc_msg_destroy(m);
    return e;
}

START_TEST(test_refresh_on_challenge_keeps_connection) {
    /* Tokens of the first 4 s expire 3 s after they are made; the broker
     * (refresh check every 1 s) then challenges, and a token made later
     * never expires. By time, not by call: with an http:// service URL the
     * lookups take tokens of their own before the producer's connection. */
    supplier_t s = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_exp_s = 3, .later_from = time(NULL) + 4};
    pulsarc_client_t *c = supplier_client(&s, NULL);
    const char *topic = pct_topic("refresh");
    char err[512], before[64], after[64];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(send_one(p), PULSARC_OK);
    publisher_since(topic, before, sizeof before);
    int calls_before = supplier_calls(&s);
    sleep(7); /* the connection outlives the first token... */
    int calls = wait_calls_above(&s, calls_before); /* ...once the challenge is answered */
    ck_assert_msg(calls > calls_before, "no AUTH_CHALLENGE was answered (supplier calls %d)", calls);
    ck_assert_int_eq(send_one(p), PULSARC_OK);
    publisher_since(topic, after, sizeof after);
    ck_assert_msg(strcmp(before, after) == 0, "producer reconnected (%s -> %s)", before, after);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_refresh_from_rewritten_token_file) {
    char path[] = "/tmp/pulsarc-token-XXXXXX", param[600];
    int fd = mkstemp(path); /* mode 0600 */
    char *first = mint_token("pulsarc-client", 3);
    ck_assert(write(fd, first, strlen(first)) == (ssize_t)strlen(first));
    close(fd);
    snprintf(param, sizeof param, "file://%s", path);
    pulsarc_client_t *c = must_client(URL, (const char *const[]){"authPlugin", "token", "authParams", param, NULL});
    const char *topic = pct_topic("refresh-file");
    char err[512], before[64], after[64];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    publisher_since(topic, before, sizeof before);
    char *next = mint_token("pulsarc-client", 0); /* rotated on disk, as a sidecar would */
    FILE *f = fopen(path, "w");
    fprintf(f, "%s\n", next);
    fclose(f);
    sleep(6);
    ck_assert_int_eq(send_one(p), PULSARC_OK);
    publisher_since(topic, after, sizeof after);
    ck_assert_msg(strcmp(before, after) == 0, "producer reconnected (%s -> %s)", before, after);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    unlink(path);
    free(first);
    free(next);
}
END_TEST

START_TEST(test_expired_answer_to_challenge_drops_connection) {
    /* The first token lives 3 s and the answer to the challenge is already
     * expired: the broker closes the connection and refuses to reconnect. */
    supplier_t s = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_exp_s = 3, .later_exp_s = -60,
                    .later_from = time(NULL) + 2};
    pulsarc_client_t *c = supplier_client(&s, (const char *const[]){"sendTimeoutMs", "3000", NULL});
    const char *topic = pct_topic("refresh-expired");
    char err[512];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(send_one(p), PULSARC_OK);
    sleep(6);
    /* The broker's refresh timer challenges, the answer is expired, the
     * broker drops the producer's connection: each step in its own time. */
    int calls = wait_calls_above(&s, 1);
    ck_assert_msg(calls >= 2, "the challenge was not answered (supplier calls %d)", calls);
    for (int i = 0; i < 300 && publishers(topic) > 0; i++)
        usleep(100 * 1000);
    pulsarc_err_t e = send_one(p);
    ck_assert_msg(e != PULSARC_OK, "send succeeded with expired credentials");
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---- secrets never leak ---- */

static void assert_absent(const char *hay, const char *token, const char *where) {
    const char *sig = strrchr(token, '.');
    ck_assert_msg(strstr(hay, token) == NULL, "a token appears in %s: %s", where, hay);
    if (sig && strlen(sig) > 8)
        ck_assert_msg(strstr(hay, sig + 1) == NULL, "a token signature appears in %s", where);
}

START_TEST(test_no_token_in_errors_or_logs) {
    const char *names[] = {"client.jwt", "expired.jwt", "wrong-key.jwt"};
    char *toks[4];
    for (int i = 0; i < 3; i++)
        toks[i] = secret_text(names[i]);
    toks[3] = strdup("not-a-jwt-secret-value-0123456789");
    char logpath[] = "/tmp/pulsarc-stderr-XXXXXX";
    int logfd = mkstemp(logpath), saved = dup(2);
    dup2(logfd, 2); /* whatever the library prints while failing */
    char errs[4][512];
    for (int i = 1; i < 4; i++)
        try_token(toks[i], errs[i], sizeof errs[i]);
    char param[4200];
    snprintf(param, sizeof param, "{\"token\": %s}", toks[0]); /* malformed JSON: unquoted */
    pulsarc_err_t rc;
    pulsarc_client_t *c = try_client(URL, (const char *const[]){"authPlugin", "token", "authParams", param, NULL},
                                     &rc, errs[0], sizeof errs[0]);
    ck_assert_ptr_null(c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char logs[16384] = "";
    ssize_t n = pread(logfd, logs, sizeof logs - 1, 0);
    logs[n > 0 ? n : 0] = '\0';
    close(logfd);
    unlink(logpath);
    for (int t = 0; t < 4; t++) {
        for (int e = 0; e < 4; e++)
            assert_absent(errs[e], toks[t], "an error string");
        assert_absent(logs, toks[t], "stderr");
        free(toks[t]);
    }
}
END_TEST

START_TEST(test_secrets_not_world_readable) {
    struct stat st;
    const char *dir = secret_path("");
    ck_assert_int_eq(stat(dir, &st), 0);
    ck_assert_msg((st.st_mode & 077) == 0, "secrets dir mode %o", st.st_mode & 0777);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, "..") == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        ck_assert_int_eq(lstat(p, &st), 0);
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
            ck_assert_msg((st.st_mode & 077) == 0, "%s has mode %o", p, st.st_mode & 0777);
    }
    closedir(d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("auth");
    TCase *t = tcase_create("live");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_valid_token_from_every_source);
    tcase_add_test(t, test_token_over_tls);
    tcase_add_test(t, test_invalid_token_refused);
    tcase_add_test(t, test_expired_token_refused);
    tcase_add_test(t, test_unusable_token_source_fails_client_creation);
    tcase_add_test(t, test_supplier_token);
    tcase_add_test(t, test_supplier_failure_is_auth_error);
    tcase_add_test(t, test_refresh_on_challenge_keeps_connection);
    tcase_add_test(t, test_refresh_from_rewritten_token_file);
    tcase_add_test(t, test_no_token_in_errors_or_logs);
    tcase_add_test(t, test_secrets_not_world_readable);
    suite_add_tcase(s, t);
    /* Needs the broker itself to challenge this client's credentials: not so
     * behind a pulsar-proxy, where the broker re-checks only the proxy's own
     * token (test/cluster excludes the tag on its proxy pass). */
    TCase *ch = tcase_create("challenge");
    tcase_set_timeout(ch, 120);
    tcase_set_tags(ch, "broker-challenges-client");
    tcase_add_test(ch, test_expired_answer_to_challenge_drops_connection);
    suite_add_tcase(s, ch);
    return s;
}

PC_TEST_MAIN(suite)
