/*
 * The consumer's entry decode (client/consumer/rx_decode.c) on batches
 * built with protobuf-c: plain records (the per-message fast path), records
 * with keys, properties and flags (the general path) mixed with plain ones,
 * ack_set and start-position filtering, compacted records, truncated or
 * lying batches, recycled slots, the entry's shared fields (outliving the
 * consumer's pool), and an unbatched entry. Every message is read through the public getters and
 * destroyed, so ASan and valgrind see the entry's references balance.
 */
#include <stdio.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "client/consumer/rx_decode.h"
#include "core/buf.h"
#include "testutil.h"

#define LEDGER 77
#define ENTRY 9
/* Stand-ins for the consumer and its resend epoch: compared, never followed. */
static char owner_tag;
#define OWNER ((struct pulsarc_consumer_s *)(void *)&owner_tag)
#define EPOCH 7u

/* One record of a batch: what SingleMessageMetadata says, and the payload. */
typedef struct rec {
    const char *payload;
    int64_t seq;         /* < 0: no sequence_id */
    const char *key;     /* NULL: none */
    const char *prop;    /* one property prop=prop-value, or NULL */
    uint64_t event_time; /* 0: none */
    int compacted;
} rec_t;

static void append_record(pc_buf_t *b, const rec_t *r) {
    Pulsar__Proto__SingleMessageMetadata sm = PULSAR__PROTO__SINGLE_MESSAGE_METADATA__INIT;
    Pulsar__Proto__KeyValue kv = PULSAR__PROTO__KEY_VALUE__INIT;
    Pulsar__Proto__KeyValue *kvs[1] = {&kv};
    char value[64];
    sm.payload_size = (int32_t)strlen(r->payload);
    if (r->seq >= 0)
        sm.has_sequence_id = 1, sm.sequence_id = (uint64_t)r->seq;
    if (r->key)
        sm.partition_key = (char *)r->key;
    if (r->prop) {
        snprintf(value, sizeof value, "%s-value", r->prop);
        kv.key = (char *)r->prop;
        kv.value = value;
        sm.n_properties = 1;
        sm.properties = kvs;
    }
    if (r->event_time)
        sm.has_event_time = 1, sm.event_time = r->event_time;
    if (r->compacted)
        sm.has_compacted_out = 1, sm.compacted_out = 1;
    size_t n = pulsar__proto__single_message_metadata__get_packed_size(&sm);
    uint8_t hdr[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    ck_assert_int_eq(pc_buf_append(b, hdr, 4), PULSARC_OK);
    ck_assert_int_eq(pc_buf_reserve(b, n), PULSARC_OK);
    b->len += pulsar__proto__single_message_metadata__pack(&sm, b->data + b->len);
    ck_assert_int_eq(pc_buf_append(b, r->payload, strlen(r->payload)), PULSARC_OK);
}

static pc_rxpool_t *pool(void) {
    static pc_rxpool_t *p;
    if (!p)
        p = pc_rxpool_new("persistent://public/default/rx", (size_t)1 << 20, 100);
    return p;
}

/* What the entry's metadata and command say beyond the defaults. */
typedef struct entry_extra {
    const char *schema_version; /* NULL: none */
    uint32_t redelivery_count;  /* 0: not sent */
} entry_extra_t;

/*
 * Decodes into p a batch entry claiming `claimed` messages over payload,
 * with ack_set words (n_ack of them), an optional start position and x.
 */
static void decode_in(pc_rxpool_t *p, const pc_buf_t *payload, int claimed, const int64_t *ack,
                      size_t n_ack, const pulsarc_msgid_t *skip_upto, const entry_extra_t *x,
                      pc_rx_result_t *r) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    if (x->schema_version) {
        md.has_schema_version = 1;
        md.schema_version.data = (uint8_t *)x->schema_version;
        md.schema_version.len = strlen(x->schema_version);
    }
    md.producer_name = "p";
    md.sequence_id = 100;
    md.publish_time = 1700000000000ull;
    md.has_num_messages_in_batch = 1;
    md.num_messages_in_batch = claimed;
    uint8_t meta[256];
    size_t meta_len = pulsar__proto__message_metadata__pack(&md, meta);
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    mid.ledgerid = LEDGER;
    mid.entryid = ENTRY;
    Pulsar__Proto__CommandMessage cm = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    cm.message_id = &mid;
    cm.n_ack_set = n_ack;
    cm.ack_set = (int64_t *)ack;
    cm.has_redelivery_count = x->redelivery_count != 0;
    cm.redelivery_count = x->redelivery_count;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    cmd.message = &cm;
    pc_frame_t f = {.cmd = &cmd, .has_payload = 1, .checksum_ok = 1, .meta = meta,
                    .meta_len = meta_len, .payload = payload->data, .payload_len = payload->len};
    pc_rx_opts_t o = {.partition = 3, .skip_upto = skip_upto, .owner = OWNER, .epoch = EPOCH};
    pc_rx_decode(p, &f, &o, r);
}

