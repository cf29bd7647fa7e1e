/*
 * Unit tests for the frame codec (lib/core/frame.c), proved against golden
 * bytes assembled here from the protocol facts (docs/PROTOCOL.md section 1):
 * big-endian sizes, the 0x0e01/0x0e02 magics, a bitwise CRC32C written in
 * this file, and protobuf bytes derived by hand. The encoder is checked
 * byte for byte; the parser on whole, split and hostile input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/frame.h"
#include "pulsarc.h"
#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_FRAME ((size_t)PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING)

#define ck_assert_contains(hay, needle)                                                    \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay),    \
                  (needle))

/* ======================================================================== */
/* reference helpers: our own CRC32C, varint and byte builder */

/* Bitwise CRC-32C: reflected poly 0x82F63B78, init and final xor ~0. */
static uint32_t ref_crc32c(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

typedef struct bytes {
    uint8_t b[1024];
    size_t n;
} bytes_t;

static void put(bytes_t *g, const void *p, size_t n) {
    ck_assert_uint_le(g->n + n, sizeof g->b);
    if (n)
        memcpy(g->b + g->n, p, n);
    g->n += n;
}

static void put_u8(bytes_t *g, uint8_t v) { put(g, &v, 1); }

static void put_u16(bytes_t *g, uint16_t v) {
    put_u8(g, (uint8_t)(v >> 8));
    put_u8(g, (uint8_t)v);
}

static void put_u32(bytes_t *g, uint32_t v) {
    put_u16(g, (uint16_t)(v >> 16));
    put_u16(g, (uint16_t)v);
}

static void put_varint(bytes_t *g, uint64_t v) {
    while (v >= 0x80) {
        put_u8(g, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_u8(g, (uint8_t)v);
}

/* Simple frame: [total = 4 + n][n][cmd]. */
static void simple_frame(bytes_t *g, const uint8_t *cmd, size_t n) {
    put_u32(g, (uint32_t)(4 + n));
    put_u32(g, (uint32_t)n);
    put(g, cmd, n);
}

/* What a payload frame holds; bem == NULL omits 0x0e02, crc 0 omits 0x0e01. */
typedef struct pf_spec {
    const uint8_t *cmd;
    size_t cmd_len;
    const uint8_t *bem;
    size_t bem_len;
    int crc;           /* 1: write 0x0e01 + checksum */
    uint32_t crc_xor;  /* corrupts the written checksum */
    const uint8_t *meta;
    size_t meta_len;
    const void *payload;
    size_t payload_len;
} pf_spec_t;

static uint32_t tail_crc(const pf_spec_t *s) {
    bytes_t t = {.n = 0};
    put_u32(&t, (uint32_t)s->meta_len);
    put(&t, s->meta, s->meta_len);
    put(&t, s->payload, s->payload_len);
    return ref_crc32c(t.b, t.n);
}

static void payload_frame(bytes_t *g, const pf_spec_t *s) {
    size_t total = 4 + s->cmd_len + (s->bem ? 6 + s->bem_len : 0) + (s->crc ? 6 : 0) + 4 +
                   s->meta_len + s->payload_len;
    put_u32(g, (uint32_t)total);
    put_u32(g, (uint32_t)s->cmd_len);
    put(g, s->cmd, s->cmd_len);
    if (s->bem) {
        put_u16(g, 0x0e02);
        put_u32(g, (uint32_t)s->bem_len);
        put(g, s->bem, s->bem_len);
    }
    if (s->crc) {
        put_u16(g, 0x0e01);
        put_u32(g, tail_crc(s) ^ s->crc_xor);
    }
    put_u32(g, (uint32_t)s->meta_len);
    put(g, s->meta, s->meta_len);
    put(g, s->payload, s->payload_len);
}

/* ======================================================================== */
/* hand-derived protobuf bytes (tag = field << 3 | wire type) */

/* BaseCommand{type=PING(18): 08 12, ping={}: field 18 len 0 = 92 01 00} */
static const uint8_t CMD_PING[] = {0x08, 0x12, 0x92, 0x01, 0x00};
/* BaseCommand{type=CONNECTED(3), connected(field 3, 12 bytes)={
 *   server_version="2.0": 0a 03 '2' '.' '0'
 *   protocol_version=20:  10 14
 *   max_message_size=5242880 (0x500000): 18 80 80 c0 02 }} */
static const uint8_t CMD_CONNECTED[] = {0x08, 0x03, 0x1a, 0x0c, 0x0a, 0x03, '2', '.',
                                        '0',  0x10, 0x14, 0x18, 0x80, 0x80, 0xc0, 0x02};
/* BaseCommand{type=SEND(6), send(field 6)={producer_id=1, sequence_id=7}} */
static const uint8_t CMD_SEND[] = {0x08, 0x06, 0x32, 0x04, 0x08, 0x01, 0x10, 0x07};
/* BaseCommand{type=MESSAGE(9), message(field 9)={consumer_id=3,
 *   message_id(field 2)={ledgerId=10, entryId=20}}} */
static const uint8_t CMD_MESSAGE[] = {0x08, 0x09, 0x4a, 0x08, 0x08, 0x03,
                                      0x12, 0x04, 0x08, 0x0a, 0x10, 0x14};
/* MessageMetadata{producer_name="p", sequence_id=7, publish_time=1000 (e8 07)} */
static const uint8_t META[] = {0x0a, 0x01, 'p', 0x10, 0x07, 0x18, 0xe8, 0x07};
static const char PAYLOAD[] = "hello";

#define BEM_TIMESTAMP 1700000000123ull
#define BEM_INDEX 41ull

/* BrokerEntryMetadata: field 1 broker_timestamp, field 2 index, varints. */
static void build_bem(bytes_t *g) {
    put_u8(g, 0x08);
    put_varint(g, BEM_TIMESTAMP);
    put_u8(g, 0x10);
    put_varint(g, BEM_INDEX);
}

static pf_spec_t message_spec(const bytes_t *bem, int crc) {
    pf_spec_t s = {.cmd = CMD_MESSAGE, .cmd_len = sizeof CMD_MESSAGE,
                   .bem = bem ? bem->b : NULL, .bem_len = bem ? bem->n : 0, .crc = crc,
                   .meta = META, .meta_len = sizeof META,
                   .payload = PAYLOAD, .payload_len = strlen(PAYLOAD)};
    return s;
}

static pf_spec_t send_spec(void) {
    pf_spec_t s = {.cmd = CMD_SEND, .cmd_len = sizeof CMD_SEND, .crc = 1,
                   .meta = META, .meta_len = sizeof META,
                   .payload = PAYLOAD, .payload_len = strlen(PAYLOAD)};
    return s;
}

/* Parses a copy of exactly n bytes, so ASan/valgrind see any over-read. */
static long parse_exact(const uint8_t *p, size_t n, size_t max, pc_frame_t *f, char *err,
                        size_t errlen) {
    uint8_t *copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(copy);
    if (n)
        memcpy(copy, p, n);
    long r = pc_frame_parse(copy, n, max, f, err, errlen);
    /* pointers into the copy must not outlive it: rebase onto p */
    if (r > 0 && f->has_payload) {
        f->meta = p + (f->meta - copy);
        f->payload = p + (f->payload - copy);
        if (f->bem)
            f->bem = p + (f->bem - copy);
    }
    free(copy);
    return r;
}

/* ======================================================================== */
/* reference self-checks */

START_TEST(test_ref_helpers) {
    ck_assert_uint_eq(ref_crc32c((const uint8_t *)"123456789", 9), 0xE3069283u);
    bytes_t g = {.n = 0};
    put_varint(&g, 300);
    ck_assert_uint_eq(g.n, 2);
    ck_assert_uint_eq(g.b[0], 0xac);
    ck_assert_uint_eq(g.b[1], 0x02);
    g.n = 0;
    put_u32(&g, 0x01020304);
    ck_assert_mem_eq(g.b, "\x01\x02\x03\x04", 4);
}
END_TEST

/* The codec finds a type's body as the BaseCommand field with the type's
 * number: every enum value must have such a message field. */
START_TEST(test_every_type_has_body_field) {
    const ProtobufCEnumDescriptor *ed = &pulsar__proto__base_command__type__descriptor;
    for (unsigned i = 0; i < ed->n_values; i++) {
        int t = ed->values[i].value;
        const ProtobufCFieldDescriptor *fd =
            protobuf_c_message_descriptor_get_field(&pulsar__proto__base_command__descriptor, (unsigned)t);
        ck_assert_msg(fd && fd->type == PROTOBUF_C_TYPE_MESSAGE, "type %s (%d) has no body field",
                      ed->values[i].name, t);
    }
    ck_assert_str_eq(pc_cmd_name(6), "SEND");
    ck_assert_str_eq(pc_cmd_name(7), "SEND_RECEIPT");
    ck_assert_str_eq(pc_cmd_name(999), "UNKNOWN");
}
END_TEST

/* ======================================================================== */
/* 1. simple command decode */

START_TEST(test_decode_ping) {
    bytes_t g = {.n = 0};
    simple_frame(&g, CMD_PING, sizeof CMD_PING);
    ck_assert_mem_eq(g.b, "\x00\x00\x00\x09\x00\x00\x00\x05", 8);
    pc_frame_t f;
    char err[256] = "";
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, err, sizeof err);
    ck_assert_int_eq(r, 13);
    ck_assert_int_eq(f.cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    ck_assert_ptr_nonnull(f.cmd->ping);
    ck_assert_int_eq(f.has_payload, 0);
    ck_assert_int_eq(f.checksum_ok, 1);
    pc_frame_clear(&f);
    ck_assert_ptr_null(f.cmd);
}
END_TEST

START_TEST(test_decode_connected) {
    bytes_t g = {.n = 0};
    simple_frame(&g, CMD_CONNECTED, sizeof CMD_CONNECTED);
    pc_frame_t f;
    char err[256] = "";
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, err, sizeof err);
    ck_assert_int_eq(r, 4 + 4 + (long)sizeof CMD_CONNECTED);
    ck_assert_int_eq(f.cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED);
    const Pulsar__Proto__CommandConnected *c = f.cmd->connected;
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(c->server_version, "2.0");
    ck_assert(c->has_protocol_version);
    ck_assert_int_eq(c->protocol_version, 20);
    ck_assert(c->has_max_message_size);
    ck_assert_int_eq(c->max_message_size, 5242880);
    ck_assert_ptr_null(c->feature_flags);
    pc_frame_clear(&f);
}
END_TEST

/* Bytes after a simple command inside its frame are ignored (spec 1.6). */
START_TEST(test_decode_simple_trailing_ignored) {
    bytes_t g = {.n = 0};
    put_u32(&g, 4 + sizeof CMD_PING + 3);
    put_u32(&g, sizeof CMD_PING);
    put(&g, CMD_PING, sizeof CMD_PING);
    put(&g, "xyz", 3);
    pc_frame_t f;
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, NULL, 0);
    ck_assert_int_eq(r, (long)g.n);
    ck_assert_int_eq(f.cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    ck_assert_int_eq(f.has_payload, 0);
    pc_frame_clear(&f);
}
END_TEST

/* ======================================================================== */
/* 2. encoder golden bytes */

static void assert_buf_eq(const pc_buf_t *b, const bytes_t *want) {
    ck_assert_uint_eq(b->len, want->n);
    ck_assert_mem_eq(b->data, want->b, want->n);
}

START_TEST(test_encode_ping_golden) {
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    cmd.ping = &ping;
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode(&b, &cmd), PULSARC_OK);
    /* 00000009 00000005 | 08 12 (type=18) 92 01 00 (ping, empty) */
    static const uint8_t want[] = {0, 0, 0, 9, 0, 0, 0, 5, 0x08, 0x12, 0x92, 0x01, 0x00};
    bytes_t w = {.n = 0};
    put(&w, want, sizeof want);
    assert_buf_eq(&b, &w);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_encode_connect_golden) {
    Pulsar__Proto__CommandConnect c = PULSAR__PROTO__COMMAND_CONNECT__INIT;
    c.client_version = "x";
    c.has_protocol_version = 1;
    c.protocol_version = 20;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT;
    cmd.connect = &c;
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode(&b, &cmd), PULSARC_OK);
    /* connect = 0a 01 'x' 20 14; BaseCommand = 08 02 12 05 <connect> */
    static const uint8_t want[] = {0, 0, 0, 13, 0, 0, 0, 9, 0x08, 0x02, 0x12,
                                   0x05, 0x0a, 0x01, 'x', 0x20, 0x14};
    bytes_t w = {.n = 0};
    put(&w, want, sizeof want);
    assert_buf_eq(&b, &w);
    pc_buf_free(&b);
}
END_TEST

