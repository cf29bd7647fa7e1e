/*
 * The client's one completion type (lib/client/op.c) without a broker:
 * the first outcome wins, an op of several parts completes on the last
 * one with the first error, a completed countdown opens again, a wait
 * with a timeout comes back undone, a completion from another thread wakes
 * the waiter, and the callback form runs through the callback queue only.
 * A line of waiting ops hands out in arrival order, takes a timed-out op
 * off, fails everything on close, and a waiter whose op was taken by a
 * giver just before its deadline still gets that giver's outcome. A
 * callback queue shut down refuses a callback and the completer hears it,
 * while what callbacks push during the shutdown's drain still runs.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/op.h"
#include "testutil.h"

START_TEST(test_first_outcome_wins) {
    pc_op_t op;
    pc_op_init(&op);
    pc_op_done(&op, PULSARC_ERR_TIMEOUT, "took too long");
    pc_op_done(&op, PULSARC_OK, NULL);
    char msg[64];
    ck_assert_int_eq(pc_op_wait(&op, msg, sizeof msg), PULSARC_ERR_TIMEOUT);
    ck_assert_str_eq(msg, "took too long");
    pc_op_destroy(&op);
}
END_TEST

START_TEST(test_parts_first_error) {
    pc_op_t op;
    pc_op_init(&op);
    pc_op_add(&op, 2);
    pc_op_done(&op, PULSARC_OK, NULL);
    pc_op_done(&op, PULSARC_ERR_DISCONNECTED, "gone");
    ck_assert_int_eq(pc_op_wait_for(&op, 0), 0); /* one part still owed */
    pc_op_done(&op, PULSARC_ERR_CLOSED, "closed");
    ck_assert_int_eq(pc_op_wait_for(&op, 0), 1);
    char msg[64];
    ck_assert_int_eq(pc_op_result(&op, msg, sizeof msg), PULSARC_ERR_DISCONNECTED);
    ck_assert_str_eq(msg, "gone");
    /* A completed countdown that gets new work opens again, keeping its error. */
    pc_op_add(&op, 1);
    ck_assert_int_eq(pc_op_wait_for(&op, 0), 0);
    pc_op_done(&op, PULSARC_OK, NULL);
    ck_assert_int_eq(pc_op_wait(&op, NULL, 0), PULSARC_ERR_DISCONNECTED);
    pc_op_destroy(&op);
}
END_TEST

START_TEST(test_message_defaults_to_error_name) {
    pc_op_t op;
    pc_op_init(&op);
    pc_op_done(&op, PULSARC_ERR_CLOSED, NULL);
    char msg[128];
    ck_assert_int_eq(pc_op_wait(&op, msg, sizeof msg), PULSARC_ERR_CLOSED);
    ck_assert_str_eq(msg, pulsarc_strerror(PULSARC_ERR_CLOSED));
    pc_op_destroy(&op);
}
END_TEST

static void *complete_later(void *arg) {
    pc_op_done(arg, PULSARC_ERR_STATE, "from another thread");
    return NULL;
}

START_TEST(test_wakes_waiter) {
    pc_op_t op;
    pc_op_init(&op);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, complete_later, &op), 0);
    ck_assert_int_eq(pc_op_wait(&op, NULL, 0), PULSARC_ERR_STATE);
    pthread_join(th, NULL);
    pc_op_destroy(&op);
}
END_TEST

typedef struct seen {
    int calls;
    pulsarc_err_t err;
} seen_t;

static void on_done(pc_op_t *op, void *arg) {
    seen_t *s = arg;
    s->calls++;
    s->err = pc_op_result(op, NULL, 0);
}

START_TEST(test_callback_through_queue) {
    pc_cbq_t q;
    ck_assert_int_eq(pc_cbq_init(&q, 0), 0); /* poll mode: runs only when polled */
    pc_op_t op;
    pc_op_init(&op);
    seen_t s = {0, PULSARC_OK};
    pc_op_call_back(&op, &q, on_done, &s);
    pc_op_done(&op, PULSARC_ERR_BROKER_TXN_CONFLICT, NULL);
    ck_assert_int_eq(s.calls, 0); /* not run on the completing thread */
    pc_op_done(&op, PULSARC_OK, NULL); /* after completion: ignored, not queued again */
    ck_assert_int_eq(pc_cbq_poll(&q, 0), 1);
    ck_assert_int_eq(s.calls, 1);
    ck_assert_int_eq(s.err, PULSARC_ERR_BROKER_TXN_CONFLICT);
    pc_cbq_shutdown(&q);
    pc_cbq_free(&q);
    pc_op_destroy(&op);
}
END_TEST

