/*
 * Design notes: the frame codec owns the byte layout of Pulsar frames and
 * nothing else. It never reads a socket: the connection hands it bytes and
 * gets back unpacked BaseCommands plus pointers to the payload section.
 * Everything a peer controls (sizes, magics, the command itself) is checked
 * before use, so a hostile stream ends in an error, never in an over-read
 * or an allocation past max_frame. Pure functions; any thread.
 * pc_frame_adopt lets a frame's handler take the reader's buffer whole
 * (swapping in its own) on the reader's thread, during the dispatch.
 *
 * Bounds on what a frame may make the client do (docs/PROTOCOL_BOUNDS.md):
 *   total size          <= max_frame (the broker's max message size + 10 KiB)
 *   command size        1 .. total - 4
 *   BaseCommand unpack  core/pbguard.h: nesting <= 16, elements <= 10^6,
 *                       unpacked <= 64 MiB, checked before protobuf-c runs
 *   MESSAGE fast path   no recursion, one fixed block (core/pbfast.c)
 *   broker entry meta   size <= what is left of the frame; kept raw
 *   metadata size       <= what is left of the frame
 */
#include "core/frame.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/crc32c.h"
#include "core/err.h"
#include "core/pbfast.h"
#include "core/pbenc.h"
#include "core/pbguard.h"
#include "core/pbwire.h"

typedef Pulsar__Proto__BaseCommand__Type cmd_type_t;

const char *pc_cmd_name(int type) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&pulsar__proto__base_command__type__descriptor, type);
    return v ? v->name : "UNKNOWN";
}

/* In BaseCommand each type's body is the field numbered like the type. */
static int cmd_has_body(const pc_cmd_t *cmd) {
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&pulsar__proto__base_command__descriptor, (unsigned)cmd->type);
    if (!fd || fd->type != PROTOBUF_C_TYPE_MESSAGE)
        return 0;
    void *const *body = (void *const *)((const char *)cmd + fd->offset);
    return *body != NULL;
}

static int is_payload_cmd(int type) {
    return type == PULSAR__PROTO__BASE_COMMAND__TYPE__SEND ||
           type == PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
}

/* Optional "magic, u32 size, bytes" block; returns bytes used or -1. */
static long parse_bem(const uint8_t *p, size_t rem, pc_frame_t *out) {
    if (rem < 6 || pc_rd_u16(p) != PC_MAGIC_BROKER_ENTRY_METADATA)
        return 0;
    uint32_t n = pc_rd_u32(p + 2);
    if (n > rem - 6)
        return -1;
    out->bem = p + 6;
    out->bem_len = n;
    return 6 + (long)n;
}

/* The command's name, for errors only (a descriptor lookup: not on the good path). */
#define NAME pc_cmd_name(out->cmd->type)
static pulsarc_err_t parse_payload(const uint8_t *p, size_t rem, pc_frame_t *out, char *errstr,
                                   size_t errlen) {
    if (rem == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s frame has no payload section", NAME);
    long used = parse_bem(p, rem, out);
    if (used < 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "%s frame: broker entry metadata size exceeds the frame", NAME);
    p += used;
    rem -= (size_t)used;
    uint32_t crc = 0;
    if (rem >= 6 && pc_rd_u16(p) == PC_MAGIC_CRC32C) {
        out->has_checksum = 1;
        crc = pc_rd_u32(p + 2);
        p += 6;
        rem -= 6;
    }
    if (rem < 4)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s frame: no metadata size", NAME);
    uint32_t mlen = pc_rd_u32(p);
    if (mlen > rem - 4)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "%s frame: metadata size %u exceeds the %zu bytes left", NAME, mlen, rem - 4);
    out->checksum_ok = !out->has_checksum || pc_crc32c(0, p, rem) == crc;
    out->has_payload = 1;
    out->meta = p + 4;
    out->meta_len = mlen;
    out->payload = p + 4 + mlen;
    out->payload_len = rem - 4 - mlen;
    return PULSARC_OK;
}