static void decode(const pc_buf_t *payload, int claimed, const int64_t *ack, size_t n_ack,
                   const pulsarc_msgid_t *skip_upto, pc_rx_result_t *r) {
    const entry_extra_t none = {NULL, 0};
    decode_in(pool(), payload, claimed, ack, n_ack, skip_upto, &none, r);
}

/*
 * A batch frame as the reader holds it: head bytes standing for the
 * command, the metadata, the batch payload, then `after` (the start of the
 * next frame). f is offered for adoption, its bytes pointing into *rbuf.
 */
static void frame_in_buffer(pc_buf_t *rbuf, const pc_buf_t *payload, int claimed, const char *after,
                            pc_frame_t *f, pc_cmd_t *cmd, Pulsar__Proto__CommandMessage *cm,
                            Pulsar__Proto__MessageIdData *mid) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = "p";
    md.sequence_id = 100;
    md.publish_time = 1700000000000ull;
    md.has_num_messages_in_batch = 1;
    md.num_messages_in_batch = claimed;
    uint8_t meta[256];
    size_t meta_len = pulsar__proto__message_metadata__pack(&md, meta);
    static const char head[] = "command-bytes...";
    ck_assert_int_eq(pc_buf_append(rbuf, head, sizeof head - 1), PULSARC_OK);
    ck_assert_int_eq(pc_buf_append(rbuf, meta, meta_len), PULSARC_OK);
    ck_assert_int_eq(pc_buf_append(rbuf, payload->data, payload->len), PULSARC_OK);
    size_t frame_len = rbuf->len;
    ck_assert_int_eq(pc_buf_append(rbuf, after, strlen(after)), PULSARC_OK);
    *mid = (Pulsar__Proto__MessageIdData)PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    mid->ledgerid = LEDGER;
    mid->entryid = ENTRY;
    *cm = (Pulsar__Proto__CommandMessage)PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    cm->message_id = mid;
    *cmd = (pc_cmd_t)PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd->type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    cmd->message = cm;
    const uint8_t *m = rbuf->data + sizeof head - 1;
    *f = (pc_frame_t){.cmd = cmd, .has_payload = 1, .checksum_ok = 1, .meta = m, .meta_len = meta_len,
                      .payload = m + meta_len, .payload_len = payload->len, .source = rbuf,
                      .frame_len = frame_len};
}

static pc_buf_t batch(const rec_t *recs, int n) {
    pc_buf_t b;
    pc_buf_init(&b, (size_t)1 << 20);
    for (int i = 0; i < n; i++)
        append_record(&b, &recs[i]);
    return b;
}

/* The message of r at position pos in its list. */
static pulsarc_msg_t *nth(const pc_rx_result_t *r, size_t pos) {
    pulsarc_msg_t *m = r->first;
    while (m && pos--)
        m = m->next;
    ck_assert_ptr_nonnull(m);
    return m;
}

