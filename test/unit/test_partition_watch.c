/*
 * The partition-count watch (lib/client/partition_watch.c) against the
 * scripted fake broker, driven directly on the client's io thread with a
 * test owner that records every upcall:
 *   - failed lookups keep the count: lookups answered Failed, then the
 *     same count again, never make the watch offer a growth; the first
 *     failure of the run is reported once on stderr, and the recovery;
 *   - a growth the owner takes only in part is offered again from where
 *     the owner stopped, and nothing once it follows all;
 *   - cancel with a lookup outstanding: no upcall after the cancel, no
 *     second lookup while one is out, and the owner's reference is let go
 *     only once the outstanding lookup has ended (here: its connection is
 *     dropped), so its late answer never touches freed memory (ASan,
 *     valgrind).
 *
 * Design notes: the owner's fields are shared by the io thread (upcalls,
 * cancel) and the test thread, under the owner's mutex; the test waits on
 * its condition variable with a generous hang bound, never on a sleep.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "PulsarApi.pb-c.h"
#include "client/partition_watch.h"
#include "stderr_capture.h"
#include "testutil.h"

#define T(x) PULSAR__PROTO__BASE_COMMAND__TYPE__##x
#define SE(x) PULSAR__PROTO__SERVER_ERROR__##x
#define WAIT_MS 20000
#define PERIOD_MS 100
#define TOPIC "persistent://public/default/pw"

typedef struct owner {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pulsarc_client_t *client;
    pc_partition_watch_t *watch; /* io thread */
    int known;                   /* the count the watch starts from */
    int refs;                    /* references the watch holds */
    int limit_first;             /* the first grew follows at most this many partitions */
    int limit;                   /* the later ones at most this many */
    int calls;                   /* grew upcalls so far */
    int from[8], to[8];          /* their arguments */
    int cancelled;               /* the cancel has run */
    int after_cancel;            /* upcalls seen after it */
} owner_t;

static int on_grew(void *arg, const char *topic, int known, int n) {
    owner_t *o = arg;
    ck_assert_str_eq(topic, TOPIC);
    pthread_mutex_lock(&o->lock);
    if (o->cancelled)
        o->after_cancel++;
    if (o->calls < 8) {
        o->from[o->calls] = known;
        o->to[o->calls] = n;
    }
    o->calls++;
    int limit = o->calls == 1 ? o->limit_first : o->limit;
    int follows = n < limit ? n : limit;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
    return follows;
}

static void on_ref(void *arg) {
    owner_t *o = arg;
    pthread_mutex_lock(&o->lock);
    o->refs++;
    pthread_mutex_unlock(&o->lock);
}

static void on_unref(void *arg) {
    owner_t *o = arg;
    pthread_mutex_lock(&o->lock);
    o->refs--;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

static const pc_partition_watch_ops_t ops = {on_grew, on_ref, on_unref};

static void do_start(void *arg) {
    owner_t *o = arg;
    o->watch = pc_partition_watch_start(o->client, TOPIC, o->known, PERIOD_MS, &ops, o);
    ck_assert_ptr_nonnull(o->watch);
}

/* The owner is marked first: the cancel may let go of it, and the test then reuses it. */
static void do_cancel(void *arg) {
    owner_t *o = arg;
    pc_partition_watch_t *w = o->watch;
    o->watch = NULL;
    pthread_mutex_lock(&o->lock);
    o->cancelled = 1;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
    pc_partition_watch_cancel(w);
}

static void owner_init(owner_t *o, pulsarc_client_t *c, int known, int limit_first, int limit) {
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cond, NULL);
    o->client = c;
    o->known = known;
    o->limit_first = limit_first;
    o->limit = limit;
}

static void run_on_loop(owner_t *o, pc_loop_fn fn) {
    ck_assert_int_eq(pc_client_post(o->client, fn, o), PULSARC_OK);
}

/* Waits until *field reaches at least v (under the lock); 1 when it did. */
static int wait_at_least(owner_t *o, const int *field, int v) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&o->lock);
    int rc = 0;
    while (*field < v && rc == 0)
        rc = pthread_cond_timedwait(&o->cond, &o->lock, &until);
    int reached = *field >= v;
    pthread_mutex_unlock(&o->lock);
    return reached;
}

/* Waits until the watch has let go of the owner. */
static int wait_released(owner_t *o) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&o->lock);
    int rc = 0;
    while (o->refs > 0 && rc == 0)
        rc = pthread_cond_timedwait(&o->cond, &o->lock, &until);
    int released = o->refs == 0;
    pthread_mutex_unlock(&o->lock);
    return released;
}

static int owner_get(owner_t *o, const int *field) {
    pthread_mutex_lock(&o->lock);
    int v = *field;
    pthread_mutex_unlock(&o->lock);
    return v;
}

static uint64_t metadata_cmds(pc_fb_t *fb) {
    pc_fb_stats_t st;
    pc_fb_stats(fb, &st);
    return st.cmds[T(PARTITIONED_METADATA)];
}

static int count_of(const char *text, const char *what) {
    int n = 0;
    for (const char *s = strstr(text, what); s; s = strstr(s + 1, what))
        n++;
    return n;
}

