/*
 * The client's memory budget (lib/client/memlimit.c) without a broker:
 * blocked reservations wait in a strict first-come line (a small one that
 * would fit does not pass a big one waiting), release hands bytes to the
 * head of the line and reserves them for it, a reservation that times out
 * leaves the line (and no longer holds back those behind it), a
 * producer's close fails only its own waiters with CLOSED (and its closing
 * flag keeps a sender that arrives after the cancel out of line), and a
 * reservation bigger than the limit waits for an empty budget.
 */
#include <pthread.h>
#include <unistd.h>

#include "client/memlimit.h"
#include "testutil.h"

typedef struct reserver {
    pc_memlimit_t *m;
    const void *owner;
    int64_t n;
    int timeout_ms;
    pulsarc_err_t err;
    pthread_t t;
} reserver_t;

static void *reserve_main(void *arg) {
    reserver_t *r = arg;
    r->err = pc_memlimit_acquire(r->m, r->owner, NULL, r->n, 1, r->timeout_ms);
    return NULL;
}

static void start(reserver_t *r, pc_memlimit_t *m, const void *owner, int64_t n, int timeout_ms) {
    r->m = m;
    r->owner = owner;
    r->n = n;
    r->timeout_ms = timeout_ms;
    r->err = PULSARC_ERR_STATE;
    ck_assert_int_eq(pthread_create(&r->t, NULL, reserve_main, r), 0);
}

/* Until k reservations wait in line (bounded: a hang fails, no timing is asserted). */
static void await_waiting(pc_memlimit_t *m, int k) {
    for (int i = 0; i < 20000 && pc_memlimit_waiting(m) != k; i++)
        usleep(500);
    ck_assert_int_eq(pc_memlimit_waiting(m), k);
}

START_TEST(test_fifo_big_before_small) {
    pc_memlimit_t m;
    pc_memlimit_init(&m, 100);
    ck_assert_int_eq(pc_memlimit_acquire(&m, NULL, NULL, 80, 1, 0), PULSARC_OK);
    reserver_t big, small;
    start(&big, &m, NULL, 50, 0);
    await_waiting(&m, 1);
    start(&small, &m, NULL, 10, 0); /* would fit (90), but big came first */
    await_waiting(&m, 2);
    ck_assert_int_eq(pc_memlimit_used(&m), 80);
    /* Nothing fits but waiting: a non-blocking one is refused at once. */
    ck_assert_int_eq(pc_memlimit_acquire(&m, NULL, NULL, 1, 0, 0), PULSARC_ERR_QUEUE_FULL);
    pc_memlimit_release(&m, 30); /* 50 used: big gets its 50, small still waits */
    pthread_join(big.t, NULL);
    ck_assert_int_eq(big.err, PULSARC_OK);
    ck_assert_int_eq(pc_memlimit_used(&m), 100);
    ck_assert_int_eq(pc_memlimit_waiting(&m), 1);
    pc_memlimit_release(&m, 50);
    pthread_join(small.t, NULL);
    ck_assert_int_eq(small.err, PULSARC_OK);
    ck_assert_int_eq(pc_memlimit_used(&m), 60);
    ck_assert_int_eq(pc_memlimit_waiting(&m), 0);
    pc_memlimit_destroy(&m);
}
END_TEST

START_TEST(test_timeout_leaves_the_line) {
    pc_memlimit_t m;
    pc_memlimit_init(&m, 100);
    ck_assert_int_eq(pc_memlimit_acquire(&m, NULL, NULL, 100, 1, 0), PULSARC_OK);
    ck_assert_int_eq(pc_memlimit_acquire(&m, NULL, NULL, 10, 1, 50), PULSARC_ERR_TIMEOUT);
    ck_assert_int_eq(pc_memlimit_waiting(&m), 0);
    ck_assert_int_eq(pc_memlimit_used(&m), 100);
    /* A head that times out no longer holds back the one behind it. */
    reserver_t head, behind;
    start(&head, &m, NULL, 100, 200); /* needs an empty budget */
    await_waiting(&m, 1);
    start(&behind, &m, NULL, 10, 0);
    await_waiting(&m, 2);
    pc_memlimit_release(&m, 10); /* 90 used: the head still does not fit */
    pthread_join(head.t, NULL);
    ck_assert_int_eq(head.err, PULSARC_ERR_TIMEOUT);
    pthread_join(behind.t, NULL);
    ck_assert_int_eq(behind.err, PULSARC_OK);
    ck_assert_int_eq(pc_memlimit_used(&m), 100);
    ck_assert_int_eq(pc_memlimit_waiting(&m), 0);
    pc_memlimit_destroy(&m);
}
END_TEST

START_TEST(test_cancel_fails_only_its_owner) {
    pc_memlimit_t m;
    pc_memlimit_init(&m, 100);
    int closing, other;
    ck_assert_int_eq(pc_memlimit_acquire(&m, NULL, NULL, 100, 1, 0), PULSARC_OK);
    reserver_t a, b, c;
    start(&a, &m, &closing, 10, 0);
    await_waiting(&m, 1);
    start(&b, &m, &other, 10, 0);
    await_waiting(&m, 2);
    start(&c, &m, &closing, 10, 0);
    await_waiting(&m, 3);
    pc_memlimit_cancel(&m, &closing, PULSARC_ERR_CLOSED, "producer closed");
    /* Its owner's flag, set before the cancel, keeps a late one out of line. */
    atomic_int stopped = 1;
    ck_assert_int_eq(pc_memlimit_acquire(&m, &closing, &stopped, 10, 1, 0), PULSARC_ERR_CLOSED);
    pthread_join(a.t, NULL);
    pthread_join(c.t, NULL);
    ck_assert_int_eq(a.err, PULSARC_ERR_CLOSED);
    ck_assert_int_eq(c.err, PULSARC_ERR_CLOSED);
    ck_assert_int_eq(pc_memlimit_waiting(&m), 1);
    ck_assert_int_eq(pc_memlimit_used(&m), 100);
    pc_memlimit_release(&m, 100);
    pthread_join(b.t, NULL);
    ck_assert_int_eq(b.err, PULSARC_OK);
    ck_assert_int_eq(pc_memlimit_used(&m), 10);
    pc_memlimit_destroy(&m);
}
END_TEST

START_TEST(test_oversized_waits_for_empty) {
    pc_memlimit_t m;
    pc_memlimit_init(&m, 100);
    ck_assert_int_eq(pc_memlimit_acquire(&m, NULL, NULL, 1, 1, 0), PULSARC_OK);
    reserver_t big;
    start(&big, &m, NULL, 250, 0);
    await_waiting(&m, 1);
    pc_memlimit_release(&m, 1);
    pthread_join(big.t, NULL);
    ck_assert_int_eq(big.err, PULSARC_OK);
    ck_assert_int_eq(pc_memlimit_used(&m), 250); /* overshoots, once */
    pc_memlimit_release(&m, 250);
    pc_memlimit_destroy(&m);
}
END_TEST

static Suite *memlimit_suite(void) {
    Suite *s = suite_create("memlimit");
    TCase *tc = tcase_create("memlimit");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fifo_big_before_small);
    tcase_add_test(tc, test_timeout_leaves_the_line);
    tcase_add_test(tc, test_cancel_fails_only_its_owner);
    tcase_add_test(tc, test_oversized_waits_for_empty);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(memlimit_suite)
