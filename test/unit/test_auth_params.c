/*
 * The authentication providers' configuration, without a broker: the flat
 * JSON parser of authParams (escapes, surrogate pairs, scalars kept as
 * text, every malformation refused with its offset and never with a
 * value), the basic provider's wire credentials, and the OAuth2 provider's
 * creation-time checks of its key file (file:// and data: forms) — the
 * issuer is never contacted here. Plugin names by Java class and short
 * name go to the right provider ("token" on the wire for OAuth2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/auth_plugin.h"
#include "testutil.h"

static void parse_ok(const char *json, pc_auth_kv_t *kv) {
    char err[256];
    ck_assert_msg(pc_auth_kv_parse(json, "authParams", kv, err, sizeof err) == PULSARC_OK, "%s: %s",
                  json, err);
}

static void parse_bad(const char *json, const char *needle) {
    pc_auth_kv_t kv;
    char err[256];
    ck_assert_msg(pc_auth_kv_parse(json, "authParams", &kv, err, sizeof err) == PULSARC_ERR_BAD_CONFIG,
                  "accepted: %s", json);
    ck_assert_msg(strstr(err, needle), "'%s' not in: %s", needle, err);
    ck_assert_msg(!strstr(err, "s3cret"), "a value appears in: %s", err);
    ck_assert_int_eq(kv.n, 0);
}

START_TEST(test_parse_values) {
    pc_auth_kv_t kv;
    parse_ok(" { \"a\" : \"x\\\"y\\\\z\\/\\n\" , \"b\":12.5e1,\"c\":true,\"d\":null,\"e\":-3 } ", &kv);
    ck_assert_int_eq(kv.n, 5);
    ck_assert_str_eq(pc_auth_kv_get(&kv, "a"), "x\"y\\z/\n");
    ck_assert_str_eq(pc_auth_kv_get(&kv, "b"), "12.5e1");
    ck_assert_str_eq(pc_auth_kv_get(&kv, "c"), "true");
    ck_assert_str_eq(pc_auth_kv_get(&kv, "d"), "null");
    ck_assert_str_eq(pc_auth_kv_get(&kv, "e"), "-3");
    ck_assert_ptr_null(pc_auth_kv_get(&kv, "f"));
    pc_auth_kv_free(&kv);
    parse_ok("{\"u\":\"\\u00e9\\u20ac\\ud83d\\ude00\",\"u\":\"last\"}", &kv);
    ck_assert_str_eq(kv.val[0], "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    ck_assert_str_eq(pc_auth_kv_get(&kv, "u"), "last"); /* the last duplicate wins */
    pc_auth_kv_free(&kv);
    parse_ok("{}", &kv);
    ck_assert_int_eq(kv.n, 0);
}
END_TEST

START_TEST(test_parse_malformed) {
    parse_bad("", "is not JSON");
    parse_bad("userId:u,password:s3cret", "is not JSON");
    parse_bad("{\"p\":\"s3cret\"", "expected ',' or '}' at offset 13");
    parse_bad("{\"p\":\"s3cret\",}", "member name");
    parse_bad("{p:\"s3cret\"}", "member name");
    parse_bad("{\"p\" \"s3cret\"}", "expected ':'");
    parse_bad("{\"p\":\"s3cret}", "expected a string");
    parse_bad("{\"p\":\"s3\x01\"}", "expected a string");
    parse_bad("{\"p\":\"s3cret\\x\"}", "expected a string");
    parse_bad("{\"p\":\"s3cret\\", "expected a string"); /* ends in a backslash (a fuzzer find) */
    parse_bad("{\"p\":\"\\ud83d\"}", "expected a string");  /* lone high surrogate */
    parse_bad("{\"p\":\"\\ude00\"}", "expected a string");  /* lone low surrogate */
    parse_bad("{\"p\":tru}", "expected a string");
    parse_bad("{\"p\":1.2.3}", "expected a string");
    parse_bad("{\"p\":{\"q\":\"s3cret\"}}", "\"p\" must be a string, not an object");
    parse_bad("{\"p\":[\"s3cret\"]}", "not an array");
    parse_bad("{\"p\":\"s3cret\"} x", "unexpected text");
    char big[2048] = "{";
    for (int i = 0; i <= PC_AUTH_KV_MAX; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s\"k%d\":1", i ? "," : "", i);
    strcat(big, "}");
    char needle[64];
    snprintf(needle, sizeof needle, "more than %d members", PC_AUTH_KV_MAX);
    parse_bad(big, needle);
}
END_TEST

