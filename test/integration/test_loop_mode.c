/*
 * threadingMode=loop against the live broker, one thread stepping: send
 * callbacks run inside pulsarc_client_step on the stepping thread; a step
 * called from inside one of them is refused with an error naming the
 * misuse, while a synchronous send from inside one completes (the callback
 * runs between two turns, and the send turns the loop itself); a producer
 * destroyed from inside its own callback and a client close attempted
 * there stay safe; the process never gets a second thread.
 */
#include <dirent.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static int threads_in_process(void) {
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

typedef struct seen {
    pulsarc_client_t *c;
    pthread_t stepper;
    int calls, off_thread, ok;
    pulsarc_err_t nested_step, nested_send, nested_close;
    char nested_step_err[256];
    int destroy_in_callback;
} seen_t;

static pulsarc_msg_t *text(const char *s) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, s, strlen(s), PULSARC_MSG_F_COPY);
    return m;
}

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)id, (void)msg;
    seen_t *s = opaque;
    s->calls++;
    s->ok += err == PULSARC_OK;
    s->off_thread += !pthread_equal(pthread_self(), s->stepper);
    if (s->calls == 1) {
        s->nested_step = pulsarc_client_step(s->c, 0, s->nested_step_err, sizeof s->nested_step_err);
        pulsarc_msg_t *m = text("sent from inside a callback");
        s->nested_send = pulsarc_producer_send(p, m, NULL);
        pulsarc_msg_destroy(m);
        s->nested_close = pulsarc_client_close(s->c, 1000);
    }
    if (s->destroy_in_callback && s->calls == 2)
        pulsarc_producer_destroy(p);
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void step_until(seen_t *s, int calls) {
    int64_t end = now_ms() + 30000; /* a hang bound, not a timing assertion */
    char err[256];
    while (s->calls < calls && now_ms() < end)
        ck_assert_msg(pulsarc_client_step(s->c, 50, err, sizeof err) == PULSARC_OK, "%s", err);
}

static pulsarc_client_t *loop_client(void) {
    const char *kv[] = {"threadingMode", "loop", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    char err[256];
    pulsarc_conf_set(conf, "serviceUrl", pct_service_url(), NULL, 0);
    pulsarc_client_t *c = NULL;
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return c;
}

START_TEST(test_callbacks_on_the_stepping_thread_and_misuse) {
    int threads = threads_in_process();
    seen_t s = {.c = loop_client(), .stepper = pthread_self()};
    char err[256];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(s.c, pct_topic("loop-mode"), NULL, &p, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, text("async"), on_sent, &s), PULSARC_OK);
    step_until(&s, 3);
    ck_assert_int_eq(s.calls, 3);
    ck_assert_int_eq(s.ok, 3);
    ck_assert_int_eq(s.off_thread, 0);
    ck_assert_int_eq(s.nested_step, PULSARC_ERR_STATE);
    ck_assert_msg(strstr(s.nested_step_err, "inside a callback") != NULL, "%s", s.nested_step_err);
    ck_assert_int_eq(s.nested_send, PULSARC_OK);
    ck_assert_int_eq(s.nested_close, PULSARC_ERR_STATE);
    ck_assert_int_eq(threads_in_process(), threads);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(s.c);
}
END_TEST

START_TEST(test_destroy_producer_inside_its_callback) {
    seen_t s = {.c = loop_client(), .stepper = pthread_self(), .destroy_in_callback = 1};
    char err[256];
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(s.c, pct_topic("loop-mode-destroy"), NULL, &p, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    s.calls = 1; /* skip the nested calls of the first callback */
    for (int i = 0; i < 5; i++)
        pulsarc_producer_send_async(p, text("x"), on_sent, &s);
    step_until(&s, 6); /* every callback runs exactly once, destroyed or not */
    ck_assert_int_eq(s.calls, 6);
    ck_assert_int_eq(s.off_thread, 0);
    pulsarc_client_destroy(s.c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-loop-mode");
    TCase *tc = tcase_create("loop");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_callbacks_on_the_stepping_thread_and_misuse);
    tcase_add_test(tc, test_destroy_producer_inside_its_callback);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
