/*
 * OAuth2 client-credentials authentication against the live broker and a
 * real authorisation server: test/oauth2/server.py, started here on
 * loopback (HTTPS with the harness's CA) for this program's run. Its JWTs
 * are signed with the broker's tokenSecretKey, so the broker's own token
 * provider verifies them. Checked: the Java plugin's authParams connect,
 * produce and consume (key file as file:// and data: URL); tokens of 3 s
 * life refreshed many times under traffic with the connection kept and no
 * message lost; connections waiting at once share one fetch, a challenge
 * of the cached token forces a new one; a wrong secret, an unreachable
 * issuer and an issuer answering garbage, huge bodies or 500s give clear
 * errors after bounded retries, and a flaky issuer is recovered from; no
 * secret in errors or on stderr; bad configuration fails client creation
 * naming the option; the Java client's OAuth2 plugin with the same
 * authParams works against the same server.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/auth_plugin.h"
#include "net/loop.h"
#include "test_tls_auth_common.h"

#define URL pct_service_url()
#define JAVA_PLUGIN "org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2"

/* From test/oauth2/start.sh, via the environment (check forks each test). */
static const char *env_of(const char *name) {
    const char *v = getenv(name);
    ck_assert_msg(v && *v, "%s is not set: the OAuth2 server did not start", name);
    return v;
}
#define ISSUER env_of("PCT_OAUTH2_ISSUER")
#define KEY_FILE env_of("PCT_OAUTH2_KEY")
#define WRONG_KEY_FILE env_of("PCT_OAUTH2_WRONG_KEY")
#define CA_FILE env_of("PCT_OAUTH2_CA")

/* authParams for the issuer with path options opts ("tag=x/ttl=3"). Static buffer per slot. */
static const char *params_for(const char *opts, const char *key_url) {
    static char bufs[4][4096];
    static int n;
    char *b = bufs[n++ % 4];
    snprintf(b, 4096,
             "{\"type\": \"client_credentials\", \"issuerUrl\": \"%s/%s\", \"privateKey\": \"%s\", "
             "\"audience\": \"urn:pulsarc-test\", \"scope\": \"produce consume\", "
             "\"trustCertsFilePath\": \"%s\"}",
             ISSUER, opts, key_url, CA_FILE);
    return b;
}

static const char *file_url(const char *path) {
    static char bufs[4][1024];
    static int n;
    char *b = bufs[n++ % 4];
    snprintf(b, 1024, "file://%s", path);
    return b;
}

static size_t collect(void *p, size_t sz, size_t n, void *u) {
    size_t have = strlen(u), add = sz * n;
    if (have + add < 4096) {
        memcpy((char *)u + have, p, add);
        ((char *)u)[have + add] = '\0';
    }
    return sz * n;
}

/* A counter of the server for tag: "discovery", "token_requests", "issued" or "faults". */
static long server_count(const char *tag, const char *what) {
    char url[1024], body[4096] = "", key[64];
    snprintf(url, sizeof url, "%s/stats?tag=%s", ISSUER, tag);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, CA_FILE);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    curl_easy_cleanup(h);
    snprintf(key, sizeof key, "\"%s\": ", what);
    const char *p = strstr(body, key);
    ck_assert_msg(p != NULL, "no %s in %s", what, body);
    return strtol(p + strlen(key), NULL, 10);
}

static pulsarc_client_t *oauth2_client(const char *plugin, const char *params) {
    return must_client(URL, (const char *const[]){"authPlugin", plugin, "authParams", params, NULL});
}

/* ---- connect, produce, consume ---- */