/*
 * A callback queue shut down refuses a completion's callback, under its
 * lock, and the completer hears it: the callback never runs and the op is
 * the completer's again (it answers its caller CLOSED). Both modes: a
 * callback thread that has exited, and the poll mode's drain.
 */
static void refused_after_shutdown(int own_thread) {
    pc_cbq_t q;
    ck_assert_int_eq(pc_cbq_init(&q, own_thread), 0);
    pc_op_t before, after;
    seen_t s1 = {0, PULSARC_OK}, s2 = {0, PULSARC_OK};
    pc_op_init(&before);
    pc_op_call_back(&before, &q, on_done, &s1);
    ck_assert_int_eq(pc_op_done(&before, PULSARC_OK, NULL), 0); /* queued: the drain runs it */
    pc_cbq_shutdown(&q);
    ck_assert_int_eq(s1.calls, 1);
    pc_op_init(&after);
    pc_op_call_back(&after, &q, on_done, &s2);
    ck_assert_int_eq(pc_op_done(&after, PULSARC_ERR_CLOSED, NULL), 1);
    ck_assert_int_eq(pc_op_done(&after, PULSARC_OK, NULL), 0); /* completed: nothing more */
    ck_assert_int_eq(pc_cbq_pending(&q), 0);
    ck_assert_int_eq(pc_cbq_poll(&q, 0), 0);
    ck_assert_int_eq(s2.calls, 0);
    pc_cbq_free(&q);
    pc_op_destroy(&before);
    pc_op_destroy(&after);
}

START_TEST(test_refused_after_shutdown_thread) { refused_after_shutdown(1); }
END_TEST

START_TEST(test_refused_after_shutdown_poll) { refused_after_shutdown(0); }
END_TEST

/* A callback run by the drain that pushes another: accepted and run by
 * the same drain, not refused (the queue refuses only once it is empty). */
typedef struct chain {
    pc_cbq_t *q;
    pc_op_t next;
    seen_t seen;
    int pushed_refused;
} chain_t;

static void push_next(pc_op_t *op, void *arg) {
    chain_t *ch = arg;
    (void)op;
    pc_op_init(&ch->next);
    pc_op_call_back(&ch->next, ch->q, on_done, &ch->seen);
    ch->pushed_refused = pc_op_done(&ch->next, PULSARC_OK, NULL);
}

START_TEST(test_drain_runs_what_callbacks_push) {
    pc_cbq_t q;
    ck_assert_int_eq(pc_cbq_init(&q, 0), 0); /* poll mode: the shutdown's drain runs it */
    chain_t ch = {.q = &q, .seen = {0, PULSARC_OK}, .pushed_refused = -1};
    pc_op_t first;
    pc_op_init(&first);
    pc_op_call_back(&first, &q, push_next, &ch);
    ck_assert_int_eq(pc_op_done(&first, PULSARC_OK, NULL), 0);
    pc_cbq_shutdown(&q);
    ck_assert_int_eq(ch.pushed_refused, 0);
    ck_assert_int_eq(ch.seen.calls, 1);
    pc_cbq_free(&q);
    pc_op_destroy(&first);
    pc_op_destroy(&ch.next);
}
END_TEST

