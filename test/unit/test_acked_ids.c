/*
 * What a consumer remembers of its acknowledgements, without a broker:
 *   - the bounded entry-id set (lib/client/consumer/entry_set.c): members
 *     found, duplicates kept once, the oldest forgotten exactly at the
 *     bound, contents kept across its growth, clear;
 *   - the ack tracker (ack_tracker.c) with a recording send function in
 *     place of the wire: an ack the broker confirmed is not sent again
 *     after a reconnect, one it did not confirm is (and, without receipts,
 *     everything sent is), and what was acknowledged is recognised on
 *     redelivery: whole entries, single batch indexes (the siblings stay
 *     deliverable), everything up to a cumulative ack; a seek forgets it.
 */
#include <stdlib.h>
#include <string.h>

#include "client/consumer/ack_tracker.h"
#include "client/consumer/entry_set.h"
#include "testutil.h"

/* ---- the set ---- */

START_TEST(test_set_members_and_duplicates) {
    pc_entry_set_t s;
    pc_entry_set_init(&s, 16);
    ck_assert(!pc_entry_set_has(&s, 1, 1)); /* empty, nothing allocated */
    ck_assert_int_eq(pc_entry_set_add(&s, 1, 1), 0);
    ck_assert_int_eq(pc_entry_set_add(&s, 1, 1), 0);
    ck_assert_int_eq(pc_entry_set_add(&s, 2, 1), 0);
    ck_assert_uint_eq(s.n, 2);
    ck_assert(pc_entry_set_has(&s, 1, 1));
    ck_assert(pc_entry_set_has(&s, 2, 1));
    ck_assert(!pc_entry_set_has(&s, 1, 2)); /* ledger and entry both count */
    ck_assert(!pc_entry_set_has(&s, 2, 2));
    pc_entry_set_free(&s);
}
END_TEST

START_TEST(test_set_forgets_oldest_at_bound) {
    pc_entry_set_t s;
    pc_entry_set_init(&s, 1000);
    for (int64_t e = 0; e < 1300; e++)
        ck_assert_int_eq(pc_entry_set_add(&s, 7, e), 0);
    ck_assert_uint_eq(s.n, 1000);
    ck_assert_uint_le(s.cap, 1000); /* memory stays at the bound */
    for (int64_t e = 0; e < 300; e++)
        ck_assert_msg(!pc_entry_set_has(&s, 7, e), "entry %lld should be forgotten", (long long)e);
    for (int64_t e = 300; e < 1300; e++)
        ck_assert_msg(pc_entry_set_has(&s, 7, e), "entry %lld should be kept", (long long)e);
    /* keeps cycling: the ring wraps many times over */
    for (int64_t e = 1300; e < 10000; e++)
        pc_entry_set_add(&s, 7, e);
    ck_assert_uint_eq(s.n, 1000);
    ck_assert(!pc_entry_set_has(&s, 7, 8999));
    ck_assert(pc_entry_set_has(&s, 7, 9000));
    ck_assert(pc_entry_set_has(&s, 7, 9999));
    pc_entry_set_free(&s);
}
END_TEST

START_TEST(test_set_insert_out_of_order) {
    pc_entry_set_t s;
    pc_entry_set_init(&s, 4);
    ck_assert_int_eq(pc_entry_set_insert(&s, 5, 10), 1);
    ck_assert_int_eq(pc_entry_set_insert(&s, 5, 10), 0);
    ck_assert_int_eq(pc_entry_set_insert(&s, 5, 3), 1); /* below the greatest: looked up, new */
    ck_assert_int_eq(pc_entry_set_insert(&s, 4, 100), 1); /* an older ledger */
    ck_assert(pc_entry_set_has(&s, 5, 3));
    ck_assert(pc_entry_set_has(&s, 4, 100));
    ck_assert(!pc_entry_set_has(&s, 5, 11));
    ck_assert(!pc_entry_set_has(&s, 6, 0));
    ck_assert(!pc_entry_set_has(&s, 4, 99));
    /* Forgetting the greatest keeps the bound above it, and the answer right. */
    ck_assert_int_eq(pc_entry_set_insert(&s, 5, 1), 1);
    ck_assert_int_eq(pc_entry_set_insert(&s, 5, 2), 1); /* bound 4: (5,10) is forgotten */
    ck_assert(!pc_entry_set_has(&s, 5, 10));
    ck_assert(pc_entry_set_has(&s, 5, 2));
    ck_assert_int_eq(pc_entry_set_insert(&s, 5, 10), 1);
    pc_entry_set_clear(&s); /* and clear lowers it: small ids are new again */
    ck_assert(!pc_entry_set_has(&s, 5, 2));
    ck_assert_int_eq(pc_entry_set_insert(&s, 1, 1), 1);
    ck_assert(pc_entry_set_has(&s, 1, 1));
    pc_entry_set_free(&s);
}
END_TEST

