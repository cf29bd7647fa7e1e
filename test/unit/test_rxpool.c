/*
 * Receive-side memory without a broker: a fresh arena's first allocation
 * makes its main block (no overflow chunk, so later small allocations of
 * the round fit in it and reset has nothing to free or regrow); an arena
 * still grows to a round's peak; a pool entry's first message view is the
 * slot inside the entry, outgrowing it moves the views to an array the
 * entry keeps when recycled, and the pool's byte count follows both.
 */
#include <stdint.h>
#include <string.h>

#include "client/rxpool.h"
#include "core/arena.h"
#include "testutil.h"

static int in_main_block(const pc_arena_t *a, const void *p, size_t n) {
    const uint8_t *b = p;
    return b >= a->buf && b + n <= a->buf + a->cap;
}

START_TEST(test_first_allocation_makes_the_main_block) {
    pc_arena_t a = {0};
    void *p = pc_arena_alloc(&a, 40);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(a.buf);
    ck_assert_uint_ge(a.cap, 512);
    ck_assert_ptr_null(a.extra);
    ck_assert(in_main_block(&a, p, 40));
    /* an unbatched entry's metadata, a few small objects: all in the block */
    for (int i = 0; i < 8; i++) {
        char *s = pc_arena_strndup(&a, "persistent://public/default/t", 29);
        ck_assert_str_eq(s, "persistent://public/default/t");
        ck_assert(in_main_block(&a, s, 30));
    }
    ck_assert_ptr_null(a.extra);
    uint8_t *block = a.buf;
    size_t cap = a.cap;
    pc_arena_reset(&a); /* nothing overflowed: the block stays as it is */
    ck_assert_ptr_eq(a.buf, block);
    ck_assert_uint_eq(a.cap, cap);
    ck_assert_uint_eq(a.used, 0);
    pc_arena_free(&a);
    ck_assert_ptr_null(a.buf);
}
END_TEST

START_TEST(test_large_first_allocation_and_growth_to_peak) {
    pc_arena_t a = {0};
    void *p = pc_arena_alloc(&a, 3000);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_ge(a.cap, 3000);
    ck_assert(in_main_block(&a, p, 3000));
    memset(p, 0xab, 3000);
    void *q = pc_arena_alloc(&a, 5000); /* past the block: an overflow chunk */
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(a.extra);
    memset(q, 0xcd, 5000);
    pc_arena_reset(&a); /* grows to the round's peak */
    ck_assert_ptr_null(a.extra);
    ck_assert_uint_ge(a.cap, 8000);
    p = pc_arena_alloc(&a, 3000);
    q = pc_arena_alloc(&a, 5000);
    ck_assert(in_main_block(&a, p, 3000) && in_main_block(&a, q, 5000));
    ck_assert_ptr_null(a.extra);
    pc_arena_free(&a);
}
END_TEST

START_TEST(test_entry_view_inline_then_array) {
    pc_rxpool_t *p = pc_rxpool_new("persistent://public/default/rx", (size_t)1 << 20, 4);
    ck_assert_ptr_nonnull(p);
    pc_entry_t *e = pc_entry_get(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(pc_entry_reserve_msgs(e, 1), 0);
    ck_assert_ptr_eq(e->msgs, &e->one_msg); /* one view: the entry's own slot */
    pc_entry_unref(e);
    size_t one = pc_rxpool_pooled_bytes(p);
    ck_assert_uint_ge(one, sizeof *e);

    e = pc_entry_get(p); /* the same entry, recycled */
    ck_assert_int_eq(pc_entry_reserve_msgs(e, 5), 0);
    ck_assert(e->msgs != &e->one_msg);
    ck_assert_uint_ge(e->capmsgs, 5);
    for (size_t i = 0; i < 5; i++) /* the array is the entry's: writable */
        memset(&e->msgs[i], 0, sizeof e->msgs[i]);
    pc_entry_unref(e);
    /* the pool counts the array it now keeps */
    ck_assert_uint_ge(pc_rxpool_pooled_bytes(p), one + 5 * sizeof *e->msgs);

    e = pc_entry_get(p);
    pulsarc_msg_t *kept = e->msgs;
    ck_assert_int_eq(pc_entry_reserve_msgs(e, 3), 0); /* fits: the array stays */
    ck_assert_ptr_eq(e->msgs, kept);
    pc_entry_unref(e);
    pc_rxpool_release(p); /* frees the entry and its array: ASan/valgrind check */
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("rxpool");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, test_first_allocation_makes_the_main_block);
    tcase_add_test(tc, test_large_first_allocation_and_growth_to_peak);
    tcase_add_test(tc, test_entry_view_inline_then_array);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
