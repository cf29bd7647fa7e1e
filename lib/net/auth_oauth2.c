/*
 * Design notes: OAuth2 client-credentials authentication, configured as the
 * Java AuthenticationOAuth2 plugin is: authParams {"issuerUrl", "privateKey"
 * (file:///key.json or data:application/json[;base64],... holding client_id
 * and client_secret), "audience", "scope"}; "trustCertsFilePath" (else the
 * client's tlsTrustCertsFilePath, else the system CAs) verifies the issuer.
 * The access token goes to the broker as a token ("token" method).
 *
 * Threads. The key file is read and checked on the application thread at
 * creation (once: a rotated secret needs a new client), so a bad one fails
 * pulsarc_client_new. HTTP runs on a fetcher
 * thread of this provider, never on the loop thread: a blocking HTTPS
 * exchange there would stall every connection of the client, and curl's
 * multi interface would put a second poller inside the loop for a request
 * made a few times an hour. The loop thread only copies the cached token
 * (credentials()) or, when there is none it may use, parks the connection
 * in a waiter list (prepare()) that the fetcher's completion post (to the
 * loop) walks. All connections waiting at once share the one fetch.
 *
 * The fetcher: discovery (issuerUrl/.well-known/openid-configuration ->
 * token_endpoint, https only, kept once known), then the grant (form POST,
 * client_id and client_secret in the body as Java sends them). A token is
 * refreshed in the background at 80% of its expires_in, so the broker's
 * AUTH_CHALLENGE when the old one expires finds a fresh one; a challenge
 * of the very token cached (issuer clock ahead of ours) forces a fetch.
 * Failures: up to three attempts a round (250, then 500 ms apart); after a
 * failed round, waiters get the error and for a backoff (1 s doubling to
 * 30 s) further connections get that error at once instead of new
 * requests; a failed background refresh is retried on that backoff while
 * the old token lasts, after which fetches happen on demand only.
 * Every request is bounded (5 s connect, 10 s total, 64 KiB body), and
 * freeing the provider aborts the one in flight.
 *
 * Secrets: the client secret, request bodies, answers and tokens are
 * wiped when freed (JSON goes through auth_params.c, whose buffers are
 * ours to wipe; the copies curl and OpenSSL make of the bytes on the wire
 * are beyond our reach); errors carry the issuer's error/error_description (with the
 * secret scrubbed out should an issuer echo it) and URLs, never a secret.
 * The lock guards the token cache and the fetch state; waiters are loop
 * thread only; the token endpoint is fetcher-thread only.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base64.h"
#include "core/err.h"
#include "net/auth_plugin.h"

#define KEY_FILE_MAX (64 * 1024)
#define BODY_MAX (64 * 1024)
#define CONNECT_TIMEOUT_MS 5000L
#define REQUEST_TIMEOUT_MS 10000L
#define ROUND_ATTEMPTS 3
#define ROUND_GAP_MS 250
#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
#define REFRESH_PERCENT 80
#define ERR_MAX 400

typedef struct oauth2 {
    pc_auth_t base;
    /* configuration: immutable after creation */
    char *issuer;    /* without a trailing '/' */
    char *client_id;
    char *client_secret; /* wiped at free */
    char *audience, *scope, *ca_file; /* NULL when not set */

    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* CLOCK_MONOTONIC */
    /* under lock */
    int stopping, want_fetch, fetching;
    char *token;
    uint64_t gen;                   /* of token; 0: none yet */
    int64_t expires_at, refresh_at; /* monotonic ms; INT64_MAX: unknown */
    pulsarc_err_t last_code;        /* of the last round, 0 if it succeeded */
    char last_err[ERR_MAX];
    int failures;     /* failed rounds in a row */
    int64_t retry_at; /* no new round on demand before this after a failure */
    pc_loop_t *loop;  /* referenced once a connection waited */
    /* loop thread only */
    pc_auth_waiter_t *waiters;
    /* fetcher thread only */
    char *token_endpoint;
} oauth2_t;

