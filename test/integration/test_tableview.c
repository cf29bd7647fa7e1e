/*
 * Live-broker behaviour of the table view: the initial load of every
 * partition, updates reaching listeners exactly once, deletion by an empty
 * or null value, refresh seeing a write made just before it, a view read
 * from a topic compacted through the admin REST API, destroying the
 * view from inside its own listener, and partitions added to the topic
 * after the view was made (autoUpdatePartitionsInterval) being read.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define PARTS 4
#define HANG_BOUND_S 60 /* a generous bound on waits, not a timing assertion */

static pulsarc_producer_t *producer(pulsarc_client_t *c, const char *topic, int batching) {
    const char *kv[] = {"batchingEnabled", batching ? "true" : "false", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s: %s",
                  topic, err);
    pulsarc_conf_destroy(conf);
    return p;
}

/* value NULL: a null-value message; "" an empty payload. */
static pulsarc_msg_t *keyed(const char *key, const char *value) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    ck_assert_int_eq(pulsarc_msg_set_key(m, key), PULSARC_OK);
    if (value)
        ck_assert_int_eq(pulsarc_msg_set_payload(m, value, strlen(value), PULSARC_MSG_F_COPY),
                         PULSARC_OK);
    else
        ck_assert_int_eq(pulsarc_msg_set_null_value(m), PULSARC_OK);
    return m;
}

static void put(pulsarc_producer_t *p, const char *key, const char *value) {
    pulsarc_msg_t *m = keyed(key, value);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
}

static void put_async(pulsarc_producer_t *p, const char *key, const char *value) {
    ck_assert_int_eq(pulsarc_producer_send_async(p, keyed(key, value), NULL, NULL), PULSARC_OK);
}

static pulsarc_tableview_t *view(pulsarc_client_t *c, const char *topic) {
    pulsarc_tableview_t *tv = NULL;
    char err[256] = "";
    ck_assert_msg(pulsarc_tableview_new(c, topic, NULL, &tv, err, sizeof err) == PULSARC_OK, "%s: %s",
                  topic, err);
    return tv;
}

/* The value of key as a string; PULSARC_ERR_NOT_FOUND when absent. */
static pulsarc_err_t get_str(pulsarc_tableview_t *tv, const char *key, char *buf, size_t cap) {
    size_t len = 0;
    pulsarc_err_t err = pulsarc_tableview_get(tv, key, buf, cap - 1, &len);
    ck_assert_uint_lt(len, cap);
    buf[err ? 0 : len] = '\0';
    return err;
}

static void assert_value(pulsarc_tableview_t *tv, const char *key, const char *want) {
    char got[128];
    ck_assert_msg(get_str(tv, key, got, sizeof got) == PULSARC_OK, "key %s missing", key);
    ck_assert_str_eq(got, want);
}

static void refresh(pulsarc_tableview_t *tv) {
    char err[256] = "";
    ck_assert_msg(pulsarc_tableview_refresh(tv, err, sizeof err) == PULSARC_OK, "refresh: %s", err);
}

static const char *partitioned_topic(const char *prefix) {
    const char *topic = pct_topic(prefix);
    pct_create_partitioned(topic, PARTS);
    return topic;
}

/* ---------- initial load ---------- */