START_TEST(test_queue_order_and_remove) {
    pc_op_queue_t q = {NULL, NULL};
    pc_op_t a, b, c;
    pc_op_init(&a);
    pc_op_init(&b);
    pc_op_init(&c);
    pc_op_queue_push(&q, &a);
    pc_op_queue_push(&q, &b);
    pc_op_queue_push(&q, &c);
    ck_assert_int_eq(pc_op_queue_remove(&q, &b), 1);
    ck_assert_int_eq(pc_op_queue_remove(&q, &b), 0); /* not queued any more */
    ck_assert_ptr_eq(pc_op_queue_pop(&q), &a);
    ck_assert_int_eq(pc_op_queue_remove(&q, &c), 1); /* the tail: the queue is empty again */
    ck_assert_ptr_null(pc_op_queue_pop(&q));
    ck_assert_ptr_null(q.tail);
    pc_op_queue_push(&q, &b);
    pc_op_queue_push(&q, &c);
    pc_op_queue_complete_all(&q, PULSARC_ERR_CLOSED, "closing");
    ck_assert_ptr_null(q.head);
    char msg[32];
    ck_assert_int_eq(pc_op_wait(&b, msg, sizeof msg), PULSARC_ERR_CLOSED);
    ck_assert_str_eq(msg, "closing");
    ck_assert_int_eq(pc_op_wait_for(&c, 0), 1);
    ck_assert_int_eq(pc_op_wait_for(&a, 0), 0); /* popped, never completed */
    pc_op_destroy(&a);
    pc_op_destroy(&b);
    pc_op_destroy(&c);
}
END_TEST

START_TEST(test_queue_wait_times_out_off_the_line) {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pc_op_queue_t q = {NULL, NULL};
    pc_op_t op;
    pc_op_init(&op);
    struct timespec dl;
    pc_deadline(&dl, 20);
    pthread_mutex_lock(&lock);
    ck_assert_int_eq(pc_op_queue_wait(&q, &op, &lock, &dl), 0);
    ck_assert_ptr_null(q.head); /* a giver can no longer find it */
    pthread_mutex_unlock(&lock);
    pc_op_destroy(&op);
}
END_TEST

typedef struct giver {
    pthread_mutex_t lock;
    pc_op_queue_t q;
    int complete_after_ms;
} giver_t;

/* Takes the first waiter off the line, then completes it only after complete_after_ms. */
static void *give_late(void *arg) {
    giver_t *g = arg;
    pc_op_t *op = NULL;
    for (int i = 0; i < 10000 && !op; i++) { /* bounded: 10 s */
        pthread_mutex_lock(&g->lock);
        op = pc_op_queue_pop(&g->q);
        pthread_mutex_unlock(&g->lock);
        if (!op)
            usleep(1000);
    }
    if (!op)
        return NULL;
    usleep((useconds_t)g->complete_after_ms * 1000);
    pc_op_done(op, PULSARC_ERR_STATE, "handed over late");
    return NULL;
}

START_TEST(test_queue_wait_popped_before_deadline_wins) {
    giver_t g = {PTHREAD_MUTEX_INITIALIZER, {NULL, NULL}, 1500};
    pc_op_t op;
    pc_op_init(&op);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, give_late, &g), 0);
    struct timespec dl;
    pc_deadline(&dl, 1000); /* the giver pops within it, completes after it */
    pthread_mutex_lock(&g.lock);
    int done = pc_op_queue_wait(&g.q, &op, &g.lock, &dl);
    pthread_mutex_unlock(&g.lock);
    pthread_join(th, NULL);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(pc_op_result(&op, NULL, 0), PULSARC_ERR_STATE);
    pc_op_destroy(&op);
}
END_TEST

static Suite *op_suite(void) {
    Suite *s = suite_create("op");
    TCase *tc = tcase_create("op");
    tcase_add_test(tc, test_first_outcome_wins);
    tcase_add_test(tc, test_parts_first_error);
    tcase_add_test(tc, test_message_defaults_to_error_name);
    tcase_add_test(tc, test_wakes_waiter);
    tcase_add_test(tc, test_callback_through_queue);
    tcase_add_test(tc, test_refused_after_shutdown_thread);
    tcase_add_test(tc, test_refused_after_shutdown_poll);
    tcase_add_test(tc, test_drain_runs_what_callbacks_push);
    tcase_add_test(tc, test_queue_order_and_remove);
    tcase_add_test(tc, test_queue_wait_times_out_off_the_line);
    tcase_add_test(tc, test_queue_wait_popped_before_deadline_wins);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(op_suite)