/* Encoding appends: a second frame lands after the first. */
START_TEST(test_encode_appends) {
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    cmd.ping = &ping;
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode(&b, &cmd), PULSARC_OK);
    ck_assert_int_eq(pc_frame_encode(&b, &cmd), PULSARC_OK);
    bytes_t w = {.n = 0};
    simple_frame(&w, CMD_PING, sizeof CMD_PING);
    simple_frame(&w, CMD_PING, sizeof CMD_PING);
    assert_buf_eq(&b, &w);
    pc_buf_free(&b);
}
END_TEST

/* ======================================================================== */
/* 3. payload command encode */

static void send_cmd(pc_cmd_t *cmd, Pulsar__Proto__CommandSend *s) {
    pulsar__proto__command_send__init(s);
    s->producer_id = 1;
    s->sequence_id = 7;
    pulsar__proto__base_command__init(cmd);
    cmd->type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd->send = s;
}

static void assert_send_reparses(const pc_buf_t *b, const pf_spec_t *spec) {
    pc_frame_t f;
    char err[256] = "";
    long r = parse_exact(b->data, b->len, MAX_FRAME, &f, err, sizeof err);
    ck_assert_msg(r == (long)b->len, "parse returned %ld (%s)", r, err);
    ck_assert_int_eq(f.cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND);
    ck_assert_uint_eq(f.cmd->send->producer_id, 1);
    ck_assert_uint_eq(f.cmd->send->sequence_id, 7);
    ck_assert_int_eq(f.has_payload, 1);
    ck_assert_int_eq(f.has_checksum, 1);
    ck_assert_int_eq(f.checksum_ok, 1);
    ck_assert_ptr_null(f.bem);
    ck_assert_uint_eq(f.meta_len, spec->meta_len);
    ck_assert_mem_eq(f.meta, spec->meta, spec->meta_len);
    ck_assert_uint_eq(f.payload_len, spec->payload_len);
    if (spec->payload_len)
        ck_assert_mem_eq(f.payload, spec->payload, spec->payload_len);
    ck_assert_ptr_eq(f.payload + f.payload_len, b->data + b->len);
    pc_frame_clear(&f);
}

