/*
 * The source's checkpoint blob from bytes (round trip, fixed layout,
 * corruption, truncation, versions) and the stop/resume rules it carries
 * (cursor order with whole-entry ids, stop verdicts).
 */
#include <stdlib.h>
#include <string.h>

#include "connector/assign.h"
#include "connector/checkpoint.h"
#include "connector/cursor.h"
#include "core/crc32c.h"
#include "core/hash.h"
#include "testutil.h"

static pulsarc_msgid_t mid(int64_t l, int64_t e, int32_t bi, int32_t bs) {
    pulsarc_msgid_t id = {l, e, -1, bi, bs};
    return id;
}

static pc_ckpt_t sample(void) {
    static pc_ckpt_split_t s[2];
    s[0].topic = "persistent://public/default/t";
    s[0].partition = 3;
    s[0].has_last = 1;
    s[0].last = mid(12, 7, 2, 20);
    s[0].last.partition = 3;
    s[0].stop = pulsarc_stop_cursor_after_id(mid(12, 40, -1, 0));
    s[0].stop.id.partition = 3;
    s[1].topic = "persistent://public/default/u";
    s[1].partition = -1;
    s[1].finished = 1;
    s[1].last = pulsarc_msgid_earliest();
    s[1].stop = pulsarc_stop_cursor_at_publish_time(1700000000123ull);
    s[1].has_floor = 1;
    s[1].floor_inclusive = 1;
    s[1].floor = mid(8, 1, 4, 10);
    static pc_ckpt_txn_t t[2] = {{7, 41, 1}, {7, 42, 0}};
    pc_ckpt_t ck = {2, s, 2, t, 0, 1, 0};
    return ck;
}

START_TEST(test_round_trip) {
    pc_ckpt_t ck = sample(), back;
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(pc_ckpt_encode(&ck, &buf, &len), PULSARC_OK);
    char err[256];
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, err, sizeof err), PULSARC_OK);
    ck_assert_uint_eq(back.n, 2);
    ck_assert_str_eq(back.splits[0].topic, "persistent://public/default/t");
    ck_assert_int_eq(back.splits[0].partition, 3);
    ck_assert_int_eq(back.splits[0].has_last, 1);
    ck_assert_int_eq(back.splits[0].finished, 0);
    ck_assert_int_eq(back.splits[0].last.entry_id, 7);
    ck_assert_int_eq(back.splits[0].last.batch_index, 2);
    ck_assert_int_eq(back.splits[0].last.batch_size, 20);
    ck_assert_int_eq(back.splits[0].stop.kind, PULSARC_STOP_AFTER_ID);
    ck_assert_int_eq(back.splits[0].stop.id.entry_id, 40);
    ck_assert_int_eq(back.splits[1].partition, -1);
    ck_assert_int_eq(back.splits[1].finished, 1);
    ck_assert_int_eq(back.splits[1].has_last, 0);
    ck_assert_int_eq(back.splits[1].stop.kind, PULSARC_STOP_AT_PUBLISH_TIME);
    ck_assert(back.splits[1].stop.time_ms == 1700000000123ull);
    ck_assert_int_eq(back.splits[0].has_floor, 0);
    ck_assert(back.splits[1].has_floor && back.splits[1].floor_inclusive);
    ck_assert_int_eq(back.splits[1].floor.batch_index, 4);
    ck_assert_uint_eq(back.ntxns, 2);
    ck_assert(back.txns[0].most == 7 && back.txns[0].least == 41 && back.txns[0].commit == 1);
    ck_assert(back.txns[1].most == 7 && back.txns[1].least == 42 && back.txns[1].commit == 0);
    pc_ckpt_free(&back);
    free(buf);
}
END_TEST

/* The layout is fixed and little-endian: decode a blob written by hand
 * (version 1, before transactions: still read, with none). */