START_TEST(test_java_params_produce_consume) {
    pulsarc_client_t *c = oauth2_client(JAVA_PLUGIN, params_for("tag=rt", file_url(KEY_FILE)));
    roundtrip(c, 5, 64);
    pulsarc_client_destroy(c);
    ck_assert_int_ge(server_count("rt", "issued"), 1);
    ck_assert_int_eq(server_count("rt", "discovery"), 1);
}
END_TEST

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = calloc(1, 8192);
    size_t n = fread(buf, 1, 8191, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static char *b64(const char *s) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    char *out = calloc(1, n * 4 / 3 + 8);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16 | (i + 1 < n ? (unsigned char)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? (unsigned char)s[i + 2] : 0);
        out[o++] = a[v >> 18 & 63];
        out[o++] = a[v >> 12 & 63];
        out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? a[v & 63] : '=';
    }
    return out;
}

START_TEST(test_key_as_data_url_and_client_trust_setting) {
    /* data:application/json;base64 key, the short plugin name, and the CA from
     * the client's tlsTrustCertsFilePath instead of authParams. */
    char *key = slurp(KEY_FILE), *enc = b64(key), url[8192], params[9000];
    snprintf(url, sizeof url, "data:application/json;base64,%s", enc);
    snprintf(params, sizeof params, "{\"issuerUrl\": \"%s/tag=data\", \"privateKey\": \"%s\"}",
             ISSUER, url);
    pulsarc_client_t *c = must_client(URL, (const char *const[]){
        "authPlugin", "oauth2", "authParams", params, "tlsTrustCertsFilePath", CA_FILE, NULL});
    roundtrip(c, 3, 16);
    pulsarc_client_destroy(c);
    ck_assert_int_ge(server_count("data", "issued"), 1);
    free(key);
    free(enc);
}
END_TEST

/* ---- refresh ---- */

static void publisher_since(const char *topic, char *out, size_t len) {
    char url[1024], *body = calloc(1, 4096);
    snprintf(url, sizeof url, "%s/admin/v2/persistent/public/default/%s/stats", pct_admin_url(), topic);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    curl_easy_cleanup(h);
    const char *p = strstr(body, "\"connectedSince\":\"");
    ck_assert_msg(p != NULL, "no publisher in %s", body);
    p += strlen("\"connectedSince\":\"");
    snprintf(out, len, "%.*s", (int)strcspn(p, "\""), p);
    free(body);
}

START_TEST(test_short_tokens_refreshed_under_traffic) {
    /* 3 s tokens, the broker checks every second: over ~20 s the broker
     * challenges many times; the connection must stay and every message arrive. */
    pulsarc_client_t *c = oauth2_client("oauth2", params_for("tag=refresh/ttl=3", file_url(KEY_FILE)));
    const char *topic = pct_topic("oauth2-refresh");
    char err[512], before[64], after[64];
    pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, topic, "sub", cc, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(cc);
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    long issued0 = server_count("refresh", "issued");
    publisher_since(topic, before, sizeof before);
    enum { N = 200 };
    int next = 0;
    for (int i = 0; i < N; i++) {
        char payload[32];
        int len = snprintf(payload, sizeof payload, "m-%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, payload, (size_t)len, PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
        pulsarc_msg_destroy(m);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_strerror(e));
        pulsarc_msg_t *r = NULL;
        while (pulsarc_consumer_receive(cons, &r, i == N - 1 ? 10000 : 0) == PULSARC_OK) {
            char want[32];
            snprintf(want, sizeof want, "m-%d", next++);
            ck_assert_uint_eq(pulsarc_msg_len(r), strlen(want));
            ck_assert(memcmp(pulsarc_msg_payload(r), want, strlen(want)) == 0);
            pulsarc_consumer_ack(cons, r);
            pulsarc_msg_destroy(r);
            if (next == N)
                break;
        }
        usleep(100 * 1000);
    }
    ck_assert_int_eq(next, N);
    publisher_since(topic, after, sizeof after);
    long refreshes = server_count("refresh", "issued") - issued0;
    printf("oauth2 refresh: %ld token refreshes during %d messages (3 s tokens), all %d received "
           "in order, publisher connected since %s throughout\n", refreshes, N, next, before);
    ck_assert_msg(refreshes >= 4, "only %ld refreshes", refreshes);
    ck_assert_msg(strcmp(before, after) == 0, "producer reconnected (%s -> %s)", before, after);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_challenge_of_cached_token_forces_refresh) {
    /* expires_in says 60 s but each JWT expires after 3 s: no background
     * refresh is due, so only the broker's challenges can get new tokens. */
    pulsarc_client_t *c = oauth2_client("oauth2", params_for("tag=lie/ttl=60/lie=57", file_url(KEY_FILE)));
    const char *topic = pct_topic("oauth2-challenge");
    char err[512], before[64], after[64];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    publisher_since(topic, before, sizeof before);
    long issued0 = server_count("lie", "issued");
    for (int i = 0; i < 40; i++) { /* ~12 s */
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY);
        pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
        pulsarc_msg_destroy(m);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_strerror(e));
        usleep(300 * 1000);
    }
    publisher_since(topic, after, sizeof after);
    long fetched = server_count("lie", "issued") - issued0;
    printf("oauth2 challenge-driven refresh: %ld tokens fetched on the broker's challenges in ~12 s\n",
           fetched);
    ck_assert_msg(fetched >= 2, "only %ld tokens fetched: challenges not answered with new ones", fetched);
    ck_assert_msg(strcmp(before, after) == 0, "producer reconnected (%s -> %s)", before, after);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---- one fetch for concurrent connections (the provider itself, on a loop) ---- */

