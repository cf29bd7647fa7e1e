/*
 * The sink checkpoint blob from bytes: round trip, the exact layout
 * (little-endian, magic, version, CRC32C), and every way a damaged blob is
 * refused — plus the public build path refusing a corrupt blob before it
 * connects anywhere.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "connector/sink_state.h"
#include "core/crc32c.h"
#include "pulsarc.h"
#include "pulsarc/sink.h"
#include "testutil.h"

static pc_sink_state_t sample(pc_sink_txn_ref_t *txns) {
    txns[0] = (pc_sink_txn_ref_t){7, 1, 0x0102030405060708ull, PC_SINK_TXN_COMMIT};
    txns[1] = (pc_sink_txn_ref_t){8, 1, 42, PC_SINK_TXN_COMMIT};
    txns[2] = (pc_sink_txn_ref_t){8, 2, 43, PC_SINK_TXN_ABORT};
    return (pc_sink_state_t){PULSARC_SINK_EXACTLY_ONCE, 8, 3, txns, 0, 1};
}

static uint8_t *encoded(size_t *len) {
    pc_sink_txn_ref_t txns[3];
    pc_sink_state_t st = sample(txns);
    uint8_t *b = NULL;
    ck_assert_int_eq(pc_sink_state_encode(&st, &b, len), PULSARC_OK);
    return b;
}

static void fix_crc(uint8_t *b, size_t len) {
    uint32_t c = pc_crc32c(0, b, len - 4);
    for (int i = 0; i < 4; i++)
        b[len - 4 + i] = (uint8_t)(c >> (8 * i));
}

static pulsarc_err_t decode(const uint8_t *b, size_t len, char *err, size_t errlen) {
    pc_sink_state_t st;
    pulsarc_err_t e = pc_sink_state_decode(b, len, &st, err, errlen);
    if (!e)
        pc_sink_state_free(&st);
    return e;
}

START_TEST(test_round_trip) {
    size_t len;
    uint8_t *b = encoded(&len);
    pc_sink_state_t st;
    char err[128];
    ck_assert_int_eq(pc_sink_state_decode(b, len, &st, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(st.guarantee, PULSARC_SINK_EXACTLY_ONCE);
    ck_assert_uint_eq(st.checkpoint_id, 8);
    ck_assert_uint_eq(st.ntxns, 3);
    ck_assert_uint_eq(st.txns[0].least, 0x0102030405060708ull);
    ck_assert_uint_eq(st.txns[0].checkpoint_id, 7);
    ck_assert_int_eq(st.txns[2].fate, PC_SINK_TXN_ABORT);
    ck_assert_uint_eq(st.txns[2].most, 2);
    pc_sink_state_free(&st);
    free(b);
}
END_TEST

START_TEST(test_exact_layout_little_endian) {
    size_t len;
    uint8_t *b = encoded(&len);
    ck_assert_uint_eq(len, 20 + 3 * 25 + 8 + 4); /* header, transactions, writer, CRC */
    ck_assert_mem_eq(b, "PSSK", 4);
    ck_assert_int_eq(b[4], 2); /* version 2, LE */
    ck_assert_int_eq(b[5], 0);
    ck_assert_int_eq(b[6], PULSARC_SINK_EXACTLY_ONCE);
    ck_assert_int_eq(b[8], 8); /* checkpoint id, LE */
    ck_assert_int_eq(b[16], 3); /* count */
    const uint8_t least0[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    ck_assert_mem_eq(b + 20 + 16, least0, 8);
    ck_assert_int_eq(b[20 + 24], PC_SINK_TXN_COMMIT);
    uint32_t c = pc_crc32c(0, b, len - 4);
    ck_assert_uint_eq(b[len - 4] | b[len - 3] << 8 | b[len - 2] << 16 | (uint32_t)b[len - 1] << 24,
                      c);
    free(b);
}
END_TEST

START_TEST(test_empty_state) {
    pc_sink_state_t st = {PULSARC_SINK_AT_LEAST_ONCE, 3, 0, NULL, 0, 1}, out;
    uint8_t *b;
    size_t len;
    ck_assert_int_eq(pc_sink_state_encode(&st, &b, &len), PULSARC_OK);
    ck_assert_uint_eq(len, 32);
    ck_assert_int_eq(pc_sink_state_decode(b, len, &out, NULL, 0), PULSARC_OK);
    ck_assert_uint_eq(out.ntxns, 0);
    ck_assert_uint_eq(out.checkpoint_id, 3);
    pc_sink_state_free(&out);
    free(b);
}
END_TEST

/* A version 1 blob (before parallel writers) reads as writer 0 of 1. */
START_TEST(test_version_1_is_writer_0_of_1) {
    uint8_t b[24] = {'P', 'S', 'S', 'K', 1, 0, PULSARC_SINK_EXACTLY_ONCE, 0, 5};
    fix_crc(b, sizeof b);
    pc_sink_state_t st;
    char err[160];
    ck_assert_int_eq(pc_sink_state_decode(b, sizeof b, &st, err, sizeof err), PULSARC_OK);
    ck_assert(st.writer == 0 && st.writers == 1 && st.checkpoint_id == 5 && st.ntxns == 0);
    pc_sink_state_free(&st);
}
END_TEST