/* Message pos of r is record idx of recs, with the entry's shared fields. */
static void expect_msg(const pc_rx_result_t *r, size_t pos, const rec_t *recs, int idx, int n) {
    const pulsarc_msg_t *m = nth(r, pos);
    const rec_t *want = &recs[idx];
    pulsarc_msgid_t id = pulsarc_msg_id(m);
    ck_assert_int_eq(id.ledger_id, LEDGER);
    ck_assert_int_eq(id.entry_id, ENTRY);
    ck_assert_int_eq(id.partition, 3);
    ck_assert_int_eq(id.batch_index, idx);
    ck_assert_int_eq(id.batch_size, n);
    ck_assert_uint_eq(pulsarc_msg_len(m), strlen(want->payload));
    ck_assert(memcmp(pulsarc_msg_payload(m), want->payload, strlen(want->payload)) == 0);
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), want->seq >= 0 ? want->seq : 100);
    ck_assert_uint_eq(pulsarc_msg_event_time(m), want->event_time);
    ck_assert_uint_eq(pulsarc_msg_publish_time(m), 1700000000000ull);
    ck_assert_str_eq(pulsarc_msg_producer_name(m), "p");
    ck_assert_str_eq(pulsarc_msg_topic(m), "persistent://public/default/rx");
    if (want->key)
        ck_assert_str_eq(pulsarc_msg_key(m), want->key);
    else
        ck_assert_ptr_null(pulsarc_msg_key(m));
    ck_assert_uint_eq(pulsarc_msg_property_count(m), (want->prop ? 1u : 0u));
    if (want->prop) {
        char value[64];
        snprintf(value, sizeof value, "%s-value", want->prop);
        ck_assert_str_eq(pulsarc_msg_property(m, want->prop), value);
    }
}

/*
 * Every message made carries the owner and epoch the options named, and
 * the result's byte count is the sum of its payloads: the consumer takes
 * both from here instead of walking the messages again.
 */
static void check_stamps(const pc_rx_result_t *r) {
    size_t bytes = 0, n = 0;
    for (const pulsarc_msg_t *m = r->first; m; m = m->next, n++) {
        ck_assert_ptr_eq(m->rx_owner, OWNER);
        ck_assert_uint_eq(m->rx_epoch, EPOCH);
        bytes += m->len;
    }
    ck_assert_uint_eq(n, r->n);
    ck_assert_uint_eq(bytes, r->bytes);
}

static void finish(pc_rx_result_t *r, pc_buf_t *b) {
    check_stamps(r);
    pc_rx_result_discard(r);
    pc_buf_free(b);
}

START_TEST(test_plain_batch) {
    /* sequence ids of one to six varint bytes, and none */
    rec_t recs[] = {{"a", 1, 0, 0, 0, 0},          {"bb", 200, 0, 0, 0, 0},
                    {"", 3, 0, 0, 0, 0},           {"dddd", 300000, 0, 0, 0, 0},
                    {"e", -1, 0, 0, 0, 0},         {"f", 100000000, 0, 0, 0, 0},
                    {"g", 1099511627776, 0, 0, 0, 0}};
    int n = 7;
    pc_buf_t b = batch(recs, n);
    pc_rx_result_t r;
    decode(&b, n, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 7);
    ck_assert_uint_eq(r.permits, 7);
    for (int i = 0; i < n; i++)
        expect_msg(&r, (size_t)i, recs, i, n);
    ck_assert_ptr_eq(r.last, nth(&r, 6));
    ck_assert_ptr_null(r.last->next);
    finish(&r, &b);
}
END_TEST

START_TEST(test_mixed_records) {
    rec_t recs[] = {{"plain", 1, 0, 0, 0, 0},     {"keyed", 2, "k1", 0, 0, 0},
                    {"plain2", 3, 0, 0, 0, 0},    {"props", 4, 0, "color", 0, 0},
                    {"timed", 5, 0, 0, 12345, 0}, {"both", 6, "k2", "size", 99, 0},
                    {"last", 7, 0, 0, 0, 0}};
    int n = 7;
    pc_buf_t b = batch(recs, n);
    pc_rx_result_t r;
    decode(&b, n, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 7);
    for (int i = 0; i < n; i++)
        expect_msg(&r, (size_t)i, recs, i, n);
    finish(&r, &b);
}
END_TEST