START_TEST(test_initial_load_reads_every_partition) {
    enum { N = 200, OVERWRITTEN = 50 };
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-load");
    pulsarc_producer_t *p = producer(c, topic, 0);
    char key[32], val[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v1-%d", i);
        put(p, key, val);
    }
    pulsarc_producer_destroy(p);
    p = producer(c, topic, 1); /* the second round in batches */
    for (int i = 0; i < OVERWRITTEN; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v2-%d", i);
        put_async(p, key, val);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    pulsarc_producer_destroy(p);

    pulsarc_tableview_t *tv = view(c, topic);
    ck_assert_uint_eq(pulsarc_tableview_size(tv), N);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d-%d", i < OVERWRITTEN ? 2 : 1, i);
        assert_value(tv, key, val);
    }
    pulsarc_tableview_stats_t st;
    ck_assert_int_eq(pulsarc_tableview_stats(tv, &st), PULSARC_OK);
    ck_assert_uint_eq(st.partitions, PARTS);
    ck_assert_uint_eq(st.keys, N);
    ck_assert_uint_eq(st.messages, N + OVERWRITTEN);
    ck_assert_uint_eq(st.updates, N + OVERWRITTEN);
    char got[8];
    ck_assert_int_eq(get_str(tv, "no-such-key", got, sizeof got), PULSARC_ERR_NOT_FOUND);
    /* A short buffer gets the first bytes and the full length. */
    size_t len = 0;
    ck_assert_int_eq(pulsarc_tableview_get(tv, "k0", got, 2, &len), PULSARC_OK);
    ck_assert_uint_eq(len, strlen("v2-0"));
    ck_assert_int_eq(memcmp(got, "v2", 2), 0);
    pulsarc_tableview_destroy(tv);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_empty_topic_and_bad_arguments) {
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-empty");
    pulsarc_tableview_t *tv = view(c, topic);
    ck_assert_uint_eq(pulsarc_tableview_size(tv), 0);
    refresh(tv);
    size_t len = 1;
    ck_assert_int_eq(pulsarc_tableview_get(tv, "k", NULL, 0, &len), PULSARC_ERR_NOT_FOUND);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(pulsarc_tableview_get(tv, NULL, NULL, 0, &len), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_tableview_get(tv, "k", NULL, 4, &len), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_tableview_listen(tv, NULL, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_tableview_close(tv), PULSARC_OK);
    ck_assert_int_eq(pulsarc_tableview_close(tv), PULSARC_OK);
    char err[256] = "";
    ck_assert_int_eq(pulsarc_tableview_refresh(tv, err, sizeof err), PULSARC_ERR_CLOSED);
    pulsarc_tableview_destroy(tv);
    pulsarc_tableview_t *none = NULL;
    ck_assert_int_eq(pulsarc_tableview_new(c, "", NULL, &none, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_tableview_new(NULL, topic, NULL, &none, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_ptr_null(none);
    ck_assert_uint_eq(pulsarc_tableview_size(NULL), 0);
    pulsarc_tableview_destroy(NULL);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- listeners ---------- */

enum { KEYS = 20, UPDATES = 40 };

typedef struct seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int replayed;           /* calls made at registration */
    int calls;              /* calls after it */
    int per_update[UPDATES];
    int deletions;
    int bad;                /* a call whose value get() did not agree with, or refresh accepted */
    int registering;
} seen_t;

static void seen_init(seen_t *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
}

static void seen_free(seen_t *s) {
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
}

/* Waits (bounded) until pred holds; fails the test at the bound. */
static void wait_for(seen_t *s, int (*pred)(const seen_t *), const char *what) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += HANG_BOUND_S;
    pthread_mutex_lock(&s->lock);
    int timed_out = 0;
    while (!pred(s) && !timed_out)
        timed_out = pthread_cond_timedwait(&s->cond, &s->lock, &dl) != 0;
    pthread_mutex_unlock(&s->lock);
    ck_assert_msg(!timed_out, "gave up waiting for %s", what);
}

/* Values are "u-<update number>" or "init-<key number>"; NULL for a deletion. */
static void on_change(pulsarc_tableview_t *tv, const char *key, const void *value, size_t len,
                      void *opaque) {
    seen_t *s = opaque;
    char buf[64] = "", now[64] = "";
    if (value)
        snprintf(buf, sizeof buf, "%.*s", (int)len, (const char *)value);
    /* Inside the listener the view already holds this update. */
    size_t nlen = 0;
    pulsarc_err_t gerr = pulsarc_tableview_get(tv, key, now, sizeof now - 1, &nlen);
    int agrees = value ? gerr == PULSARC_OK && strcmp(now, buf) == 0 : gerr == PULSARC_ERR_NOT_FOUND;
    int refresh_refused = pulsarc_tableview_refresh(tv, NULL, 0) == PULSARC_ERR_STATE;
    pthread_mutex_lock(&s->lock);
    s->bad += !agrees || !refresh_refused;
    if (s->registering)
        s->replayed++;
    else
        s->calls++;
    int u;
    if (value && sscanf(buf, "u-%d", &u) == 1 && u >= 0 && u < UPDATES)
        s->per_update[u]++;
    if (!value)
        s->deletions++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static int all_updates_seen(const seen_t *s) { return s->calls >= UPDATES; }
static int deletions_seen(const seen_t *s) { return s->deletions >= 2; }

START_TEST(test_listener_sees_each_update_once_and_deletions) {
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-listen");
    pulsarc_producer_t *p = producer(c, topic, 0);
    char key[32], val[32];
    for (int i = 0; i < KEYS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "init-%d", i);
        put(p, key, val);
    }
    pulsarc_tableview_t *tv = view(c, topic);
    seen_t s;
    seen_init(&s);
    s.registering = 1; /* replay runs on this thread, inside listen */
    ck_assert_int_eq(pulsarc_tableview_listen(tv, on_change, &s), PULSARC_OK);
    pthread_mutex_lock(&s.lock);
    s.registering = 0;
    ck_assert_int_eq(s.replayed, KEYS);
    pthread_mutex_unlock(&s.lock);

    pulsarc_producer_t *batched = producer(c, topic, 1);
    for (int j = 0; j < UPDATES; j++) {
        snprintf(key, sizeof key, "k%d", j % KEYS);
        snprintf(val, sizeof val, "u-%d", j);
        put_async(batched, key, val);
    }
    ck_assert_int_eq(pulsarc_producer_flush(batched, 30000), PULSARC_OK);
    wait_for(&s, all_updates_seen, "every update at the listener");
    refresh(tv);
    /* for_each takes the same turn as the listener calls: none is still running after it. */
    ck_assert_int_eq(pulsarc_tableview_for_each(tv, on_change, &s), PULSARC_OK);
    pthread_mutex_lock(&s.lock);
    ck_assert_int_eq(s.calls, UPDATES + KEYS); /* the updates, then the for_each visit */
    for (int j = 0; j < UPDATES; j++)
        ck_assert_msg(s.per_update[j] == (j >= UPDATES - KEYS ? 2 : 1),
                      "update %d seen %d times", j, s.per_update[j]);
    s.calls = 0;
    pthread_mutex_unlock(&s.lock);
    for (int i = 0; i < KEYS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "u-%d", UPDATES - KEYS + i);
        assert_value(tv, key, val);
    }

    /* Deletion: an empty payload and a null value. */
    put(p, "k0", "");
    put(p, "k1", NULL);
    wait_for(&s, deletions_seen, "two deletions at the listener");
    refresh(tv);
    char got[64];
    ck_assert_int_eq(get_str(tv, "k0", got, sizeof got), PULSARC_ERR_NOT_FOUND);
    ck_assert_int_eq(get_str(tv, "k1", got, sizeof got), PULSARC_ERR_NOT_FOUND);
    ck_assert_uint_eq(pulsarc_tableview_size(tv), KEYS - 2);
    pthread_mutex_lock(&s.lock);
    ck_assert_int_eq(s.deletions, 2);
    ck_assert_int_eq(s.bad, 0);
    pthread_mutex_unlock(&s.lock);

    pulsarc_producer_destroy(batched);
    pulsarc_producer_destroy(p);
    pulsarc_tableview_destroy(tv);
    seen_free(&s);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- refresh ---------- */

START_TEST(test_refresh_sees_a_write_made_just_before) {
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-refresh");
    pulsarc_tableview_t *tv = view(c, topic);
    pulsarc_producer_t *p = producer(c, topic, 0);
    char key[32], val[32];
    for (int i = 0; i < 30; i++) {
        snprintf(key, sizeof key, "r%d", i % 3);
        snprintf(val, sizeof val, "%d", i);
        put(p, key, val);
        refresh(tv);
        assert_value(tv, key, val);
    }
    ck_assert_uint_eq(pulsarc_tableview_size(tv), 3);
    pulsarc_producer_destroy(p);
    pulsarc_tableview_destroy(tv);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- compaction ---------- */

typedef struct body {
    char text[4096];
    size_t len;
} body_t;

static size_t collect(void *ptr, size_t sz, size_t n, void *arg) {
    body_t *b = arg;
    size_t take = sz * n;
    if (take > sizeof b->text - 1 - b->len)
        take = sizeof b->text - 1 - b->len;
    memcpy(b->text + b->len, ptr, take);
    b->len += take;
    b->text[b->len] = '\0';
    return sz * n;
}

static int admin_get(const char *path, body_t *b) {
    CURL *h = curl_easy_init();
    if (!h)
        return -1;
    char url[1024];
    snprintf(url, sizeof url, "%s%s", pct_admin_url(), path);
    memset(b, 0, sizeof *b);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    long code = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return (int)code;
}

/* Triggers compaction of one partition and polls its status until it ends (bounded). */
static void compact(const char *partition) {
    char path[512];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/compaction", partition);
    int code = pct_admin("PUT", path, NULL);
    ck_assert_msg(code == 204 || code == 200, "trigger compaction of %s: HTTP %d", partition, code);
    body_t b;
    for (int i = 0; i < HANG_BOUND_S * 5; i++) {
        code = admin_get(path, &b);
        ck_assert_msg(code == 200, "compaction status of %s: HTTP %d", partition, code);
        ck_assert_msg(!strstr(b.text, "ERROR"), "compaction of %s failed: %s", partition, b.text);
        if (strstr(b.text, "SUCCESS"))
            return;
        usleep(200 * 1000);
    }
    ck_abort_msg("compaction of %s did not finish: %s", partition, b.text);
}

START_TEST(test_view_of_a_compacted_topic_reads_only_latest_values) {
    enum { N = 12, ROUNDS = 5 };
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-compact");
    pulsarc_producer_t *p = producer(c, topic, 0);
    char key[32], val[32];
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < N; i++) {
            snprintf(key, sizeof key, "k%d", i);
            snprintf(val, sizeof val, "r%d-%d", r, i);
            put(p, key, val);
        }
    put(p, "k0", NULL); /* deleted: compaction drops the key altogether */
    put(p, "k1", "");
    /* Written last on every partition, so no partition's last message is a tombstone. */
    for (int i = 2; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "final-%d", i);
        put(p, key, val);
    }
    pulsarc_producer_destroy(p);

    pulsarc_tableview_t *before = view(c, topic);
    pulsarc_tableview_stats_t st;
    ck_assert_int_eq(pulsarc_tableview_stats(before, &st), PULSARC_OK);
    ck_assert_uint_eq(st.messages, N * ROUNDS + 2 + (N - 2));
    pulsarc_tableview_destroy(before);

    char name[512];
    for (int i = 0; i < PARTS; i++) {
        snprintf(name, sizeof name, "%s-partition-%d", topic, i);
        compact(name);
    }
    pulsarc_tableview_t *tv = view(c, topic);
    ck_assert_int_eq(pulsarc_tableview_stats(tv, &st), PULSARC_OK);
    ck_assert_uint_eq(st.keys, N - 2);
    ck_assert_uint_eq(st.messages, N - 2); /* one message per live key: the compacted view */
    char got[64];
    ck_assert_int_eq(get_str(tv, "k0", got, sizeof got), PULSARC_ERR_NOT_FOUND);
    ck_assert_int_eq(get_str(tv, "k1", got, sizeof got), PULSARC_ERR_NOT_FOUND);
    for (int i = 2; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "final-%d", i);
        assert_value(tv, key, val);
    }
    /* Live updates continue past the compacted part. */
    p = producer(c, topic, 0);
    put(p, "k2", "after");
    put(p, "k0", "back");
    pulsarc_producer_destroy(p);
    refresh(tv);
    assert_value(tv, "k2", "after");
    assert_value(tv, "k0", "back");
    pulsarc_tableview_destroy(tv);
    pulsarc_client_destroy(c);
}
END_TEST

/* Compaction drops a trailing deletion: the view must not wait for that message. */
START_TEST(test_compacted_topic_ending_in_a_deletion) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("tv-compact-tail");
    pulsarc_producer_t *p = producer(c, topic, 0);
    put(p, "keep", "1");
    put(p, "gone", "2");
    put(p, "gone", NULL);
    compact(topic);
    pulsarc_tableview_t *tv = view(c, topic);
    ck_assert_uint_eq(pulsarc_tableview_size(tv), 1);
    assert_value(tv, "keep", "1");
    put(p, "gone", "3");
    refresh(tv);
    assert_value(tv, "gone", "3");
    pulsarc_producer_destroy(p);
    pulsarc_tableview_destroy(tv);

    /* Every key deleted: the compacted view is empty. */
    topic = pct_topic("tv-compact-none");
    p = producer(c, topic, 0);
    put(p, "a", "1");
    put(p, "a", "");
    compact(topic);
    tv = view(c, topic);
    ck_assert_uint_eq(pulsarc_tableview_size(tv), 0);
    pulsarc_producer_destroy(p);
    pulsarc_tableview_destroy(tv);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---------- close from another thread while updates flow ---------- */

typedef struct counter {
    pthread_mutex_t lock;
    int calls;
} counter_t;

static void count_call(pulsarc_tableview_t *tv, const char *key, const void *value, size_t len,
                       void *opaque) {
    (void)tv, (void)key, (void)value, (void)len;
    counter_t *n = opaque;
    pthread_mutex_lock(&n->lock);
    n->calls++;
    pthread_mutex_unlock(&n->lock);
}

static int calls_of(counter_t *n) {
    pthread_mutex_lock(&n->lock);
    int v = n->calls;
    pthread_mutex_unlock(&n->lock);
    return v;
}

static void *close_view(void *tv) {
    return (void *)(intptr_t)pulsarc_tableview_close(tv);
}

START_TEST(test_close_from_another_thread_while_updates_flow) {
    enum { N = 500 };
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-close");
    pulsarc_tableview_t *tv = view(c, topic);
    counter_t n = {.calls = 0};
    pthread_mutex_init(&n.lock, NULL);
    ck_assert_int_eq(pulsarc_tableview_listen(tv, count_call, &n), PULSARC_OK);
    pulsarc_producer_t *p = producer(c, topic, 1);
    char key[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i % 50);
        put_async(p, key, "v");
    }
    pthread_t closer;
    ck_assert_int_eq(pthread_create(&closer, NULL, close_view, tv), 0);
    pulsarc_err_t rerr = pulsarc_tableview_refresh(tv, NULL, 0);
    ck_assert_msg(rerr == PULSARC_OK || rerr == PULSARC_ERR_CLOSED, "refresh racing close: %s",
                  pulsarc_errname(rerr));
    void *cerr;
    pthread_join(closer, &cerr);
    ck_assert_int_eq((int)(intptr_t)cerr, PULSARC_OK);
    int at_close = calls_of(&n);
    ck_assert_int_le(at_close, N);
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    ck_assert_int_eq(pulsarc_tableview_refresh(tv, NULL, 0), PULSARC_ERR_CLOSED);
    ck_assert_int_eq(pulsarc_tableview_listen(tv, count_call, &n), PULSARC_ERR_CLOSED);
    /* The view keeps what it read, and no listener runs once close returned. */
    ck_assert_uint_le(pulsarc_tableview_size(tv), 50);
    pulsarc_tableview_destroy(tv);
    ck_assert_int_eq(calls_of(&n), at_close);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pthread_mutex_destroy(&n.lock);
}
END_TEST