/* ---------- small helpers ---------- */

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static char *dup_nonempty(const char *s) { return s && *s ? strdup(s) : NULL; }

/* Printable ASCII of s, at most max bytes: server text goes into our messages. */
static void sanitize(char *out, size_t outlen, const char *s, size_t max) {
    size_t o = 0;
    for (size_t i = 0; s && s[i] && i < max && o + 1 < outlen; i++)
        out[o++] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (outlen)
        out[o] = '\0';
}

/* Replaces every occurrence of secret in s with "***" (in place, s only shrinks). */
static void scrub(char *s, const char *secret) {
    size_t n = secret ? strlen(secret) : 0;
    if (n < 4)
        return;
    for (char *p; (p = strstr(s, secret));)
        memmove(p + 3, p + n, strlen(p + n) + 1), memcpy(p, "***", 3);
}

/* ---------- HTTP (fetcher thread) ---------- */

typedef struct body {
    char *data;
    size_t len, cap;
    int too_big;
} body_t;

static void body_free(body_t *b) {
    if (b->data)
        pc_auth_wipe((uint8_t *)b->data, b->cap);
    memset(b, 0, sizeof *b);
}

static size_t on_body(char *p, size_t size, size_t n, void *arg) {
    body_t *b = arg;
    size_t add = size * n;
    if (b->len + add > BODY_MAX) {
        b->too_big = 1;
        return 0; /* aborts the transfer */
    }
    if (!b->data && !(b->data = malloc(b->cap = BODY_MAX + 1)))
        return 0;
    memcpy(b->data + b->len, p, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
    (void)a, (void)b, (void)c, (void)d;
    oauth2_t *o = arg;
    pthread_mutex_lock(&o->lock);
    int stop = o->stopping;
    pthread_mutex_unlock(&o->lock);
    return stop; /* nonzero aborts */
}

/* One HTTPS exchange; form != NULL makes it a POST. Returns the HTTP status or -1 (err set). */
static long http(oauth2_t *o, const char *url, const char *form, body_t *b, char *err,
                 size_t errlen) {
    CURL *h = curl_easy_init();
    if (!h) {
        pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "could not create an HTTP handle");
        return -1;
    }
    char cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)BODY_MAX);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, o);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pulsarc-oauth2");
    if (o->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
    if (form) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, form);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(form));
    }
    CURLcode rc = curl_easy_perform(h);
    long status = -1;
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    else if (b->too_big || rc == CURLE_FILESIZE_EXCEEDED)
        pc_seterr(err, errlen, PULSARC_ERR_AUTH, "%s answered more than %d bytes", url, BODY_MAX);
    else
        pc_seterr(err, errlen, PULSARC_ERR_AUTH, "%s: %s", url, *cerr ? cerr : curl_easy_strerror(rc));
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return status;
}

/* The body as a JSON object's members (nested ones skipped); 0 if it is not one. */
static int parse_object(const body_t *b, pc_auth_kv_t *kv) {
    char ignored[128];
    if (!b->data || strlen(b->data) != b->len) { /* a NUL inside: not JSON text */
        memset(kv, 0, sizeof *kv);
        return 0;
    }
    return pc_auth_kv_parse_doc(b->data, "the answer", 1, kv, ignored, sizeof ignored) == PULSARC_OK;
}

static pulsarc_err_t discover(oauth2_t *o, char *err, size_t errlen) {
    char url[2048];
    snprintf(url, sizeof url, "%s/.well-known/openid-configuration", o->issuer);
    body_t b = {0};
    long st = http(o, url, NULL, &b, err, errlen);
    pulsarc_err_t e = PULSARC_OK;
    pc_auth_kv_t kv;
    int j = st == 200 && parse_object(&b, &kv);
    const char *ep = j ? pc_auth_kv_get_str(&kv, "token_endpoint") : NULL;
    if (st < 0)
        e = PULSARC_ERR_AUTH;
    else if (st != 200)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH, "OAuth2 discovery %s answered HTTP %ld", url, st);
    else if (!j)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH, "OAuth2 discovery %s did not answer a JSON object", url);
    else if (!ep || strncmp(ep, "https://", 8) != 0)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH,
                      "OAuth2 discovery %s gave no https:// token_endpoint", url);
    else if (!(o->token_endpoint = strdup(ep)))
        e = pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (j)
        pc_auth_kv_free(&kv);
    body_free(&b);
    return e;
}

