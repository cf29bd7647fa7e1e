/*
 * The reconnecting request's choice of delay (lib/client/request.c,
 * pc_request_next_delay) without a broker or a loop: a request is set to
 * the stage its attempt reached and failed with an error, and the delays
 * it picks are checked against the policy in request.h:
 *   - a connection to an owner the lookup just named that fails (refused,
 *     closed before ready, turned away by a proxy) retries from the initial
 *     delay doubling only up to PC_REQUEST_OWNER_MAX_MS, for
 *     PC_REQUEST_OWNER_TRIES attempts, and then on the ordinary doubling
 *     schedule;
 *   - so does a lookup answered ServiceNotReady (a proxy that could not
 *     reach the owner);
 *   - lookups that get no answer, and requests that fail once connected,
 *     double up to the configured maximum as before;
 *   - a success starts both schedules over.
 * Delays carry up to 10% jitter below the nominal value, so bounds are
 * checked, never exact values beyond the first.
 */
#include <stddef.h>

#include "client/request.h"
#include "testutil.h"

#define INITIAL_MS 100
#define MAX_MS 60000

/* Never called: pc_request_next_delay only reads and advances the backoff state. */
static const pc_request_ops_t no_ops = {0};

static void init_request(pc_request_t *r, int64_t max_ms) {
    pc_request_init(r, &no_ops, NULL, "persistent://public/default/t", INITIAL_MS, max_ms);
}

static int64_t fail_at(pc_request_t *r, int stage, pulsarc_err_t err) {
    r->stage = stage;
    return pc_request_next_delay(r, err);
}

/* The nominal delay of the n-th failure (0-based) on a doubling schedule capped at max. */
static int64_t nominal(int n, int64_t max) {
    int64_t d = INITIAL_MS;
    for (int i = 0; i < n && d < max; i++)
        d = d * 2 > max ? max : d * 2;
    return d;
}

static void assert_near(int64_t d, int64_t nominal_ms) {
    ck_assert_int_le(d, nominal_ms);
    ck_assert_int_ge(d, nominal_ms - nominal_ms / 10);
}

/* A killed owner that lookups keep naming: the delay never passes the cap. */
START_TEST(test_refused_owner_capped) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < PC_REQUEST_OWNER_TRIES; i++) {
        int64_t d = fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT);
        assert_near(d, nominal(i, PC_REQUEST_OWNER_MAX_MS));
    }
    ck_assert_int_eq(r.owner_tries, PC_REQUEST_OWNER_TRIES);
}
END_TEST

/* A connection to the owner closed before it was ready, or a proxy's
 * refusal to reach it, counts the same. */
START_TEST(test_owner_closed_in_handshake_capped) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < 10; i++) {
        ck_assert_int_le(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_DISCONNECTED),
                         PC_REQUEST_OWNER_MAX_MS);
        ck_assert_int_le(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_BROKER_SERVICE_NOT_READY),
                         PC_REQUEST_OWNER_MAX_MS);
    }
}
END_TEST

/* Past the bounded number of quick attempts, the ordinary doubling schedule. */
START_TEST(test_quick_attempts_bounded) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < PC_REQUEST_OWNER_TRIES; i++)
        fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT);
    for (int i = 0; i < 12; i++) {
        int64_t d = fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT);
        assert_near(d, nominal(i, MAX_MS));
    }
    ck_assert_int_eq(r.owner_tries, PC_REQUEST_OWNER_TRIES);
    assert_near(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT), MAX_MS);
}
END_TEST

/* A lookup a proxy answers ServiceNotReady (it could not reach the owner)
 * is the same outage seen from behind the proxy. */
START_TEST(test_lookup_not_ready_capped) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < 20; i++) {
        assert_near(fail_at(&r, PC_RSTAGE_NONE, PULSARC_ERR_BROKER_SERVICE_NOT_READY),
                    nominal(2 * i, PC_REQUEST_OWNER_MAX_MS));
        assert_near(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_DISCONNECTED),
                    nominal(2 * i + 1, PC_REQUEST_OWNER_MAX_MS));
    }
    ck_assert_int_eq(r.owner_tries, 40);
}
END_TEST

/* Lookups that get no answer (the service URL down, timed out) double past the cap. */
START_TEST(test_failed_lookups_double) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < 12; i++) {
        pulsarc_err_t err = i % 2 ? PULSARC_ERR_CONNECT : PULSARC_ERR_TIMEOUT;
        assert_near(fail_at(&r, PC_RSTAGE_NONE, err), nominal(i, MAX_MS));
    }
    ck_assert_int_eq(r.owner_tries, 0);
}
END_TEST

/* Once connected, a failed request is the broker's answer: it doubles. */
START_TEST(test_failed_requests_double) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < 12; i++)
        assert_near(fail_at(&r, PC_RSTAGE_SENT, PULSARC_ERR_BROKER_SERVICE_NOT_READY),
                    nominal(i, MAX_MS));
    ck_assert_int_eq(r.owner_tries, 0);
}
END_TEST

/* Failed lookups in between grow their own schedule, not the owner's. */
START_TEST(test_interleaved_lookup_failures) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    int64_t longest_lookup = 0;
    for (int i = 0; i < 10; i++) {
        int64_t d = fail_at(&r, PC_RSTAGE_NONE, PULSARC_ERR_TIMEOUT);
        longest_lookup = d > longest_lookup ? d : longest_lookup;
        ck_assert_int_le(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT),
                         PC_REQUEST_OWNER_MAX_MS);
    }
    ck_assert_int_gt(longest_lookup, PC_REQUEST_OWNER_MAX_MS);
}
END_TEST

/* A success starts over: the quick attempts are available again. */
START_TEST(test_success_resets) {
    pc_request_t r;
    init_request(&r, MAX_MS);
    for (int i = 0; i < PC_REQUEST_OWNER_TRIES + 5; i++)
        fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT);
    pc_request_succeeded(&r);
    ck_assert_int_eq(r.owner_tries, 0);
    for (int i = 0; i < 10; i++)
        assert_near(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT),
                    nominal(i, PC_REQUEST_OWNER_MAX_MS));
    pc_request_succeeded(&r);
    ck_assert_int_eq(fail_at(&r, PC_RSTAGE_NONE, PULSARC_ERR_TIMEOUT), INITIAL_MS);
}
END_TEST

/* A configured maximum below the cap is kept. */
START_TEST(test_small_max_kept) {
    pc_request_t r;
    init_request(&r, 300);
    for (int i = 0; i < 10; i++)
        ck_assert_int_le(fail_at(&r, PC_RSTAGE_LOOKED_UP, PULSARC_ERR_CONNECT), 300);
}
END_TEST

static Suite *request_backoff_suite(void) {
    Suite *s = suite_create("request_backoff");
    TCase *tc = tcase_create("delay");
    tcase_add_test(tc, test_refused_owner_capped);
    tcase_add_test(tc, test_owner_closed_in_handshake_capped);
    tcase_add_test(tc, test_quick_attempts_bounded);
    tcase_add_test(tc, test_lookup_not_ready_capped);
    tcase_add_test(tc, test_failed_lookups_double);
    tcase_add_test(tc, test_failed_requests_double);
    tcase_add_test(tc, test_interleaved_lookup_failures);
    tcase_add_test(tc, test_success_resets);
    tcase_add_test(tc, test_small_max_kept);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(request_backoff_suite)