START_TEST(test_filters) {
    rec_t recs[] = {{"m0", 0, 0, 0, 0, 0}, {"m1", 1, 0, 0, 0, 0}, {"m2", 2, "k", 0, 0, 0},
                    {"m3", 3, 0, 0, 0, 1}, {"m4", 4, 0, 0, 0, 0}, {"m5", 5, 0, "p", 0, 0}};
    int n = 6;
    pc_buf_t b = batch(recs, n);
    pc_rx_result_t r;
    /* compacted record 3 only */
    decode(&b, n, NULL, 0, NULL, &r);
    ck_assert_uint_eq(r.n, 5);
    expect_msg(&r, 2, recs, 2, n);
    expect_msg(&r, 3, recs, 4, n);
    check_stamps(&r);
    pc_rx_result_discard(&r);
    /* ack_set: a cleared bit is acked; 1 (plain) and 2 (keyed) are */
    int64_t ack[1] = {(int64_t)~(UINT64_C(1) << 1 | UINT64_C(1) << 2)};
    decode(&b, n, ack, 1, NULL, &r);
    ck_assert_uint_eq(r.n, 3);
    expect_msg(&r, 0, recs, 0, n);
    expect_msg(&r, 1, recs, 4, n);
    expect_msg(&r, 2, recs, 5, n);
    check_stamps(&r);
    pc_rx_result_discard(&r);
    /* start position after batch index 4 */
    pulsarc_msgid_t upto = {LEDGER, ENTRY, 3, 4, n};
    decode(&b, n, NULL, 0, &upto, &r);
    ck_assert_uint_eq(r.n, 1);
    expect_msg(&r, 0, recs, 5, n);
    finish(&r, &b);
}
END_TEST

START_TEST(test_truncated_and_lying_batches) {
    rec_t recs[] = {{"one", 1, 0, 0, 0, 0}, {"two", 2, "k", 0, 0, 0}, {"three", 3, 0, 0, 0, 0}};
    pc_buf_t b = batch(recs, 3);
    pc_rx_result_t r;
    /* more messages claimed than there are records */
    decode(&b, 4, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.validation_error,
                     PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__BatchDeSerializeError);
    ck_assert_ptr_null(r.first);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_msg(strstr(r.error, "record 3 of 4") != NULL, "%s", r.error);
    /* every cut of the last record's payload, size or metadata fails alone */
    for (size_t cut = 1; cut < 12; cut++) {
        pc_buf_t t;
        pc_buf_init(&t, (size_t)1 << 20);
        ck_assert_int_eq(pc_buf_append(&t, b.data, b.len - cut), PULSARC_OK);
        decode(&t, 3, NULL, 0, NULL, &r);
        ck_assert_int_eq(r.validation_error,
                         PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__BatchDeSerializeError);
        ck_assert_ptr_null(r.first);
        pc_buf_free(&t);
    }
    /* a plain record whose payload_size runs past the entry */
    pc_buf_t big;
    pc_buf_init(&big, (size_t)1 << 20);
    const uint8_t lie[] = {0, 0, 0, 4, 0x18, 0xe8, 0x07, 0x40, 1, 'x'}; /* size 1000, seq 1 */
    ck_assert_int_eq(pc_buf_append(&big, lie, sizeof lie - 1), PULSARC_OK);
    ck_assert_int_eq(pc_buf_append(&big, lie + 9, 1), PULSARC_OK);
    decode(&big, 1, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.validation_error,
                     PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__BatchDeSerializeError);
    /* a sequence id whose varint runs on past its record into the payload */
    const uint8_t overrun[] = {0, 0, 0, 4, 0x18, 0x01, 0x40, 0x85, 0x01, 0x01, 0x01, 0x01};
    big.len = 0;
    ck_assert_int_eq(pc_buf_append(&big, overrun, sizeof overrun), PULSARC_OK);
    decode(&big, 1, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.validation_error,
                     PULSAR__PROTO__COMMAND_ACK__VALIDATION_ERROR__BatchDeSerializeError);
    pc_buf_free(&big);
    /* fewer claimed than present: the first ones only */
    decode(&b, 2, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 2);
    expect_msg(&r, 1, recs, 1, 2);
    finish(&r, &b);
}
END_TEST

/*
 * A view's slot is reused when its entry is: a plain record decoded into
 * a slot that held a key and properties has none, nor any other field a
 * record may set.
 */
