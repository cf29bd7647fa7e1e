/*
 * Posts whose node lives in the poster's struct (pc_loop_post_node), on a
 * threaded loop: a node's fn may post the same node again (the loop reads
 * nothing of it after calling fn); several threads each re-posting their
 * own node, guarded by a flag as the consumer's FLOW is, get every post
 * run exactly once (and TSan sees the hand-over); a stopping loop refuses
 * a node and leaves it alone; a loop dropped before it ever ran frees its
 * own queued nodes but not a poster's (ASan and valgrind see both).
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "net/loop.h"
#include "testutil.h"

/* A counter the loop thread bumps and a waiter watches. */
typedef struct counter {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int runs, target;
    int posted; /* the node is queued: its owner must not post it again */
    pc_loop_t *loop;
    pc_post_node_t node;
} counter_t;

static void counter_init(counter_t *c, pc_loop_t *l, int target) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->loop = l;
    c->target = target;
}

static void counter_destroy(counter_t *c) {
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cv);
}

/* Waits, at most 30 s, until the counter reaches its target; the count. */
static int wait_target(counter_t *c) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&c->lock);
    while (c->runs < c->target && pthread_cond_timedwait(&c->cv, &c->lock, &until) == 0) {
    }
    int n = c->runs;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* Runs on the loop thread; posts its own node again until the target. */
static void chain_fn(void *arg) {
    counter_t *c = arg;
    ck_assert(pc_loop_in_thread(c->loop));
    pthread_mutex_lock(&c->lock);
    int again = ++c->runs < c->target;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->lock);
    if (again)
        ck_assert_int_eq(pc_loop_post_node(c->loop, &c->node, chain_fn, c), PULSARC_OK);
}

START_TEST(test_fn_may_post_its_own_node_again) {
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(pc_loop_start(l, "post-test"), PULSARC_OK);
    counter_t c;
    counter_init(&c, l, 1000);
    ck_assert_int_eq(pc_loop_post_node(l, &c.node, chain_fn, &c), PULSARC_OK);
    ck_assert_int_eq(wait_target(&c), 1000);
    pc_loop_unref(l); /* stops: nothing of c is touched after */
    counter_destroy(&c);
}
END_TEST

/* The loop's half of the flag hand-over: clears posted, counts, wakes the poster. */
static void flagged_fn(void *arg) {
    counter_t *c = arg;
    pthread_mutex_lock(&c->lock);
    c->posted = 0;
    c->runs++;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->lock);
}

/* A poster thread: target posts of one node, each once the last one ran. */
static void *poster(void *arg) {
    counter_t *c = arg;
    for (int i = 0; i < c->target; i++) {
        pthread_mutex_lock(&c->lock);
        while (c->posted)
            pthread_cond_wait(&c->cv, &c->lock);
        c->posted = 1;
        pthread_mutex_unlock(&c->lock);
        /* outside the lock, as the consumer posts its FLOW */
        if (pc_loop_post_node(c->loop, &c->node, flagged_fn, c) != PULSARC_OK)
            return (void *)1;
    }
    return NULL;
}

START_TEST(test_threads_post_their_own_nodes) {
    enum { THREADS = 4, POSTS = 5000 };
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(pc_loop_start(l, "post-test"), PULSARC_OK);
    counter_t c[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        counter_init(&c[i], l, POSTS);
        ck_assert_int_eq(pthread_create(&t[i], NULL, poster, &c[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        ck_assert_ptr_null(rc);
        ck_assert_int_eq(wait_target(&c[i]), POSTS);
    }
    pc_loop_unref(l);
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(c[i].runs, POSTS); /* none ran twice */
        counter_destroy(&c[i]);
    }
}
END_TEST

static void must_not_run(void *arg) {
    (void)arg;
    ck_abort_msg("a refused or dropped post ran");
}

START_TEST(test_stopping_loop_refuses_a_node) {
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(pc_loop_start(l, "post-test"), PULSARC_OK);
    pc_loop_stop(l);
    pc_post_node_t node = {.next = &node}; /* a refused node is not linked */
    ck_assert_int_eq(pc_loop_post_node(l, &node, must_not_run, NULL), PULSARC_ERR_CLOSED);
    ck_assert_ptr_eq(node.next, &node);
    ck_assert_int_eq(pc_loop_post(l, must_not_run, NULL), PULSARC_ERR_CLOSED);
    pc_loop_unref(l);
}
END_TEST

START_TEST(test_unstarted_loop_frees_only_its_own_nodes) {
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    pc_post_node_t node; /* on the stack: freeing it would be caught */
    ck_assert_int_eq(pc_loop_post(l, must_not_run, NULL), PULSARC_OK);
    ck_assert_int_eq(pc_loop_post_node(l, &node, must_not_run, NULL), PULSARC_OK);
    ck_assert_int_eq(pc_loop_post(l, must_not_run, NULL), PULSARC_OK);
    pc_loop_unref(l); /* never started: the queue is dropped, the heap nodes freed */
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("loop-post");
    TCase *tc = tcase_create("node");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fn_may_post_its_own_node_again);
    tcase_add_test(tc, test_threads_post_their_own_nodes);
    tcase_add_test(tc, test_stopping_loop_refuses_a_node);
    tcase_add_test(tc, test_unstarted_loop_frees_only_its_own_nodes);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
