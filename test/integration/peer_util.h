/*
 * Helpers for the peers' bug list suites (test_peer_*.c), header-only as
 * each test program is one file:
 *  - a callback ledger: how many times the send callback ran for each
 *    message index, with what outcome, and whether any ran after the
 *    moment the test declared "no more callbacks allowed" (close or
 *    destroy returned);
 *  - the fault proxy in front of the test broker;
 *  - the process's resident set and open descriptor count;
 *  - an admin GET that keeps the answer's body;
 *  - a generous hang bound for waits (never a timing assertion).
 *
 * Threads: ledger_record runs on the client's callback thread(s); the
 * rest on the test's main thread. The ledger's counters are atomics, so a
 * callback after "sealed" is seen whatever thread runs it.
 */
#ifndef PC_PEER_UTIL_H
#define PC_PEER_UTIL_H
#include <curl/curl.h>
#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../faults/proxy.h"
#include "core/url.h"
#include "testutil.h"

#define PEER_HANG_MS 60000 /* any wait longer than this is a hang */
#define PEER_LEDGER_MAX 20000

static inline int64_t peer_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void peer_sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* 1 when the environment variable name is "1". */
static inline int peer_env_on(const char *name) {
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

/*
 * Scenarios that fail today because of a known library bug stay in the
 * suite but run only with PULSARC_PEER_KNOWN_BUGS=1; by default they print
 * why they were skipped. Returns 1 when the caller should skip.
 */
static inline int peer_skip_known_bug(const char *scenario, const char *bug) {
    if (peer_env_on("PULSARC_PEER_KNOWN_BUGS"))
        return 0;
    printf("skipped: %s: known library bug (PULSARC_PEER_KNOWN_BUGS=1 runs it): %s\n", scenario,
           bug);
    fflush(stdout);
    return 1;
}

/* ---------- send callback ledger ---------- */

typedef struct peer_ledger {
    _Atomic int calls[PEER_LEDGER_MAX]; /* callbacks per message index */
    _Atomic int total, ok, timeout, closed, fenced, other;
    _Atomic int after_seal;             /* callbacks that ran after peer_ledger_seal */
    _Atomic int sealed;
    _Atomic int last_other;             /* the last error not counted by name */
} peer_ledger_t;

static inline peer_ledger_t *peer_ledger_new(void) { return calloc(1, sizeof(peer_ledger_t)); }

static inline void peer_ledger_record(peer_ledger_t *l, int index, pulsarc_err_t err) {
    if (atomic_load(&l->sealed))
        atomic_fetch_add(&l->after_seal, 1);
    if (index >= 0 && index < PEER_LEDGER_MAX)
        atomic_fetch_add(&l->calls[index], 1);
    atomic_fetch_add(&l->total, 1);
    switch (err) {
    case PULSARC_OK: atomic_fetch_add(&l->ok, 1); break;
    case PULSARC_ERR_TIMEOUT: atomic_fetch_add(&l->timeout, 1); break;
    case PULSARC_ERR_CLOSED: atomic_fetch_add(&l->closed, 1); break;
    case PULSARC_ERR_BROKER_PRODUCER_FENCED: atomic_fetch_add(&l->fenced, 1); break;
    default:
        atomic_fetch_add(&l->other, 1);
        atomic_store(&l->last_other, (int)err);
        break;
    }
}

/* From now on any callback is a late one. */
static inline void peer_ledger_seal(peer_ledger_t *l) { atomic_store(&l->sealed, 1); }

/* Waits (bounded) until n callbacks ran; returns the count seen. */
static inline int peer_ledger_wait(peer_ledger_t *l, int n) {
    int64_t end = peer_now_ms() + PEER_HANG_MS;
    while (atomic_load(&l->total) < n && peer_now_ms() < end)
        peer_sleep_ms(10);
    return atomic_load(&l->total);
}

/* Indices in [0, n) whose callback ran other than exactly once; *missing / *twice split them. */
static inline int peer_ledger_not_once(peer_ledger_t *l, int n, int *missing, int *twice) {
    *missing = *twice = 0;
    for (int i = 0; i < n && i < PEER_LEDGER_MAX; i++) {
        int c = atomic_load(&l->calls[i]);
        if (c == 0)
            (*missing)++;
        else if (c > 1)
            (*twice)++;
    }
    return *missing + *twice;
}

static inline void peer_ledger_print(const char *scenario, peer_ledger_t *l, int n) {
    int missing, twice;
    peer_ledger_not_once(l, n, &missing, &twice);
    printf("callbacks: %-22s sends=%d calls=%d ok=%d timeout=%d closed=%d fenced=%d other=%d"
           " (last %s) missing=%d twice=%d after_return=%d\n",
           scenario, n, atomic_load(&l->total), atomic_load(&l->ok), atomic_load(&l->timeout),
           atomic_load(&l->closed), atomic_load(&l->fenced), atomic_load(&l->other),
           atomic_load(&l->other) ? pulsarc_errname((pulsarc_err_t)atomic_load(&l->last_other))
                                  : "-",
           missing, twice, atomic_load(&l->after_seal));
    fflush(stdout);
}

/* Asserts: every index in [0, n) called back exactly once, none after the seal. */
static inline void peer_ledger_check(const char *scenario, peer_ledger_t *l, int n) {
    int missing, twice;
    peer_ledger_not_once(l, n, &missing, &twice);
    ck_assert_msg(missing == 0 && twice == 0,
                  "%s: %d of %d sends never called back, %d called back more than once",
                  scenario, missing, n, twice);
    ck_assert_msg(atomic_load(&l->total) == n, "%s: %d callbacks for %d sends", scenario,
                  atomic_load(&l->total), n);
    ck_assert_msg(atomic_load(&l->after_seal) == 0, "%s: %d callbacks after close returned",
                  scenario, atomic_load(&l->after_seal));
}

/* The opaque of each send: the ledger and the index, packed by the sender. */
typedef struct peer_send_ctx {
    peer_ledger_t *ledger;
    int index;
} peer_send_ctx_t;

static inline void peer_on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                                pulsarc_msg_t *msg, void *opaque) {
    (void)p;
    (void)id;
    (void)msg;
    peer_send_ctx_t *ctx = opaque;
    peer_ledger_record(ctx->ledger, ctx->index, err);
}