START_TEST(test_encode_send_golden) {
    Pulsar__Proto__CommandSend s;
    pc_cmd_t cmd;
    send_cmd(&cmd, &s);
    Pulsar__Proto__MessageMetadata m = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    m.producer_name = "p";
    m.sequence_id = 7;
    m.publish_time = 1000;
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode_payload(&b, &cmd, &m, PAYLOAD, strlen(PAYLOAD)), PULSARC_OK);

    pf_spec_t spec = send_spec();
    bytes_t w = {.n = 0};
    payload_frame(&w, &spec);
    /* spell the layout out: 35 = 4 + 8 + 6 + 4 + 8 + 5 */
    ck_assert_mem_eq(w.b, "\x00\x00\x00\x23\x00\x00\x00\x08", 8);
    ck_assert_mem_eq(w.b + 16, "\x0e\x01", 2);
    ck_assert_mem_eq(w.b + 22, "\x00\x00\x00\x08", 4);
    ck_assert_uint_eq(pc_rd_u32(w.b + 18), ref_crc32c(w.b + 22, w.n - 22));
    assert_buf_eq(&b, &w);
    assert_send_reparses(&b, &spec);
    pc_buf_free(&b);
}
END_TEST

/* A frame's head, followed by the payload sent from elsewhere, is the same
 * bytes as the whole frame: size and checksum count the payload already. */
START_TEST(test_encode_send_head_then_payload) {
    Pulsar__Proto__CommandSend s;
    pc_cmd_t cmd;
    send_cmd(&cmd, &s);
    Pulsar__Proto__MessageMetadata m = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    m.producer_name = "p";
    m.sequence_id = 7;
    m.publish_time = 1000;
    static const char big[] = "a payload long enough to span more than one word of the CRC loop";
    const char *payloads[] = {PAYLOAD, big, "z"};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        size_t n = strlen(payloads[i]);
        pc_buf_t whole, head;
        pc_buf_init(&whole, 0);
        pc_buf_init(&head, 0);
        ck_assert_int_eq(pc_frame_encode_payload(&whole, &cmd, &m, payloads[i], n), PULSARC_OK);
        ck_assert_int_eq(pc_frame_encode_payload_head(&head, &cmd, &m, payloads[i], n), PULSARC_OK);
        ck_assert_uint_eq(head.len + n, whole.len);
        ck_assert_int_eq(pc_buf_append(&head, payloads[i], n), PULSARC_OK);
        ck_assert_mem_eq(head.data, whole.data, whole.len);
        pc_buf_free(&whole);
        pc_buf_free(&head);
    }
}
END_TEST

/* The SEND command is written without protobuf-c's BaseCommand pack: its
 * bytes must still be exactly what protobuf-c writes, with every field of
 * CommandSend set to values that take multi-byte varints. */
