/*
 * The spare message structs behind pulsarc_msg_new, without a broker: a
 * struct handed out again carries nothing of the message it was (payload,
 * key, properties, times, id, sequence id all back to a new message's);
 * structs destroyed on another thread, which then exits, are handed out
 * again on this one (they went to the shared stack in bulk and at the
 * thread's exit). Under AddressSanitizer and valgrind the pool is
 * bypassed, so reuse is only asserted without them.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/message.h"
#include "client/msg_pool.h"
#include "testutil.h"

enum { N = 3000 };

static int was_destroyed(pulsarc_msg_t *const *old, int n, const pulsarc_msg_t *m) {
    for (int i = 0; i < n; i++)
        if (old[i] == m)
            return 1;
    return 0;
}

static void assert_fresh(const pulsarc_msg_t *m) {
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    ck_assert_ptr_null(pulsarc_msg_payload(m));
    ck_assert_uint_eq(pulsarc_msg_len(m), 0);
    ck_assert_ptr_null(pulsarc_msg_key(m));
    ck_assert_uint_eq(pulsarc_msg_property_count(m), 0);
    ck_assert_ptr_null(pulsarc_msg_property(m, "k"));
    ck_assert_uint_eq(pulsarc_msg_event_time(m), 0);
    ck_assert_uint_eq(pulsarc_msg_deliver_at(m), 0);
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), -1);
    ck_assert_int_eq(pulsarc_msgid_compare(&m->id, &earliest), 0);
    ck_assert_int_eq(m->id.batch_size, earliest.batch_size);
    ck_assert_ptr_null(m->next);
}

/* A message with every owned part set, as an application builds one. */
static pulsarc_msg_t *full_msg(int i) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    ck_assert_ptr_nonnull(m);
    char text[32];
    snprintf(text, sizeof text, "payload-%d", i);
    ck_assert_int_eq(pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_set_key(m, "key"), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_set_property(m, "k", "v"), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_set_event_time(m, 1234), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_set_deliver_at(m, 99999), PULSARC_OK);
    m->seq = i;
    m->id.entry_id = 7;
    return m;
}

/* Takes N new messages into now, each checked fresh; returns how many are structs from old. */
static int take_fresh(pulsarc_msg_t **now, pulsarc_msg_t *const *old) {
    int reused = 0;
    for (int i = 0; i < N; i++) {
        now[i] = pulsarc_msg_new();
        ck_assert_ptr_nonnull(now[i]);
        assert_fresh(now[i]);
        reused += was_destroyed(old, N, now[i]);
    }
    return reused;
}

START_TEST(test_reused_struct_is_fresh) {
    static pulsarc_msg_t *old[N];
    for (int i = 0; i < N; i++)
        old[i] = full_msg(i);
    for (int i = 0; i < N; i++)
        pulsarc_msg_destroy(old[i]);
    static pulsarc_msg_t *now[N];
    int reused = take_fresh(now, old);
    if (pc_msg_pool_on())
        ck_assert_int_gt(reused, 0);
    for (int i = 0; i < N; i++)
        pulsarc_msg_destroy(now[i]);
}
END_TEST

typedef struct batch {
    pulsarc_msg_t **msgs;
    int n;
} batch_t;

static void *destroy_all(void *arg) {
    batch_t *b = arg;
    for (int i = 0; i < b->n; i++)
        pulsarc_msg_destroy(b->msgs[i]);
    return NULL;
}

START_TEST(test_structs_destroyed_on_another_thread_come_back) {
    static pulsarc_msg_t *old[N], *now[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            old[i] = full_msg(i);
        batch_t b = {old, N};
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, destroy_all, &b), 0);
        ck_assert_int_eq(pthread_join(t, NULL), 0); /* its spares leave with it */
        int reused = take_fresh(now, old);
        if (pc_msg_pool_on())
            ck_assert_int_gt(reused, N / 2);
        for (int i = 0; i < N; i++)
            pulsarc_msg_destroy(now[i]);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("msg_pool");
    TCase *tc = tcase_create("reuse");
    tcase_add_test(tc, test_reused_struct_is_fresh);
    tcase_add_test(tc, test_structs_destroyed_on_another_thread_come_back);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