START_TEST(test_set_bound_not_power_of_two) {
    pc_entry_set_t s;
    pc_entry_set_init(&s, 100);
    for (int64_t e = 1000; e > 0; e--) /* newest first: every add is looked up */
        ck_assert_int_eq(pc_entry_set_insert(&s, 3, e), 1);
    ck_assert_uint_eq(s.n, 100);
    for (int64_t e = 1; e <= 100; e++)
        ck_assert(pc_entry_set_has(&s, 3, e));
    ck_assert(!pc_entry_set_has(&s, 3, 101));
    ck_assert(!pc_entry_set_has(&s, 3, 1000));
    pc_entry_set_free(&s);
}
END_TEST

START_TEST(test_set_run_retires_into_ring_oldest_first) {
    pc_entry_set_t s;
    pc_entry_set_init(&s, 10);
    for (int64_t e = 0; e < 8; e++)
        ck_assert_int_eq(pc_entry_set_insert(&s, 1, e), 1);
    ck_assert_ptr_null(s.slots); /* in order: nothing allocated */
    for (int64_t e = 0; e < 5; e++) /* a new ledger: 13 ids, bound 10 */
        ck_assert_int_eq(pc_entry_set_insert(&s, 2, e), 1);
    ck_assert_uint_eq(s.n, 10);
    for (int64_t e = 0; e < 3; e++)
        ck_assert_msg(!pc_entry_set_has(&s, 1, e), "(1,%lld) should be forgotten", (long long)e);
    for (int64_t e = 3; e < 8; e++)
        ck_assert_msg(pc_entry_set_has(&s, 1, e), "(1,%lld) should be kept", (long long)e);
    for (int64_t e = 0; e < 5; e++)
        ck_assert(pc_entry_set_has(&s, 2, e));
    ck_assert_int_eq(pc_entry_set_insert(&s, 1, 5), 0); /* in the ring: not new */
    ck_assert_int_eq(pc_entry_set_insert(&s, 2, 3), 0); /* in the run */
    ck_assert_int_eq(pc_entry_set_insert(&s, 2, 100), 1); /* a gap: the run moves to the ring */
    ck_assert_uint_eq(s.n, 10);
    ck_assert(!pc_entry_set_has(&s, 1, 3)); /* the oldest went */
    ck_assert(pc_entry_set_has(&s, 1, 4));
    ck_assert(pc_entry_set_has(&s, 2, 4));
    ck_assert(pc_entry_set_has(&s, 2, 100));
    ck_assert(!pc_entry_set_has(&s, 2, 5));
    pc_entry_set_free(&s);
}
END_TEST

START_TEST(test_set_growth_keeps_members_and_clear) {
    pc_entry_set_t s;
    pc_entry_set_init(&s, 0); /* the default bound */
    for (int64_t l = 0; l < 4; l++)
        for (int64_t e = 0; e < 900; e++)
            pc_entry_set_add(&s, l, e * 3);
    ck_assert_uint_eq(s.n, 3600);
    for (int64_t l = 0; l < 4; l++)
        for (int64_t e = 0; e < 900; e++) {
            ck_assert(pc_entry_set_has(&s, l, e * 3));
            ck_assert(!pc_entry_set_has(&s, l, e * 3 + 1));
        }
    pc_entry_set_clear(&s);
    ck_assert_uint_eq(s.n, 0);
    ck_assert(!pc_entry_set_has(&s, 0, 0));
    pc_entry_set_add(&s, 0, 0);
    ck_assert(pc_entry_set_has(&s, 0, 0));
    pc_entry_set_free(&s);
}
END_TEST