START_TEST(test_recycled_slots_start_clean) {
    rec_t rich[] = {{"keyed", 2, "k1", "color", 7, 0}, {"props", 4, "k2", "size", 99, 0},
                    {"more", 5, "k3", "shape", 1, 0}};
    pc_buf_t b = batch(rich, 3);
    pc_rx_result_t r;
    decode(&b, 3, NULL, 0, NULL, &r);
    ck_assert_uint_eq(r.n, 3);
    uintptr_t first_slot = (uintptr_t)r.first;
    finish(&r, &b);
    rec_t plain[] = {{"a", 1, 0, 0, 0, 0}, {"b", -1, 0, 0, 0, 0}, {"c", 3, 0, 0, 0, 0}};
    b = batch(plain, 3);
    decode(&b, 3, NULL, 0, NULL, &r);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_msg((uintptr_t)r.first == first_slot, "the entry was not recycled: nothing reused");
    for (int i = 0; i < 3; i++) {
        const pulsarc_msg_t *m = nth(&r, (size_t)i);
        expect_msg(&r, (size_t)i, plain, i, 3);
        size_t len = 1;
        ck_assert_ptr_null(pulsarc_msg_key_bytes(m, &len));
        ck_assert_uint_eq(len, 0);
        len = 1;
        ck_assert_ptr_null(pulsarc_msg_ordering_key(m, &len));
        ck_assert_uint_eq(len, 0);
        ck_assert_ptr_null(pulsarc_msg_property(m, "color"));
        ck_assert_int_eq(pulsarc_msg_is_null_value(m), 0);
        ck_assert_int_eq(pulsarc_msg_is_encrypted(m), 0);
        ck_assert_uint_eq(pulsarc_msg_deliver_at(m), 0);
        ck_assert_uint_eq(pulsarc_msg_redelivery_count(m), 0);
        ck_assert_ptr_null(pulsarc_msg_schema_version(m, &len));
        ck_assert_uint_eq(len, 0);
    }
    finish(&r, &b);
}
END_TEST

/*
 * What a batch's messages share is read from their entry: it is there for
 * each of them, stays readable after the consumer let go of its pool (the
 * messages keep the pool), and a clone carries its own copy past them.
 */
START_TEST(test_shared_fields_outlive_consumer) {
    pc_rxpool_t *p = pc_rxpool_new("persistent://public/default/kept", (size_t)1 << 20, 10);
    ck_assert_ptr_nonnull(p);
    rec_t recs[] = {{"one", 1, 0, 0, 0, 0}, {"two", 2, "k", 0, 0, 0}, {"three", 3, 0, 0, 0, 0}};
    pc_buf_t b = batch(recs, 3);
    pc_rx_result_t r;
    const entry_extra_t x = {"\x01schema-v7", 4};
    decode_in(p, &b, 3, NULL, 0, NULL, &x, &r);
    pc_buf_free(&b);
    pc_rxpool_release(p); /* the consumer closed */
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 3);
    for (int i = 0; i < 3; i++) {
        const pulsarc_msg_t *m = nth(&r, (size_t)i);
        ck_assert_str_eq(pulsarc_msg_topic(m), "persistent://public/default/kept");
        ck_assert_str_eq(pulsarc_msg_producer_name(m), "p");
        ck_assert_uint_eq(pulsarc_msg_publish_time(m), 1700000000000ull);
        ck_assert_uint_eq(pulsarc_msg_redelivery_count(m), 4);
        size_t len = 0;
        const void *sv = pulsarc_msg_schema_version(m, &len);
        ck_assert_uint_eq(len, strlen(x.schema_version));
        ck_assert(memcmp(sv, x.schema_version, len) == 0);
        ck_assert_int_eq(pulsarc_msg_sequence_id(m), recs[i].seq);
    }
    pulsarc_msg_t *copy = pulsarc_msg_clone(nth(&r, 1));
    ck_assert_ptr_nonnull(copy);
    pc_rx_result_discard(&r); /* the last views: entry and pool go */
    ck_assert_str_eq(pulsarc_msg_topic(copy), "persistent://public/default/kept");
    ck_assert_str_eq(pulsarc_msg_producer_name(copy), "p");
    ck_assert_uint_eq(pulsarc_msg_publish_time(copy), 1700000000000ull);
    ck_assert_uint_eq(pulsarc_msg_redelivery_count(copy), 4);
    ck_assert_str_eq(pulsarc_msg_key(copy), "k");
    ck_assert_int_eq(pulsarc_msg_id(copy).batch_index, 1);
    ck_assert(memcmp(pulsarc_msg_payload(copy), "two", 3) == 0);
    pulsarc_msg_destroy(copy);
}
END_TEST

/*
 * A batch of no messages (or a negative count) into a fresh entry, which
 * has no slots reserved yet: an empty result, nothing read or offset.
 */
