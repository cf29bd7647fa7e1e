/*
 * The table view's key -> value map (lib/client/tableview/kvmap.c) without
 * a broker: values are copies, a put replaces, a remove frees, lookups
 * stay right across the bucket array's growth, and a walk sees every entry
 * once and stops when asked.
 */
#include <stdio.h>
#include <string.h>

#include "client/tableview/kvmap.h"
#include "testutil.h"

START_TEST(test_values_are_copies_and_put_replaces) {
    pc_kvmap_t m;
    pc_kvmap_init(&m);
    ck_assert_ptr_null(pc_kvmap_get(&m, "a"));
    ck_assert_int_eq(pc_kvmap_remove(&m, "a"), 0);
    char value[] = "first";
    ck_assert_int_eq(pc_kvmap_put(&m, "a", value, 5), 0);
    value[0] = 'X'; /* the map holds its own copy */
    const pc_kv_entry_t *e = pc_kvmap_get(&m, "a");
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->len, 5);
    ck_assert_int_eq(memcmp(e->value, "first", 5), 0);
    ck_assert_int_eq(pc_kvmap_put(&m, "a", "second value", 12), 0);
    e = pc_kvmap_get(&m, "a");
    ck_assert_uint_eq(e->len, 12);
    ck_assert_int_eq(memcmp(e->value, "second value", 12), 0);
    ck_assert_uint_eq(m.count, 1);
    ck_assert_int_eq(pc_kvmap_remove(&m, "a"), 1);
    ck_assert_int_eq(pc_kvmap_remove(&m, "a"), 0);
    ck_assert_uint_eq(m.count, 0);
    pc_kvmap_free(&m);
}
END_TEST

static int count_visit(const pc_kv_entry_t *e, void *arg) {
    (void)e;
    (*(size_t *)arg)++;
    return 0;
}

static int stop_at_three(const pc_kv_entry_t *e, void *arg) {
    (void)e;
    return ++*(size_t *)arg == 3;
}

START_TEST(test_many_keys_across_growth) {
    enum { N = 20000 };
    pc_kvmap_t m;
    pc_kvmap_init(&m);
    char key[32], val[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(val, sizeof val, "v%d", i);
        ck_assert_int_eq(pc_kvmap_put(&m, key, val, strlen(val)), 0);
    }
    ck_assert_uint_eq(m.count, N);
    ck_assert_uint_ge(m.nbuckets, N); /* grown: about one entry per bucket */
    for (int i = 0; i < N; i += 2) {
        snprintf(key, sizeof key, "key-%d", i);
        ck_assert_int_eq(pc_kvmap_remove(&m, key), 1);
    }
    ck_assert_uint_eq(m.count, N / 2);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(val, sizeof val, "v%d", i);
        const pc_kv_entry_t *e = pc_kvmap_get(&m, key);
        if (i % 2 == 0) {
            ck_assert_ptr_null(e);
        } else {
            ck_assert_ptr_nonnull(e);
            ck_assert_uint_eq(e->len, strlen(val));
            ck_assert_int_eq(memcmp(e->value, val, e->len), 0);
        }
    }
    size_t seen = 0;
    pc_kvmap_each(&m, count_visit, &seen);
    ck_assert_uint_eq(seen, N / 2);
    seen = 0;
    pc_kvmap_each(&m, stop_at_three, &seen);
    ck_assert_uint_eq(seen, 3);
    pc_kvmap_free(&m);
    ck_assert_uint_eq(m.count, 0);
    ck_assert_ptr_null(pc_kvmap_get(&m, "key-1"));
}
END_TEST

static Suite *kvmap_suite(void) {
    Suite *s = suite_create("kvmap");
    TCase *tc = tcase_create("kvmap");
    tcase_add_test(tc, test_values_are_copies_and_put_replaces);
    tcase_add_test(tc, test_many_keys_across_growth);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(kvmap_suite)
