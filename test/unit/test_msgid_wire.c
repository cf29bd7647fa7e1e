/* The binary message id against hand-derived protobuf bytes, and its rejections. */
#include <string.h>

#include "testutil.h"

START_TEST(test_plain_id_bytes) {
    pulsarc_msgid_t id = {1, 2, -1, -1, 0};
    uint8_t buf[64];
    size_t len = sizeof buf;
    ck_assert_int_eq(pulsarc_msgid_serialize(&id, buf, &len), PULSARC_OK);
    const uint8_t want[] = {0x08, 0x01, 0x10, 0x02}; /* ledgerId=1, entryId=2 */
    ck_assert_uint_eq(len, sizeof want);
    ck_assert(memcmp(buf, want, len) == 0);
}
END_TEST

START_TEST(test_batch_id_bytes_and_round_trip) {
    pulsarc_msgid_t id = {300, 7, 3, 4, 10}, back;
    uint8_t buf[64];
    size_t len = sizeof buf;
    ck_assert_int_eq(pulsarc_msgid_serialize(&id, buf, &len), PULSARC_OK);
    /* ledger 300 = varint ac 02; partition 3 (field 3), batch_index 4 (4), batch_size 10 (6) */
    const uint8_t want[] = {0x08, 0xac, 0x02, 0x10, 0x07, 0x18, 0x03, 0x20, 0x04, 0x30, 0x0a};
    ck_assert_uint_eq(len, sizeof want);
    ck_assert(memcmp(buf, want, len) == 0);
    ck_assert_int_eq(pulsarc_msgid_deserialize(buf, len, &back), PULSARC_OK);
    ck_assert_int_eq(back.ledger_id, 300);
    ck_assert_int_eq(back.entry_id, 7);
    ck_assert_int_eq(back.partition, 3);
    ck_assert_int_eq(back.batch_index, 4);
    ck_assert_int_eq(back.batch_size, 10);
}
END_TEST

START_TEST(test_sizes_and_rejections) {
    pulsarc_msgid_t id = pulsarc_msgid_latest(), back;
    uint8_t buf[64];
    size_t len = 2;
    ck_assert_int_eq(pulsarc_msgid_serialize(&id, buf, &len), PULSARC_ERR_INVALID_ARG);
    ck_assert_uint_gt(len, 2); /* tells the size needed */
    ck_assert_uint_le(len, 64);
    ck_assert_int_eq(pulsarc_msgid_serialize(&id, buf, &len), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msgid_deserialize(buf, len, &back), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msgid_compare(&back, &id), 0);
    const uint8_t garbage[] = {0xff, 0xff, 0xff};
    ck_assert_int_eq(pulsarc_msgid_deserialize(garbage, sizeof garbage, &back), PULSARC_ERR_MALFORMED);
    const uint8_t no_entry[] = {0x08, 0x01}; /* entryId is required */
    ck_assert_int_eq(pulsarc_msgid_deserialize(no_entry, sizeof no_entry, &back), PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pulsarc_msgid_deserialize(NULL, 3, &back), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_deserialize(buf, len, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_serialize(NULL, buf, &len), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_msgid_serialize(&id, buf, NULL), PULSARC_ERR_INVALID_ARG);
}
END_TEST

static Suite *msgid_wire_suite(void) {
    Suite *s = suite_create("msgid-wire");
    TCase *tc = tcase_create("msgid");
    tcase_add_test(tc, test_plain_id_bytes);
    tcase_add_test(tc, test_batch_id_bytes_and_round_trip);
    tcase_add_test(tc, test_sizes_and_rejections);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(msgid_wire_suite)
