/*
 * The table of producers or consumers attached to a connection
 * (lib/net/attach.c) without a broker: 10,000 ids found after the table
 * grew, a repeated id finds the latest one and removing it uncovers the
 * earlier one, the touched list holds each entry once and forgets one that
 * is removed, and taking everything empties the table.
 */
#include <stdlib.h>

#include "net/attach.h"
#include "testutil.h"

static const pc_conn_handler_t handler = {NULL, NULL, NULL};

START_TEST(test_many_ids_found) {
    pc_attach_table_t t;
    pc_attach_init(&t);
    ck_assert_ptr_null(pc_attach_find(&t, 1));
    static int objs[10000];
    for (int i = 0; i < 10000; i++)
        pc_attach_add(&t, (uint64_t)i * 3, &handler, &objs[i]);
    ck_assert_uint_eq(t.count, 10000);
    ck_assert_uint_ge(t.nbuckets, 10000);
    for (int i = 0; i < 10000; i++) {
        pc_attached_t *a = pc_attach_find(&t, (uint64_t)i * 3);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_eq(a->obj, &objs[i]);
        ck_assert_ptr_null(pc_attach_find(&t, (uint64_t)i * 3 + 1));
    }
    for (int i = 0; i < 10000; i += 2)
        pc_attach_remove(&t, (uint64_t)i * 3);
    ck_assert_uint_eq(t.count, 5000);
    for (int i = 0; i < 10000; i++)
        ck_assert_int_eq(pc_attach_find(&t, (uint64_t)i * 3) != NULL, i % 2);
    pc_attach_free(&t);
}
END_TEST

START_TEST(test_repeated_id_latest_wins) {
    pc_attach_table_t t;
    pc_attach_init(&t);
    int first, second;
    pc_attach_add(&t, 7, &handler, &first);
    for (uint64_t i = 100; i < 140; i++) /* grows the table between the two */
        pc_attach_add(&t, i, &handler, NULL);
    pc_attach_add(&t, 7, &handler, &second);
    for (uint64_t i = 140; i < 300; i++)
        pc_attach_add(&t, i, &handler, NULL);
    ck_assert_ptr_eq(pc_attach_find(&t, 7)->obj, &second);
    pc_attach_remove(&t, 7);
    ck_assert_ptr_eq(pc_attach_find(&t, 7)->obj, &first);
    pc_attach_remove(&t, 7);
    ck_assert_ptr_null(pc_attach_find(&t, 7));
    pc_attach_remove(&t, 7); /* absent: nothing happens */
    pc_attach_free(&t);
}
END_TEST

START_TEST(test_touched_once_and_forgotten_on_remove) {
    pc_attach_table_t t;
    pc_attach_init(&t);
    for (uint64_t i = 0; i < 5; i++)
        pc_attach_add(&t, i, &handler, NULL);
    pc_attach_touch(&t, pc_attach_find(&t, 1));
    pc_attach_touch(&t, pc_attach_find(&t, 3));
    pc_attach_touch(&t, pc_attach_find(&t, 1)); /* twice in one read: listed once */
    pc_attach_touch(&t, pc_attach_find(&t, 4));
    pc_attach_remove(&t, 3);
    int seen[5] = {0};
    for (pc_attached_t *a; (a = pc_attach_pop_touched(&t)) != NULL;) {
        ck_assert_int_eq(a->touched, 0);
        seen[a->id]++;
    }
    ck_assert_int_eq(seen[0] + seen[2] + seen[3], 0);
    ck_assert_int_eq(seen[1], 1);
    ck_assert_int_eq(seen[4], 1);
    pc_attach_touch(&t, pc_attach_find(&t, 2)); /* a new read starts clean */
    ck_assert_uint_eq(pc_attach_pop_touched(&t)->id, 2);
    ck_assert_ptr_null(pc_attach_pop_touched(&t));
    pc_attach_free(&t);
}
END_TEST

START_TEST(test_take_all_empties) {
    pc_attach_table_t t;
    pc_attach_init(&t);
    for (uint64_t i = 0; i < 50; i++)
        pc_attach_add(&t, i, &handler, NULL);
    pc_attach_touch(&t, pc_attach_find(&t, 9));
    int n = 0;
    for (pc_attached_t *a = pc_attach_take_all(&t), *next; a; a = next, n++) {
        next = a->next;
        free(a);
    }
    ck_assert_int_eq(n, 50);
    ck_assert_uint_eq(t.count, 0);
    ck_assert_ptr_null(pc_attach_find(&t, 9));
    ck_assert_ptr_null(pc_attach_pop_touched(&t));
    pc_attach_add(&t, 9, &handler, NULL); /* still usable */
    ck_assert_ptr_nonnull(pc_attach_find(&t, 9));
    pc_attach_free(&t);
}
END_TEST

static Suite *attach_suite(void) {
    Suite *s = suite_create("attach");
    TCase *tc = tcase_create("attach");
    tcase_add_test(tc, test_many_ids_found);
    tcase_add_test(tc, test_repeated_id_latest_wins);
    tcase_add_test(tc, test_touched_once_and_forgotten_on_remove);
    tcase_add_test(tc, test_take_all_empties);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(attach_suite)