enum { WAITERS = 16 };
typedef struct share {
    pc_auth_t *auth;
    pc_loop_t *loop;
    uint64_t challenged;
    int ready_at_once, done, ok;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} share_t;

typedef struct slot {
    pc_auth_waiter_t w;
    share_t *s;
} slot_t;

static void slot_done(void *arg) {
    slot_t *sl = arg;
    share_t *s = sl->s;
    uint8_t *d = NULL;
    size_t n = 0;
    char err[512];
    pulsarc_err_t e = s->auth->credentials(s->auth, &d, &n, err, sizeof err);
    pc_auth_wipe(d, n);
    pthread_mutex_lock(&s->lock);
    s->done++;
    s->ok += e == PULSARC_OK && n > 0;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static slot_t slots[WAITERS];

static void register_all(void *arg) {
    share_t *s = arg;
    for (int i = 0; i < WAITERS; i++) {
        slots[i].s = s;
        slots[i].w.done = slot_done;
        slots[i].w.arg = &slots[i];
        if (s->auth->prepare(s->auth, s->loop, s->challenged, &slots[i].w)) {
            s->ready_at_once++;
            slot_done(&slots[i]);
        }
    }
}

static void run_waiters(share_t *s, uint64_t challenged) {
    s->challenged = challenged;
    s->done = s->ok = s->ready_at_once = 0;
    ck_assert_int_eq(pc_loop_post(s->loop, register_all, s), PULSARC_OK);
    pthread_mutex_lock(&s->lock);
    while (s->done < WAITERS)
        pthread_cond_wait(&s->cond, &s->lock); /* bounded by the test timeout */
    pthread_mutex_unlock(&s->lock);
    ck_assert_int_eq(s->ok, WAITERS);
}

START_TEST(test_waiting_connections_share_one_fetch) {
    pulsarc_conf_t *conf = pct_conf((const char *const[]){
        "authPlugin", "oauth2", "authParams", params_for("tag=share", file_url(KEY_FILE)), NULL});
    share_t s = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    char err[512];
    ck_assert_msg(pc_auth_new(conf, &s.auth, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    s.loop = pc_loop_new();
    ck_assert_int_eq(pc_loop_start(s.loop, "test-loop"), PULSARC_OK);
    /* 16 connections with nothing cached: one discovery, one token request. */
    run_waiters(&s, 0);
    ck_assert_int_eq(s.ready_at_once, 0);
    ck_assert_int_eq(server_count("share", "token_requests"), 1);
    ck_assert_int_eq(server_count("share", "discovery"), 1);
    /* Cached: no request at all. */
    run_waiters(&s, 0);
    ck_assert_int_eq(s.ready_at_once, WAITERS);
    ck_assert_int_eq(server_count("share", "token_requests"), 1);
    /* The broker challenged the cached token: one new fetch for all. */
    run_waiters(&s, s.auth->generation(s.auth));
    ck_assert_int_eq(s.ready_at_once, 0);
    ck_assert_int_eq(server_count("share", "token_requests"), 2);
    ck_assert_int_eq(server_count("share", "discovery"), 1);
    pc_loop_stop(s.loop);
    pc_auth_free(s.auth); /* holds a loop reference */
    pc_loop_unref(s.loop);
}
END_TEST

/* ---- refusals and faults ---- */

static pulsarc_err_t try_params(const char *params, char *err, size_t errlen) {
    pulsarc_client_t *c = oauth2_client("oauth2", params);
    pulsarc_err_t e = probe(c, err, errlen);
    pulsarc_client_destroy(c);
    return e;
}

static void expect_auth_error(const char *opts, const char *needle, long min_requests,
                              const char *counter, const char *tag) {
    char err[1024];
    pulsarc_err_t e = try_params(params_for(opts, file_url(KEY_FILE)), err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_AUTH, "%s: expected an authentication error, got %s: %s", opts,
                  pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, needle), "%s: '%s' not in: %s", opts, needle, err);
    if (counter)
        ck_assert_int_ge(server_count(tag, counter), min_requests);
    printf("oauth2 %s -> %s\n", opts, err);
}

START_TEST(test_wrong_secret_is_clear_error) {
    char err[1024];
    char *wrong = slurp(WRONG_KEY_FILE), *right = slurp(KEY_FILE);
    pulsarc_err_t e = try_params(params_for("tag=wrong", file_url(WRONG_KEY_FILE)), err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_AUTH, "got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, "invalid_client") && strstr(err, "client authentication failed") &&
                  strstr(err, "pulsarc-oauth2-client"), "%s", err);
    ck_assert_int_eq(server_count("wrong", "issued"), 0);
    /* Neither secret appears in the message. */
    const char *s1 = strstr(wrong, "\"client_secret\": \"") + 18;
    const char *s2 = strstr(right, "\"client_secret\": \"") + 18;
    ck_assert(strncmp(s1, "not-", 4) == 0);
    char sec[128];
    snprintf(sec, sizeof sec, "%.*s", (int)strcspn(s2, "\""), s2);
    ck_assert_msg(strstr(err, sec) == NULL, "the client secret appears in: %s", err);
    free(wrong);
    free(right);
}
END_TEST

START_TEST(test_issuer_unreachable) {
    char err[1024], params[2048];
    /* Loopback port 1: nothing listens, the connection is refused. */
    snprintf(params, sizeof params,
             "{\"issuerUrl\": \"https://127.0.0.1:1/x\", \"privateKey\": \"%s\"}", file_url(KEY_FILE));
    pulsarc_err_t e = try_params(params, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_AUTH, "got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, "https://127.0.0.1:1/x/.well-known/openid-configuration") &&
                  strstr(err, "3 attempts"), "%s", err);
}
END_TEST

START_TEST(test_issuer_faults_are_clear_errors) {
    expect_auth_error("tag=dg/fault=disc-garbage", "did not answer a JSON object", 3, "discovery", "dg");
    expect_auth_error("tag=dh/fault=disc-huge", "answered more than 65536 bytes", 3, "discovery", "dh");
    expect_auth_error("tag=d5/fault=disc-500", "answered HTTP 500", 3, "discovery", "d5");
    expect_auth_error("tag=tg/fault=token-garbage", "did not answer a JSON object", 3, "token_requests", "tg");
    expect_auth_error("tag=th/fault=token-huge", "answered more than 65536 bytes", 3, "token_requests", "th");
    expect_auth_error("tag=t5/fault=token-500", "answered HTTP 500", 3, "token_requests", "t5");
    expect_auth_error("tag=tn/fault=token-no-access-token", "without an access_token", 3, "token_requests", "tn");
    ck_assert_int_eq(server_count("tg", "issued"), 0);
}
END_TEST

START_TEST(test_flaky_issuer_recovered_with_backoff) {
    /* The first 4 token requests fail (HTTP 500); the client keeps asking
     * (as an application retrying would) until one succeeds. */
    pulsarc_client_t *c = oauth2_client("oauth2", params_for("tag=flaky/fault=token-500/faultn=4",
                                                             file_url(KEY_FILE)));
    char err[1024];
    int probes = 0;
    pulsarc_err_t e = PULSARC_ERR_AUTH;
    for (; probes < 120 && e == PULSARC_ERR_AUTH; probes++) { /* ~60 s bound */
        e = probe(c, err, sizeof err);
        if (e == PULSARC_ERR_AUTH)
            usleep(500 * 1000);
    }
    ck_assert_msg(e == PULSARC_OK, "after %d probes: %s: %s", probes, pulsarc_errname(e), err);
    long requests = server_count("flaky", "token_requests");
    printf("oauth2 flaky issuer: recovered after %d probes, %ld token requests (4 refused)\n",
           probes, requests);
    ck_assert_int_ge(requests, 5);
    /* Each failed probe started at most one round of 3 attempts; probes during
     * the backoff started none. */
    ck_assert_int_le(requests, 3L * probes);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_slow_issuer_times_out_connect_clearly) {
    /* The token endpoint stalls 20 s: the connection gives up at its own
     * timeout, saying what it waited for; closing the client aborts the
     * request in flight instead of waiting it out. */
    pulsarc_client_t *c = must_client(URL, (const char *const[]){
        "authPlugin", "oauth2", "authParams", params_for("tag=slow/fault=token-slow", file_url(KEY_FILE)),
        "connectionTimeoutMs", "2000", "operationTimeoutMs", "4000", NULL});
    char err[1024];
    pulsarc_err_t e = probe(c, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_TIMEOUT, "got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, "waiting for the authentication provider's credentials"), "%s", err);
    int64_t t0 = pc_now_ms();
    pulsarc_client_destroy(c);
    printf("oauth2 slow issuer -> %s; client destroyed %lld ms later (request aborted)\n", err,
           (long long)(pc_now_ms() - t0));
    ck_assert_int_eq(server_count("slow", "token_requests"), 1);
}
END_TEST

/* ---- secrets stay out of stderr ---- */

START_TEST(test_no_secret_on_stderr) {
    char *right = slurp(KEY_FILE);
    const char *s = strstr(right, "\"client_secret\": \"") + 18;
    char sec[128];
    snprintf(sec, sizeof sec, "%.*s", (int)strcspn(s, "\""), s);
    char logpath[] = "/tmp/pulsarc-stderr-XXXXXX";
    int logfd = mkstemp(logpath), saved = dup(2);
    dup2(logfd, 2);
    setenv("PULSARC_DEBUG", "frames", 1); /* the frame trace on, so stderr has lines to check */
    char err[1024];
    pulsarc_client_t *c = oauth2_client("oauth2", params_for("tag=quiet", file_url(KEY_FILE)));
    ck_assert_int_eq(probe(c, err, sizeof err), PULSARC_OK);
    pulsarc_client_destroy(c);
    try_params(params_for("tag=quiet2", file_url(WRONG_KEY_FILE)), err, sizeof err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char logs[65536] = "";
    ssize_t n = pread(logfd, logs, sizeof logs - 1, 0);
    logs[n > 0 ? n : 0] = '\0';
    close(logfd);
    unlink(logpath);
    ck_assert_msg(strstr(logs, "CONNECTED"), "no frame trace captured: %.200s", logs);
    ck_assert_msg(strstr(logs, sec) == NULL, "the client secret appears on stderr");
    ck_assert_msg(strstr(logs, "eyJ") == NULL, "a JWT appears on stderr");
    free(right);
}
END_TEST

/* ---- bad configuration: fails client creation, naming the option ---- */

static void expect_bad(const char *plugin, const char *params, const char *needle) {
    char err[1024];
    pulsarc_err_t rc;
    pulsarc_client_t *c = try_client(URL, (const char *const[]){"authPlugin", plugin, "authParams",
                                                                 params, NULL}, &rc, err, sizeof err);
    ck_assert_msg(c == NULL, "client created with %s", params);
    ck_assert_msg(rc == PULSARC_ERR_BAD_CONFIG, "%s: got %s: %s", params, pulsarc_errname(rc), err);
    ck_assert_msg(strstr(err, needle), "'%s' not in: %s", needle, err);
}

static const char *write_temp(const char *text) {
    static char paths[8][64];
    static int n;
    char *p = paths[n++ % 8];
    snprintf(p, 64, "/tmp/pulsarc-key-XXXXXX");
    int fd = mkstemp(p);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return p;
}

START_TEST(test_bad_configuration) {
    char p[4096];
    const char *iss = ISSUER;
    expect_bad("oauth2", "issuerUrl=https://x,privateKey=file:///k", "authParams is not JSON");
    expect_bad("oauth2", "{\"issuerUrl\": \"https://x\" \"privateKey\": 1}", "expected ',' or '}'");
    expect_bad("oauth2", "{\"issuerUrl\": {\"a\": 1}}", "\"issuerUrl\" must be a string");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\"}", iss);
    expect_bad("oauth2", p, "needs \"privateKey\"");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"file:///nonexistent/key.json\"}", iss);
    expect_bad("oauth2", p, "/nonexistent/key.json");
    /* A key of the wrong type: a PEM private key instead of the JSON key file. */
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"file://%s\"}", iss,
             secret_path("client.key"));
    expect_bad("oauth2", p, "not a JSON object");
    const char *k1 = write_temp("{\"client_id\": 42, \"client_secret\": \"s\"}");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"file://%s\"}", iss, k1);
    expect_bad("oauth2", p, "\"client_id\" must be a string");
    const char *k2 = write_temp("{\"client_id\": \"a\"}");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"file://%s\"}", iss, k2);
    expect_bad("oauth2", p, "no \"client_secret\"");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"data:text/plain,{}\"}", iss);
    expect_bad("oauth2", p, "application/json");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"data:application/json;base64,@@@\"}", iss);
    expect_bad("oauth2", p, "not valid base64");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"https://x/key.json\"}", iss);
    expect_bad("oauth2", p, "file:// or data:");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"http://127.0.0.1:1\", \"privateKey\": \"file://%s\"}", KEY_FILE);
    expect_bad("oauth2", p, "issuerUrl must be an https:// URL");
    snprintf(p, sizeof p, "{\"type\": \"authorization_code\", \"issuerUrl\": \"%s\", \"privateKey\": \"file://%s\"}",
             iss, KEY_FILE);
    expect_bad("oauth2", p, "\"type\" 'authorization_code'");
    snprintf(p, sizeof p, "{\"issuerUrl\": \"%s\", \"privateKey\": \"file://%s\", "
             "\"trustCertsFilePath\": \"/nonexistent/ca.pem\"}", iss, KEY_FILE);
    expect_bad("oauth2", p, "/nonexistent/ca.pem");
    /* The issuer may come from the key file's issuer_url instead. */
    const char *k3 = write_temp("{\"client_id\": \"a\", \"client_secret\": \"b\"}");
    snprintf(p, sizeof p, "{\"privateKey\": \"file://%s\"}", k3);
    expect_bad("oauth2", p, "needs \"issuerUrl\"");
    unlink(k1);
    unlink(k2);
    unlink(k3);
}
END_TEST