/* ---------- destroy from inside the listener ---------- */

typedef struct self_destroy {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int live;  /* 1 once registration is over */
    int done;  /* the listener destroyed the view */
    int calls_after;
} self_destroy_t;

static void destroy_on_first_update(pulsarc_tableview_t *tv, const char *key, const void *value,
                                    size_t len, void *opaque) {
    (void)key, (void)value, (void)len;
    self_destroy_t *d = opaque;
    pthread_mutex_lock(&d->lock);
    int live = d->live, done = d->done;
    d->calls_after += done;
    pthread_mutex_unlock(&d->lock);
    if (!live || done)
        return;
    pulsarc_tableview_destroy(tv);
    pthread_mutex_lock(&d->lock);
    d->done = 1;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

START_TEST(test_destroy_from_inside_the_listener) {
    pulsarc_client_t *c = pct_client();
    const char *topic = partitioned_topic("tv-self");
    pulsarc_producer_t *p = producer(c, topic, 0);
    put(p, "a", "1");
    pulsarc_tableview_t *tv = view(c, topic);
    self_destroy_t d = {.live = 0};
    pthread_mutex_init(&d.lock, NULL);
    pthread_cond_init(&d.cond, NULL);
    ck_assert_int_eq(pulsarc_tableview_listen(tv, destroy_on_first_update, &d), PULSARC_OK);
    pthread_mutex_lock(&d.lock);
    d.live = 1;
    pthread_mutex_unlock(&d.lock);
    char key[16];
    for (int i = 0; i < 20; i++) { /* on several partitions, so other threads are busy too */
        snprintf(key, sizeof key, "x%d", i);
        put(p, key, "v");
    }
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += HANG_BOUND_S;
    pthread_mutex_lock(&d.lock);
    while (!d.done && pthread_cond_timedwait(&d.cond, &d.lock, &dl) == 0) {
    }
    ck_assert_int_eq(d.done, 1);
    ck_assert_int_eq(d.calls_after, 0);
    pthread_mutex_unlock(&d.lock);
    pulsarc_producer_destroy(p);
    /* The view's readers are gone already: the client may go at once. */
    pulsarc_client_destroy(c);
    pthread_mutex_destroy(&d.lock);
    pthread_cond_destroy(&d.cond);
}
END_TEST

/* ---------- new partitions ---------- */

START_TEST(test_new_partitions_are_read) {
    enum { KEYS = 40 };
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("tv-grow");
    pct_create_partitioned(topic, 2);
    pulsarc_producer_t *p = producer(c, topic, 0);
    put(p, "before", "2-partitions");
    pulsarc_producer_destroy(p);
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"autoUpdatePartitionsInterval", "1", NULL});
    pulsarc_tableview_t *tv = NULL;
    char err[256] = "";
    ck_assert_msg(pulsarc_tableview_new(c, topic, conf, &tv, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    assert_value(tv, "before", "2-partitions");

    char path[600];
    snprintf(path, sizeof path, "/admin/v2/persistent/public/default/%s/partitions", topic);
    ck_assert_int_eq(pct_admin("POST", path, "4"), 204);
    pulsarc_tableview_stats_t st = {0};
    for (int i = 0; i < HANG_BOUND_S * 10 && st.partitions < 4; i++) {
        ck_assert_int_eq(pulsarc_tableview_stats(tv, &st), PULSARC_OK);
        if (st.partitions < 4)
            usleep(100000);
    }
    ck_assert_uint_eq(st.partitions, 4);

    /* A producer made now routes keys over 4 partitions: some land in the new ones. */
    p = producer(c, topic, 0);
    int in_new = 0;
    char key[32], val[32];
    for (int i = 0; i < KEYS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d", i);
        pulsarc_msg_t *m = keyed(key, val);
        pulsarc_msgid_t id;
        ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
        pulsarc_msg_destroy(m);
        in_new += id.partition >= 2;
    }
    pulsarc_producer_destroy(p);
    ck_assert_int_gt(in_new, 0);
    refresh(tv); /* reads every partition, the new ones too, to its last message */
    for (int i = 0; i < KEYS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d", i);
        assert_value(tv, key, val);
    }
    ck_assert_uint_eq(pulsarc_tableview_size(tv), KEYS + 1);
    printf("tableview: %d of %d keys went to the 2 partitions added after the view was made\n", in_new,
           KEYS);
    pulsarc_tableview_destroy(tv);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *tableview_suite(void) {
    Suite *s = suite_create("live-tableview");
    TCase *tc = tcase_create("tableview");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_initial_load_reads_every_partition);
    tcase_add_test(tc, test_empty_topic_and_bad_arguments);
    tcase_add_test(tc, test_listener_sees_each_update_once_and_deletions);
    tcase_add_test(tc, test_refresh_sees_a_write_made_just_before);
    tcase_add_test(tc, test_view_of_a_compacted_topic_reads_only_latest_values);
    tcase_add_test(tc, test_compacted_topic_ending_in_a_deletion);
    tcase_add_test(tc, test_close_from_another_thread_while_updates_flow);
    tcase_add_test(tc, test_destroy_from_inside_the_listener);
    tcase_add_test(tc, test_new_partitions_are_read);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(tableview_suite)
