/*
 * Posts that may wait (pc_loop_post_within) never strand work: a loop
 * thread asleep with no timer is still woken for one; a plain post queued
 * behind one that did not wake the loop still wakes it, instead of waiting
 * for the far timer the loop sleeps on; a threadless loop's fd turns
 * readable for one. The waits here are hang bounds far below the timer the
 * loop would otherwise sleep until, never figures.
 */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "net/loop.h"
#include "testutil.h"

/* A flag the loop thread sets and the test thread waits for. */
typedef struct flag {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int set;
} flag_t;

static void flag_init(flag_t *f) {
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->set = 0;
}

static void flag_destroy(flag_t *f) {
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
}

static void flag_raise(void *arg) {
    flag_t *f = arg;
    pthread_mutex_lock(&f->lock);
    f->set++;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

/* 1 once the flag is raised, 0 after seconds without it. */
static int flag_wait(flag_t *f, int seconds) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += seconds;
    pthread_mutex_lock(&f->lock);
    while (!f->set && pthread_cond_timedwait(&f->cond, &f->lock, &dl) == 0)
        ;
    int set = f->set;
    pthread_mutex_unlock(&f->lock);
    return set;
}

static void count_call(void *arg) { (*(int *)arg)++; }

/* What the loop thread runs to arm the far timer and say so. */
typedef struct arm {
    pc_loop_t *loop;
    pc_timer_t *timer;
    flag_t armed;
} arm_t;

static void arm_far_timer(void *arg) {
    arm_t *a = arg;
    pc_timer_start(a->loop, a->timer, 600000);
    flag_raise(&a->armed);
}

static pc_loop_t *started_loop(void) {
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(pc_loop_start(l, "test-loop"), PULSARC_OK);
    return l;
}

START_TEST(test_post_within_wakes_a_loop_with_no_timer) {
    pc_loop_t *l = started_loop();
    flag_t ran;
    flag_init(&ran);
    usleep(50000); /* let the thread fall asleep with nothing to wake it */
    ck_assert_int_eq(pc_loop_post_within(l, flag_raise, &ran, 1000), PULSARC_OK);
    ck_assert_msg(flag_wait(&ran, 20), "a waiting post into a loop with no timer never ran");
    pc_loop_unref(l);
    flag_destroy(&ran);
}
END_TEST

START_TEST(test_plain_post_behind_a_waiting_one_wakes_the_loop) {
    pc_loop_t *l = started_loop();
    pc_timer_t far;
    int far_fired = 0, waited = 0;
    pc_timer_init(&far, count_call, &far_fired);
    arm_t a = {.loop = l, .timer = &far};
    flag_init(&a.armed);
    ck_assert_int_eq(pc_loop_post(l, arm_far_timer, &a), PULSARC_OK);
    ck_assert(flag_wait(&a.armed, 20));
    usleep(50000); /* asleep now, until the far timer */

    /* May wait longer than the timer is away: queued without a wake-up. */
    ck_assert_int_eq(pc_loop_post_within(l, count_call, &waited, 3600LL * 1000000), PULSARC_OK);
    flag_t ran;
    flag_init(&ran);
    ck_assert_int_eq(pc_loop_post(l, flag_raise, &ran), PULSARC_OK);
    ck_assert_msg(flag_wait(&ran, 20), "a plain post behind a waiting one slept until the timer");
    ck_assert_int_eq(waited, 1); /* ran first, in order, by the same wake-up */
    ck_assert_int_eq(far_fired, 0);

    pc_loop_stop(l);
    pc_timer_stop(l, &far); /* the thread is gone: nothing else touches the heap */
    pc_loop_unref(l);
    flag_destroy(&ran);
    flag_destroy(&a.armed);
}
END_TEST

START_TEST(test_post_within_makes_a_threadless_loop_readable) {
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    pc_loop_set_threadless(l);
    ck_assert_int_eq(pc_loop_start(l, NULL), PULSARC_OK);
    int ran = 0;
    ck_assert_int_eq(pc_loop_post_within(l, count_call, &ran, 3600LL * 1000000), PULSARC_OK);
    struct pollfd p = {.fd = pc_loop_fd(l), .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 0), 1);
    ck_assert_int_ge(pc_loop_step_turn(l, 0), 1);
    ck_assert_int_eq(ran, 1);
    pc_loop_unref(l);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("loop-wake");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_post_within_wakes_a_loop_with_no_timer);
    tcase_add_test(tc, test_plain_post_behind_a_waiting_one_wakes_the_loop);
    tcase_add_test(tc, test_post_within_makes_a_threadless_loop_readable);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