/* Appends "&name=<escaped value>" (wiping what it replaces). */
static int form_add(CURL *h, char **form, const char *name, const char *value) {
    if (!value)
        return 0;
    char *esc = curl_easy_escape(h, value, 0);
    if (!esc)
        return -1;
    size_t old = *form ? strlen(*form) : 0, n = old + strlen(name) + strlen(esc) + 3;
    char *next = malloc(n);
    if (next)
        snprintf(next, n, "%s%s%s=%s", *form ? *form : "", old ? "&" : "", name, esc);
    pc_auth_wipe((uint8_t *)esc, strlen(esc));
    pc_auth_free_secret(*form);
    *form = next;
    return next ? 0 : -1;
}

static char *grant_form(oauth2_t *o) {
    CURL *h = curl_easy_init();
    char *form = NULL;
    int bad = !h || form_add(h, &form, "grant_type", "client_credentials") ||
              form_add(h, &form, "client_id", o->client_id) ||
              form_add(h, &form, "client_secret", o->client_secret) ||
              form_add(h, &form, "audience", o->audience) || form_add(h, &form, "scope", o->scope);
    if (h)
        curl_easy_cleanup(h);
    if (bad) {
        pc_auth_free_secret(form);
        return NULL;
    }
    return form;
}

/* The issuer's refusal: RFC 6749 error / error_description when it sent them. */
static pulsarc_err_t refused(oauth2_t *o, long st, const pc_auth_kv_t *j, char *err,
                             size_t errlen) {
    const char *code = j ? pc_auth_kv_get_str(j, "error") : NULL;
    const char *desc = j ? pc_auth_kv_get_str(j, "error_description") : NULL;
    char c[80], d[240];
    sanitize(c, sizeof c, code, 64);
    sanitize(d, sizeof d, desc, 200);
    scrub(d, o->client_secret);
    scrub(c, o->client_secret);
    if (code)
        return pc_seterr(err, errlen, PULSARC_ERR_AUTH,
                         "OAuth2 token endpoint %s refused client '%s' (HTTP %ld): %s%s%s",
                         o->token_endpoint, o->client_id, st, c, desc ? ": " : "", desc ? d : "");
    return pc_seterr(err, errlen, PULSARC_ERR_AUTH, "OAuth2 token endpoint %s answered HTTP %ld",
                     o->token_endpoint, st);
}

/* expires_in: a JSON number (or numeric string) of seconds; 0 when absent or unusable. */
static int64_t expires_in(const pc_auth_kv_t *j) {
    const char *s = pc_auth_kv_get(j, "expires_in");
    char *end;
    double d = s && *s ? strtod(s, &end) : 0;
    return s && *s && !*end && d >= 1 && d < 1e9 ? (int64_t)d : 0;
}

/* The grant. On success *token is malloc'd and *life_s its lifetime (0: not told). */
static pulsarc_err_t grant(oauth2_t *o, char **token, int64_t *life_s, char *err, size_t errlen) {
    char *form = grant_form(o);
    if (!form)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    body_t b = {0};
    long st = http(o, o->token_endpoint, form, &b, err, errlen);
    pc_auth_free_secret(form);
    pc_auth_kv_t kv;
    int parsed = st > 0 && parse_object(&b, &kv);
    const pc_auth_kv_t *j = parsed ? &kv : NULL;
    const char *tok = j ? pc_auth_kv_get_str(j, "access_token") : NULL;
    pulsarc_err_t e = PULSARC_OK;
    if (st < 0)
        e = PULSARC_ERR_AUTH;
    else if (st != 200)
        e = refused(o, st, j, err, errlen);
    else if (!j)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH,
                      "OAuth2 token endpoint %s did not answer a JSON object", o->token_endpoint);
    else if (!tok || !*tok)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH,
                      "OAuth2 token endpoint %s answered without an access_token", o->token_endpoint);
    else if (!(*token = strdup(tok)))
        e = pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    else
        *life_s = expires_in(j);
    int oauth_answer = j && pc_auth_kv_get_str(j, "error") != NULL;
    if (parsed)
        pc_auth_kv_free(&kv); /* wipes its copy of the token */
    body_free(&b);
    /* Not an OAuth2 answer: the endpoint may have moved; discover it again. */
    if (e && !oauth_answer && (st < 0 || st >= 500 || st == 404)) {
        free(o->token_endpoint);
        o->token_endpoint = NULL;
    }
    return e;
}

