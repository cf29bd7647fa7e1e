/*
 * A connection borrows a large piece until the write at the end of the
 * loop turn; an owner that frees it sooner calls pc_conn_copy_borrowed
 * first. Here, inside one loop turn, a frame is queued from a buffer that
 * is then copied out, overwritten and freed: the scripted fake broker must
 * still receive the frame intact (a 0xEE-filled length would be a bad
 * frame, and it would close the connection). The waits are hang bounds.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../faults/fake_broker.h"
#include "PulsarApi.pb-c.h"
#include "core/frame.h"
#include "net/conn.h"
#include "net/loop.h"
#include "testutil.h"

typedef struct ctx {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pc_loop_t *loop;
    pc_fb_t *fb;
    pc_conn_t *conn;
    pulsarc_err_t ready_err;
} ctx_t;

static void signal_done(ctx_t *x) {
    pthread_mutex_lock(&x->lock);
    x->done = 1;
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&x->lock);
}

/* Posts fn and waits until it says it is done (hang bound: 30 s). */
static void run_on_loop(ctx_t *x, pc_loop_fn fn) {
    pthread_mutex_lock(&x->lock);
    x->done = 0;
    pthread_mutex_unlock(&x->lock);
    ck_assert_int_eq(pc_loop_post(x->loop, fn, x), PULSARC_OK);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&x->lock);
    while (!x->done && pthread_cond_timedwait(&x->cond, &x->lock, &until) == 0)
        ;
    int done = x->done;
    pthread_mutex_unlock(&x->lock);
    ck_assert_msg(done, "the loop did not finish the step");
}

static void on_ready(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    (void)conn;
    (void)msg;
    ctx_t *x = arg;
    x->ready_err = err;
    signal_done(x);
}

static void open_conn(void *arg) {
    ctx_t *x = arg;
    pc_conn_opts_t o = {.connect_timeout_ms = 20000, .keepalive_s = 30, .client_version = "t"};
    x->conn = pc_conn_new(x->loop, &o, "127.0.0.1", (uint16_t)pc_fb_port(x->fb), NULL);
    ck_assert_ptr_nonnull(x->conn);
    pc_conn_when_ready(x->conn, on_ready, x);
}

/* A LOOKUP frame over a long topic name: far past the borrowing threshold. */
static uint8_t *lookup_frame(size_t *len) {
    static char topic[2100];
    memset(topic, 'x', sizeof topic - 1);
    memcpy(topic, "persistent://public/default/", 28);
    Pulsar__Proto__CommandLookupTopic lk = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC__INIT;
    lk.topic = topic;
    lk.request_id = 77;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP;
    cmd.lookuptopic = &lk;
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode(&b, &cmd), PULSARC_OK);
    *len = b.len;
    return b.data;
}

static void send_then_free(void *arg) {
    ctx_t *x = arg;
    size_t len;
    uint8_t *frame = lookup_frame(&len);
    ck_assert_uint_gt(len, 2000);
    ck_assert_int_eq(pc_conn_send_borrowed(x->conn, frame, len), PULSARC_OK);
    pc_conn_copy_borrowed(); /* the owner is about to free it, within the turn */
    memset(frame, 0xEE, len);
    free(frame);
    signal_done(x);
}

static void close_conn(void *arg) {
    ctx_t *x = arg;
    pc_conn_close(x->conn, PULSARC_ERR_CLOSED, "test over");
    pc_conn_unref(x->conn);
    signal_done(x);
}

START_TEST(test_borrowed_piece_freed_within_the_turn_arrives_intact) {
    ctx_t x = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    x.fb = pc_fb_new();
    ck_assert_ptr_nonnull(x.fb);
    x.loop = pc_loop_new();
    ck_assert_ptr_nonnull(x.loop);
    ck_assert_int_eq(pc_loop_start(x.loop, "test-io"), PULSARC_OK);
    run_on_loop(&x, open_conn);
    ck_assert_int_eq(x.ready_err, PULSARC_OK);

    run_on_loop(&x, send_then_free);
    ck_assert_msg(pc_fb_wait_cmds(x.fb, PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP, 1, 30000),
                  "the broker never got the LOOKUP whole");
    pc_fb_stats_t st;
    pc_fb_stats(x.fb, &st);
    ck_assert_uint_eq(st.conns_closed, 0);

    run_on_loop(&x, close_conn);
    pc_loop_stop(x.loop);
    pc_loop_unref(x.loop);
    pc_fb_destroy(x.fb);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("conn-borrow");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_borrowed_piece_freed_within_the_turn_arrives_intact);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