START_TEST(test_encode_send_matches_protobuf_c) {
    Pulsar__Proto__CommandSend s;
    pc_cmd_t cmd;
    send_cmd(&cmd, &s);
    s.producer_id = UINT64_MAX;
    s.sequence_id = (uint64_t)1 << 40;
    s.has_num_messages = 1;
    s.num_messages = 1000;
    s.has_highest_sequence_id = 1;
    s.highest_sequence_id = ((uint64_t)1 << 40) + 999;
    s.has_txnid_most_bits = s.has_txnid_least_bits = 1;
    s.txnid_most_bits = 123456789;
    s.txnid_least_bits = UINT64_MAX - 1;
    s.has_is_chunk = s.is_chunk = 1;
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode_payload_raw(&b, &cmd, (const uint8_t *)"m", 1, "x", 1), PULSARC_OK);
    size_t n = pulsar__proto__base_command__get_packed_size(&cmd);
    uint8_t want[256];
    ck_assert_uint_lt(n, sizeof want);
    pulsar__proto__base_command__pack(&cmd, want);
    ck_assert_uint_eq(pc_rd_u32(b.data + 4), n);
    ck_assert_mem_eq(b.data + 8, want, n);
    pc_frame_t f;
    char err[256] = "";
    ck_assert_int_eq(parse_exact(b.data, b.len, MAX_FRAME, &f, err, sizeof err), (long)b.len);
    ck_assert_uint_eq(f.cmd->send->producer_id, UINT64_MAX);
    ck_assert_uint_eq(f.cmd->send->txnid_least_bits, UINT64_MAX - 1);
    pc_frame_clear(&f);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_encode_send_raw_empty_payload) {
    Pulsar__Proto__CommandSend s;
    pc_cmd_t cmd;
    send_cmd(&cmd, &s);
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_frame_encode_payload_raw(&b, &cmd, META, sizeof META, NULL, 0), PULSARC_OK);
    pf_spec_t spec = send_spec();
    spec.payload = NULL;
    spec.payload_len = 0;
    bytes_t w = {.n = 0};
    payload_frame(&w, &spec);
    assert_buf_eq(&b, &w);
    assert_send_reparses(&b, &spec);
    pc_buf_free(&b);
}
END_TEST

/* ======================================================================== */
/* 4. MESSAGE decode: broker entry metadata, optional checksum */

static void assert_message_cmd(const pc_frame_t *f) {
    ck_assert_int_eq(f->cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE);
    ck_assert_uint_eq(f->cmd->message->consumer_id, 3);
    ck_assert_uint_eq(f->cmd->message->message_id->ledgerid, 10);
    ck_assert_uint_eq(f->cmd->message->message_id->entryid, 20);
    ck_assert_int_eq(f->has_payload, 1);
    ck_assert_uint_eq(f->meta_len, sizeof META);
    ck_assert_mem_eq(f->meta, META, sizeof META);
    ck_assert_uint_eq(f->payload_len, strlen(PAYLOAD));
    ck_assert_mem_eq(f->payload, PAYLOAD, strlen(PAYLOAD));
}

START_TEST(test_decode_message_with_bem) {
    bytes_t bem = {.n = 0}, g = {.n = 0};
    build_bem(&bem);
    pf_spec_t spec = message_spec(&bem, 1);
    payload_frame(&g, &spec);
    size_t bem_at = 8 + sizeof CMD_MESSAGE + 6;
    ck_assert_mem_eq(g.b + bem_at - 6, "\x0e\x02", 2);
    pc_frame_t f;
    char err[256] = "";
    long r = pc_frame_parse(g.b, g.n, MAX_FRAME, &f, err, sizeof err);
    ck_assert_msg(r == (long)g.n, "parse returned %ld (%s)", r, err);
    assert_message_cmd(&f);
    ck_assert_ptr_eq(f.bem, g.b + bem_at);
    ck_assert_uint_eq(f.bem_len, bem.n);
    ck_assert_int_eq(f.has_checksum, 1);
    ck_assert_int_eq(f.checksum_ok, 1);
    ck_assert_ptr_eq(f.meta, g.b + bem_at + bem.n + 6 + 4);
    Pulsar__Proto__BrokerEntryMetadata *bm =
        pulsar__proto__broker_entry_metadata__unpack(NULL, f.bem_len, f.bem);
    ck_assert_ptr_nonnull(bm);
    ck_assert(bm->has_broker_timestamp && bm->has_index);
    ck_assert_uint_eq(bm->broker_timestamp, BEM_TIMESTAMP);
    ck_assert_uint_eq(bm->index, BEM_INDEX);
    pulsar__proto__broker_entry_metadata__free_unpacked(bm, NULL);
    pc_frame_clear(&f);
}
END_TEST

START_TEST(test_decode_message_bem_no_checksum) {
    bytes_t bem = {.n = 0}, g = {.n = 0};
    build_bem(&bem);
    pf_spec_t spec = message_spec(&bem, 0);
    payload_frame(&g, &spec);
    pc_frame_t f;
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, NULL, 0);
    ck_assert_int_eq(r, (long)g.n);
    assert_message_cmd(&f);
    ck_assert_uint_eq(f.bem_len, bem.n);
    ck_assert_mem_eq(f.bem, bem.b, bem.n);
    ck_assert_int_eq(f.has_checksum, 0);
    ck_assert_int_eq(f.checksum_ok, 1);
    pc_frame_clear(&f);
}
END_TEST

START_TEST(test_decode_message_plain) {
    bytes_t g = {.n = 0};
    pf_spec_t spec = message_spec(NULL, 0);
    payload_frame(&g, &spec);
    pc_frame_t f;
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, NULL, 0);
    ck_assert_int_eq(r, (long)g.n);
    assert_message_cmd(&f);
    ck_assert_ptr_null(f.bem);
    ck_assert_uint_eq(f.bem_len, 0);
    ck_assert_int_eq(f.has_checksum, 0);
    ck_assert_int_eq(f.checksum_ok, 1);
    pc_frame_clear(&f);
}
END_TEST

/* Empty metadata and empty payload are legal sizes. */
START_TEST(test_decode_message_empty_meta_payload) {
    bytes_t g = {.n = 0};
    pf_spec_t spec = message_spec(NULL, 1);
    spec.meta_len = 0;
    spec.payload_len = 0;
    payload_frame(&g, &spec);
    pc_frame_t f;
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, NULL, 0);
    ck_assert_int_eq(r, (long)g.n);
    ck_assert_int_eq(f.has_payload, 1);
    ck_assert_int_eq(f.checksum_ok, 1);
    ck_assert_uint_eq(f.meta_len, 0);
    ck_assert_uint_eq(f.payload_len, 0);
    pc_frame_clear(&f);
}
END_TEST

/* ======================================================================== */
/* 5. byte-at-a-time feeding */

typedef struct stream3 {
    bytes_t all;
    size_t ends[3]; /* offset just past each frame */
    int types[3];
} stream3_t;