static pulsarc_err_t fetch_once(oauth2_t *o, char **token, int64_t *life_s, char *err,
                                size_t errlen) {
    pulsarc_err_t e = o->token_endpoint ? PULSARC_OK : discover(o, err, errlen);
    return e ? e : grant(o, token, life_s, err, errlen);
}

/* ---------- the fetcher thread ---------- */

static void on_fetched(void *arg);

static void sleep_unless_stopping(oauth2_t *o, int64_t ms) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&o->lock);
    while (!o->stopping && pthread_cond_timedwait(&o->wake, &o->lock, &ts) != ETIMEDOUT) {
    }
    pthread_mutex_unlock(&o->lock);
}

/* One round: up to ROUND_ATTEMPTS tries. Stores the outcome under the lock. */
static void fetch_round(oauth2_t *o) {
    char err[ERR_MAX] = "";
    char *token = NULL;
    int64_t life = 0, started = 0;
    pulsarc_err_t e = PULSARC_ERR_AUTH;
    for (int i = 0; i < ROUND_ATTEMPTS; i++) {
        if (i)
            sleep_unless_stopping(o, ROUND_GAP_MS * i);
        started = mono_ms();
        e = fetch_once(o, &token, &life, err, sizeof err);
        pthread_mutex_lock(&o->lock);
        int stop = o->stopping;
        pthread_mutex_unlock(&o->lock);
        if (!e || stop)
            break;
    }
    pthread_mutex_lock(&o->lock);
    o->fetching = 0;
    if (!e) {
        pc_auth_free_secret(o->token);
        o->token = token;
        o->gen++;
        o->expires_at = life ? started + life * 1000 : INT64_MAX;
        o->refresh_at = life ? started + life * 10 * REFRESH_PERCENT : INT64_MAX;
        o->last_code = PULSARC_OK;
        o->failures = 0;
        o->retry_at = 0;
    } else {
        int64_t backoff = BACKOFF_FIRST_MS << (o->failures < 5 ? o->failures : 5);
        o->failures++;
        o->retry_at = mono_ms() + (backoff < BACKOFF_MAX_MS ? backoff : BACKOFF_MAX_MS);
        o->last_code = e;
        snprintf(o->last_err, sizeof o->last_err, "%s (%d attempts)", err, ROUND_ATTEMPTS);
    }
    /* Waiters are the loop's to wake; if it is stopping, they are all gone. */
    if (o->loop && !o->stopping)
        pc_loop_post(o->loop, on_fetched, o);
    pthread_mutex_unlock(&o->lock);
}

/* When the next background round is due (lock held): a refresh, or a retry of one. */
static int64_t next_background(const oauth2_t *o) {
    if (!o->token || o->refresh_at == INT64_MAX)
        return INT64_MAX;
    int64_t at = o->refresh_at > o->retry_at ? o->refresh_at : o->retry_at;
    return at < o->expires_at ? at : INT64_MAX; /* an expired token waits for demand */
}