START_TEST(test_parse_document_skips_nested) {
    /* The issuer's answers and key files: nested members are skipped, and a
     * member that is not a JSON string is not taken for one. */
    pc_auth_kv_t kv;
    char err[256];
    const char *doc = "{\"a\": [1, {\"x\": \"]}\\\"\"}, [[]]], \"token_endpoint\": \"https://t\", "
                      "\"o\": {\"k\": {}}, \"n\": 5, \"s\": \"5\"}";
    ck_assert_msg(pc_auth_kv_parse_doc(doc, "the answer", 1, &kv, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(kv.n, 3);
    ck_assert_str_eq(pc_auth_kv_get_str(&kv, "token_endpoint"), "https://t");
    ck_assert_ptr_null(pc_auth_kv_get_str(&kv, "n"));
    ck_assert_str_eq(pc_auth_kv_get(&kv, "n"), "5");
    ck_assert_str_eq(pc_auth_kv_get_str(&kv, "s"), "5");
    ck_assert_ptr_null(pc_auth_kv_get(&kv, "a"));
    pc_auth_kv_free(&kv);
    ck_assert_int_eq(pc_auth_kv_parse_doc("{\"a\": [1, 2", "the answer", 1, &kv, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "unterminated nested value"), "%s", err);
    ck_assert_int_eq(pc_auth_kv_parse_doc("{\"a\": [\"\\", "the answer", 1, &kv, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
}
END_TEST

static pc_auth_t *auth_of(const char *plugin, const char *params, pulsarc_err_t want, char *err,
                          size_t errlen) {
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"authPlugin", plugin, "authParams", params, NULL});
    pc_auth_t *a = NULL;
    pulsarc_err_t e = pc_auth_new(conf, &a, err, errlen);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == want, "%s %s: got %s: %s", plugin, params, pulsarc_errname(e), err);
    return a;
}

START_TEST(test_basic_credentials) {
    char err[256];
    const char *names[] = {"org.apache.pulsar.client.impl.auth.AuthenticationBasic", "basic", "BASIC"};
    for (int i = 0; i < 3; i++) {
        pc_auth_t *a = auth_of(names[i], "{\"userId\":\"alice\",\"password\":\"p\\u00e4ss\"}",
                               PULSARC_OK, err, sizeof err);
        ck_assert_str_eq(a->method, "basic");
        uint8_t *d;
        size_t n;
        ck_assert_int_eq(a->credentials(a, &d, &n, err, sizeof err), PULSARC_OK);
        ck_assert_uint_eq(n, strlen("alice:p\xc3\xa4ss"));
        ck_assert(memcmp(d, "alice:p\xc3\xa4ss", n) == 0);
        pc_auth_wipe(d, n);
        pc_auth_free(a);
    }
    auth_of("basic", "{\"userId\":\"a:b\",\"password\":\"s3cret\"}", PULSARC_ERR_BAD_CONFIG, err, sizeof err);
    ck_assert(strstr(err, "\"userId\" may not contain ':'"));
    auth_of("basic", "{\"userId\":\"a\",\"password\":\"\"}", PULSARC_ERR_BAD_CONFIG, err, sizeof err);
    ck_assert(strstr(err, "non-empty \"password\""));
}
END_TEST

#ifdef PULSARC_WITH_CURL
static char key_path[64];

static const char *write_key(const char *text) {
    snprintf(key_path, sizeof key_path, "/tmp/pulsarc-unit-key-XXXXXX");
    int fd = mkstemp(key_path);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return key_path;
}

static void oauth2_bad(const char *params, const char *needle) {
    char err[512];
    auth_of("oauth2", params, PULSARC_ERR_BAD_CONFIG, err, sizeof err);
    ck_assert_msg(strstr(err, needle), "'%s' not in: %s", needle, err);
    ck_assert_msg(!strstr(err, "s3cret"), "the secret appears in: %s", err);
}

START_TEST(test_oauth2_configuration) {
    char p[1024], err[512];
    const char *k = write_key("{\"client_id\":\"c\",\"client_secret\":\"s3cret\"}");
    snprintf(p, sizeof p, "{\"issuerUrl\":\"https://127.0.0.1:1/\",\"privateKey\":\"file://%s\"}", k);
    pc_auth_t *a = auth_of("org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2", p,
                           PULSARC_OK, err, sizeof err);
    ck_assert_str_eq(a->method, "token");
    ck_assert_ptr_nonnull(a->prepare);
    ck_assert_int_eq(a->generation(a), 0);
    uint8_t *d = NULL;
    size_t n = 0;
    /* Nothing fetched yet (no loop asked): a clear error, not a block. */
    ck_assert_int_eq(a->credentials(a, &d, &n, err, sizeof err), PULSARC_ERR_AUTH);
    ck_assert_msg(strstr(err, "no OAuth2 access token from https://127.0.0.1:1 yet"), "%s", err);
    pc_auth_free(a);
    /* The same key as a percent-encoded data: URL, the issuer from the key file. */
    a = auth_of("oauth2", "{\"privateKey\":\"data:application/json,%7B%22client_id%22:%22c%22,"
                "%22client_secret%22:%22s3cret%22,%22issuer_url%22:%22https://127.0.0.1:1%22%7D\"}",
                PULSARC_OK, err, sizeof err);
    pc_auth_free(a);
    oauth2_bad("{\"privateKey\":\"data:application/json,%7\"}", "not valid percent-encoding");
    oauth2_bad("{\"privateKey\":\"data:application/json;base64,e30=\"}", "no \"client_id\"");
    oauth2_bad("{\"privateKey\":\"data:application/json,[1]\"}", "not a JSON object");
    oauth2_bad("{\"privateKey\":\"data:application/json,{\\\"client_id\\\":\\\"c\\\",\\\"client_secret\\\":\\\"s3cret\\\"}\"}",
               "needs \"issuerUrl\"");
    oauth2_bad("{\"privateKey\":\"data:application/json,{\\\"client_id\\\":\\\"\\\",\\\"client_secret\\\":\\\"s3cret\\\"}\"}",
               "\"client_id\" is empty");
    oauth2_bad("{\"privateKey\":\"data:application/json\"}", "has no ','");
    oauth2_bad("{\"privateKey\":\"data:application/json,{\\\"client_id\\\":1,\\\"client_secret\\\":\\\"s3cret\\\"}\"}",
               "\"client_id\" must be a string");
    /* Extra members, nested ones too, are ignored as in Java's key file reader. */
    a = auth_of("oauth2", "{\"issuerUrl\":\"https://127.0.0.1:1\",\"privateKey\":\"data:application/json,"
                "{\\\"client_id\\\":\\\"c\\\",\\\"client_secret\\\":\\\"s\\\",\\\"extra\\\":{\\\"x\\\":[1]}}\"}",
                PULSARC_OK, err, sizeof err);
    pc_auth_free(a);
    snprintf(p, sizeof p, "{\"issuerUrl\":\"https://\",\"privateKey\":\"file://%s\"}", k);
    oauth2_bad(p, "https:// URL");
    unlink(k);
}
END_TEST
#endif

static Suite *suite(void) {
    Suite *s = suite_create("auth_params");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_parse_values);
    tcase_add_test(t, test_parse_malformed);
    tcase_add_test(t, test_parse_document_skips_nested);
    tcase_add_test(t, test_basic_credentials);
#ifdef PULSARC_WITH_CURL
    tcase_add_test(t, test_oauth2_configuration);
#endif
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