static void build_stream3(stream3_t *s) {
    bytes_t bem = {.n = 0};
    build_bem(&bem);
    pf_spec_t msg = message_spec(&bem, 1);
    s->all.n = 0;
    simple_frame(&s->all, CMD_PING, sizeof CMD_PING);
    s->ends[0] = s->all.n;
    payload_frame(&s->all, &msg);
    s->ends[1] = s->all.n;
    simple_frame(&s->all, CMD_CONNECTED, sizeof CMD_CONNECTED);
    s->ends[2] = s->all.n;
    s->types[0] = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    s->types[1] = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    s->types[2] = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED;
}

/* Consumes every complete frame in all[pos..avail); returns the new pos. */
static size_t drain(const stream3_t *s, size_t pos, size_t avail, int *nframes) {
    for (;;) {
        pc_frame_t f;
        char err[256] = "";
        long r = parse_exact(s->all.b + pos, avail - pos, MAX_FRAME, &f, err, sizeof err);
        ck_assert_msg(r >= 0, "error %ld at %zu/%zu: %s", r, pos, avail, err);
        if (r == 0) {
            ck_assert_ptr_null(f.cmd);
            return pos;
        }
        ck_assert_int_lt(*nframes, 3);
        ck_assert_uint_eq(pos + (size_t)r, s->ends[*nframes]);
        ck_assert_int_eq(f.cmd->type, s->types[*nframes]);
        ck_assert_int_eq(f.checksum_ok, 1);
        pc_frame_clear(&f);
        pos += (size_t)r;
        (*nframes)++;
    }
}

START_TEST(test_byte_at_a_time) {
    stream3_t s;
    build_stream3(&s);
    size_t pos = 0;
    int nframes = 0;
    for (size_t avail = 0; avail <= s.all.n; avail++) {
        pos = drain(&s, pos, avail, &nframes);
        int done = 0;
        while (done < 3 && s.ends[done] <= avail)
            done++;
        ck_assert_int_eq(nframes, done);
        ck_assert_uint_eq(pos, done ? s.ends[done - 1] : 0);
    }
    ck_assert_int_eq(nframes, 3);
    ck_assert_uint_eq(pos, s.all.n);
}
END_TEST

/* Every prefix shorter than a frame is "need more", never an error. */
START_TEST(test_every_prefix_needs_more) {
    stream3_t s;
    build_stream3(&s);
    size_t start = 0;
    for (int i = 0; i < 3; i++) {
        for (size_t n = 0; n < s.ends[i] - start; n++) {
            pc_frame_t f;
            ck_assert_int_eq(parse_exact(s.all.b + start, n, MAX_FRAME, &f, NULL, 0), 0);
            ck_assert_ptr_null(f.cmd);
        }
        start = s.ends[i];
    }
}
END_TEST

/* ======================================================================== */
/* 6. rejections */

/* Parses g with max and expects code, errstr containing needle, no cmd. */
static void expect_reject(const bytes_t *g, size_t max, long code, const char *needle) {
    pc_frame_t f;
    char err[256] = "";
    long r = parse_exact(g->b, g->n, max, &f, err, sizeof err);
    ck_assert_msg(r == code, "got %ld want %ld (%s)", r, code, err);
    ck_assert_ptr_null(f.cmd);
    ck_assert_contains(err, needle);
    /* and the code alone, with no room for a message */
    ck_assert_int_eq(parse_exact(g->b, g->n, max, &f, NULL, 0), code);
}

START_TEST(test_reject_total_too_small) {
    for (uint32_t t = 0; t < 4; t++) {
        bytes_t g = {.n = 0};
        put_u32(&g, t);
        put_u32(&g, 0);
        expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "too small");
    }
}
END_TEST

START_TEST(test_reject_total_over_max) {
    bytes_t g = {.n = 0};
    simple_frame(&g, CMD_PING, sizeof CMD_PING); /* total 9 */
    expect_reject(&g, 8, PULSARC_ERR_FRAME_TOO_BIG, "exceeds the limit");
    /* exactly at the limit is fine */
    pc_frame_t f;
    ck_assert_int_eq(parse_exact(g.b, g.n, 9, &f, NULL, 0), 13);
    pc_frame_clear(&f);
    /* the size alone is enough to reject: no need to wait for the body */
    bytes_t h = {.n = 0};
    put_u32(&h, (uint32_t)MAX_FRAME + 1);
    expect_reject(&h, MAX_FRAME, PULSARC_ERR_FRAME_TOO_BIG, "exceeds the limit");
}
END_TEST

START_TEST(test_reject_total_near_4g) {
    bytes_t g = {.n = 0};
    put_u32(&g, 0xFFFFFFFFu);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_FRAME_TOO_BIG, "4294967295");
    put_u32(&g, 4);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_FRAME_TOO_BIG, "exceeds the limit");
}
END_TEST

START_TEST(test_reject_cmdsize_zero) {
    bytes_t g = {.n = 0};
    put_u32(&g, 4);
    put_u32(&g, 0);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "command size 0");
}
END_TEST

START_TEST(test_reject_cmdsize_over_total) {
    bytes_t g = {.n = 0};
    put_u32(&g, 4 + sizeof CMD_PING);
    put_u32(&g, sizeof CMD_PING + 1);
    put(&g, CMD_PING, sizeof CMD_PING);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "command size 6 does not fit");
    bytes_t h = {.n = 0};
    put_u32(&h, 4);
    put_u32(&h, 0xFFFFFFFFu);
    expect_reject(&h, MAX_FRAME, PULSARC_ERR_MALFORMED, "does not fit");
}
END_TEST

START_TEST(test_reject_garbage_command) {
    static const uint8_t garbage[][4] = {
        {0xff, 0xff, 0xff, 0xff}, /* unterminated tag varint */
        {0x08, 0x12, 0x92, 0x7f}, /* ping length 127 past the end */
        {0x07, 0x00, 0x00, 0x00}, /* field 0, wire type 7 */
        {0x12, 0x00, 0x12, 0x00}, /* no type: required field missing */
    };
    for (size_t i = 0; i < NELEM(garbage); i++) {
        bytes_t g = {.n = 0};
        simple_frame(&g, garbage[i], 4);
        expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "does not parse as BaseCommand");
    }
    /* a sub-message missing its own required field also fails to unpack:
     * CONNECTED{connected={protocol_version=20}} without server_version */
    static const uint8_t no_ver[] = {0x08, 0x03, 0x1a, 0x02, 0x10, 0x14};
    bytes_t g = {.n = 0};
    simple_frame(&g, no_ver, sizeof no_ver);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "does not parse as BaseCommand");
}
END_TEST

