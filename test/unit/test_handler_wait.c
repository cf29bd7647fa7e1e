/*
 * Requests parked on a reconnecting handler (pc_handler_wait,
 * lib/client/handler.c) without a broker: a handler that is never started
 * stays not ready, so whatever is parked on it can only end by its
 * deadline, by pc_handler_fail_waiting or by pc_handler_stop. Checked:
 * each parked request ends exactly once, with TIMEOUT at its own deadline
 * (the others wait on), with the given error in the order parked, and with
 * CLOSED when the handler is stopped; nothing is left for a later stop.
 * (Running parked requests when the resource is created again is covered
 * live by test_peer_seek.)
 *
 * Design notes: the handler and the parked requests live in the test's
 * memory but are touched only on the client's io thread (posted closures);
 * the io thread appends each ending to `log` under `lock`, and the test
 * waits on `cond` with a generous hang bound.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "client/handler.h"
#include "testutil.h"

#define WAIT_MS 20000
#define FAR_MS 600000

typedef struct fixture {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char log[256];       /* "<name>:<outcome> " per ending, in order */
    int ended;
    pulsarc_client_t *client;
    pc_handler_t h;
    int refs;            /* the handler's owner references (never used by a handler not started) */
} fixture_t;

typedef struct parked {
    pc_handler_wait_t wait; /* first */
    fixture_t *fx;
    char name;
    int64_t deadline_ms;
    int runs, fails;
} parked_t;

static fixture_t fx;

static void note(parked_t *p, const char *what) {
    pthread_mutex_lock(&fx.lock);
    size_t len = strlen(fx.log);
    snprintf(fx.log + len, sizeof fx.log - len, "%c:%s ", p->name, what);
    fx.ended++;
    pthread_cond_broadcast(&fx.cond);
    pthread_mutex_unlock(&fx.lock);
}

static void on_run(pc_handler_wait_t *w) {
    parked_t *p = (parked_t *)w;
    p->runs++;
    note(p, "run");
}

static void on_fail(pc_handler_wait_t *w, pulsarc_err_t err, const char *msg) {
    parked_t *p = (parked_t *)w;
    ck_assert_ptr_nonnull(msg);
    p->fails++;
    note(p, pulsarc_errname(err));
}

/* Never called: the handler is not started, so nothing runs on its behalf. */
static void h_send_create(pc_handler_t *h, pc_conn_t *c) { (void)h; (void)c; ck_abort(); }
static void h_send_close(pc_handler_t *h, pc_conn_t *c) { (void)h; (void)c; ck_abort(); }
static void h_ready(pc_handler_t *h, pc_conn_t *c, const pc_frame_t *f) {
    (void)h;
    (void)c;
    (void)f;
    ck_abort();
}
static void h_failed(pc_handler_t *h, pulsarc_err_t e, const char *m) {
    (void)h;
    (void)e;
    (void)m;
    ck_abort();
}
static void h_ref(pc_handler_t *h) { (void)h; fx.refs++; }
static void h_unref(pc_handler_t *h) { (void)h; fx.refs--; }

static const pc_handler_ops_t ops = {
    .send_create = h_send_create,
    .send_close = h_send_close,
    .on_ready = h_ready,
    .on_failed = h_failed,
    .ref = h_ref,
    .unref = h_unref,
};

static void do_park(void *arg) {
    parked_t *p = arg;
    p->wait.run = on_run;
    p->wait.fail = on_fail;
    pc_handler_wait(&fx.h, &p->wait, pc_now_ms() + p->deadline_ms);
}

static void do_fail_all(void *arg) {
    (void)arg;
    pc_handler_fail_waiting(&fx.h, PULSARC_ERR_DISCONNECTED, "gave up");
}

static void do_stop(void *arg) {
    (void)arg;
    ck_assert_ptr_null(pc_handler_stop(&fx.h));
}

static void post(pc_loop_fn fn, void *arg) { ck_assert_int_eq(pc_client_post(fx.client, fn, arg), PULSARC_OK); }

static int wait_ended(int n) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&fx.lock);
    int rc = 0;
    while (fx.ended < n && rc == 0)
        rc = pthread_cond_timedwait(&fx.cond, &fx.lock, &until);
    int reached = fx.ended >= n;
    pthread_mutex_unlock(&fx.lock);
    return reached;
}

static pc_fb_t *setup(void) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    memset(&fx, 0, sizeof fx);
    pthread_mutex_init(&fx.lock, NULL);
    pthread_cond_init(&fx.cond, NULL);
    fx.client = fb_client_on(pc_fb_url(fb), NULL);
    pc_handler_init(&fx.h, &ops, fx.client, "persistent://public/default/hw");
    return fb;
}

static void teardown(pc_fb_t *fb) {
    pulsarc_client_destroy(fx.client);
    pc_fb_destroy(fb);
    ck_assert_int_eq(fx.refs, 0);
}

START_TEST(test_deadline_then_fail_in_order) {
    pc_fb_t *fb = setup();
    parked_t a = {.fx = &fx, .name = 'A', .deadline_ms = 200};
    parked_t b = {.fx = &fx, .name = 'B', .deadline_ms = FAR_MS};
    parked_t c = {.fx = &fx, .name = 'C', .deadline_ms = FAR_MS};
    post(do_park, &b);
    post(do_park, &a);
    post(do_park, &c);
    ck_assert(wait_ended(1)); /* A's deadline; B and C wait on */
    pthread_mutex_lock(&fx.lock);
    ck_assert_str_eq(fx.log, "A:TIMEOUT ");
    pthread_mutex_unlock(&fx.lock);
    post(do_fail_all, NULL);
    ck_assert(wait_ended(3));
    post(do_stop, NULL); /* finds nothing parked any more */
    teardown(fb);
    printf("counts: %s\n", fx.log);
    ck_assert_str_eq(fx.log, "A:TIMEOUT B:DISCONNECTED C:DISCONNECTED ");
    ck_assert_int_eq(a.fails + b.fails + c.fails, 3);
    ck_assert_int_eq(a.runs + b.runs + c.runs, 0);
}
END_TEST

START_TEST(test_stop_fails_parked_with_closed) {
    pc_fb_t *fb = setup();
    parked_t d = {.fx = &fx, .name = 'D', .deadline_ms = FAR_MS};
    parked_t e = {.fx = &fx, .name = 'E', .deadline_ms = FAR_MS};
    post(do_park, &d);
    post(do_park, &e);
    post(do_stop, NULL);
    ck_assert(wait_ended(2));
    teardown(fb);
    printf("counts: %s\n", fx.log);
    ck_assert_str_eq(fx.log, "D:CLOSED E:CLOSED ");
    ck_assert_int_eq(d.fails + e.fails, 2);
}
END_TEST

static Suite *handler_wait_suite(void) {
    Suite *s = suite_create("handler_wait");
    TCase *tc = tcase_create("wait");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_deadline_then_fail_in_order);
    tcase_add_test(tc, test_stop_fails_parked_with_closed);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(handler_wait_suite)