/* ---- the tracker, with the wire replaced by a record of what was sent ---- */

typedef struct wire {
    int connected, receipts;
    uint64_t next_receipt;
    int commands;
    int64_t entries[256]; /* every entry id sent, in order */
    int nentries;
    int cumulative_sent;
    int64_t last_cumulative;
} wire_t;

static int record_send(void *owner, const pc_ack_item_t *items, size_t n, int cumulative,
                       uint64_t *receipt) {
    wire_t *w = owner;
    *receipt = 0;
    if (!w->connected)
        return -1;
    w->commands++;
    for (size_t i = 0; i < n && w->nentries < 256; i++)
        w->entries[w->nentries++] = items[i].entry_id;
    if (cumulative) {
        w->cumulative_sent++;
        w->last_cumulative = items[0].entry_id;
    }
    if (w->receipts)
        *receipt = ++w->next_receipt;
    return 0;
}

static int sent_count(const wire_t *w, int64_t entry) {
    int k = 0;
    for (int i = 0; i < w->nentries; i++)
        k += w->entries[i] == entry;
    return k;
}

static pulsarc_msgid_t id_of(int64_t entry, int32_t index, int32_t size) {
    pulsarc_msgid_t id = {.ledger_id = 5, .entry_id = entry, .partition = -1, .batch_index = index,
                          .batch_size = size};
    return id;
}

static void tracker(pc_ack_tracker_t *t, wire_t *w, int receipts, int batch_index_ack) {
    memset(w, 0, sizeof *w);
    w->connected = 1;
    w->receipts = receipts;
    /* group 0: every ack goes out at once, so no loop (timer) is needed */
    pc_ack_tracker_init(t, NULL, record_send, w, 0, 1000, batch_index_ack, 64);
}

START_TEST(test_unconfirmed_resent_confirmed_not) {
    pc_ack_tracker_t t;
    wire_t w;
    tracker(&t, &w, 1, 0);
    for (int64_t e = 1; e <= 3; e++) {
        pulsarc_msgid_t id = id_of(e, -1, 0);
        pc_ack_individual(&t, &id);
    }
    ck_assert_int_eq(w.commands, 3);
    pc_ack_confirmed(&t, 2); /* the broker answered the ack of entry 2 only */
    ck_assert_uint_eq(t.sent_ids, 2);
    w.nentries = 0;
    pc_ack_resend(&t); /* a new subscribe */
    ck_assert_int_eq(sent_count(&w, 1), 1);
    ck_assert_int_eq(sent_count(&w, 2), 0);
    ck_assert_int_eq(sent_count(&w, 3), 1);
    ck_assert_int_eq(w.commands, 4); /* both in one command */
    pc_ack_confirmed(&t, 4);
    ck_assert_uint_eq(t.sent_ids, 0);
    w.nentries = 0;
    pc_ack_resend(&t);
    ck_assert_int_eq(w.nentries, 0); /* nothing left to resend */
    pc_ack_tracker_free(&t);
}
END_TEST

START_TEST(test_disconnected_waits_then_resends_without_receipts) {
    pc_ack_tracker_t t;
    wire_t w;
    tracker(&t, &w, 0, 0);
    pulsarc_msgid_t a = id_of(10, -1, 0), b = id_of(11, -1, 0);
    pc_ack_individual(&t, &a); /* sent, but no receipt will ever confirm it */
    w.connected = 0;
    pc_ack_individual(&t, &b); /* cannot be sent: stays pending */
    ck_assert_int_eq(w.commands, 1);
    w.connected = 1;
    w.nentries = 0;
    pc_ack_resend(&t);
    ck_assert_int_eq(sent_count(&w, 10), 1); /* the last connection's ack, once more */
    ck_assert_int_eq(sent_count(&w, 11), 1);
    pc_ack_tracker_free(&t);
}
END_TEST

START_TEST(test_unconfirmed_bounded) {
    pc_ack_tracker_t t;
    wire_t w;
    tracker(&t, &w, 1, 0); /* bound 64 */
    for (int64_t e = 0; e < 200; e++) {
        pulsarc_msgid_t id = id_of(e, -1, 0);
        pc_ack_individual(&t, &id);
    }
    ck_assert_uint_le(t.sent_ids, 64);
    ck_assert_uint_le(t.acked.n, 64);
    pc_ack_tracker_free(&t);
}
END_TEST