START_TEST(test_reject_unknown_type) {
    /* type = 999: varint e7 07; plus a body for field 999 would not matter */
    static const uint8_t t999[] = {0x08, 0xe7, 0x07};
    bytes_t g = {.n = 0};
    simple_frame(&g, t999, sizeof t999);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "unknown command type 999");
    /* 41 sits in the gap of unused numbers */
    static const uint8_t t41[] = {0x08, 0x29};
    bytes_t h = {.n = 0};
    simple_frame(&h, t41, sizeof t41);
    expect_reject(&h, MAX_FRAME, PULSARC_ERR_MALFORMED, "unknown command type 41");
}
END_TEST

START_TEST(test_reject_missing_body) {
    static const uint8_t send[] = {0x08, 0x06};
    bytes_t g = {.n = 0};
    simple_frame(&g, send, sizeof send);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "SEND command without its body");
    /* PING with type only: 00000006 00000002 08 12 */
    static const uint8_t ping[] = {0x08, 0x12};
    bytes_t h = {.n = 0};
    simple_frame(&h, ping, sizeof ping);
    ck_assert_mem_eq(h.b, "\x00\x00\x00\x06\x00\x00\x00\x02\x08\x12", 10);
    expect_reject(&h, MAX_FRAME, PULSARC_ERR_MALFORMED, "PING command without its body");
    /* body of another type: type=SEND with a ping body */
    static const uint8_t mixed[] = {0x08, 0x06, 0x92, 0x01, 0x00};
    bytes_t k = {.n = 0};
    simple_frame(&k, mixed, sizeof mixed);
    expect_reject(&k, MAX_FRAME, PULSARC_ERR_MALFORMED, "SEND command without its body");
}
END_TEST

START_TEST(test_reject_message_without_payload) {
    bytes_t g = {.n = 0};
    simple_frame(&g, CMD_MESSAGE, sizeof CMD_MESSAGE);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "MESSAGE frame has no payload section");
    bytes_t h = {.n = 0};
    simple_frame(&h, CMD_SEND, sizeof CMD_SEND);
    expect_reject(&h, MAX_FRAME, PULSARC_ERR_MALFORMED, "SEND frame has no payload section");
}
END_TEST

START_TEST(test_reject_no_metadata_size) {
    /* checksum present but then only 3 bytes where the 4-byte size goes */
    bytes_t g = {.n = 0};
    put_u32(&g, 4 + sizeof CMD_MESSAGE + 6 + 3);
    put_u32(&g, sizeof CMD_MESSAGE);
    put(&g, CMD_MESSAGE, sizeof CMD_MESSAGE);
    put_u16(&g, 0x0e01);
    put_u32(&g, 0);
    put(&g, "\0\0\0", 3);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, "no metadata size");
}
END_TEST

/* Builds a MESSAGE frame, then rewrites the u32 at off with v. */
static void message_with_u32(bytes_t *g, const bytes_t *bem, int crc, size_t off, uint32_t v) {
    pf_spec_t spec = message_spec(bem, crc);
    payload_frame(g, &spec);
    pc_wr_u32(g->b + off, v);
}

START_TEST(test_reject_metadata_size_over_frame) {
    size_t msize_at = 8 + sizeof CMD_MESSAGE + 6;
    size_t left = sizeof META + strlen(PAYLOAD);
    bytes_t g = {.n = 0};
    message_with_u32(&g, NULL, 1, msize_at, (uint32_t)left + 1);
    char want[64];
    snprintf(want, sizeof want, "metadata size %zu exceeds", left + 1);
    expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED, want);
    bytes_t h = {.n = 0};
    message_with_u32(&h, NULL, 1, msize_at, 0xFFFFFFFFu);
    expect_reject(&h, MAX_FRAME, PULSARC_ERR_MALFORMED, "metadata size 4294967295 exceeds");
    /* the boundary: metadata takes everything, payload empty */
    bytes_t k = {.n = 0};
    message_with_u32(&k, NULL, 0, msize_at - 6, (uint32_t)left);
    pc_frame_t f;
    ck_assert_int_eq(parse_exact(k.b, k.n, MAX_FRAME, &f, NULL, 0), (long)k.n);
    ck_assert_uint_eq(f.meta_len, left);
    ck_assert_uint_eq(f.payload_len, 0);
    pc_frame_clear(&f);
}
END_TEST

START_TEST(test_reject_bem_size_over_frame) {
    bytes_t bem = {.n = 0};
    build_bem(&bem);
    size_t bsize_at = 8 + sizeof CMD_MESSAGE + 2;
    size_t rest = bem.n + 6 + 4 + sizeof META + strlen(PAYLOAD);
    uint32_t bad[] = {(uint32_t)rest + 1, 0x7FFFFFFFu, 0xFFFFFFFFu};
    for (size_t i = 0; i < NELEM(bad); i++) {
        bytes_t g = {.n = 0};
        message_with_u32(&g, &bem, 1, bsize_at, bad[i]);
        expect_reject(&g, MAX_FRAME, PULSARC_ERR_MALFORMED,
                      "broker entry metadata size exceeds the frame");
    }
}
END_TEST

