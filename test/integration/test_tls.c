/*
 * TLS against the live broker's TLS listener (pulsar+ssl://localhost:6651,
 * certificates from test/broker/gen-secrets.sh): produce and consume over
 * TLS, trust from a file and from a hashed directory, the system store by
 * default, a wrong CA refused, hostname verification on by default (the
 * listener's second address 127.0.0.2 is not in the certificate) and off
 * only when asked, configuration mistakes reported at client creation.
 */
#include "test_tls_auth_common.h"

#define TLS_URL tls_url()
#define TLS_IP_URL tls_port_url("pulsar+ssl", "127.0.0.1")

static const char *wrong_host_url(void) {
    const char *u = getenv("PULSARC_TEST_WRONG_HOST_URL");
    return u && *u ? u : tls_port_url("pulsar+ssl", "127.0.0.2");
}

START_TEST(test_produce_consume_over_tls) {
    pulsarc_client_t *c =
        must_client(TLS_URL, (const char *const[]){"tlsTrustCertsFilePath", secret_path("ca.pem"), NULL});
    roundtrip(c, 50, 100);
    roundtrip(c, 3, 900 * 1024); /* frames of many TLS records: partial writes, buffered reads */
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_ip_literal_checked_against_ip_san) {
    pulsarc_client_t *c =
        must_client(TLS_IP_URL, (const char *const[]){"tlsTrustCertsFilePath", secret_path("ca.pem"), NULL});
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_trust_store_directory) {
    pulsarc_client_t *c =
        must_client(TLS_URL, (const char *const[]){"tlsTrustCertsFilePath", secret_path("ca-dir"), NULL});
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
}
END_TEST

static void expect_tls_refusal(const char *url, const char *const *kv, const char *words) {
    pulsarc_client_t *c = must_client(url, kv);
    char err[512];
    pulsarc_err_t e = probe(c, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_TLS, "expected TLS error, got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(strstr(err, words) != NULL, "error '%s' does not say '%s'", err, words);
    pulsarc_client_destroy(c);
}

START_TEST(test_wrong_ca_fails) {
    expect_tls_refusal(TLS_URL, (const char *const[]){"tlsTrustCertsFilePath", secret_path("other-ca.pem"), NULL},
                       "certificate verification");
}
END_TEST

START_TEST(test_system_store_by_default_rejects_test_ca) {
    expect_tls_refusal(TLS_URL, NULL, "certificate verification");
}
END_TEST

START_TEST(test_wrong_host_fails_with_verification_on_by_default) {
    expect_tls_refusal(wrong_host_url(),
                       (const char *const[]){"tlsTrustCertsFilePath", secret_path("ca.pem"), NULL},
                       "mismatch");
}
END_TEST

/*
 * Connection and a request only: the broker names its second bind address
 * a listener ("internal") that it does not advertise, so a LOOKUP through
 * it fails on the broker side whatever the client does; produce/consume
 * over TLS is covered on the main address.
 */
START_TEST(test_wrong_host_works_with_hostname_verification_off) {
    pulsarc_client_t *c = must_client(wrong_host_url(), (const char *const[]){
        "tlsTrustCertsFilePath", secret_path("ca.pem"), "tlsHostnameVerificationEnable", "false", NULL});
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_insecure_accepts_wrong_ca_and_host) {
    pulsarc_client_t *c = must_client(wrong_host_url(), (const char *const[]){
        "tlsTrustCertsFilePath", secret_path("other-ca.pem"), "tlsAllowInsecureConnection", "true", NULL});
    char err[512];
    ck_assert_msg(probe(c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_tls_client_certificate_auth) {
    char params[1200];
    snprintf(params, sizeof params, "tlsCertFile:%s,tlsKeyFile:%s", secret_path("client.pem"),
             secret_path("client.key"));
    pulsarc_client_t *c = must_client(TLS_URL, (const char *const[]){
        "tlsTrustCertsFilePath", secret_path("ca.pem"),
        "authPlugin", "org.apache.pulsar.client.impl.auth.AuthenticationTls", "authParams", params, NULL});
    roundtrip(c, 5, 64);
    pulsarc_client_destroy(c);
}
END_TEST

static void expect_client_error(const char *url, const char *const *kv, pulsarc_err_t want,
                                const char *words) {
    char err[512] = "";
    pulsarc_err_t rc;
    pulsarc_client_t *c = try_client(url, kv, &rc, err, sizeof err);
    ck_assert_ptr_null(c);
    ck_assert_msg(rc == want, "expected %s, got %s: %s", pulsarc_errname(want), pulsarc_errname(rc), err);
    ck_assert_msg(strstr(err, words) != NULL, "error '%s' does not say '%s'", err, words);
}

START_TEST(test_config_mistakes_fail_client_creation) {
    expect_client_error(TLS_URL, (const char *const[]){"tlsTrustCertsFilePath", "/nonexistent/ca.pem", NULL},
                        PULSARC_ERR_TLS, "/nonexistent/ca.pem");
    expect_client_error(TLS_URL, (const char *const[]){"tlsCertificateFilePath", secret_path("broker.pem"),
                        "tlsKeyFilePath", secret_path("client.key"), NULL},
                        PULSARC_ERR_TLS, "mismatch");
    expect_client_error(TLS_URL, (const char *const[]){"tlsCertificateFilePath", secret_path("client.pem"), NULL},
                        PULSARC_ERR_BAD_CONFIG, "key");
    expect_client_error(pct_service_url(), (const char *const[]){"authPlugin", "tls", NULL},
                        PULSARC_ERR_BAD_CONFIG, "pulsar+ssl://");
    expect_client_error(TLS_URL, (const char *const[]){"authPlugin", "tls", NULL},
                        PULSARC_ERR_BAD_CONFIG, "client certificate");
}
END_TEST

START_TEST(test_plain_client_on_tls_port_fails_cleanly) {
    /* A pulsar:// client talking to the TLS port gets an error, not a hang. */
    pulsarc_client_t *c = must_client(tls_port_url("pulsar", "127.0.0.1"),
                                      (const char *const[]){"connectionTimeoutMs", "3000", NULL});
    char err[512];
    pulsarc_err_t e = probe(c, err, sizeof err);
    ck_assert_msg(e != PULSARC_OK, "plain CONNECT on the TLS port succeeded");
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("tls");
    TCase *t = tcase_create("live");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_produce_consume_over_tls);
    tcase_add_test(t, test_ip_literal_checked_against_ip_san);
    tcase_add_test(t, test_trust_store_directory);
    tcase_add_test(t, test_wrong_ca_fails);
    tcase_add_test(t, test_system_store_by_default_rejects_test_ca);
    tcase_add_test(t, test_wrong_host_fails_with_verification_on_by_default);
    tcase_add_test(t, test_wrong_host_works_with_hostname_verification_off);
    tcase_add_test(t, test_insecure_accepts_wrong_ca_and_host);
    tcase_add_test(t, test_tls_client_certificate_auth);
    tcase_add_test(t, test_config_mistakes_fail_client_creation);
    tcase_add_test(t, test_plain_client_on_tls_port_fails_cleanly);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
