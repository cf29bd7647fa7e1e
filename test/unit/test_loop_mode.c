/*
 * threadingMode=loop without a broker: the loop's fd turns readable when
 * work is posted and quiet once a step ran it; next_timeout follows the
 * timer heap; a step from a second thread while one runs is refused with
 * an error naming the misuse; the options loop mode cannot serve are
 * refused at client creation (a table view at its creation); a synchronous call made while nobody steps
 * runs the loop itself to its outcome, and the client never starts a
 * thread; between close and destroy the stepping calls stay usable (an
 * application's loop may look once more before it sees CLOSED), as does
 * a poll-mode client's pulsarc_client_poll.
 */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "net/loop.h"
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

static int readable(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void count_call(void *arg) { (*(int *)arg)++; }

START_TEST(test_fd_and_next_timeout_follow_the_loop) {
    pc_loop_t *l = pc_loop_new();
    ck_assert_ptr_nonnull(l);
    pc_loop_set_threadless(l);
    ck_assert_int_eq(pc_loop_start(l, NULL), PULSARC_OK);
    int fd = pc_loop_fd(l);
    ck_assert_int_eq(pc_loop_next_timeout_ms(l), -1);
    ck_assert(!readable(fd));

    int posts = 0, fired = 0;
    ck_assert_int_eq(pc_loop_post(l, count_call, &posts), PULSARC_OK);
    ck_assert(readable(fd));
    ck_assert_int_eq(pc_loop_next_timeout_ms(l), 0);
    ck_assert_int_ge(pc_loop_step_turn(l, 0), 1);
    ck_assert_int_eq(posts, 1);
    ck_assert(!readable(fd));

    pc_timer_t t;
    pc_timer_init(&t, count_call, &fired);
    pc_timer_start(l, &t, 300);
    int left = pc_loop_next_timeout_ms(l);
    ck_assert_int_gt(left, 0);
    ck_assert_int_le(left, 300);
    /* A turn waits no longer than the timer (bounded well above 300 ms). */
    for (int i = 0; i < 100 && !fired; i++)
        pc_loop_step_turn(l, 1000);
    ck_assert_int_eq(fired, 1);
    ck_assert_int_eq(pc_loop_next_timeout_ms(l), -1);
    pc_loop_unref(l);
}
END_TEST

static pulsarc_client_t *loop_client(const char *url, const char *plugin, char *err, size_t errlen,
                                     pulsarc_err_t *rc) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_conf_set(conf, "serviceUrl", url, NULL, 0);
    pulsarc_conf_set(conf, "threadingMode", "loop", NULL, 0);
    pulsarc_conf_set(conf, "operationTimeoutMs", "1500", NULL, 0);
    pulsarc_conf_set(conf, "connectionTimeoutMs", "500", NULL, 0);
    if (plugin) {
        pulsarc_conf_set(conf, "authPlugin", plugin, NULL, 0);
        pulsarc_conf_set(conf, "authParams",
                         "{\"issuerUrl\":\"https://127.0.0.1:1\",\"privateKey\":\"data:application/json;base64,e30=\"}",
                         NULL, 0);
    }
    pulsarc_client_t *c = NULL;
    *rc = pulsarc_client_new(conf, &c, err, errlen);
    pulsarc_conf_destroy(conf);
    return c;
}

START_TEST(test_refused_options_are_named) {
    char err[512];
    pulsarc_err_t rc;
    ck_assert_ptr_null(loop_client("http://127.0.0.1:1", NULL, err, sizeof err, &rc));
    ck_assert_int_eq(rc, PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "threadingMode=loop") && strstr(err, "HTTP lookup"), "%s", err);
    ck_assert_ptr_null(loop_client("pulsar://127.0.0.1:1", "oauth2", err, sizeof err, &rc));
    ck_assert_int_eq(rc, PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "threadingMode=loop") && strstr(err, "OAuth2"), "%s", err);
    pulsarc_client_t *c = loop_client("pulsar://127.0.0.1:1", NULL, err, sizeof err, &rc);
    ck_assert_msg(c != NULL, "%s", err);
    pulsarc_tableview_t *tv = NULL;
    ck_assert_int_eq(pulsarc_tableview_new(c, "tv", NULL, &tv, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "threadingMode=loop") && strstr(err, "table view"), "%s", err);
    ck_assert_ptr_null(tv);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_threaded_client_has_no_step) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_conf_set(conf, "serviceUrl", "pulsar://127.0.0.1:1", NULL, 0);
    pulsarc_client_t *c = NULL;
    ck_assert_int_eq(pulsarc_client_new(conf, &c, NULL, 0), PULSARC_OK);
    pulsarc_conf_destroy(conf);
    char err[256];
    ck_assert_int_eq(pulsarc_client_fd(c), -1);
    ck_assert_int_eq(pulsarc_client_next_timeout_ms(c), -1);
    ck_assert_int_eq(pulsarc_client_step(c, 0, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "threadingMode=loop") != NULL, "%s", err);
    pulsarc_client_destroy(c);
}
END_TEST