#undef NAME

/* The type field of a command's top level, for naming it in errors; -1 if absent. */
static int peek_type(const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    while (p < end) {
        pc_pb_field_t f;
        if (pc_pb_field(&p, end, &f))
            return -1;
        if (f.num == 1 && f.wt == PC_WT_VARINT)
            return (int)f.v;
    }
    return -1;
}

/*
 * Bounds the unpack before it runs (core/pbguard.h): depth, element count
 * and memory. The fast MESSAGE path above needs no guard: it never
 * recurses and allocates one fixed block.
 */
static pulsarc_err_t guard_command(const uint8_t *p, uint32_t cmdlen, char *errstr, size_t errlen) {
    /* Each level of nesting takes a key and a length byte in its parent, so
     * fewer than 2 x 16 bytes cannot nest past the limit, nor hold a tenth
     * of its elements or memory. Receipts, PONGs and SUCCESSes are this
     * small; the walk would add a quarter to their unpack. */
    if (cmdlen < 2 * PC_PB_MAX_DEPTH)
        return PULSARC_OK;
    pc_pbguard_result_t g;
    if (pc_pbguard_check(&pulsar__proto__base_command__descriptor, p, cmdlen, NULL, &g) == PC_PBG_OK)
        return PULSARC_OK;
    char why[200];
    pc_pbguard_describe(&g, NULL, why, sizeof why);
    if (g.status == PC_PBG_MALFORMED)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "command of %u bytes does not parse as BaseCommand (%s)", cmdlen, why);
    int type = peek_type(p, cmdlen);
    return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s command of %u bytes refused: %s",
                     type >= 0 ? pc_cmd_name(type) : "untyped", cmdlen, why);
}

static pulsarc_err_t parse_command(const uint8_t *p, uint32_t cmdlen, pc_frame_t *out,
                                   char *errstr, size_t errlen) {
    /* MESSAGE and SEND_RECEIPT, the commands that come per entry, are
     * decoded by hand. */
    if ((out->cmd = pc_fast_message_cmd(p, cmdlen, out->alloc)) ||
        (out->cmd = pc_fast_receipt_cmd(p, cmdlen, out->alloc))) {
        out->fast = 1;
        return PULSARC_OK;
    }
    pulsarc_err_t err = guard_command(p, cmdlen, errstr, errlen);
    if (err)
        return err;
    out->cmd = pulsar__proto__base_command__unpack(out->alloc, cmdlen, p);
    if (!out->cmd)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "command of %u bytes does not parse as BaseCommand", cmdlen);
    if (!protobuf_c_enum_descriptor_get_value(&pulsar__proto__base_command__type__descriptor,
                                              out->cmd->type))
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "unknown command type %d",
                         (int)out->cmd->type);
    if (!cmd_has_body(out->cmd))
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s command without its body",
                         pc_cmd_name(out->cmd->type));
    return PULSARC_OK;
}

long pc_frame_parse(const uint8_t *buf, size_t len, size_t max_frame, pc_frame_t *out,
                    char *errstr, size_t errlen) {
    return pc_frame_parse_with(buf, len, max_frame, NULL, out, errstr, errlen);
}

long pc_frame_parse_with(const uint8_t *buf, size_t len, size_t max_frame, ProtobufCAllocator *alloc,
                         pc_frame_t *out, char *errstr, size_t errlen) {
    /* Cleared in two parts: as one memset, GCC clears this size with rep
     * stos, slow to start, where the part below the reader's fields is a
     * few vector stores. */
    memset(out, 0, offsetof(pc_frame_t, source));
    out->source = NULL;
    out->frame_len = 0;
    out->alloc = alloc;
    out->checksum_ok = 1;
    if (len < 4)
        return 0;
    uint32_t total = pc_rd_u32(buf);
    if (total > max_frame)
        return pc_seterr(errstr, errlen, PULSARC_ERR_FRAME_TOO_BIG,
                         "frame of %u bytes exceeds the limit of %zu", total, max_frame);
    if (total < 4)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "frame size %u is too small for a command size", total);
    if (len - 4 < total)
        return 0;
    uint32_t cmdlen = pc_rd_u32(buf + 4);
    if (cmdlen == 0 || cmdlen > total - 4)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "command size %u does not fit in a frame of %u bytes", cmdlen, total);
    pulsarc_err_t err = parse_command(buf + 8, cmdlen, out, errstr, errlen);
    if (!err && is_payload_cmd(out->cmd->type))
        err = parse_payload(buf + 8 + cmdlen, total - 4 - cmdlen, out, errstr, errlen);
    if (err) {
        pc_frame_clear(out);
        return err;
    }
    return (long)total + 4;
}