START_TEST(test_issuer_from_key_file) {
    char p[2048];
    snprintf(p, sizeof p, "{\"privateKey\": \"file://%s\", \"trustCertsFilePath\": \"%s\"}", KEY_FILE,
             CA_FILE);
    pulsarc_client_t *c = oauth2_client(JAVA_PLUGIN, p);
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---- the Java client's plugin against the same server ---- */

START_TEST(test_java_client_same_params) {
    const char *topic = pct_topic("oauth2-java");
    const char *params = params_for("tag=java", file_url(KEY_FILE));
    pulsarc_client_t *c = oauth2_client(JAVA_PLUGIN, params);
    char err[512], cmd[8192];
    pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, topic, "sub", cc, &cons, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(cc);
    long before = server_count("java", "issued");
    snprintf(cmd, sizeof cmd, "bash test/oauth2/java-produce.sh '%s' 'persistent://public/default/%s' 5 '%s' '%s'",
             URL, topic, CA_FILE, params);
    int rc = system(cmd);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "the Java client failed (%d)", rc);
    ck_assert_msg(server_count("java", "issued") > before, "Java took no token from the server");
    for (int i = 0; i < 5; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 20000), PULSARC_OK);
        char want[32];
        snprintf(want, sizeof want, "java-oauth2-%d", i);
        ck_assert_uint_eq(pulsarc_msg_len(m), strlen(want));
        ck_assert(memcmp(pulsarc_msg_payload(m), want, strlen(want)) == 0);
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("auth_oauth2");
    TCase *t = tcase_create("live");
    tcase_set_timeout(t, 180);
    tcase_add_test(t, test_java_params_produce_consume);
    tcase_add_test(t, test_key_as_data_url_and_client_trust_setting);
    tcase_add_test(t, test_issuer_from_key_file);
    tcase_add_test(t, test_waiting_connections_share_one_fetch);
    tcase_add_test(t, test_wrong_secret_is_clear_error);
    tcase_add_test(t, test_issuer_unreachable);
    tcase_add_test(t, test_issuer_faults_are_clear_errors);
    tcase_add_test(t, test_flaky_issuer_recovered_with_backoff);
    tcase_add_test(t, test_slow_issuer_times_out_connect_clearly);
    tcase_add_test(t, test_no_secret_on_stderr);
    tcase_add_test(t, test_bad_configuration);
    tcase_add_test(t, test_short_tokens_refreshed_under_traffic);
    tcase_add_test(t, test_challenge_of_cached_token_forces_refresh);
    tcase_add_test(t, test_java_client_same_params);
    suite_add_tcase(s, t);
    return s;
}

