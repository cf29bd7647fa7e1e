/*
 * The admin client's JSON bounds (lib/admin/json.c) on raw text: nesting
 * at the limit parses and one past it is refused; 100,000 levels are
 * refused without a crash; a response with the limit's number of values
 * parses and one value more is refused before json-c allocates.
 */
#include "testutil.h"

#ifndef PULSARC_WITH_CURL
START_TEST(test_admin_not_built) {}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("json_bounds");
    TCase *tc = tcase_create("not built");
    tcase_add_test(tc, test_admin_not_built);
    suite_add_tcase(s, tc);
    return s;
}
#else
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"

#define ck_assert_contains(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay), (needle))

/* `depth` nested arrays around one string: [[["a"]]]. */
static char *nested(size_t depth) {
    char *s = malloc(2 * depth + 4);
    ck_assert_ptr_nonnull(s);
    memset(s, '[', depth);
    memcpy(s + depth, "\"a\"", 3);
    memset(s + depth + 3, ']', depth);
    s[2 * depth + 3] = '\0';
    return s;
}

static pulsarc_err_t read_strings(const char *body, char *err, size_t errlen, size_t *n) {
    char **list = NULL;
    pulsarc_err_t e = pc_admin_json_strings(body, &list, err, errlen);
    *n = 0;
    if (e == PULSARC_OK) {
        while (list[*n])
            (*n)++;
        pulsarc_admin_list_free(list);
    }
    return e;
}

START_TEST(test_depth_at_limit_parses) {
    char err[256] = "";
    size_t n;
    char *body = nested(32);
    /* the text parses; the reader then finds an array where it wants a string */
    ck_assert_int_eq(read_strings(body, err, sizeof err, &n), PULSARC_ERR_MALFORMED);
    printf("depth 32: %s\n", err);
    ck_assert_msg(strstr(err, "malformed JSON") == NULL, "%s", err);
    free(body);
    body = nested(1);
    ck_assert_int_eq(read_strings(body, err, sizeof err, &n), PULSARC_OK);
    ck_assert_uint_eq(n, 1);
    free(body);
}
END_TEST

START_TEST(test_depth_past_limit_refused) {
    size_t depths[] = {33, 100000};
    for (size_t i = 0; i < 2; i++) {
        char err[256] = "";
        size_t n;
        char *body = nested(depths[i]);
        ck_assert_int_eq(read_strings(body, err, sizeof err, &n), PULSARC_ERR_MALFORMED);
        printf("depth %zu: %s\n", depths[i], err);
        ck_assert_contains(err, "malformed JSON");
        ck_assert_contains(err, "too deep");
        free(body);
    }
}
END_TEST

/* ["", "", ...] with k strings: k + 1 values by the count ('[' and the commas). */
static char *strings(size_t k) {
    char *s = malloc(3 * k + 3);
    ck_assert_ptr_nonnull(s);
    char *p = s;
    *p++ = '[';
    for (size_t i = 0; i < k; i++) {
        if (i)
            *p++ = ',';
        *p++ = '"';
        *p++ = '"';
    }
    *p++ = ']';
    *p = '\0';
    return s;
}

START_TEST(test_values_at_limit_parse) {
    char err[256] = "";
    size_t n;
    char *body = strings(999999);
    ck_assert_msg(read_strings(body, err, sizeof err, &n) == PULSARC_OK, "%s", err);
    ck_assert_uint_eq(n, 999999);
    free(body);
}
END_TEST

START_TEST(test_values_past_limit_refused) {
    char err[256] = "";
    size_t n;
    char *body = strings(1000000);
    ck_assert_int_eq(read_strings(body, err, sizeof err, &n), PULSARC_ERR_MALFORMED);
    printf("1000000 strings: %s\n", err);
    ck_assert_contains(err, "more than the limit of 1000000");
    free(body);
}
END_TEST

/* Brackets and commas inside strings, escaped quotes among them, are not counted. */
START_TEST(test_values_in_strings_not_counted) {
    size_t k = 600000;
    char *body = malloc(k * 2 + 16);
    ck_assert_ptr_nonnull(body);
    char *p = body;
    p += sprintf(p, "[\"\\\"");
    for (size_t i = 0; i < k; i++)
        *p++ = i & 1 ? ',' : '[';
    sprintf(p, "\"]");
    char err[256] = "";
    size_t n;
    ck_assert_msg(read_strings(body, err, sizeof err, &n) == PULSARC_OK, "%s", err);
    ck_assert_uint_eq(n, 1);
    free(body);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("json_bounds");
    TCase *tc = tcase_create("bounds");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_depth_at_limit_parses);
    tcase_add_test(tc, test_depth_past_limit_refused);
    tcase_add_test(tc, test_values_at_limit_parse);
    tcase_add_test(tc, test_values_past_limit_refused);
    tcase_add_test(tc, test_values_in_strings_not_counted);
    suite_add_tcase(s, tc);
    return s;
}
#endif

PC_TEST_MAIN(suite)
