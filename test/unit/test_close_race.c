/*
 * pulsarc_consumer_receive_async and pulsarc_producer_flush_async racing
 * pulsarc_client_close, against the scripted fake broker: a thread keeps
 * asking while the client closes. Every call that returned PULSARC_OK is
 * called back exactly once, by the time destroy returns; every other call
 * returned PULSARC_ERR_CLOSED; destroy returns (the tcase timeout is the
 * hang bound) and nothing is left behind (ASan, valgrind). A callback
 * queued after the callback thread had gone would be lost: a count short
 * here, a leak there, or a destroy that waits for it for ever.
 *
 * Design notes: the asking thread and the callbacks share the counters
 * under one mutex; the test thread waits on its condition variable with a
 * generous hang bound, never on a sleep. Several rounds, each with its own
 * fake broker and client, give the race more than one chance.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "testutil.h"

#define ROUNDS 20
#define MAX_ASKS 4000     /* per kind and round: bounds the receivers left in line */
#define BEFORE_CLOSE 200  /* asks made before the close starts */
#define HANG_S 30

typedef struct race {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pulsarc_consumer_t *cons;
    pulsarc_producer_t *prod;
    int asked;               /* calls made, both kinds */
    int recv_ok, flush_ok;   /* calls that returned PULSARC_OK */
    int recv_cb, flush_cb;   /* callbacks run */
    int other;               /* a return other than OK and CLOSED, or a bad callback error */
} race_t;

static void on_receive(pulsarc_consumer_t *c, pulsarc_err_t err, pulsarc_msg_t *m, void *opaque) {
    race_t *r = opaque;
    (void)c;
    pulsarc_msg_destroy(m); /* the broker sends nothing: none expected */
    pthread_mutex_lock(&r->lock);
    r->recv_cb++;
    r->other += err != PULSARC_ERR_CLOSED || m != NULL;
    pthread_mutex_unlock(&r->lock);
}

static void on_flushed(pulsarc_producer_t *p, pulsarc_err_t err, void *opaque) {
    race_t *r = opaque;
    (void)p;
    pthread_mutex_lock(&r->lock);
    r->flush_cb++;
    r->other += err != PULSARC_OK && err != PULSARC_ERR_CLOSED;
    pthread_mutex_unlock(&r->lock);
}

static void count_return(race_t *r, pulsarc_err_t e, int *ok) {
    pthread_mutex_lock(&r->lock);
    r->asked++;
    *ok += e == PULSARC_OK;
    r->other += e != PULSARC_OK && e != PULSARC_ERR_CLOSED;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Asks until both kinds are refused (the client closed) or MAX_ASKS each. */
static void *ask(void *arg) {
    race_t *r = arg;
    int recv_closed = 0, flush_closed = 0;
    for (int i = 0; i < MAX_ASKS && !(recv_closed && flush_closed); i++) {
        if (!recv_closed) {
            pulsarc_err_t e = pulsarc_consumer_receive_async(r->cons, on_receive, r);
            count_return(r, e, &r->recv_ok);
            recv_closed = e == PULSARC_ERR_CLOSED;
        }
        if (!flush_closed) {
            pulsarc_err_t e = pulsarc_producer_flush_async(r->prod, on_flushed, r);
            count_return(r, e, &r->flush_ok);
            flush_closed = e == PULSARC_ERR_CLOSED;
        }
    }
    return NULL;
}

static void await_asked(race_t *r, int n) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += HANG_S;
    pthread_mutex_lock(&r->lock);
    while (r->asked < n && pthread_cond_timedwait(&r->cond, &r->lock, &dl) == 0)
        ;
    ck_assert_int_ge(r->asked, n);
    pthread_mutex_unlock(&r->lock);
}

static void one_round(void) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    race_t r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.cond, NULL);
    char err[256] = "";
    ck_assert_msg(pulsarc_consumer_new(c, "fb-topic", "fb-sub", NULL, &r.cons, err, sizeof err) ==
                      PULSARC_OK, "consumer: %s", err);
    ck_assert_msg(pulsarc_producer_new(c, "fb-topic", NULL, &r.prod, err, sizeof err) == PULSARC_OK,
                  "producer: %s", err);
    pthread_t asker;
    pthread_create(&asker, NULL, ask, &r);
    await_asked(&r, BEFORE_CLOSE);
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    pthread_join(asker, NULL);
    pulsarc_consumer_destroy(r.cons);
    pulsarc_producer_destroy(r.prod);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
    /* The callback thread is gone: the counters are final. */
    ck_assert_int_eq(r.other, 0);
    ck_assert_int_gt(r.recv_ok, 0);
    ck_assert_int_gt(r.flush_ok, 0);
    ck_assert_int_eq(r.recv_cb, r.recv_ok);
    ck_assert_int_eq(r.flush_cb, r.flush_ok);
    printf("close race: %d asks, %d receive_async and %d flush_async called back\n", r.asked,
           r.recv_cb, r.flush_cb);
    pthread_mutex_destroy(&r.lock);
    pthread_cond_destroy(&r.cond);
}

/* A flush callback that flushes again until refused: close still returns
 * (the tcase timeout is the hang bound), and the last call is refused. */
typedef struct reflush {
    pthread_mutex_t lock;
    int called_back, refused;
} reflush_t;

static void on_flushed_again(pulsarc_producer_t *p, pulsarc_err_t err, void *opaque) {
    reflush_t *r = opaque;
    (void)err;
    pulsarc_err_t e = pulsarc_producer_flush_async(p, on_flushed_again, r);
    pthread_mutex_lock(&r->lock);
    r->called_back++;
    r->refused += e == PULSARC_ERR_CLOSED;
    pthread_mutex_unlock(&r->lock);
}

START_TEST(test_flush_callback_flushing_again_lets_close_finish) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    char err[256] = "";
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, "fb-topic", NULL, &p, err, sizeof err) == PULSARC_OK,
                  "producer: %s", err);
    reflush_t r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ck_assert_int_eq(pulsarc_producer_flush_async(p, on_flushed_again, &r), PULSARC_OK);
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_flush_async(p, on_flushed_again, &r), PULSARC_ERR_CLOSED);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
    ck_assert_int_gt(r.called_back, 0);
    ck_assert_int_eq(r.refused, 1); /* the chain ends at the first refusal */
}
END_TEST

START_TEST(test_every_accepted_call_is_called_back) {
    for (int i = 0; i < ROUNDS; i++)
        one_round();
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("close-race");
    TCase *tc = tcase_create("close-race");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_every_accepted_call_is_called_back);
    tcase_add_test(tc, test_flush_callback_flushing_again_lets_close_finish);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
