/*
 * Basic authentication against the live broker: the harness runs the
 * broker's AuthenticationProviderBasic with a password file made by
 * gen-secrets.sh (user pulsarc-basic, an apr1 hash of a random password
 * in basic.password). The Java AuthenticationBasic plugin's name and
 * {"userId","password"} params: accepted and used for produce/consume;
 * a wrong password and an unknown user refused with the broker's
 * authentication error (the password absent from it); malformed params
 * refused at client creation naming the problem.
 */
#include "test_tls_auth_common.h"

#define URL pct_service_url()
#define JAVA_PLUGIN "org.apache.pulsar.client.impl.auth.AuthenticationBasic"

static const char *params(const char *user, const char *password) {
    static char bufs[4][512];
    static int n;
    char *b = bufs[n++ % 4];
    snprintf(b, 512, "{\"userId\": \"%s\", \"password\": \"%s\"}", user, password);
    return b;
}

START_TEST(test_basic_accepted) {
    char *pw = secret_text("basic.password");
    pulsarc_client_t *c = must_client(URL, (const char *const[]){
        "authPlugin", JAVA_PLUGIN, "authParams", params("pulsarc-basic", pw), NULL});
    roundtrip(c, 5, 64);
    pulsarc_client_destroy(c);
    c = must_client(URL, (const char *const[]){"authPlugin", "basic", "authParams",
                                               params("pulsarc-basic", pw), NULL});
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
    free(pw);
}
END_TEST

static void expect_refused(const char *user, const char *password) {
    pulsarc_client_t *c = must_client(URL, (const char *const[]){"authPlugin", "basic", "authParams",
                                                                 params(user, password), NULL});
    char err[512];
    pulsarc_err_t e = probe(c, err, sizeof err);
    pulsarc_client_destroy(c);
    ck_assert_msg(e == PULSARC_ERR_BROKER_AUTHENTICATION, "%s: expected an authentication error, got %s: %s",
                  user, pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, "refused the connection"), "%s", err);
    ck_assert_msg(strstr(err, password) == NULL, "the password appears in: %s", err);
    ck_assert(!pulsarc_err_is_retriable(e));
    printf("basic %s -> %s\n", user, err);
}

START_TEST(test_basic_refused) {
    char *pw = secret_text("basic.password");
    char wrong[256];
    snprintf(wrong, sizeof wrong, "x%s", pw);
    expect_refused("pulsarc-basic", wrong);
    expect_refused("no-such-user", pw);
    free(pw);
}
END_TEST

static void expect_bad(const char *p, const char *needle) {
    char err[512];
    pulsarc_err_t rc;
    pulsarc_client_t *c = try_client(URL, (const char *const[]){"authPlugin", "basic", "authParams", p, NULL},
                                     &rc, err, sizeof err);
    ck_assert_msg(c == NULL, "client created with %s", p);
    ck_assert_msg(rc == PULSARC_ERR_BAD_CONFIG, "%s: got %s: %s", p, pulsarc_errname(rc), err);
    ck_assert_msg(strstr(err, needle), "'%s' not in: %s", needle, err);
    ck_assert_msg(!strstr(err, "s3cret"), "the password appears in: %s", err);
}

START_TEST(test_basic_bad_params) {
    expect_bad("userId:u,password:s3cret", "authParams is not JSON");
    expect_bad("{\"userId\": \"u\", \"password\": \"s3cret\"", "expected ',' or '}'");
    expect_bad("{\"userId\": \"u\"}", "non-empty \"password\"");
    expect_bad("{\"password\": \"s3cret\"}", "non-empty \"userId\"");
    expect_bad("{\"userId\": \"\", \"password\": \"s3cret\"}", "non-empty \"userId\"");
    expect_bad("{\"userId\": \"a:b\", \"password\": \"s3cret\"}", "may not contain ':'");
    expect_bad("{\"userId\": \"u\", \"password\": [\"s3cret\"]}", "must be a string");
    expect_bad("{\"userId\": \"u\", \"password\": \"s3cret\\u00\"}", "not a flat JSON object");
    expect_bad("", "authParams is not JSON");
}
END_TEST

START_TEST(test_basic_json_escapes) {
    /* The same user, its name written with JSON escapes. */
    char *pw = secret_text("basic.password");
    char p[512];
    snprintf(p, sizeof p, "{\"userId\":\"pulsarc\\u002dbasic\",\"password\":\"%s\",\"extra\":true}", pw);
    pulsarc_client_t *c = must_client(URL, (const char *const[]){"authPlugin", "basic", "authParams", p, NULL});
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
    free(pw);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("auth_basic");
    TCase *t = tcase_create("live");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_basic_accepted);
    tcase_add_test(t, test_basic_refused);
    tcase_add_test(t, test_basic_bad_params);
    tcase_add_test(t, test_basic_json_escapes);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