START_TEST(test_empty_batch_fresh_entry) {
    const int claims[] = {0, -1};
    for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++) {
        pc_rxpool_t *p = pc_rxpool_new("persistent://public/default/empty", (size_t)1 << 20, 10);
        ck_assert_ptr_nonnull(p);
        pc_buf_t b;
        pc_buf_init(&b, 64);
        ck_assert_int_eq(pc_buf_append(&b, "\0\0\0\0", 4), PULSARC_OK);
        pc_rx_result_t r;
        const entry_extra_t none = {NULL, 0};
        decode_in(p, &b, claims[i], NULL, 0, NULL, &none, &r);
        ck_assert_int_eq(r.validation_error, -1);
        ck_assert_uint_eq(r.n, 0);
        ck_assert_ptr_null(r.first);
        ck_assert_uint_eq(r.permits, 1);
        pc_rx_result_discard(&r);
        pc_buf_free(&b);
        pc_rxpool_release(p);
    }
}
END_TEST

/* An unbatched entry: the message is built in its slot from MessageMetadata. */
START_TEST(test_single_entry) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    Pulsar__Proto__KeyValue kv = PULSAR__PROTO__KEY_VALUE__INIT;
    Pulsar__Proto__KeyValue *kvs[1] = {&kv};
    kv.key = "region";
    kv.value = "north";
    md.producer_name = "solo";
    md.sequence_id = 41;
    md.publish_time = 1700000000001ull;
    md.partition_key = "the-key";
    md.has_event_time = 1;
    md.event_time = 555;
    md.n_properties = 1;
    md.properties = kvs;
    uint8_t meta[256];
    size_t meta_len = pulsar__proto__message_metadata__pack(&md, meta);
    Pulsar__Proto__MessageIdData mid = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    mid.ledgerid = LEDGER;
    mid.entryid = ENTRY;
    Pulsar__Proto__CommandMessage cm = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    cm.message_id = &mid;
    cm.has_redelivery_count = 1;
    cm.redelivery_count = 2;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    cmd.message = &cm;
    pc_frame_t f = {.cmd = &cmd, .has_payload = 1, .checksum_ok = 1, .meta = meta,
                    .meta_len = meta_len, .payload = (const uint8_t *)"hello", .payload_len = 5};
    pc_rx_opts_t o = {.partition = -1, .skip_upto = NULL};
    pc_rx_result_t r;
    pc_rx_decode(pool(), &f, &o, &r);
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(r.permits, 1);
    const pulsarc_msg_t *m = r.first;
    ck_assert_ptr_eq(m, r.last);
    pulsarc_msgid_t id = pulsarc_msg_id(m);
    ck_assert_int_eq(id.ledger_id, LEDGER);
    ck_assert_int_eq(id.entry_id, ENTRY);
    ck_assert_int_eq(id.partition, -1);
    ck_assert_int_eq(id.batch_index, -1);
    ck_assert_uint_eq(pulsarc_msg_len(m), 5);
    ck_assert(memcmp(pulsarc_msg_payload(m), "hello", 5) == 0);
    ck_assert_str_eq(pulsarc_msg_key(m), "the-key");
    ck_assert_str_eq(pulsarc_msg_property(m, "region"), "north");
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), 41);
    ck_assert_uint_eq(pulsarc_msg_event_time(m), 555);
    ck_assert_uint_eq(pulsarc_msg_redelivery_count(m), 2);
    ck_assert_str_eq(pulsarc_msg_producer_name(m), "solo");
    pc_rx_result_discard(&r);
    /* at or before the start position: nothing, and its permit still counted */
    pulsarc_msgid_t upto = {LEDGER, ENTRY, -1, -1, 0};
    o.skip_upto = &upto;
    pc_rx_decode(pool(), &f, &o, &r);
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_ptr_null(r.first);
    ck_assert_uint_eq(r.permits, 1);
}
END_TEST

/*
 * An entry offered by the reader is taken, not copied: the messages point
 * into the very bytes read, the reader keeps what followed the frame, and
 * the messages outlive anything the reader does with its buffer next.
 */