START_TEST(test_acked_recognised_on_redelivery) {
    pc_ack_tracker_t t;
    wire_t w;
    tracker(&t, &w, 1, 1);
    pulsarc_msgid_t whole = id_of(20, -1, 0), b1 = id_of(21, 1, 4), b2 = id_of(21, 2, 4);
    pulsarc_msgid_t other = id_of(22, -1, 0);
    pc_ack_individual(&t, &whole);
    pc_ack_individual(&t, &b1);
    ck_assert(pc_ack_is_acked(&t, &whole));
    ck_assert(pc_ack_is_acked(&t, &b1));
    ck_assert(!pc_ack_is_acked(&t, &b2)); /* its sibling is still to be delivered */
    ck_assert(!pc_ack_is_acked(&t, &other));
    /* a redelivery of the acked entry acks it again */
    int before = sent_count(&w, 20);
    pc_ack_again(&t, &whole);
    ck_assert_int_eq(sent_count(&w, 20), before + 1);
    /* a seek forgets all of it: those may come again and must be delivered */
    pc_ack_forget_batches(&t);
    ck_assert(!pc_ack_is_acked(&t, &whole));
    ck_assert(!pc_ack_is_acked(&t, &b1));
    ck_assert_uint_eq(t.sent_ids, 0);
    pc_ack_tracker_free(&t);
}
END_TEST

START_TEST(test_cumulative_recognised_and_resent) {
    pc_ack_tracker_t t;
    wire_t w;
    tracker(&t, &w, 1, 1);
    pulsarc_msgid_t upto = id_of(30, -1, 0), below = id_of(12, -1, 0), above = id_of(31, -1, 0);
    pc_ack_cumulative(&t, &upto);
    ck_assert_int_eq(w.cumulative_sent, 1);
    ck_assert(pc_ack_is_acked(&t, &upto));
    ck_assert(pc_ack_is_acked(&t, &below));
    ck_assert(!pc_ack_is_acked(&t, &above));
    pulsarc_msgid_t older_ledger = upto;
    older_ledger.ledger_id = 4;
    older_ledger.entry_id = 999;
    ck_assert(pc_ack_is_acked(&t, &older_ledger));
    /* a partial batch: indexes up to 1 acked, 2 and 3 not */
    pulsarc_msgid_t p1 = id_of(40, 1, 4), p2 = id_of(40, 2, 4);
    pc_ack_cumulative(&t, &p1);
    ck_assert(pc_ack_is_acked(&t, &p1));
    ck_assert(!pc_ack_is_acked(&t, &p2));
    /* unconfirmed: the next subscribe sends the latest cumulative ack again */
    w.cumulative_sent = 0;
    pc_ack_resend(&t);
    ck_assert_int_eq(w.cumulative_sent, 1);
    ck_assert_int_eq(w.last_cumulative, 40);
    pc_ack_tracker_free(&t);
}
END_TEST

static Suite *acked_suite(void) {
    Suite *s = suite_create("acked-ids");
    TCase *set = tcase_create("entry-set"), *tr = tcase_create("tracker");
    tcase_add_test(set, test_set_members_and_duplicates);
    tcase_add_test(set, test_set_forgets_oldest_at_bound);
    tcase_add_test(set, test_set_growth_keeps_members_and_clear);
    tcase_add_test(set, test_set_insert_out_of_order);
    tcase_add_test(set, test_set_bound_not_power_of_two);
    tcase_add_test(set, test_set_run_retires_into_ring_oldest_first);
    tcase_add_test(tr, test_unconfirmed_resent_confirmed_not);
    tcase_add_test(tr, test_disconnected_waits_then_resends_without_receipts);
    tcase_add_test(tr, test_unconfirmed_bounded);
    tcase_add_test(tr, test_acked_recognised_on_redelivery);
    tcase_add_test(tr, test_cumulative_recognised_and_resent);
    suite_add_tcase(s, set);
    suite_add_tcase(s, tr);
    return s;
}

PC_TEST_MAIN(acked_suite)
