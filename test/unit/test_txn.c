/*
 * Transactions without a broker: argument checks, the enableTransaction
 * switch, and a clean failure when no coordinator can be reached.
 */
#include <string.h>

#include "testutil.h"

static pulsarc_client_t *client_to_nowhere(const char *enable) {
    const char *kv[] = {"serviceUrl", "pulsar://127.0.0.1:1", "operationTimeoutMs", "800",
                        "enableTransaction", enable, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_client_t *c = NULL;
    char err[256];
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return c;
}

START_TEST(test_null_args) {
    pulsarc_txn_t *t = NULL;
    uint64_t a, b;
    char err[128];
    ck_assert_int_eq(pulsarc_txn_new(NULL, 0, &t, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_txn_commit(NULL, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_txn_abort(NULL, NULL, 0), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_txn_id(NULL, &a, &b), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_producer_send_txn(NULL, NULL, NULL, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_consumer_ack_id_txn(NULL, NULL, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_consumer_ack_cumulative_id_txn(NULL, NULL, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn(NULL, NULL, NULL, 0), PULSARC_ERR_INVALID_ARG);
    pulsarc_err_t errs[1];
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn_each(NULL, NULL, NULL, 0, NULL),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_consumer_ack_ids_txn_each(NULL, NULL, NULL, 1, errs),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_client_txn_enabled(NULL), 0);
    ck_assert_int_eq(pulsarc_producer_send_async_txn(NULL, NULL, NULL, NULL, NULL),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_txn_resume(NULL, 1, 2, &t, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_ptr_null(t);
    pulsarc_txn_release(NULL);
    pulsarc_txn_destroy(NULL);
}
END_TEST

START_TEST(test_off_by_default) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    char buf[16];
    size_t len = sizeof buf;
    ck_assert_int_eq(pulsarc_conf_get(conf, "enableTransaction", buf, &len), PULSARC_OK);
    ck_assert_str_eq(buf, "false");
    pulsarc_conf_destroy(conf);
    pulsarc_client_t *c = client_to_nowhere("false");
    ck_assert_int_eq(pulsarc_client_txn_enabled(c), 0);
    pulsarc_txn_t *t = NULL;
    char err[256];
    ck_assert_int_eq(pulsarc_txn_new(c, 0, &t, err, sizeof err), PULSARC_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(err, "enableTransaction"));
    pulsarc_client_destroy(c);
}
END_TEST

/* Discovery cannot reach a broker: a retriable error within operationTimeoutMs. */
START_TEST(test_unreachable_coordinator) {
    pulsarc_client_t *c = client_to_nowhere("true");
    ck_assert_int_eq(pulsarc_client_txn_enabled(c), 1);
    pulsarc_txn_t *t = NULL;
    char err[256];
    pulsarc_err_t e = pulsarc_txn_new(c, 0, &t, err, sizeof err);
    ck_assert_msg(e != PULSARC_OK && pulsarc_err_is_retriable(e), "%s: %s", pulsarc_errname(e), err);
    ck_assert_ptr_null(t);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *txn_suite(void) {
    Suite *s = suite_create("txn");
    TCase *tc = tcase_create("txn");
    tcase_add_test(tc, test_null_args);
    tcase_add_test(tc, test_off_by_default);
    tcase_add_test(tc, test_unreachable_coordinator);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(txn_suite)