/* Starts test/oauth2/server.py for this run; its settings go into PCT_OAUTH2_*. */
static pid_t start_server(char *dir) {
    char cmd[1024], line[1024];
    snprintf(cmd, sizeof cmd, "bash test/oauth2/start.sh '%s'", dir);
    FILE *p = popen(cmd, "r");
    pid_t pid = 0;
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char name[128];
        snprintf(name, sizeof name, "PCT_OAUTH2_%s", line);
        setenv(name, eq + 1, 1);
        if (strcmp(line, "PID") == 0)
            pid = (pid_t)atoi(eq + 1);
    }
    int rc = p ? pclose(p) : -1;
    if (rc != 0) {
        fprintf(stderr, "test/oauth2/start.sh failed (%d)\n", rc);
        return 0;
    }
    return pid;
}

int main(void) {
    char dir[] = "/tmp/pulsarc-oauth2-XXXXXX";
    if (!mkdtemp(dir) || !getenv("PULSARC_TEST_SECRETS")) {
        fprintf(stderr, "test_auth_oauth2: run under test/broker/run-with-broker.sh\n");
        return EXIT_FAILURE;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pid_t pid = start_server(dir);
    int nf = 1;
    if (pid > 0) {
        SRunner *sr = srunner_create(suite());
        srunner_run_all(sr, CK_NORMAL);
        nf = srunner_ntests_failed(sr);
        srunner_free(sr);
        kill(pid, SIGTERM);
    }
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    curl_global_cleanup();
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