/* A CRC mismatch is not a stream error: the frame and the next one parse. */
START_TEST(test_bad_checksum_continues) {
    bytes_t bem = {.n = 0}, g = {.n = 0};
    build_bem(&bem);
    pf_spec_t spec = message_spec(&bem, 1);
    spec.crc_xor = 0x00000100u;
    payload_frame(&g, &spec);
    size_t first = g.n;
    simple_frame(&g, CMD_PING, sizeof CMD_PING);
    pc_frame_t f;
    char err[256] = "";
    long r = parse_exact(g.b, g.n, MAX_FRAME, &f, err, sizeof err);
    ck_assert_int_eq(r, (long)first);
    assert_message_cmd(&f);
    ck_assert_int_eq(f.has_checksum, 1);
    ck_assert_int_eq(f.checksum_ok, 0);
    pc_frame_clear(&f);
    r = parse_exact(g.b + first, g.n - first, MAX_FRAME, &f, err, sizeof err);
    ck_assert_int_eq(r, (long)(g.n - first));
    ck_assert_int_eq(f.cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    pc_frame_clear(&f);
}
END_TEST

/* A corrupted payload byte (checksum intact) is caught the same way. */
START_TEST(test_corrupt_payload_detected) {
    bytes_t g = {.n = 0};
    pf_spec_t spec = message_spec(NULL, 1);
    payload_frame(&g, &spec);
    g.b[g.n - 1] ^= 0x01;
    pc_frame_t f;
    ck_assert_int_eq(parse_exact(g.b, g.n, MAX_FRAME, &f, NULL, 0), (long)g.n);
    ck_assert_int_eq(f.checksum_ok, 0);
    pc_frame_clear(&f);
    /* metadata size is covered too */
    bytes_t h = {.n = 0};
    payload_frame(&h, &spec);
    size_t msize_at = 8 + sizeof CMD_MESSAGE + 6;
    pc_wr_u32(h.b + msize_at, sizeof META - 1);
    ck_assert_int_eq(parse_exact(h.b, h.n, MAX_FRAME, &f, NULL, 0), (long)h.n);
    ck_assert_int_eq(f.checksum_ok, 0);
    pc_frame_clear(&f);
}
END_TEST

/* ======================================================================== */
/* 7. randomised robustness */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) { return pct_xorshift(&rng_state); }

static void seed_frame(bytes_t *g, unsigned which) {
    bytes_t bem = {.n = 0};
    build_bem(&bem);
    pf_spec_t m1 = message_spec(&bem, 1), m2 = message_spec(NULL, 0), s = send_spec();
    g->n = 0;
    switch (which % 6) {
    case 0: simple_frame(g, CMD_PING, sizeof CMD_PING); break;
    case 1: simple_frame(g, CMD_CONNECTED, sizeof CMD_CONNECTED); break;
    case 2: payload_frame(g, &m1); break;
    case 3: payload_frame(g, &m2); break;
    case 4: payload_frame(g, &s); break;
    default: {
        pf_spec_t m3 = message_spec(&bem, 0);
        payload_frame(g, &m3);
    }
    }
}