START_TEST(test_decode_hand_written_bytes) {
    uint8_t b[160];
    size_t n = 0;
    memcpy(b, "PCSC\x01\x00\x00\x00\x01\x00\x00\x00", 12);
    n = 12;
    memcpy(b + n, "\x01\x00t", 3); /* topic "t" */
    n += 3;
    memcpy(b + n, "\xff\xff\xff\xff", 4); /* partition -1 */
    n += 4;
    b[n++] = 1; /* has last */
    uint8_t last[24] = {5, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0,
                        0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    memcpy(b + n, last, 24);
    n += 24;
    memset(b + n, 0, 24); /* no floor */
    n += 24;
    b[n++] = 0; /* stop never */
    memset(b + n, 0, 32);
    n += 32;
    uint32_t crc = pc_crc32c_sw(0, b, n);
    for (int i = 0; i < 4; i++)
        b[n++] = (uint8_t)(crc >> (8 * i));
    pc_ckpt_t ck;
    char err[256] = "";
    ck_assert_msg(pc_ckpt_decode(b, n, &ck, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_str_eq(ck.splits[0].topic, "t");
    ck_assert_int_eq(ck.splits[0].last.ledger_id, 5);
    ck_assert_int_eq(ck.splits[0].last.entry_id, 9);
    ck_assert_int_eq(ck.splits[0].last.batch_index, -1);
    ck_assert_uint_eq(ck.ntxns, 0);
    pc_ckpt_free(&ck);
}
END_TEST

/* Version 2's tail by hand: a transaction whose fate is neither 0 nor 1 is refused. */
START_TEST(test_txn_fate_checked) {
    uint8_t b[64];
    memcpy(b, "PCSC\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00", 16);
    size_t n = 16;
    for (int i = 0; i < 16; i++)
        b[n++] = (uint8_t)(i < 8 ? (i == 0 ? 3 : 0) : (i == 8 ? 9 : 0)); /* (3, 9) */
    b[n++] = 2; /* fate 2: unknown */
    uint32_t crc = pc_crc32c_sw(0, b, n);
    for (int i = 0; i < 4; i++)
        b[n++] = (uint8_t)(crc >> (8 * i));
    pc_ckpt_t ck;
    char err[256] = "";
    ck_assert_int_eq(pc_ckpt_decode(b, n, &ck, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "unknown fate 2"));
    b[n - 5] = 1; /* commit */
    crc = pc_crc32c_sw(0, b, n - 4);
    for (int i = 0; i < 4; i++)
        b[n - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    ck_assert_msg(pc_ckpt_decode(b, n, &ck, err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert(ck.ntxns == 1 && ck.txns[0].most == 3 && ck.txns[0].least == 9 && ck.txns[0].commit);
    pc_ckpt_free(&ck);
}
END_TEST

START_TEST(test_corrupt_blob_rejected) {
    pc_ckpt_t ck = sample(), back;
    uint8_t *buf;
    size_t len;
    char err[256];
    ck_assert_int_eq(pc_ckpt_encode(&ck, &buf, &len), PULSARC_OK);
    for (size_t i = 4; i < len; i += 7) { /* every 7th byte after the magic */
        buf[i] ^= 0x40;
        pulsarc_err_t e = pc_ckpt_decode(buf, len, &back, err, sizeof err);
        ck_assert_msg(e == PULSARC_ERR_CHECKSUM || e == PULSARC_ERR_MALFORMED, "byte %zu", i);
        buf[i] ^= 0x40;
    }
    buf[20] ^= 1;
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, err, sizeof err), PULSARC_ERR_CHECKSUM);
    ck_assert_ptr_nonnull(strstr(err, "CRC32C mismatch"));
    free(buf);
}
END_TEST

START_TEST(test_truncated_magic_and_version) {
    pc_ckpt_t ck = sample(), back;
    uint8_t *buf;
    size_t len;
    char err[256];
    ck_assert_int_eq(pc_ckpt_encode(&ck, &buf, &len), PULSARC_OK);
    for (size_t cut = 0; cut < len; cut++)
        ck_assert_int_ne(pc_ckpt_decode(buf, cut, &back, err, sizeof err), PULSARC_OK);
    buf[4] = 4; /* a future version */
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "version 4"));
    buf[0] = 'X';
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(err, "magic"));
    ck_assert_int_eq(pc_ckpt_decode(NULL, 0, &back, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    free(buf);
}
END_TEST

START_TEST(test_empty_checkpoint) {
    pc_ckpt_t ck = {0, NULL, 0, NULL, 0, 1, 0}, back;
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(pc_ckpt_encode(&ck, &buf, &len), PULSARC_OK);
    ck_assert_uint_eq(len, 29); /* header, no splits, no transactions, the reader, CRC */
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, NULL, 0), PULSARC_OK);
    ck_assert_uint_eq(back.n, 0);
    pc_ckpt_free(&back);
    free(buf);
}
END_TEST

START_TEST(test_cursor_order_whole_entry) {
    pulsarc_msgid_t a = mid(3, 4, 2, 10), whole = mid(3, 4, -1, 0), b = mid(3, 5, 0, 10);
    ck_assert_int_eq(pc_cursor_cmp(&a, &whole), 0);
    ck_assert_int_lt(pc_cursor_cmp(&a, &b), 0);
    pulsarc_msgid_t p0 = a, p7 = a;
    p0.partition = 0;
    p7.partition = 7; /* the partition never orders ids of one split */
    ck_assert_int_eq(pc_cursor_cmp(&p0, &p7), 0);
}
END_TEST

START_TEST(test_stop_verdicts) {
    pulsarc_stop_cursor_t at = pulsarc_stop_cursor_at_id(mid(3, 4, -1, 0));
    pulsarc_stop_cursor_t after = pulsarc_stop_cursor_after_id(mid(3, 4, -1, 0));
    pulsarc_msgid_t before = mid(3, 3, -1, 0), in0 = mid(3, 4, 0, 3), in2 = mid(3, 4, 2, 3);
    pulsarc_msgid_t plain = mid(3, 4, -1, 0), beyond = mid(3, 5, -1, 0);
    ck_assert_int_eq(pc_stop_decide(&at, &before, 0, 0), PC_STOP_CONTINUE);
    ck_assert_int_eq(pc_stop_decide(&at, &in0, 0, 0), PC_STOP_TERMINATE);
    ck_assert_int_eq(pc_stop_decide(&after, &in0, 0, 0), PC_STOP_CONTINUE); /* whole entry kept */
    ck_assert_int_eq(pc_stop_decide(&after, &in2, 0, 0), PC_STOP_EXACTLY);
    ck_assert_int_eq(pc_stop_decide(&after, &plain, 0, 0), PC_STOP_EXACTLY);
    ck_assert_int_eq(pc_stop_decide(&after, &beyond, 0, 0), PC_STOP_TERMINATE);
    pulsarc_stop_cursor_t t_at = pulsarc_stop_cursor_at_publish_time(100);
    pulsarc_stop_cursor_t t_after = pulsarc_stop_cursor_after_publish_time(100);
    ck_assert_int_eq(pc_stop_decide(&t_at, &plain, 99, 0), PC_STOP_CONTINUE);
    ck_assert_int_eq(pc_stop_decide(&t_at, &plain, 100, 0), PC_STOP_TERMINATE);
    ck_assert_int_eq(pc_stop_decide(&t_after, &plain, 100, 0), PC_STOP_CONTINUE); /* same ms kept */
    ck_assert_int_eq(pc_stop_decide(&t_after, &plain, 101, 0), PC_STOP_TERMINATE);
    pulsarc_stop_cursor_t never = pulsarc_stop_cursor_never();
    ck_assert_int_eq(pc_stop_decide(&never, &beyond, ~0ull, 0), PC_STOP_CONTINUE);
}
END_TEST

START_TEST(test_stop_passed_and_validation) {
    pulsarc_stop_cursor_t after = pulsarc_stop_cursor_after_id(mid(3, 4, -1, 0));
    pulsarc_msgid_t end_before = mid(3, 3, -1, 0), end_at = mid(3, 4, 9, 0);
    ck_assert_int_eq(pc_stop_passed_by(&after, &end_before), 0);
    ck_assert_int_eq(pc_stop_passed_by(&after, &end_at), 1);
    pulsarc_stop_cursor_t bad = pulsarc_stop_cursor_at_id(pulsarc_msgid_earliest());
    char err[128];
    ck_assert_int_eq(pc_stop_validate(&bad, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    bad = pulsarc_stop_cursor_after_id(pulsarc_msgid_latest());
    ck_assert_int_eq(pc_stop_validate(&bad, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_stop_validate(&after, err, sizeof err), PULSARC_OK);
}
END_TEST

/* Version 3 carries the reader: round trip, and an impossible reader rejected. */
START_TEST(test_reader_round_trip_and_checked) {
    pc_ckpt_t ck = sample(), back;
    ck.reader = 2;
    ck.readers = 4;
    ck.shared = 1;
    uint8_t *buf;
    size_t len;
    char err[256];
    ck_assert_int_eq(pc_ckpt_encode(&ck, &buf, &len), PULSARC_OK);
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, err, sizeof err), PULSARC_OK);
    ck_assert(back.reader == 2 && back.readers == 4 && back.shared == 1);
    pc_ckpt_free(&back);
    /* reader 5 of 4, with a CRC that matches: refused by the reader check */
    buf[len - 4 - 9] = 5;
    uint32_t crc = pc_crc32c(0, buf, len - 4);
    for (int i = 0; i < 4; i++)
        buf[len - 4 + i] = (uint8_t)(crc >> (8 * i));
    ck_assert_int_eq(pc_ckpt_decode(buf, len, &back, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "reader 5 of 4") != NULL, "%s", err);
    free(buf);
    ck.reader = 4; /* the writer refuses it too */
    ck_assert_int_eq(pc_ckpt_encode(&ck, &buf, &len), PULSARC_ERR_INVALID_ARG);
}
END_TEST

static pc_ckpt_split_t part_split(const char *topic, int32_t p, int64_t entry) {
    pc_ckpt_split_t s;
    memset(&s, 0, sizeof s);
    s.topic = (char *)topic;
    s.partition = p;
    s.has_last = 1;
    s.last = mid(5, entry, -1, 0);
    s.stop = pulsarc_stop_cursor_never();
    return s;
}

START_TEST(test_merge_readers) {
    pc_ckpt_split_t a[2] = {part_split("persistent://public/default/t", 0, 10),
                            part_split("persistent://public/default/t", 2, 12)};
    pc_ckpt_split_t b[1] = {part_split("persistent://public/default/t", 1, 11)};
    pc_ckpt_txn_t ta[1] = {{1, 2, 1}}, tb[1] = {{1, 3, 0}};
    pc_ckpt_t cks[2] = {{1, b, 1, tb, 1, 2, 0}, {2, a, 1, ta, 0, 2, 0}}, out;
    char err[256];
    ck_assert_int_eq(pc_ckpt_merge(cks, 2, &out, err, sizeof err), PULSARC_OK);
    ck_assert(out.n == 3 && out.ntxns == 2 && out.reader == 0 && out.readers == 1);
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(out.splits[i].last.entry_id, 10 + out.splits[i].partition);
    pc_ckpt_free(&out);
    /* two readers claiming partition 1 */
    b[0].partition = 2;
    ck_assert_int_eq(pc_ckpt_merge(cks, 2, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "claimed by reader 1 and by reader 0") ||
                      strstr(err, "claimed by reader 0 and by reader 1"), "%s", err);
    /* Shared readers all hold the split: merged once, finished only when all finished */
    cks[0].shared = cks[1].shared = 1;
    a[1].finished = 1;
    ck_assert_int_eq(pc_ckpt_merge(cks, 2, &out, err, sizeof err), PULSARC_OK);
    ck_assert_uint_eq(out.n, 2);
    ck_assert(out.shared && out.splits[0].partition == 2 && !out.splits[0].finished);
    pc_ckpt_free(&out);
    /* mixed kinds, a missing reader, a reader given twice */
    cks[0].shared = 0;
    ck_assert_int_eq(pc_ckpt_merge(cks, 2, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(err, "different subscription types"));
    ck_assert_int_eq(pc_ckpt_merge(cks, 1, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "but 1 checkpoints were given") != NULL, "%s", err);
    cks[1].reader = 1;
    cks[1].shared = 0;
    ck_assert_int_eq(pc_ckpt_merge(cks, 2, &out, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(err, "given twice"));
}
END_TEST

/* The assignment rule: deterministic, in range, a topic's partitions spread evenly. */
START_TEST(test_assignment_rule) {
    const char *t = "persistent://public/default/orders";
    for (uint32_t n = 1; n <= 7; n++) {
        int per[7] = {0};
        for (int32_t p = 0; p < 14 * (int32_t)n; p++) {
            uint32_t o = pc_assign_owner(t, p, n);
            ck_assert_uint_lt(o, n);
            ck_assert_uint_eq(o, pc_assign_owner(t, p, n));
            per[o]++;
        }
        for (uint32_t i = 0; i < n; i++)
            ck_assert_int_eq(per[i], 14);
    }
    ck_assert_uint_eq(pc_assign_owner(t, -1, 4), pc_assign_owner(t, 0, 4));
    ck_assert_uint_eq(pc_assign_owner(t, 3, 1), 0);
    /* fixed value: murmur3_32("...orders") mod 4 is the starting reader */
    ck_assert_uint_eq(pc_assign_owner(t, 1, 4),
                      (pc_murmur3_32(t, strlen(t), 0) % 4 + 1) % 4);
}
END_TEST

static Suite *checkpoint_suite(void) {
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("blob");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_reader_round_trip_and_checked);
    tcase_add_test(tc, test_merge_readers);
    tcase_add_test(tc, test_assignment_rule);
    tcase_add_test(tc, test_decode_hand_written_bytes);
    tcase_add_test(tc, test_txn_fate_checked);
    tcase_add_test(tc, test_corrupt_blob_rejected);
    tcase_add_test(tc, test_truncated_magic_and_version);
    tcase_add_test(tc, test_empty_checkpoint);
    tcase_add_test(tc, test_cursor_order_whole_entry);
    tcase_add_test(tc, test_stop_verdicts);
    tcase_add_test(tc, test_stop_passed_and_validation);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(checkpoint_suite)
