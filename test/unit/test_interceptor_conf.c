/*
 * Interceptors in a configuration and the message copy hooks work on, with
 * no broker: added in order, copied whole by pulsarc_conf_dup, bounded in
 * number, NULL arguments refused; pulsarc_msg_clone copies everything a
 * hook may read and owns its copy (changing or freeing one side leaves the
 * other intact).
 */
#include <string.h>

#include "client/message.h"
#include "conf/props.h"
#include "testutil.h"

static int tag_a, tag_b;

START_TEST(producer_interceptors_in_order_and_copied) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_producer_interceptor_t a = {.opaque = &tag_a}, b = {.opaque = &tag_b};
    ck_assert_int_eq(pulsarc_conf_add_producer_interceptor(conf, &a), PULSARC_OK);
    ck_assert_int_eq(pulsarc_conf_add_producer_interceptor(conf, &b), PULSARC_OK);
    a.opaque = NULL; /* the conf holds its own copy of the struct */
    pulsarc_conf_t *dup = pulsarc_conf_dup(conf);
    pulsarc_conf_destroy(conf);
    const pulsarc_producer_interceptor_t *list;
    ck_assert_uint_eq(pc_conf_producer_interceptors(dup, &list), 2);
    ck_assert_ptr_eq(list[0].opaque, &tag_a);
    ck_assert_ptr_eq(list[1].opaque, &tag_b);
    const pulsarc_consumer_interceptor_t *clist;
    ck_assert_uint_eq(pc_conf_consumer_interceptors(dup, &clist), 0);
    ck_assert_uint_eq(pc_conf_producer_interceptors(NULL, &list), 0);
    pulsarc_conf_destroy(dup);
}
END_TEST

START_TEST(consumer_interceptors_bounded) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_consumer_interceptor_t c = {.opaque = &tag_a};
    int added = 0;
    while (pulsarc_conf_add_consumer_interceptor(conf, &c) == PULSARC_OK)
        added++;
    ck_assert_int_eq(added, 64);
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(conf, &c), PULSARC_ERR_BAD_CONFIG);
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(NULL, &c), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_conf_add_consumer_interceptor(conf, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_conf_add_producer_interceptor(NULL, NULL), PULSARC_ERR_INVALID_ARG);
    pulsarc_conf_destroy(conf);
}
END_TEST

START_TEST(clone_is_deep) {
    ck_assert_ptr_null(pulsarc_msg_clone(NULL));
    pulsarc_msg_t *m = pulsarc_msg_new();
    const char *clusters[] = {"c1", "c2"};
    pulsarc_msg_set_payload(m, "body", 4, PULSARC_MSG_F_BORROW);
    pulsarc_msg_set_key_bytes(m, "\x01\x02", 2);
    pulsarc_msg_set_ordering_key(m, "ok", 2);
    pulsarc_msg_set_property(m, "p", "v");
    pulsarc_msg_set_event_time(m, 77);
    pulsarc_msg_set_sequence_id(m, 5);
    pulsarc_msg_set_deliver_at(m, 1234);
    pulsarc_msg_set_replication_clusters(m, clusters, 2);
    m->id = (pulsarc_msgid_t){3, 4, 1, -1, 0};
    pulsarc_msg_t *c = pulsarc_msg_clone(m);
    ck_assert_ptr_nonnull(c);
    pulsarc_msg_set_property(c, "p", "changed");
    pulsarc_msg_set_payload(c, "other", 5, PULSARC_MSG_F_COPY);
    ck_assert_str_eq(pulsarc_msg_property(m, "p"), "v");
    ck_assert_uint_eq(pulsarc_msg_len(m), 4);
    pulsarc_msg_t *c2 = pulsarc_msg_clone(m);
    pulsarc_msg_destroy(m); /* the copies own everything they point at */
    ck_assert_str_eq(pulsarc_msg_property(c, "p"), "changed");
    ck_assert_uint_eq(pulsarc_msg_len(c2), 4);
    ck_assert(memcmp(pulsarc_msg_payload(c2), "body", 4) == 0);
    size_t len = 0;
    const void *kb = pulsarc_msg_key_bytes(c2, &len);
    ck_assert_uint_eq(len, 2);
    ck_assert(memcmp(kb, "\x01\x02", 2) == 0);
    const void *okey = pulsarc_msg_ordering_key(c2, &len);
    ck_assert(len == 2 && memcmp(okey, "ok", 2) == 0);
    ck_assert_uint_eq(pulsarc_msg_event_time(c2), 77);
    ck_assert_int_eq(pulsarc_msg_sequence_id(c2), 5);
    ck_assert_uint_eq(pulsarc_msg_deliver_at(c2), 1234);
    ck_assert_str_eq(c2->repl_clusters[1], "c2");
    ck_assert_int_eq(pulsarc_msg_id(c2).entry_id, 4);
    ck_assert_int_eq(pulsarc_msg_id(c2).partition, 1);
    pulsarc_msg_destroy(c);
    pulsarc_msg_destroy(c2);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("interceptor-conf");
    TCase *t = tcase_create("conf");
    tcase_add_test(t, producer_interceptors_in_order_and_copied);
    tcase_add_test(t, consumer_interceptors_bounded);
    tcase_add_test(t, clone_is_deep);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