static void mutate_once(bytes_t *g) {
    if (g->n == 0)
        return;
    size_t at = (size_t)(rnd() % g->n);
    switch (rnd() % 6) {
    case 0: g->b[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
    case 1: g->b[at] = (uint8_t)rnd(); break;
    case 2: g->n = (size_t)(rnd() % (g->n + 1)); break;
    case 3: { /* a size field: total, cmdSize or anywhere */
        static const size_t fixed[] = {0, 4};
        size_t off = rnd() % 2 ? fixed[rnd() % 2] : at;
        uint32_t v = rnd() % 2 ? (uint32_t)(rnd() % 64) : (uint32_t)rnd();
        if (off + 4 <= g->n)
            pc_wr_u32(g->b + off, v);
        break;
    }
    case 4: /* restore a consistent total after other damage */
        if (g->n >= 4)
            pc_wr_u32(g->b, (uint32_t)(g->n - 4));
        break;
    default: /* append junk */
        for (int k = rnd() % 8; k > 0 && g->n < sizeof g->b; k--)
            g->b[g->n++] = (uint8_t)rnd();
    }
}

static void check_result(const bytes_t *g, const uint8_t *buf, long r, const pc_frame_t *f,
                         const char *err) {
    if (r < 0) {
        ck_assert_msg(r == PULSARC_ERR_MALFORMED || r == PULSARC_ERR_FRAME_TOO_BIG, "code %ld", r);
        ck_assert_ptr_null(f->cmd);
        ck_assert_msg(err[0] != '\0', "error %ld without errstr", r);
        return;
    }
    if (r == 0) {
        ck_assert_ptr_null(f->cmd);
        ck_assert(g->n < 4 || g->n - 4 < pc_rd_u32(g->b));
        return;
    }
    ck_assert_uint_le((size_t)r, g->n);
    ck_assert_uint_eq((size_t)r, (size_t)pc_rd_u32(g->b) + 4);
    ck_assert_ptr_nonnull(f->cmd);
    if (f->has_payload) {
        ck_assert(f->meta >= buf + 8 && f->meta + f->meta_len == f->payload);
        ck_assert_ptr_eq(f->payload + f->payload_len, buf + r);
    }
}

START_TEST(test_random_mutations) {
    for (int it = 0; it < 20000; it++) {
        bytes_t g;
        seed_frame(&g, (unsigned)rnd());
        for (int k = 1 + (int)(rnd() % 4); k > 0; k--)
            mutate_once(&g);
        uint8_t *buf = malloc(g.n ? g.n : 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, g.b, g.n);
        pc_frame_t f;
        char err[256] = "";
        long r = pc_frame_parse(buf, g.n, MAX_FRAME, &f, err, sizeof err);
        check_result(&g, buf, r, &f, err);
        if (r > 0)
            pc_frame_clear(&f);
        free(buf);
    }
}
END_TEST

/* ======================================================================== */
/* pc_frame_adopt: a frame's buffer changes hands instead of being copied. */

static pc_buf_t filled(const char *text, size_t limit) {
    pc_buf_t b;
    pc_buf_init(&b, limit);
    ck_assert_int_eq(pc_buf_append(&b, text, strlen(text)), PULSARC_OK);
    return b;
}

START_TEST(test_adopt_swaps_and_moves_the_tail) {
    pc_buf_t src = filled("FRAMEBYTES" "tail", 1000);
    pc_buf_t mine = filled("old contents, twenty-nine b..", 500);
    mine.len = 0; /* empty, with memory of its own */
    uint8_t *frame_mem = src.data, *mine_mem = mine.data;
    size_t src_cap = src.cap, mine_cap = mine.cap;
    pc_frame_t f = {.source = &src, .frame_len = 10};
    ck_assert_int_eq(pc_frame_adopt(&f, &mine), 0);
    /* mine holds the frame where it was read, with its own limit */
    ck_assert_ptr_eq(mine.data, frame_mem);
    ck_assert_uint_eq(mine.len, 10);
    ck_assert_uint_eq(mine.cap, src_cap);
    ck_assert_uint_eq(mine.limit, 500);
    ck_assert(memcmp(mine.data, "FRAMEBYTES", 10) == 0);
    /* the source got mine's memory, the bytes after the frame at its front */
    ck_assert_ptr_eq(src.data, mine_mem);
    ck_assert_uint_eq(src.len, 4);
    ck_assert_uint_eq(src.cap, mine_cap);
    ck_assert_uint_eq(src.limit, 1000);
    ck_assert(memcmp(src.data, "tail", 4) == 0);
    pc_buf_free(&src);
    pc_buf_free(&mine);
}
END_TEST

START_TEST(test_adopt_with_nothing_after_and_no_memory) {
    pc_buf_t src = filled("WHOLEFRAME", 1000), mine;
    pc_buf_init(&mine, 500); /* never allocated: the source gets none */
    uint8_t *frame_mem = src.data;
    pc_frame_t f = {.source = &src, .frame_len = 10};
    ck_assert_int_eq(pc_frame_adopt(&f, &mine), 0);
    ck_assert_ptr_eq(mine.data, frame_mem);
    ck_assert_uint_eq(mine.len, 10);
    ck_assert_ptr_null(src.data);
    ck_assert_uint_eq(src.len, 0);
    ck_assert_uint_eq(src.cap, 0);
    /* and the reader can grow it again */
    ck_assert_int_eq(pc_buf_append(&src, "next", 4), PULSARC_OK);
    pc_buf_free(&src);
    pc_buf_free(&mine);
}
END_TEST

START_TEST(test_adopt_refusals_change_nothing) {
    pc_buf_t src = filled("FRAMEBYTES" "tail", 1000);
    uint8_t *frame_mem = src.data;
    pc_buf_t mine = filled("x", 5000);
    pc_frame_t f = {.source = &src, .frame_len = 10};
    /* mine is not empty */
    ck_assert_int_eq(pc_frame_adopt(&f, &mine), -1);
    /* mine holds more memory than the source may */
    ck_assert_int_eq(pc_buf_reserve(&mine, 2000), PULSARC_OK);
    mine.len = 0;
    ck_assert_int_eq(pc_frame_adopt(&f, &mine), -1);
    /* no source: a frame the reader did not offer */
    pc_frame_t plain = {.source = NULL, .frame_len = 10};
    pc_buf_t empty;
    pc_buf_init(&empty, 500);
    ck_assert_int_eq(pc_frame_adopt(&plain, &empty), -1);
    /* a frame length past the bytes held */
    pc_frame_t lying = {.source = &src, .frame_len = 15};
    ck_assert_int_eq(pc_frame_adopt(&lying, &empty), -1);
    ck_assert_ptr_eq(src.data, frame_mem);
    ck_assert_uint_eq(src.len, 14);
    ck_assert_ptr_null(empty.data);
    pc_buf_free(&src);
    pc_buf_free(&mine);
}
END_TEST

/* ======================================================================== */

static TCase *tc(const char *name) {
    TCase *t = tcase_create(name);
    tcase_set_timeout(t, 120); /* 20k parses under valgrind/ASan */
    return t;
}

static Suite *frame_suite(void) {
    Suite *s = suite_create("frame");
    TCase *t = tc("reference");
    tcase_add_test(t, test_ref_helpers);
    tcase_add_test(t, test_every_type_has_body_field);
    suite_add_tcase(s, t);

    t = tc("decode");
    tcase_add_test(t, test_decode_ping);
    tcase_add_test(t, test_decode_connected);
    tcase_add_test(t, test_decode_simple_trailing_ignored);
    tcase_add_test(t, test_decode_message_with_bem);
    tcase_add_test(t, test_decode_message_bem_no_checksum);
    tcase_add_test(t, test_decode_message_plain);
    tcase_add_test(t, test_decode_message_empty_meta_payload);
    suite_add_tcase(s, t);

    t = tc("encode");
    tcase_add_test(t, test_encode_ping_golden);
    tcase_add_test(t, test_encode_connect_golden);
    tcase_add_test(t, test_encode_appends);
    tcase_add_test(t, test_encode_send_golden);
    tcase_add_test(t, test_encode_send_head_then_payload);
    tcase_add_test(t, test_encode_send_matches_protobuf_c);
    tcase_add_test(t, test_encode_send_raw_empty_payload);
    suite_add_tcase(s, t);

    t = tc("stream");
    tcase_add_test(t, test_byte_at_a_time);
    tcase_add_test(t, test_every_prefix_needs_more);
    suite_add_tcase(s, t);

    t = tc("reject");
    tcase_add_test(t, test_reject_total_too_small);
    tcase_add_test(t, test_reject_total_over_max);
    tcase_add_test(t, test_reject_total_near_4g);
    tcase_add_test(t, test_reject_cmdsize_zero);
    tcase_add_test(t, test_reject_cmdsize_over_total);
    tcase_add_test(t, test_reject_garbage_command);
    tcase_add_test(t, test_reject_unknown_type);
    tcase_add_test(t, test_reject_missing_body);
    tcase_add_test(t, test_reject_message_without_payload);
    tcase_add_test(t, test_reject_no_metadata_size);
    tcase_add_test(t, test_reject_metadata_size_over_frame);
    tcase_add_test(t, test_reject_bem_size_over_frame);
    tcase_add_test(t, test_bad_checksum_continues);
    tcase_add_test(t, test_corrupt_payload_detected);
    suite_add_tcase(s, t);

    t = tc("adopt");
    tcase_add_test(t, test_adopt_swaps_and_moves_the_tail);
    tcase_add_test(t, test_adopt_with_nothing_after_and_no_memory);
    tcase_add_test(t, test_adopt_refusals_change_nothing);
    suite_add_tcase(s, t);

    t = tc("fuzz");
    tcase_add_test(t, test_random_mutations);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(frame_suite)