int pc_frame_adopt(const pc_frame_t *f, pc_buf_t *mine) {
    pc_buf_t *src = f->source;
    if (!src || mine->len || mine->cap > src->limit || f->frame_len > src->len)
        return -1;
    size_t tail = src->len - f->frame_len;
    if (tail && pc_buf_reserve(mine, tail))
        return -1;
    if (tail)
        memcpy(mine->data, src->data + f->frame_len, tail);
    pc_buf_t given = {mine->data, tail, mine->cap, src->limit};
    *mine = (pc_buf_t){src->data, f->frame_len, src->cap, mine->limit};
    *src = given;
    return 0;
}

void pc_frame_clear(pc_frame_t *f) {
    if (f->cmd && f->fast)
        pc_fast_cmd_free(f->cmd, f->alloc);
    else if (f->cmd)
        pulsar__proto__base_command__free_unpacked(f->cmd, f->alloc);
    f->cmd = NULL;
    f->fast = 0;
}

pulsarc_err_t pc_frame_encode(pc_buf_t *out, const pc_cmd_t *cmd) {
    size_t n = pulsar__proto__base_command__get_packed_size(cmd);
    if (n > UINT32_MAX - 4)
        return PULSARC_ERR_MSG_TOO_BIG;
    pulsarc_err_t err = pc_buf_reserve(out, 8 + n);
    if (err)
        return err;
    pc_buf_put_u32(out, (uint32_t)(4 + n));
    pc_buf_put_u32(out, (uint32_t)n);
    pulsar__proto__base_command__pack(cmd, out->data + out->len);
    out->len += n;
    return PULSARC_OK;
}

/*
 * protobuf-c sizes and packs a BaseCommand by walking all of its seventy
 * optional bodies, twice. A SEND (one per entry a producer writes) sets
 * only the type and its body, so those two are written here, byte for byte
 * what protobuf-c writes, and the body by the hand encoder (core/pbenc.h),
 * protobuf-c only for the fields that encoder leaves to it.
 */
static int is_plain_send(const pc_cmd_t *cmd) {
    return cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__SEND && cmd->send != NULL;
}

/* type (field 1) and send (field 6): two keys, the type, the body's length. */
static size_t send_packed_size(const pc_cmd_t *cmd, size_t *body_len) {
    *body_len = pc_pbenc_send(cmd->send, NULL, 0);
    if (*body_len == PC_PBENC_FALLBACK)
        *body_len = pulsar__proto__command_send__get_packed_size(cmd->send);
    return 1 + pc_pbenc_varint_len((uint64_t)cmd->type) + 1 + pc_pbenc_varint_len(*body_len) +
           *body_len;
}

static void send_pack(const pc_cmd_t *cmd, size_t body_len, uint8_t *p) {
    *p++ = 0x08; /* field 1, varint */
    p = pc_pbenc_put_varint(p, (uint64_t)cmd->type);
    *p++ = 0x32; /* field 6, length-delimited */
    p = pc_pbenc_put_varint(p, body_len);
    if (pc_pbenc_send(cmd->send, p, body_len) == PC_PBENC_FALLBACK)
        pulsar__proto__command_send__pack(cmd->send, p);
}

/* With copy_payload 0 the payload's bytes are counted in the size and the
 * checksum but left for the caller to send right after the frame's head. */