static void *fetcher_main(void *arg) {
    oauth2_t *o = arg;
    pthread_mutex_lock(&o->lock);
    while (!o->stopping) {
        int64_t due = next_background(o), now = mono_ms();
        if (!o->want_fetch && due > now) {
            if (due == INT64_MAX) {
                pthread_cond_wait(&o->wake, &o->lock);
            } else {
                struct timespec ts = {(time_t)(due / 1000), (long)(due % 1000) * 1000000L};
                pthread_cond_timedwait(&o->wake, &o->lock, &ts);
            }
            continue;
        }
        o->want_fetch = 0;
        o->fetching = 1;
        pthread_mutex_unlock(&o->lock);
        fetch_round(o);
        pthread_mutex_lock(&o->lock);
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

/* ---------- the loop-thread side ---------- */

static void on_fetched(void *arg) {
    oauth2_t *o = arg;
    pc_auth_waiter_t *w = o->waiters;
    o->waiters = NULL;
    while (w) {
        pc_auth_waiter_t *next = w->next;
        w->done(w->arg); /* may free w's owner */
        w = next;
    }
}

/* A token this connection may send now (lock held). */
static int usable(const oauth2_t *o, uint64_t challenged_gen) {
    return o->token && mono_ms() < o->expires_at && !(challenged_gen && challenged_gen == o->gen);
}

static int oauth2_prepare(pc_auth_t *a, pc_loop_t *loop, uint64_t challenged_gen,
                          pc_auth_waiter_t *w) {
    oauth2_t *o = (oauth2_t *)a;
    pthread_mutex_lock(&o->lock);
    int ready = usable(o, challenged_gen) ||
                (!o->fetching && o->last_code && mono_ms() < o->retry_at);
    if (!ready) {
        if (!o->loop) {
            pc_loop_ref(loop);
            o->loop = loop;
        }
        if (!o->fetching) {
            o->want_fetch = 1;
            pthread_cond_signal(&o->wake);
        }
    }
    pthread_mutex_unlock(&o->lock);
    if (!ready) {
        w->next = o->waiters;
        o->waiters = w;
    }
    return ready;
}

static void oauth2_cancel(pc_auth_t *a, pc_auth_waiter_t *w) {
    oauth2_t *o = (oauth2_t *)a;
    for (pc_auth_waiter_t **pp = &o->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

static uint64_t oauth2_generation(pc_auth_t *a) {
    oauth2_t *o = (oauth2_t *)a;
    pthread_mutex_lock(&o->lock);
    uint64_t g = o->gen;
    pthread_mutex_unlock(&o->lock);
    return g;
}

static pulsarc_err_t oauth2_credentials(pc_auth_t *a, uint8_t **data, size_t *len, char *err,
                                        size_t errlen) {
    oauth2_t *o = (oauth2_t *)a;
    pulsarc_err_t e = PULSARC_OK;
    *data = NULL;
    *len = 0;
    pthread_mutex_lock(&o->lock);
    if (o->token && mono_ms() < o->expires_at) {
        *len = strlen(o->token);
        if ((*data = malloc(*len)))
            memcpy(*data, o->token, *len);
        else
            e = pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    } else if (o->last_code) {
        e = pc_seterr(err, errlen, o->last_code, "%s", o->last_err);
    } else {
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH, "no OAuth2 access token from %s yet",
                      o->issuer);
    }
    pthread_mutex_unlock(&o->lock);
    if (e)
        *len = 0;
    return e;
}

static void oauth2_free(pc_auth_t *a) {
    oauth2_t *o = (oauth2_t *)a;
    if (o->thread_started) {
        pthread_mutex_lock(&o->lock);
        o->stopping = 1;
        pthread_cond_signal(&o->wake);
        pthread_mutex_unlock(&o->lock);
        pthread_join(o->thread, NULL);
    }
    if (o->loop)
        pc_loop_unref(o->loop);
    pthread_cond_destroy(&o->wake);
    pthread_mutex_destroy(&o->lock);
    pc_auth_free_secret(o->token);
    pc_auth_free_secret(o->client_secret);
    free(o->client_id);
    free(o->issuer);
    free(o->audience);
    free(o->scope);
    free(o->ca_file);
    free(o->token_endpoint);
    free(o);
}

/* ---------- configuration (application thread) ---------- */

static int hexdig(int c) {
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* data:[application/json][;base64],<payload> decoded into a malloc'd string. */
static pulsarc_err_t read_data_url(const char *url, char **out, char *err, size_t errlen) {
    const char *comma = strchr(url, ',');
    if (!comma)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: privateKey data: URL has no ','");
    size_t mlen = (size_t)(comma - url) - 5;
    const char *meta = url + 5;
    int base64 = mlen >= 7 && strncmp(meta + mlen - 7, ";base64", 7) == 0;
    size_t tlen = base64 ? mlen - 7 : mlen;
    if (!(tlen == 16 && strncmp(meta, "application/json", 16) == 0))
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: privateKey data: URL must be of type application/json, not "
                         "'%.*s'", (int)(tlen < 60 ? tlen : 60), meta);
    const char *p = comma + 1;
    size_t cap = strlen(p) + 1; /* decoding only shrinks */
    char *buf = malloc(cap);
    if (!buf)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    long n = 0;
    if (base64) {
        n = pc_base64_decode_lenient(p, strlen(p), (uint8_t *)buf);
    } else { /* percent-encoded */
        for (; *p && n >= 0; p++) {
            int hi, lo;
            if (*p != '%')
                buf[n++] = *p;
            else if ((hi = hexdig((unsigned char)p[1])) >= 0 && (lo = hexdig((unsigned char)p[2])) >= 0)
                buf[n++] = (char)(hi << 4 | lo), p += 2;
            else
                n = -1;
        }
    }
    if (n < 0) {
        pc_auth_wipe((uint8_t *)buf, cap); /* not terminated: wipe all of it */
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: privateKey data: URL is not valid %s",
                         base64 ? "base64" : "percent-encoding");
    }
    buf[n] = '\0';
    *out = buf;
    return PULSARC_OK;
}

static pulsarc_err_t read_key_file(const char *path, char **out, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: cannot read the privateKey file '%s': %s", path,
                         strerror(errno));
    char *buf = malloc(KEY_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, KEY_FILE_MAX + 1, f) : 0;
    int bad = buf && (ferror(f) || n > KEY_FILE_MAX);
    fclose(f);
    if (!buf)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (bad) {
        pc_auth_wipe((uint8_t *)buf, KEY_FILE_MAX + 1);
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: the privateKey file '%s' is unreadable or larger than %d "
                         "bytes", path, KEY_FILE_MAX);
    }
    buf[n] = '\0';
    *out = buf;
    return PULSARC_OK;
}