/* Sends payload "m<i>" asynchronously; ctxs[i] must live until the callback ran. */
static inline pulsarc_err_t peer_send(pulsarc_producer_t *p, peer_send_ctx_t *ctxs,
                                      peer_ledger_t *l, int i) {
    char body[32];
    int len = snprintf(body, sizeof body, "m%d", i);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, body, (size_t)len, PULSARC_MSG_F_COPY);
    ctxs[i].ledger = l;
    ctxs[i].index = i;
    return pulsarc_producer_send_async(p, m, peer_on_sent, &ctxs[i]);
}

/* The index n of a payload "<letter><n>" (payloads carry no NUL: copied first); -1 if none. */
static inline int peer_payload_index(const pulsarc_msg_t *m) {
    char text[32];
    size_t len = pulsarc_msg_len(m);
    if (len < 2 || len >= sizeof text)
        return -1;
    memcpy(text, pulsarc_msg_payload(m), len);
    text[len] = '\0';
    return atoi(text + 1);
}

/* ---------- handles ---------- */

static inline pc_proxy_t *peer_proxy(void) {
    pc_service_url_t u;
    char err[256];
    ck_assert_msg(!pc_service_url_parse(pct_service_url(), &u, err, sizeof err), "%s", err);
    pc_proxy_t *px = pc_proxy_new(u.hosts[0].host, u.hosts[0].port);
    ck_assert_ptr_nonnull(px);
    return px;
}

/* A client on url (NULL: the broker) with quick retries; extra pairs (may be NULL) win. */
static inline pulsarc_client_t *peer_client(const char *url, const char *const *extra) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    char err[256];
    const char *quick[] = {"serviceUrl", url ? url : pct_service_url(), "initialBackoffIntervalMs",
                           "100", "maxBackoffIntervalMs", "1000", NULL};
    for (int i = 0; quick[i]; i += 2)
        ck_assert(pulsarc_conf_set(conf, quick[i], quick[i + 1], err, sizeof err) == PULSARC_OK);
    for (int i = 0; extra && extra[i]; i += 2)
        ck_assert_msg(pulsarc_conf_set(conf, extra[i], extra[i + 1], err, sizeof err) == PULSARC_OK,
                      "%s", err);
    pulsarc_client_t *c = NULL;
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client: %s", err);
    return c;
}

static inline pulsarc_producer_t *peer_producer(pulsarc_client_t *c, const char *topic,
                                                const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer on %s: %s (%s)", topic, err, pulsarc_errname(e));
    return p;
}

static inline pulsarc_consumer_t *peer_consumer(pulsarc_client_t *c, const char *topic,
                                                const char *sub, const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, sub, conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s (%s)", topic, err, pulsarc_errname(e));
    return cons;
}

/* Messages on topic from the earliest position, read until 3 s pass with nothing new. */
static inline int peer_count_stored(pulsarc_client_t *c, const char *topic) {
    pulsarc_msgid_t start = pulsarc_msgid_earliest();
    pulsarc_reader_t *r = NULL;
    char err[256];
    ck_assert_msg(pulsarc_reader_new(c, topic, &start, 0, NULL, &r, err, sizeof err) == PULSARC_OK,
                  "reader: %s", err);
    int n = 0;
    pulsarc_msg_t *m = NULL;
    while (pulsarc_reader_read(r, &m, 3000) == PULSARC_OK) {
        n++;
        pulsarc_msg_destroy(m);
    }
    pulsarc_reader_destroy(r);
    return n;
}

/* ---------- admin answers ---------- */

#define PEER_BODY_MAX 65536

typedef struct peer_body {
    char *data;
    size_t len, cap;
} peer_body_t;

static inline size_t peer_body_keep(void *p, size_t sz, size_t n, void *u) {
    peer_body_t *b = u;
    size_t k = sz * n, room = b->cap - 1 - b->len;
    memcpy(b->data + b->len, p, k < room ? k : room);
    b->len += k < room ? k : room;
    b->data[b->len] = '\0';
    return sz * n;
}

/* GET of an admin path; the body (cut at cap - 1 bytes) into buf. The HTTP status, or -1. */
static inline long peer_admin_get(const char *path, char *buf, size_t cap) {
    char url[1024];
    snprintf(url, sizeof url, "%s%s", pct_admin_url(), path);
    peer_body_t b = {buf, 0, cap};
    buf[0] = '\0';
    CURL *h = curl_easy_init();
    if (!h)
        return -1;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, peer_body_keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    long code = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return code;
}

/* ---------- process resources ---------- */

/* Open descriptors of this process (entries of /proc/self/fd, less the one reading it). */
static inline int peer_fd_count(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

/* Resident set size in KiB (VmRSS of /proc/self/status), -1 if unknown. */
static inline long peer_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}
#endif