typedef struct stepper {
    pulsarc_client_t *c;
    pulsarc_err_t rc;
} stepper_t;

static void *long_step(void *arg) {
    stepper_t *s = arg;
    s->rc = pulsarc_client_step(s->c, 3000, NULL, 0); /* nothing to do: waits it out */
    return NULL;
}

START_TEST(test_step_from_two_threads_is_refused) {
    char err[512];
    pulsarc_err_t rc;
    pulsarc_client_t *c = loop_client("pulsar://127.0.0.1:1", NULL, err, sizeof err, &rc);
    ck_assert_msg(c != NULL, "%s", err);
    stepper_t s = {.c = c};
    pulsarc_err_t mine = PULSARC_OK;
    /* Again if the helper thread came second (it was slow to start and
     * ran into one of our own short steps). */
    for (int attempt = 0; attempt < 3 && mine != PULSARC_ERR_STATE; attempt++) {
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, long_step, &s), 0);
        /* The other thread is inside its step within its 3 s budget. */
        mine = PULSARC_OK;
        for (int i = 0; i < 200 && mine == PULSARC_OK; i++) {
            usleep(10000);
            mine = pulsarc_client_step(c, 0, err, sizeof err);
        }
        pthread_join(t, NULL);
        if (s.rc != PULSARC_OK)
            mine = PULSARC_OK;
    }
    ck_assert_int_eq(mine, PULSARC_ERR_STATE);
    ck_assert_msg(strstr(err, "two threads") != NULL, "%s", err);
    ck_assert_int_eq(s.rc, PULSARC_OK);
    ck_assert_int_eq(pulsarc_client_step(c, 0, err, sizeof err), PULSARC_OK);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_sync_call_runs_the_loop_itself_without_threads) {
    char err[512];
    pulsarc_err_t rc;
    int before = threads_in_process();
    pulsarc_client_t *c = loop_client("pulsar://localhost:1", NULL, err, sizeof err, &rc);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_int_ge(pulsarc_client_fd(c), 0);
    /* Nobody steps: the call must turn the loop (resolve, connect, refused,
     * back off, retry) until operationTimeoutMs, then fail, not hang. */
    pulsarc_producer_t *p = NULL;
    pulsarc_err_t e = pulsarc_producer_new(c, "loop-mode-nobody-there", NULL, &p, err, sizeof err);
    ck_assert_int_ne(e, PULSARC_OK);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(threads_in_process(), before);
    pulsarc_client_destroy(c);
    ck_assert_int_eq(threads_in_process(), before);
}
END_TEST

/*
 * Close returns while the application's loop may still be about to ask
 * next_timeout_ms or step once more (it learns of the close from step's
 * CLOSED). Those calls read the callback queue: it must outlive close
 * until destroy. Under ThreadSanitizer a queue torn down by close shows
 * as "use of an invalid mutex" here, deterministically.
 */
START_TEST(test_step_calls_after_close_until_destroy) {
    char err[512];
    pulsarc_err_t rc;
    pulsarc_client_t *c = loop_client("pulsar://127.0.0.1:1", NULL, err, sizeof err, &rc);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    /* A closed client has no timer and no work left: -1, as with nothing pending. */
    ck_assert_int_eq(pulsarc_client_next_timeout_ms(c), -1);
    ck_assert_int_eq(pulsarc_client_step(c, 0, err, sizeof err), PULSARC_ERR_CLOSED);
    ck_assert_int_eq(pulsarc_client_next_timeout_ms(c), -1);
    pulsarc_client_destroy(c);
}
END_TEST

/* The same for a poll-mode client: pulsarc_client_poll after close runs nothing and returns. */
START_TEST(test_poll_after_close_until_destroy) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_conf_set(conf, "serviceUrl", "pulsar://127.0.0.1:1", NULL, 0);
    ck_assert_int_eq(pulsarc_conf_set(conf, "callbackMode", "poll", NULL, 0), PULSARC_OK);
    pulsarc_client_t *c = NULL;
    ck_assert_int_eq(pulsarc_client_new(conf, &c, NULL, 0), PULSARC_OK);
    pulsarc_conf_destroy(conf);
    ck_assert_int_eq(pulsarc_client_close(c, -1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_client_poll(c, 0), 0);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("loop-mode");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fd_and_next_timeout_follow_the_loop);
    tcase_add_test(tc, test_refused_options_are_named);
    tcase_add_test(tc, test_threaded_client_has_no_step);
    tcase_add_test(tc, test_step_from_two_threads_is_refused);
    tcase_add_test(tc, test_sync_call_runs_the_loop_itself_without_threads);
    tcase_add_test(tc, test_step_calls_after_close_until_destroy);
    tcase_add_test(tc, test_poll_after_close_until_destroy);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