START_TEST(test_writer_checked_and_merged) {
    pc_sink_txn_ref_t t0[1] = {{4, 1, 10, PC_SINK_TXN_COMMIT}};
    pc_sink_txn_ref_t t1[2] = {{4, 1, 11, PC_SINK_TXN_COMMIT}, {4, 1, 12, PC_SINK_TXN_ABORT}};
    pc_sink_state_t sts[2] = {{PULSARC_SINK_EXACTLY_ONCE, 4, 2, t1, 1, 2},
                              {PULSARC_SINK_EXACTLY_ONCE, 4, 1, t0, 0, 2}}, out;
    char err[256];
    uint8_t *b;
    size_t len;
    ck_assert_int_eq(pc_sink_state_encode(&sts[0], &b, &len), PULSARC_OK);
    ck_assert_int_eq(pc_sink_state_decode(b, len, &out, err, sizeof err), PULSARC_OK);
    ck_assert(out.writer == 1 && out.writers == 2);
    pc_sink_state_free(&out);
    b[len - 4 - 8] = 2; /* writer 2 of 2 */
    fix_crc(b, len);
    ck_assert_int_eq(pc_sink_state_decode(b, len, &out, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "writer 2 of 2") != NULL, "%s", err);
    free(b);
    ck_assert_int_eq(pc_sink_state_merge(sts, 2, &out, err, sizeof err), PULSARC_OK);
    ck_assert(out.ntxns == 3 && out.writer == 0 && out.writers == 1 && out.checkpoint_id == 4);
    pc_sink_state_free(&out);
    ck_assert_int_eq(pc_sink_state_merge(sts, 1, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "writer 1 of 2") != NULL, "%s", err);
    sts[1].checkpoint_id = 3;
    ck_assert_int_eq(pc_sink_state_merge(sts, 2, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "different checkpoints") != NULL, "%s", err);
    sts[1].checkpoint_id = 4;
    sts[1].writer = 1;
    ck_assert_int_eq(pc_sink_state_merge(sts, 2, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "given twice") != NULL, "%s", err);
}
END_TEST

START_TEST(test_every_flipped_bit_is_refused) {
    size_t len;
    uint8_t *b = encoded(&len);
    for (size_t i = 0; i < len * 8; i++) {
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
        ck_assert_int_ne(decode(b, len, NULL, 0), PULSARC_OK);
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    free(b);
}
END_TEST

START_TEST(test_every_truncation_is_refused) {
    size_t len;
    uint8_t *b = encoded(&len);
    for (size_t n = 0; n < len; n++)
        ck_assert_int_ne(decode(b, n, NULL, 0), PULSARC_OK);
    free(b);
}
END_TEST

START_TEST(test_reasons) {
    size_t len;
    uint8_t *b = encoded(&len);
    char err[160];
    b[30] ^= 1;
    ck_assert_int_eq(decode(b, len, err, sizeof err), PULSARC_ERR_CHECKSUM);
    ck_assert_ptr_nonnull(strstr(err, "CRC32C mismatch"));
    b[30] ^= 1;
    b[0] = 'X';
    fix_crc(b, len);
    ck_assert_int_eq(decode(b, len, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "magic"));
    b[0] = 'P';
    b[4] = 3; /* a version from the future */
    fix_crc(b, len);
    ck_assert_int_eq(decode(b, len, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "version"));
    b[4] = 2;
    b[20 + 24] = 9; /* unknown fate, CRC right */
    fix_crc(b, len);
    ck_assert_int_eq(decode(b, len, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "fate"));
    b[20 + 24] = PC_SINK_TXN_COMMIT;
    b[16] = 200; /* count disagrees with the length */
    fix_crc(b, len);
    ck_assert_int_eq(decode(b, len, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "length"));
    free(b);
}
END_TEST

START_TEST(test_huge_count_is_refused_before_allocating) {
    uint8_t b[24] = {'P', 'S', 'S', 'K', 1, 0, 0, 0};
    b[16] = b[17] = b[18] = b[19] = 0xff;
    fix_crc(b, sizeof b);
    char err[128];
    ck_assert_int_eq(decode(b, sizeof b, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "too many"));
}
END_TEST

static pulsarc_err_t ser(void *o, const void *e, pulsarc_msg_t *m) {
    (void)o;
    return pulsarc_msg_set_payload(m, e, strlen(e), PULSARC_MSG_F_COPY);
}

START_TEST(test_build_refuses_corrupt_blob_before_connecting) {
    size_t len;
    uint8_t *b = encoded(&len);
    b[len - 1] ^= 0x80;
    pulsarc_sink_builder_t *sb = pulsarc_sink_builder_new();
    const char *topics[] = {"t"};
    pulsarc_sink_builder_set_topics(sb, topics, 1);
    pulsarc_sink_builder_set_serializer(sb, ser, NULL);
    pulsarc_sink_builder_set_service_url(sb, "pulsar://127.0.0.1:1"); /* never dialled */
    pulsarc_sink_t *sink = NULL;
    char err[256];
    ck_assert_int_eq(pulsarc_sink_builder_build(sb, b, len, &sink, err, sizeof err),
                     PULSARC_ERR_CHECKSUM);
    ck_assert_ptr_null(sink);
    ck_assert_ptr_nonnull(strstr(err, "sink checkpoint rejected"));
    pulsarc_sink_builder_destroy(sb);
    free(b);
}
END_TEST

static Suite *sink_checkpoint_suite(void) {
    Suite *s = suite_create("sink_checkpoint");
    TCase *tc = tcase_create("blob");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_exact_layout_little_endian);
    tcase_add_test(tc, test_empty_state);
    tcase_add_test(tc, test_version_1_is_writer_0_of_1);
    tcase_add_test(tc, test_writer_checked_and_merged);
    tcase_add_test(tc, test_every_flipped_bit_is_refused);
    tcase_add_test(tc, test_every_truncation_is_refused);
    tcase_add_test(tc, test_reasons);
    tcase_add_test(tc, test_huge_count_is_refused_before_allocating);
    tcase_add_test(tc, test_build_refuses_corrupt_blob_before_connecting);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(sink_checkpoint_suite)