START_TEST(test_failed_lookups_keep_the_count) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_set_partitions(fb, 2);
    pc_fb_rule(fb, T(PARTITIONED_METADATA), PC_FB_ERROR, SE(ServiceNotReady), "metadata store down",
               0, 3);
    captured_t cap;
    capture_stderr(&cap);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    owner_t o;
    owner_init(&o, c, 2, 3, 100);
    run_on_loop(&o, do_start);

    /* Three failures, then two answers with the count the owner follows. */
    ck_assert(pc_fb_wait_cmds(fb, T(PARTITIONED_METADATA), 5, WAIT_MS));
    uint64_t seen = metadata_cmds(fb);
    /* A sixth asked: the fifth was answered (one lookup at a time). */
    ck_assert(pc_fb_wait_cmds(fb, T(PARTITIONED_METADATA), seen + 1, WAIT_MS));
    ck_assert_int_eq(owner_get(&o, &o.calls), 0);

    /* Four partitions: the owner takes one more, then is offered the rest. */
    pc_fb_set_partitions(fb, 4);
    ck_assert(wait_at_least(&o, &o.calls, 2));
    seen = metadata_cmds(fb);
    ck_assert(pc_fb_wait_cmds(fb, T(PARTITIONED_METADATA), seen + 2, WAIT_MS));

    run_on_loop(&o, do_cancel);
    ck_assert(wait_released(&o));
    pulsarc_client_destroy(c);
    char *text = release_stderr(&cap);
    pc_fb_destroy(fb);

    printf("counts: lookups=%llu grew=%d (%d->%d, %d->%d)\n", (unsigned long long)seen + 2, o.calls,
           o.from[0], o.to[0], o.from[1], o.to[1]);
    ck_assert_int_eq(o.calls, 2);
    ck_assert_int_eq(o.from[0], 2); /* not 0: the failures kept the count */
    ck_assert_int_eq(o.to[0], 4);
    ck_assert_int_eq(o.from[1], 3); /* where the owner stopped */
    ck_assert_int_eq(o.to[1], 4);
    ck_assert_msg(count_of(text, "lookup failed") == 1, "one report per run of failures: %s", text);
    ck_assert_msg(strstr(text, "partition count of " TOPIC ": lookup failed") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "metadata store down") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "keeping 2 partitions") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "lookup works again (2 partitions)") != NULL, "%s", text);
    free(text);
}
END_TEST

START_TEST(test_cancel_with_lookup_outstanding) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_set_partitions(fb, 2);
    pc_fb_rule(fb, T(PARTITIONED_METADATA), PC_FB_IGNORE, 0, NULL, 0, -1);
    const char *slow[] = {"operationTimeoutMs", "60000", NULL};
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), slow);
    owner_t o;
    owner_init(&o, c, 1, 100, 100);
    run_on_loop(&o, do_start);
    ck_assert(pc_fb_wait_cmds(fb, T(PARTITIONED_METADATA), 1, WAIT_MS));
    /* Ten periods with that lookup unanswered: the checks skip, none asks again. */
    ck_assert(!pc_fb_wait_cmds(fb, T(PARTITIONED_METADATA), 2, 10 * PERIOD_MS));

    run_on_loop(&o, do_cancel);
    ck_assert(wait_at_least(&o, &o.cancelled, 1));
    /* The unanswered lookup keeps the watch, and so the owner's reference. */
    ck_assert_int_eq(owner_get(&o, &o.refs), 1);

    uint64_t lookups = metadata_cmds(fb);

    /* The lookup ends now, after the cancel: its connection is lost (a
     * retry of it, if any, is answered with more partitions). */
    pc_fb_set_partitions(fb, 5);
    pc_fb_clear_rules(fb);
    pc_fb_drop_connections(fb);
    ck_assert(wait_released(&o));
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);

    printf("counts: lookups=%llu grew=%d after_cancel=%d\n", (unsigned long long)lookups, o.calls,
           o.after_cancel);
    ck_assert_int_eq(o.calls, 0);
    ck_assert_int_eq(o.after_cancel, 0);
    ck_assert_int_eq(lookups, 1);
}
END_TEST

/* A lookup answered with more partitions right as the cancel comes: never an upcall after it. */
START_TEST(test_no_upcall_after_cancel) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pc_fb_set_partitions(fb, 9);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    for (int round = 0; round < 5; round++) {
        owner_t o;
        owner_init(&o, c, 1, 1, 1); /* follows one: every answer is offered */
        uint64_t before = metadata_cmds(fb);
        run_on_loop(&o, do_start);
        ck_assert(pc_fb_wait_cmds(fb, T(PARTITIONED_METADATA), before + 1 + (uint64_t)round % 2,
                                  WAIT_MS));
        run_on_loop(&o, do_cancel);
        ck_assert(wait_released(&o));
        ck_assert_int_eq(o.after_cancel, 0);
        pthread_cond_destroy(&o.cond);
        pthread_mutex_destroy(&o.lock);
    }
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

static Suite *partition_watch_suite(void) {
    Suite *s = suite_create("partition_watch");
    TCase *tc = tcase_create("watch");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_failed_lookups_keep_the_count);
    tcase_add_test(tc, test_cancel_with_lookup_outstanding);
    tcase_add_test(tc, test_no_upcall_after_cancel);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(partition_watch_suite)