START_TEST(test_adopted_frame) {
    rec_t recs[] = {{"first", 1, 0, 0, 0, 0}, {"second", 2, "k", "p", 0, 0}, {"third", -1, 0, 0, 7, 0}};
    int n = 3;
    pc_buf_t b = batch(recs, n);
    for (int round = 0; round < 3; round++) { /* later rounds swap in pooled entries' buffers */
        pc_buf_t rbuf;
        pc_buf_init(&rbuf, (size_t)1 << 20);
        pc_frame_t f;
        pc_cmd_t cmd;
        Pulsar__Proto__CommandMessage cm;
        Pulsar__Proto__MessageIdData mid;
        frame_in_buffer(&rbuf, &b, n, "NEXT", &f, &cmd, &cm, &mid);
        const uint8_t *read_at = rbuf.data, *payload_at = f.payload;
        pc_rx_opts_t o = {.partition = 3, .skip_upto = NULL, .owner = OWNER, .epoch = EPOCH};
        pc_rx_result_t r;
        pc_rx_decode(pool(), &f, &o, &r);
        ck_assert_int_eq(r.validation_error, -1);
        ck_assert_uint_eq(r.n, 3);
        /* the first record's payload, in place: 4 + metadata bytes in */
        const uint8_t *p = pulsarc_msg_payload(nth(&r, 0));
        ck_assert(p > payload_at && p < payload_at + b.len);
        ck_assert(rbuf.data != read_at);
        ck_assert_uint_eq(rbuf.len, 4);
        ck_assert(memcmp(rbuf.data, "NEXT", 4) == 0);
        /* the reader reuses and frees its buffer: the messages are intact */
        ck_assert_int_eq(pc_buf_reserve(&rbuf, 4096), PULSARC_OK);
        memset(rbuf.data, 0xAB, rbuf.cap);
        pc_buf_free(&rbuf);
        for (int i = 0; i < n; i++)
            expect_msg(&r, (size_t)i, recs, i, n);
        pc_rx_result_discard(&r);
    }
    pc_buf_free(&b);
}
END_TEST

/* An entry's buffer larger than the reader may hold is not swapped in: copied. */
START_TEST(test_adoption_refused_copies) {
    rec_t recs[] = {{"only", 5, 0, 0, 0, 0}};
    pc_buf_t b = batch(recs, 1);
    pc_buf_t rbuf;
    pc_buf_init(&rbuf, 80); /* below what any pooled entry's buffer holds (256 or more) */
    pc_frame_t f;
    pc_cmd_t cmd;
    Pulsar__Proto__CommandMessage cm;
    Pulsar__Proto__MessageIdData mid;
    frame_in_buffer(&rbuf, &b, 1, "", &f, &cmd, &cm, &mid);
    const uint8_t *read_at = rbuf.data;
    size_t held = rbuf.len;
    /* an entry in the pool with a buffer of its own first */
    pc_rx_result_t r;
    decode(&b, 1, NULL, 0, NULL, &r);
    pc_rx_result_discard(&r);
    pc_rx_opts_t o = {.partition = 3, .skip_upto = NULL, .owner = OWNER, .epoch = EPOCH};
    pc_rx_decode(pool(), &f, &o, &r);
    ck_assert_int_eq(r.validation_error, -1);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_ptr_eq(rbuf.data, read_at);
    ck_assert_uint_eq(rbuf.len, held);
    const uint8_t *p = pulsarc_msg_payload(r.first);
    ck_assert(p < read_at || p >= read_at + rbuf.cap);
    memset(rbuf.data, 0xAB, rbuf.len);
    pc_buf_free(&rbuf);
    expect_msg(&r, 0, recs, 0, 1);
    finish(&r, &b);
}
END_TEST

static Suite *rx_decode_suite(void) {
    Suite *s = suite_create("rx-decode");
    TCase *tc = tcase_create("batch");
    tcase_add_test(tc, test_plain_batch);
    tcase_add_test(tc, test_mixed_records);
    tcase_add_test(tc, test_filters);
    tcase_add_test(tc, test_truncated_and_lying_batches);
    tcase_add_test(tc, test_recycled_slots_start_clean);
    tcase_add_test(tc, test_shared_fields_outlive_consumer);
    tcase_add_test(tc, test_empty_batch_fresh_entry);
    tcase_add_test(tc, test_single_entry);
    tcase_add_test(tc, test_adopted_frame);
    tcase_add_test(tc, test_adoption_refused_copies);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(rx_decode_suite)