static pulsarc_err_t encode_payload_raw(pc_buf_t *out, const pc_cmd_t *cmd, const uint8_t *meta,
                                        size_t meta_len, const void *payload,
                                        size_t payload_len, int copy_payload) {
    size_t body_len = 0;
    int plain_send = is_plain_send(cmd);
    size_t cmdlen = plain_send ? send_packed_size(cmd, &body_len)
                               : pulsar__proto__base_command__get_packed_size(cmd);
    size_t tail = 4 + meta_len + payload_len; /* what the CRC covers */
    if (meta_len > UINT32_MAX || payload_len > UINT32_MAX || cmdlen + tail > UINT32_MAX - 16)
        return PULSARC_ERR_MSG_TOO_BIG;
    size_t total = 4 + cmdlen + 6 + tail;
    pulsarc_err_t err = pc_buf_reserve(out, 4 + total - (copy_payload ? 0 : payload_len));
    if (err)
        return err;
    pc_buf_put_u32(out, (uint32_t)total);
    pc_buf_put_u32(out, (uint32_t)cmdlen);
    if (plain_send)
        send_pack(cmd, body_len, out->data + out->len);
    else
        pulsar__proto__base_command__pack(cmd, out->data + out->len);
    out->len += cmdlen;
    pc_buf_put_u16(out, PC_MAGIC_CRC32C);
    size_t crc_at = out->len;
    pc_buf_put_u32(out, 0);
    pc_buf_put_u32(out, (uint32_t)meta_len);
    pc_buf_append(out, meta, meta_len);
    uint32_t crc = pc_crc32c(0, out->data + crc_at + 4, 4 + meta_len);
    if (copy_payload)
        pc_buf_append(out, payload, payload_len);
    pc_wr_u32(out->data + crc_at, pc_crc32c(crc, payload, payload_len));
    return PULSARC_OK;
}

pulsarc_err_t pc_frame_encode_payload_raw(pc_buf_t *out, const pc_cmd_t *cmd,
                                          const uint8_t *meta, size_t meta_len,
                                          const void *payload, size_t payload_len) {
    return encode_payload_raw(out, cmd, meta, meta_len, payload, payload_len, 1);
}

static pulsarc_err_t encode_payload(pc_buf_t *out, const pc_cmd_t *cmd,
                                    const Pulsar__Proto__MessageMetadata *meta,
                                    const void *payload, size_t payload_len, int copy_payload) {
    uint8_t stackbuf[512];
    size_t mlen = pc_pbenc_metadata(meta, stackbuf, sizeof stackbuf); /* one pass if it fits */
    int hand = mlen != PC_PBENC_FALLBACK; /* protobuf-c for what pbenc leaves to it */
    if (!hand)
        mlen = pulsar__proto__message_metadata__get_packed_size(meta);
    uint8_t *m = mlen <= sizeof stackbuf ? stackbuf : malloc(mlen);
    if (!m)
        return PULSARC_ERR_NOMEM;
    if (hand && m != stackbuf)
        pc_pbenc_metadata(meta, m, mlen);
    else if (!hand)
        pulsar__proto__message_metadata__pack(meta, m);
    pulsarc_err_t err = encode_payload_raw(out, cmd, m, mlen, payload, payload_len, copy_payload);
    if (m != stackbuf)
        free(m);
    return err;
}

pulsarc_err_t pc_frame_encode_payload(pc_buf_t *out, const pc_cmd_t *cmd,
                                      const Pulsar__Proto__MessageMetadata *meta,
                                      const void *payload, size_t payload_len) {
    return encode_payload(out, cmd, meta, payload, payload_len, 1);
}

pulsarc_err_t pc_frame_encode_payload_head(pc_buf_t *out, const pc_cmd_t *cmd,
                                           const Pulsar__Proto__MessageMetadata *meta,
                                           const void *payload, size_t payload_len) {
    return encode_payload(out, cmd, meta, payload, payload_len, 0);
}