/* A string member of the key file; required ones must be non-empty strings. */
static pulsarc_err_t key_member(const pc_auth_kv_t *j, const char *key, int required, char **out,
                                char *err, size_t errlen) {
    const char *any = pc_auth_kv_get(j, key), *s = pc_auth_kv_get_str(j, key);
    *out = NULL;
    if (!any || (!s && strcmp(any, "null") == 0))
        return required ? pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                                    "the privateKey key file has no \"%s\"", key)
                        : PULSARC_OK;
    if (!s)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "the privateKey key file's \"%s\" must be a string", key);
    if (required && !*s)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "the privateKey key file's \"%s\" is empty", key);
    *out = strdup(s);
    return *out ? PULSARC_OK : pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
}

/* Reads the key file named by privateKey; sets client_id, client_secret and maybe issuer. */
static pulsarc_err_t load_key(oauth2_t *o, const char *url, char *err, size_t errlen) {
    char *text = NULL;
    pulsarc_err_t e;
    if (strncmp(url, "file://", 7) == 0)
        e = read_key_file(url + 7, &text, err, errlen);
    else if (strncmp(url, "file:", 5) == 0)
        e = read_key_file(url + 5, &text, err, errlen);
    else if (strncmp(url, "data:", 5) == 0)
        e = read_data_url(url, &text, err, errlen);
    else
        e = pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                      "authParams: privateKey must be a file:// or data: URL");
    if (e)
        return e;
    pc_auth_kv_t kv;
    char why[200];
    int parsed = pc_auth_kv_parse_doc(text, "the privateKey key file", 1, &kv, why, sizeof why) ==
                 PULSARC_OK;
    pc_auth_free_secret(text);
    const pc_auth_kv_t *j = &kv;
    if (!parsed)
        e = pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                      "the privateKey key file is not a JSON object holding client_id and "
                      "client_secret (%s)", why);
    char *issuer = NULL;
    if (!e)
        e = key_member(j, "client_id", 1, &o->client_id, err, errlen);
    if (!e)
        e = key_member(j, "client_secret", 1, &o->client_secret, err, errlen);
    if (!e)
        e = key_member(j, "issuer_url", 0, &issuer, err, errlen);
    if (!e && !o->issuer && issuer)
        o->issuer = issuer, issuer = NULL;
    free(issuer);
    if (parsed)
        pc_auth_kv_free(&kv);
    return e;
}

static pulsarc_err_t check_issuer(oauth2_t *o, char *err, size_t errlen) {
    if (!o->issuer)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: AuthenticationOAuth2 needs \"issuerUrl\"");
    if (strncmp(o->issuer, "https://", 8) != 0 || !o->issuer[8])
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: issuerUrl must be an https:// URL (the client secret is "
                         "sent to it)");
    size_t n = strlen(o->issuer);
    while (n > 8 && o->issuer[n - 1] == '/')
        o->issuer[--n] = '\0';
    return PULSARC_OK;
}

static pulsarc_err_t configure(oauth2_t *o, const pc_auth_kv_t *kv, const char *trust, char *err,
                               size_t errlen) {
    const char *type = pc_auth_kv_get(kv, "type");
    if (type && strcmp(type, "client_credentials") != 0)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: OAuth2 \"type\" '%s' is not supported (only "
                         "client_credentials)", type);
    const char *key = pc_auth_kv_get(kv, "privateKey");
    if (!key || !*key)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: AuthenticationOAuth2 needs \"privateKey\" (file:// or data: "
                         "URL of the JSON key file)");
    o->issuer = dup_nonempty(pc_auth_kv_get(kv, "issuerUrl"));
    o->audience = dup_nonempty(pc_auth_kv_get(kv, "audience"));
    o->scope = dup_nonempty(pc_auth_kv_get(kv, "scope"));
    const char *ca = pc_auth_kv_get(kv, "trustCertsFilePath");
    o->ca_file = dup_nonempty(ca && *ca ? ca : trust);
    pulsarc_err_t e = load_key(o, key, err, errlen);
    if (!e)
        e = check_issuer(o, err, errlen);
    FILE *f = !e && o->ca_file ? fopen(o->ca_file, "rb") : NULL;
    if (!e && o->ca_file && !f)
        e = pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                      "cannot read the CA file '%s' for the OAuth2 issuer: %s", o->ca_file,
                      strerror(errno));
    if (f)
        fclose(f);
    return e;
}

pulsarc_err_t pc_auth_oauth2_new(const char *params, const char *trust_certs, pc_auth_t **out,
                                 char *err, size_t errlen) {
    *out = NULL;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "libcurl failed to initialise");
    pc_auth_kv_t kv;
    pulsarc_err_t e = pc_auth_kv_parse(params, "authParams", &kv, err, errlen);
    if (e)
        return e;
    oauth2_t *o = calloc(1, sizeof *o);
    if (!o) {
        pc_auth_kv_free(&kv);
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    o->base.method = "token"; /* the broker verifies the access token as a JWT */
    o->base.credentials = oauth2_credentials;
    o->base.free = oauth2_free;
    o->base.prepare = oauth2_prepare;
    o->base.cancel = oauth2_cancel;
    o->base.generation = oauth2_generation;
    pthread_mutex_init(&o->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&o->wake, &ca);
    pthread_condattr_destroy(&ca);
    e = configure(o, &kv, trust_certs, err, errlen);
    pc_auth_kv_free(&kv);
    if (!e && pthread_create(&o->thread, NULL, fetcher_main, o) != 0)
        e = pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "could not start the OAuth2 fetcher thread");
    o->thread_started = !e;
    if (e) {
        oauth2_free(&o->base);
        return e;
    }
    pthread_setname_np(o->thread, "pulsarc-oauth2");
    *out = &o->base;
    return PULSARC_OK;
}
